/* render.h - writers of a ToolResult into JSON, shared by the provider formats. */
#ifndef TR_RENDER_H
#define TR_RENDER_H

#include <stdbool.h>

#include "json_writer.h"
#include "tr_result.h"
#include "tr_selector.h"

/* Writes res as the ToolResult object of SPEC §2 onto j. Without payloads, images[] and
 * documents[] entries omit "data" (MCP structuredContent). */
void tr_render_tool_object(struct tr_json *j, const struct tr_result *res, bool with_payloads);

/* Writes res in provider format fmt (SPEC §6) onto j: the first text block is the content (or
 * the error; for an empty file, its shortResult, since providers reject empty text blocks);
 * images, then documents follow; a truncated result ends with a text block naming the sibling
 * to read next in the same format (e.g. main.c:2001-4000.tool.anthropic.json). */
void tr_render_provider(struct tr_json *j, const struct tr_result *res, enum tr_format fmt);

/* Completes doc (doc.c): its segment table and every literal run (built by doubling) move into
 * one exact-size block, so a cached document is two allocations holding about tr_doc_size()
 * bytes (what the daemon's cache counts), made once it is whole instead of left where its
 * growing buffers happened to be. Appends after it fail. The bytes are unchanged; out of memory
 * leaves doc as it was built. */
struct tr_doc;
void tr_doc_seal(struct tr_doc *doc);

#endif
