/* SPDX-License-Identifier: MIT */
/* render_provider.c - provider-ready shapes of a ToolResult (docs/SPEC.md §6): Anthropic tool_result
 * content, OpenAI function_call_output items, MCP CallToolResult. */
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "tr_read.h"
#include "util.h"

/* The first text block: the error, or the content; an empty content (an empty file) gives the
 * short result instead, because providers reject empty text blocks (the Messages API answers
 * "text content blocks must be non-empty"). */
static const char *result_text(const struct tr_result *res, size_t *len)
{
	const char *text = res->content.data;

	if (!res->success && res->error_text)
		text = res->error_text;
	else if (res->content.len == 0 || !text)
		text = res->short_result ? res->short_result : "(empty)";
	else {
		*len = res->content.len;
		return text;
	}
	*len = strlen(text);
	return text;
}

static void text_item(struct tr_json *j, const char *type, const char *field, const char *text,
		      size_t len)
{
	tr_json_begin_object(j);
	tr_json_key(j, "type");
	tr_json_cstring(j, type);
	tr_json_key(j, field);
	tr_json_string(j, text, len);
	tr_json_end_object(j);
}

/* {"type":TYPE,"source":{"type":"base64","media_type":...,"data":...}} */
static void anthropic_block(struct tr_json *j, const char *type, const char *media_type,
			    struct tr_blob *data)
{
	tr_json_begin_object(j);
	tr_json_key(j, "type");
	tr_json_cstring(j, type);
	tr_json_key(j, "source");
	tr_json_begin_object(j);
	tr_json_key(j, "type");
	tr_json_cstring(j, "base64");
	tr_json_key(j, "media_type");
	tr_json_cstring(j, media_type);
	tr_json_key(j, "data");
	tr_json_base64(j, data);
	tr_json_end_object(j);
	tr_json_end_object(j);
}

static void anthropic_image(struct tr_json *j, const struct tr_result *res,
			    const struct tr_image *img)
{
	(void)res;
	anthropic_block(j, "image", img->media_type, img->data);
}

static void anthropic_document(struct tr_json *j, const struct tr_result *res,
			       const struct tr_document *doc)
{
	(void)res;
	anthropic_block(j, "document", doc->media_type, doc->data);
}

static void data_url(struct tr_json *j, const char *media_type, struct tr_blob *blob)
{
	tr_json_string_begin(j);
	tr_json_string_part(j, "data:", 5);
	tr_json_string_part(j, media_type, strlen(media_type));
	tr_json_string_part(j, ";base64,", 8);
	tr_json_string_base64(j, blob);
	tr_json_string_end(j);
}

static void openai_image(struct tr_json *j, const struct tr_result *res, const struct tr_image *img)
{
	(void)res;
	tr_json_begin_object(j);
	tr_json_key(j, "type");
	tr_json_cstring(j, "input_image");
	tr_json_key(j, "image_url");
	data_url(j, img->media_type, img->data);
	tr_json_end_object(j);
}

static void openai_document(struct tr_json *j, const struct tr_result *res,
			    const struct tr_document *doc)
{
	tr_json_begin_object(j);
	tr_json_key(j, "type");
	tr_json_cstring(j, "input_file");
	tr_json_key(j, "filename");
	tr_json_cstring(j, tr_path_base_name(res->path ? res->path : "document.pdf"));
	tr_json_key(j, "file_data");
	data_url(j, doc->media_type, doc->data);
	tr_json_end_object(j);
}

/* file:// URI of the result's file, percent-encoding what a URI path may not hold. */
static void file_uri(struct tr_json *j, const struct tr_result *res)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *path = res->abs_path ? res->abs_path : (res->path ? res->path : "");
	char enc[3] = {'%', 0, 0};

	tr_json_string_begin(j);
	tr_json_string_part(j, path[0] == '/' ? "file://" : "file:", path[0] == '/' ? 7 : 5);
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/-._~!$&'()*+,;=:@", *p)) {
			tr_json_string_part(j, (const char *)p, 1);
		} else {
			enc[1] = hex[*p >> 4];
			enc[2] = hex[*p & 15];
			tr_json_string_part(j, enc, 3);
		}
	}
	tr_json_string_end(j);
}

/* {"type":TYPE,"data":BASE64,"mimeType":...}: MCP's image and audio blocks */
static void mcp_data_block(struct tr_json *j, const char *type, struct tr_blob *data,
			   const char *media_type)
{
	tr_json_begin_object(j);
	tr_json_key(j, "type");
	tr_json_cstring(j, type);
	tr_json_key(j, "data");
	tr_json_base64(j, data);
	tr_json_key(j, "mimeType");
	tr_json_cstring(j, media_type);
	tr_json_end_object(j);
}

static void mcp_image(struct tr_json *j, const struct tr_result *res, const struct tr_image *img)
{
	(void)res;
	mcp_data_block(j, "image", img->data, img->media_type);
}

static void mcp_document(struct tr_json *j, const struct tr_result *res,
			 const struct tr_document *doc)
{
	tr_json_begin_object(j);
	tr_json_key(j, "type");
	tr_json_cstring(j, "resource");
	tr_json_key(j, "resource");
	tr_json_begin_object(j);
	tr_json_key(j, "uri");
	file_uri(j, res);
	tr_json_key(j, "mimeType");
	tr_json_cstring(j, doc->media_type);
	tr_json_key(j, "blob");
	tr_json_base64(j, doc->data);
	tr_json_end_object(j);
	tr_json_end_object(j);
}

