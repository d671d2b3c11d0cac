/* SPDX-License-Identifier: MIT */
/* render.h - the renderers of a ToolResult (private to readers/): the streaming JSON writer, the
 * canonical .tool.json object and the provider-ready shapes. */
#ifndef TR_RENDER_PRIVATE_H
#define TR_RENDER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_blob.h"
#include "tr_doc.h"
#include "tr_result.h"
#include "tr_selector.h"

/* --- json_writer --- */
/* a streaming JSON writer onto a tr_doc: compact, keys in call order, strings escaped with
 * invalid UTF-8 replaced by U+FFFD, base64 payloads left unencoded until read. */

#define TR_JSON_MAX_DEPTH 32

struct tr_json {
	struct tr_doc *doc; /* borrowed */
	unsigned depth;
	bool need_comma[TR_JSON_MAX_DEPTH];
	bool after_key;
};

/* Starts writing onto doc (borrowed). Errors (out of memory) are sticky in the doc. */
void tr_json_init(struct tr_json *j, struct tr_doc *doc);

void tr_json_begin_object(struct tr_json *j);
void tr_json_end_object(struct tr_json *j);
void tr_json_begin_array(struct tr_json *j);
void tr_json_end_array(struct tr_json *j);

/* Writes an object key (a plain ASCII literal; not escaped). */
void tr_json_key(struct tr_json *j, const char *key);

/* Scalar values. */
void tr_json_string(struct tr_json *j, const char *s, size_t len);
void tr_json_cstring(struct tr_json *j, const char *s);
void tr_json_uint(struct tr_json *j, uint64_t v);
void tr_json_int(struct tr_json *j, int64_t v);
void tr_json_bool(struct tr_json *j, bool v);
/* A number with exactly `decimals` digits after the point, e.g. 2.000. */
void tr_json_fixed(struct tr_json *j, double v, int decimals);

/* A string built of parts: begin, any number of escaped text parts and base64 payloads, end.
 * tr_json_base64(j, blob) is begin + base64 part + end. */
void tr_json_string_begin(struct tr_json *j);
void tr_json_string_part(struct tr_json *j, const char *s, size_t len);
void tr_json_string_base64(struct tr_json *j, struct tr_blob *blob);
void tr_json_string_end(struct tr_json *j);
void tr_json_base64(struct tr_json *j, struct tr_blob *blob);
/* A string of digest's 64 hex digits, written when the document is read (see tr_doc.h). */
void tr_json_digest(struct tr_json *j, struct tr_digest *digest);

/* Appends s escaped as JSON string content (no quotes) to doc; invalid UTF-8 -> U+FFFD. */
void tr_json_escape_into(struct tr_doc *doc, const char *s, size_t len);

/* --- render --- */
/* writers of a ToolResult, shared by the formats. */

struct tr_render_style;

/* What tr_render_tool_object writes beyond the fields that are always there. */
enum {
	TR_OBJECT_PAYLOADS = 1, /* "data" of images[] and documents[] (else omitted) */
	TR_OBJECT_CONTENT = 2,  /* "content" (else omitted: MCP _meta, where the text is a block) */
};

/* Writes res as the ToolResult object of docs/SPEC.md §2 onto j, with the parts flags (TR_OBJECT_*)
 * ask for. */
void tr_render_tool_object(struct tr_json *j, const struct tr_result *res, unsigned flags);

/* The text a failed res shows a model (its length in *len): the error sentence, or the content
 * when it holds more after that sentence (a broken SVG's source, docs/SPEC.md §3 "SVG"). */
const char *tr_render_failure_text(const struct tr_result *res, size_t *len);

/* Writes into buf the continuation phrase of res in format fmt under style ("read
 * main.c:2001-4000.tool.mcp.json", or the front end's words); "" when res is whole. */
void tr_render_continuation(const struct tr_result *res, enum tr_format fmt,
			    const struct tr_render_style *style, char *buf, size_t size);

/* Writes res in provider format fmt (docs/SPEC.md §6) onto j: the first text block is the content (or
 * the error; for an empty file, its shortResult, since providers reject empty text blocks);
 * images, then documents follow (mcp: documents only with style->mcp_documents); a truncated
 * result ends with a text block "[shortResult. More: PHRASE]", PHRASE from
 * tr_render_continuation. mcp ends with structuredContent (style->mcp_structured) or _meta. fmt
 * is a provider format (others write nothing). */
void tr_render_provider(struct tr_json *j, const struct tr_result *res, enum tr_format fmt,
			const struct tr_render_style *style);

/* Appends res as txt (docs/SPEC.md §6) to doc: the content (or error), then footer lines. */
void tr_render_txt(struct tr_doc *doc, const struct tr_result *res,
		   const struct tr_render_style *style);

#endif
