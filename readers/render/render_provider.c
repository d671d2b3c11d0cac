/* render_provider.c - provider-ready shapes of a ToolResult (SPEC §6): Anthropic tool_result
 * content, OpenAI function_call_output items, MCP CallToolResult. */
#include <stdio.h>
#include <string.h>

#include "render.h"

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

/* The continuation hint a model needs when the result is partial ("" when none): the sibling to
 * read next, in the same provider format ("main.c:2001-4000.tool.anthropic.json"). */
static void continuation_hint(const struct tr_result *res, const char *fmt, char *buf, size_t size)
{
	static const char suffix[] = ".tool.json";
	size_t len, stem;

	buf[0] = '\0';
	if (!res->success || !res->truncated || !res->next)
		return;
	len = strlen(res->next);
	stem = len >= sizeof(suffix) - 1 &&
			       strcmp(res->next + len - (sizeof(suffix) - 1), suffix) == 0
		       ? len - (sizeof(suffix) - 1)
		       : len;
	if (stem < len)
		snprintf(buf, size, "[%s. More: read %.*s.tool.%s.json]",
			 res->short_result ? res->short_result : "", (int)stem, res->next, fmt);
	else
		snprintf(buf, size, "[%s. More: read %s]",
			 res->short_result ? res->short_result : "", res->next);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
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

static void render_anthropic(struct tr_json *j, const struct tr_result *res, const char *hint)
{
	const char *text;
	size_t len;

	tr_json_begin_object(j);
	tr_json_key(j, "content");
	tr_json_begin_array(j);
	text = result_text(res, &len);
	text_item(j, "text", "text", text, len);
	for (size_t i = 0; i < res->n_images; i++)
		anthropic_block(j, "image", res->images[i].media_type, res->images[i].data);
	for (size_t i = 0; i < res->n_documents; i++)
		anthropic_block(j, "document", res->documents[i].media_type,
				res->documents[i].data);
	if (*hint)
		text_item(j, "text", "text", hint, strlen(hint));
	tr_json_end_array(j);
	tr_json_key(j, "is_error");
	tr_json_bool(j, !res->success);
	tr_json_end_object(j);
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

static void render_openai(struct tr_json *j, const struct tr_result *res, const char *hint)
{
	const char *text;
	size_t len;

	tr_json_begin_object(j);
	tr_json_key(j, "output");
	tr_json_begin_array(j);
	text = result_text(res, &len);
	text_item(j, "input_text", "text", text, len);
	for (size_t i = 0; i < res->n_images; i++) {
		tr_json_begin_object(j);
		tr_json_key(j, "type");
		tr_json_cstring(j, "input_image");
		tr_json_key(j, "image_url");
		data_url(j, res->images[i].media_type, res->images[i].data);
		tr_json_end_object(j);
	}
	for (size_t i = 0; i < res->n_documents; i++) {
		tr_json_begin_object(j);
		tr_json_key(j, "type");
		tr_json_cstring(j, "input_file");
		tr_json_key(j, "filename");
		tr_json_cstring(j, base_name(res->path ? res->path : "document.pdf"));
		tr_json_key(j, "file_data");
		data_url(j, res->documents[i].media_type, res->documents[i].data);
		tr_json_end_object(j);
	}
	if (*hint)
		text_item(j, "input_text", "text", hint, strlen(hint));
	tr_json_end_array(j);
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

static void render_mcp(struct tr_json *j, const struct tr_result *res, const char *hint)
{
	const char *text;
	size_t len;

	tr_json_begin_object(j);
	tr_json_key(j, "content");
	tr_json_begin_array(j);
	text = result_text(res, &len);
	text_item(j, "text", "text", text, len);
	for (size_t i = 0; i < res->n_images; i++) {
		tr_json_begin_object(j);
		tr_json_key(j, "type");
		tr_json_cstring(j, "image");
		tr_json_key(j, "data");
		tr_json_base64(j, res->images[i].data);
		tr_json_key(j, "mimeType");
		tr_json_cstring(j, res->images[i].media_type);
		tr_json_end_object(j);
	}
	for (size_t i = 0; i < res->n_documents; i++) {
		tr_json_begin_object(j);
		tr_json_key(j, "type");
		tr_json_cstring(j, "resource");
		tr_json_key(j, "resource");
		tr_json_begin_object(j);
		tr_json_key(j, "uri");
		file_uri(j, res);
		tr_json_key(j, "mimeType");
		tr_json_cstring(j, res->documents[i].media_type);
		tr_json_key(j, "blob");
		tr_json_base64(j, res->documents[i].data);
		tr_json_end_object(j);
		tr_json_end_object(j);
	}
	if (*hint)
		text_item(j, "text", "text", hint, strlen(hint));
	tr_json_end_array(j);
	tr_json_key(j, "isError");
	tr_json_bool(j, !res->success);
	tr_json_key(j, "structuredContent");
	tr_render_tool_object(j, res, false);
	tr_json_end_object(j);
}

void tr_render_provider(struct tr_json *j, const struct tr_result *res, enum tr_format fmt)
{
	char hint[1024];

	switch (fmt) {
	case TR_FORMAT_ANTHROPIC:
		continuation_hint(res, "anthropic", hint, sizeof(hint));
		render_anthropic(j, res, hint);
		break;
	case TR_FORMAT_OPENAI:
		continuation_hint(res, "openai", hint, sizeof(hint));
		render_openai(j, res, hint);
		break;
	case TR_FORMAT_MCP:
		continuation_hint(res, "mcp", hint, sizeof(hint));
		render_mcp(j, res, hint);
		break;
	case TR_FORMAT_TOOL: tr_render_tool_object(j, res, true); break;
	}
}