/* The first entry of audio[] whose type is in types (NULL-terminated), or NULL. */
static const struct tr_audio *audio_of(const struct tr_result *res, const char *const *types)
{
	for (size_t i = 0; i < res->n_audio; i++)
		for (const char *const *t = types; *t; t++)
			if (strcmp(res->audio[i].media_type, *t) == 0)
				return &res->audio[i];
	return NULL;
}

/* Anthropic's API takes no audio: the model is told where it is. */
static void anthropic_audio(struct tr_json *j, const struct tr_result *res)
{
	static const char note[] =
		"[Audio is not accepted by Anthropic's API, so it is not attached here; the "
		"MCP and OpenAI formats (.tool.mcp.json, .tool.openai.json) carry it.]";

	if (res->n_audio)
		text_item(j, "text", "text", note, sizeof(note) - 1);
}

/* MCP: {"type":"audio","data":...,"mimeType":...}, the type Gemini takes (docs/SPEC.md §6). */
static void mcp_audio(struct tr_json *j, const struct tr_result *res)
{
	static const char *const gemini[] = {"audio/wav", "audio/mp3",  "audio/aiff", "audio/aac",
					     "audio/ogg", "audio/flac", NULL};
	const struct tr_audio *a = audio_of(res, gemini);

	if (a)
		mcp_data_block(j, "audio", a->data, a->media_type);
}

/* OpenAI: after "output", "input_audio": [a Chat Completions input_audio part], which the
 * harness puts in a user message (function outputs take no audio). */
static void openai_audio(struct tr_json *j, const struct tr_result *res)
{
	static const char *const openai[] = {"audio/wav", "audio/mp3", NULL};
	const struct tr_audio *a = audio_of(res, openai);

	if (!a)
		return;
	tr_json_key(j, "input_audio");
	tr_json_begin_array(j);
	tr_json_begin_object(j);
	tr_json_key(j, "type");
	tr_json_cstring(j, "input_audio");
	tr_json_key(j, "input_audio");
	tr_json_begin_object(j);
	tr_json_key(j, "data");
	tr_json_base64(j, a->data);
	tr_json_key(j, "format");
	tr_json_cstring(j, strcmp(a->media_type, "audio/wav") == 0 ? "wav" : "mp3");
	tr_json_end_object(j);
	tr_json_end_object(j);
	tr_json_end_array(j);
}

/* How one provider shapes a result: the list of blocks under list_key, each block written by
 * the functions below, then the error flag under error_key (none when NULL). */
struct provider_shape {
	const char *list_key;  /* "content" or "output" */
	const char *text_type; /* type of text blocks */
	void (*image)(struct tr_json *j, const struct tr_result *res, const struct tr_image *img);
	void (*document)(struct tr_json *j, const struct tr_result *res,
			 const struct tr_document *doc);
	const char *error_key;
	bool mcp; /* documents only on request; structuredContent or _meta after the blocks */
};

static const struct provider_shape anthropic_shape = {
	"content", "text", anthropic_image, anthropic_document, "is_error", false,
};
static const struct provider_shape openai_shape = {
	"output", "input_text", openai_image, openai_document, NULL, false,
};
static const struct provider_shape mcp_shape = {
	"content", "text", mcp_image, mcp_document, "isError", true,
};

void tr_render_provider(struct tr_json *j, const struct tr_result *res, enum tr_format fmt,
			const struct tr_render_style *style)
{
	const struct provider_shape *shape = fmt == TR_FORMAT_ANTHROPIC ? &anthropic_shape
					     : fmt == TR_FORMAT_OPENAI  ? &openai_shape
					     : fmt == TR_FORMAT_MCP     ? &mcp_shape
									: NULL;
	const char *text;
	char more[1024], hint[1280];
	size_t len;

	if (!shape)
		return; /* not a provider format: tr_render writes the others */
	tr_render_continuation(res, fmt, style, more, sizeof(more));
	hint[0] = '\0';
	if (*more)
		snprintf(hint, sizeof(hint), "[%s. More: %s]",
			 res->short_result ? res->short_result : "", more);
	tr_json_begin_object(j);
	tr_json_key(j, shape->list_key);
	tr_json_begin_array(j);
	text = result_text(res, &len);
	text_item(j, shape->text_type, "text", text, len);
	for (size_t i = 0; i < res->n_images; i++)
		shape->image(j, res, &res->images[i]);
	for (size_t i = 0; i < res->n_documents && (!shape->mcp || style->mcp_documents); i++)
		shape->document(j, res, &res->documents[i]);
	if (fmt == TR_FORMAT_MCP)
		mcp_audio(j, res);
	else if (fmt == TR_FORMAT_ANTHROPIC)
		anthropic_audio(j, res);
	if (*hint)
		text_item(j, shape->text_type, "text", hint, strlen(hint));
	tr_json_end_array(j);
	if (fmt == TR_FORMAT_OPENAI)
		openai_audio(j, res);
	if (shape->error_key) {
		tr_json_key(j, shape->error_key);
		tr_json_bool(j, !res->success);
	}
	/* Claude Code and Codex show a model only structuredContent's JSON when it is present (and
	 * Codex then drops the images), so by default the ToolResult's fields travel in _meta,
	 * which clients keep from the model, without the content the text block already holds. */
	if (shape->mcp && style->mcp_structured) {
		tr_json_key(j, "structuredContent");
		tr_render_tool_object(j, res, TR_OBJECT_CONTENT);
	} else if (shape->mcp) {
		tr_json_key(j, "_meta");
		tr_json_begin_object(j);
		tr_json_key(j, "toolfs/result");
		tr_render_tool_object(j, res, 0);
		tr_json_end_object(j);
	}
	tr_json_end_object(j);
}
