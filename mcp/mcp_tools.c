/* SPDX-License-Identifier: MIT */
/* mcp_tools.c - what toolfs-mcp offers: the read and list_allowed_directories tools (tools/list
 * with the read tool's inputSchema, from mcp_args.def, and a description naming the limits in
 * force), the server/discover and initialize results, and tools/call's dispatch. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_args.h"
#include "mcp_internal.h"
#include "tr_tokens.h"

/* How long a 2026-07-28 client may keep tools/list: the list never changes while the process
 * runs; a day is the longest the official SDK honours. */
#define TOOLS_LIST_TTL_MS 86400000

/* The read tool's description, a format: each %llu is this server's max_lines (the window, the
 * example's offset one past it, its limit), so that the text says the limits in force. */
static const char read_description[] =
	"Read a file inside the allowed directories the way a multimodal Read tool does. Text and "
	"source code come with line numbers (cat -n format: the number, a tab, the line), lines "
	"1-%llu by default; images (PNG, JPEG, GIF, WebP, and BMP/TIFF/ICO converted) come as "
	"image blocks scaled to fit a model's limits; PDFs as the text of their pages (pages "
	"\"3-5\" also gives those pages rendered as images; region \"3@400x300+100+500\" zooms "
	"into a rectangle of page 3's image, region \"800x600+1200+400\" cuts one of an image at "
	"full resolution, never enlarged; a scanned page's text is read by OCR, under "
	"\"--- Page N (OCR) ---\"); Jupyter notebooks as their cells "
	"with outputs and figures; Word, Excel and PowerPoint files (and their OpenDocument "
	"cousins) as Markdown-like text, a pipe table per sheet and the text of each slide; "
	"SVG (and .svgz) files as their numbered source plus the drawing rendered as a PNG "
	"image block (source lines only when offset/limit are given); "
	"audio (MP3, WAV, FLAC, Ogg, M4A, AIFF) as its duration, codec, tags, chapters and "
	"loudness outline with an audio block (no transcription), and video (MP4/MOV, WebM, "
	"Matroska, AVI, MPEG-TS) as its streams, a contact sheet of frames with their times "
	"(time \"T\": one frame) and its subtitles as timed text; time \"T1-T2\" reads a span. "
	"Binary files are refused with a description of what they are. "
	"A result that does not hold the whole file ends with a line saying how to read on, e.g. "
	"\"call read with offset %llu, limit %llu\": call read again with those arguments. "
	"file_path is absolute, or relative to the first allowed directory "
	"(list_allowed_directories).";

/* The outputSchema of read with mcp_structured: the ToolResult (docs/SPEC.md §2) without payloads. */
static cJSON *tool_result_schema(void)
{
	static const char schema[] =
		"{\"type\":\"object\",\"properties\":{"
		"\"success\":{\"type\":\"boolean\"},"
		"\"contentType\":{\"type\":\"string\",\"enum\":[\"text\",\"image\",\"pdf\","
		"\"notebook\","
		"\"document\",\"spreadsheet\",\"presentation\",\"audio\",\"video\",\"binary\","
		"\"unknown\"]},"
		"\"path\":{\"type\":\"string\"},\"mimeType\":{\"type\":\"string\"},"
		"\"content\":{\"type\":\"string\"},\"shortResult\":{\"type\":\"string\"},"
		"\"truncated\":{\"type\":\"boolean\"},\"next\":{\"type\":\"string\"},"
		"\"range\":{\"type\":\"object\"},\"lineCount\":{\"type\":\"integer\"},"
		"\"images\":{\"type\":\"array\"},\"documents\":{\"type\":\"array\"},"
		"\"audio\":{\"type\":\"array\"},"
		"\"metadata\":{\"type\":\"object\"},\"error\":{\"type\":\"string\"},"
		"\"errorCode\":{\"type\":\"string\"}},"
		"\"required\":[\"success\",\"contentType\",\"path\",\"content\",\"shortResult\","
		"\"truncated\",\"metadata\"]}";

	return cJSON_Parse(schema);
}

/* The read tool's description: read_description, the contentType values a result carries, what
 * a result costs, and this server's option values (every option of include/tr_options.def it
 * serves), so that a model knows the limits it reads under. Returns a malloc'd string or NULL. */
static char *describe_read(const struct tr_options *opts)
{
	char types[160], value[32], budget[96], *head = NULL;
	size_t cap = sizeof(read_description) + 1536, used;
	unsigned long long lines = (unsigned long long)opts->max_lines;
	char *text = malloc(cap);
	uint32_t dim = (uint32_t)(opts->image_max_dim > 100000 ? 100000 : opts->image_max_dim);

	if (!text)
		return NULL;
	if (asprintf(&head, read_description, lines, lines + 1, lines) < 0) {
		free(text);
		return NULL;
	}
	tr_content_types_list(types, sizeof(types));
	if (opts->max_tokens)
		snprintf(budget, sizeof(budget), "at most %llu tokens of text by default",
			 (unsigned long long)opts->max_tokens);
	else
		snprintf(budget, sizeof(budget), "text up to max_output bytes");
	used = (size_t)snprintf(
		text, cap,
		"%s The types read (contentType): %s. A PDF page not rendered (or its text not "
		"read) within max_render_ms says timeout; the other pages are still there. Costs: "
		"a text file's result "
		"holds %s (max_tokens sets fewer or more per call; line numbers cost about 4 "
		"tokens a line); "
		"each image costs up to about %llu tokens (Claude: width x height / 750) or %llu "
		"(OpenAI tiles); each result says its cost in metadata.tokens. This server's "
		"options:",
		head, types, budget, (unsigned long long)tr_tokens_image_anthropic(dim, dim),
		(unsigned long long)tr_tokens_image_openai(dim, dim));
	for (size_t i = 0; tr_option_names[i] && used < cap; i++) {
		const struct tr_option_doc *doc = tr_option_describe(tr_option_names[i], NULL, 0);

		if (!(doc->fronts & TR_FRONT_MCP))
			continue;
		tr_option_format(opts, doc->name, value, sizeof(value));
		used += (size_t)snprintf(text + used, cap - used, " %s=%s", doc->name, value);
	}
	if (used + 1 < cap)
		strcat(text, ".");
	free(head);
	return text;
}

/* Adds the server's name, title and version as member key of obj. */
static void add_server_info(cJSON *obj, const char *key)
{
	cJSON *info = cJSON_AddObjectToObject(obj, key);

	cJSON_AddStringToObject(info, "name", "toolfs-mcp");
	cJSON_AddStringToObject(info, "title", "toolfs");
	cJSON_AddStringToObject(info, "version", TOOLFS_VERSION);
}

/* A 2026-07-28 result that never changes while the process runs: how long a client may keep
 * it, for this client only (it names this server's options), and who answered. */
static void add_cache_hints(cJSON *result)
{
	cJSON_AddNumberToObject(result, "ttlMs", TOOLS_LIST_TTL_MS);
	cJSON_AddStringToObject(result, "cacheScope", "private");
	add_server_info(cJSON_AddObjectToObject(result, "_meta"), META_SERVER_INFO);
}

static const char instructions[] =
	"Use the read tool to read files: numbered text, images you can see, PDFs, notebooks, "
	"Word, Excel and PowerPoint files, SVG drawings, audio and video. Follow the "
	"continuation line of a truncated result to read on.";

/* A tool's annotations: it only reads, the same answer each time, in a closed world. */
static void add_read_only_hints(cJSON *ann)
{
	cJSON_AddBoolToObject(ann, "readOnlyHint", true);
	cJSON_AddBoolToObject(ann, "destructiveHint", false);
	cJSON_AddBoolToObject(ann, "idempotentHint", true);
	cJSON_AddBoolToObject(ann, "openWorldHint", false);
}

/* Adds the list_allowed_directories tool to tools. */
static void add_list_tool(cJSON *tools)
{
	cJSON *list = cJSON_CreateObject(), *schema, *ann;

	cJSON_AddItemToArray(tools, list);
	cJSON_AddStringToObject(list, "name", "list_allowed_directories");
	cJSON_AddStringToObject(list, "title", "List allowed directories");
	cJSON_AddStringToObject(list, "description",
				"List the directories the read tool may read, one per line. "
				"Relative file paths are relative to the first.");
	schema = cJSON_AddObjectToObject(list, "inputSchema");
	cJSON_AddStringToObject(schema, "type", "object");
	cJSON_AddObjectToObject(schema, "properties");
	cJSON_AddBoolToObject(schema, "additionalProperties", false);
	ann = cJSON_AddObjectToObject(list, "annotations");
	add_read_only_hints(ann);
}

/* The tools/list result; modern: with the cache hints and the server's info of 2026-07-28. */
static char *build_tools_list(const struct tr_options *opts, bool modern)
{
	bool structured = opts->mcp_structured;
	char *description = describe_read(opts);
	cJSON *result, *tools, *read, *ann;
	char *text;

	if (!description)
		return NULL;
	result = cJSON_CreateObject();
	tools = cJSON_AddArrayToObject(result, "tools");
	read = cJSON_CreateObject();
	cJSON_AddItemToArray(tools, read);
	cJSON_AddStringToObject(read, "name", "read");
	cJSON_AddStringToObject(read, "title", "Read file");
	cJSON_AddStringToObject(read, "description", description);
	free(description);
	cJSON_AddItemToObject(read, "inputSchema", mcp_args_schema(opts->max_lines));
	if (structured)
		cJSON_AddItemToObject(read, "outputSchema", tool_result_schema());
	ann = cJSON_AddObjectToObject(read, "annotations");
	cJSON_AddStringToObject(ann, "title", "Read file");
	add_read_only_hints(ann);

	add_list_tool(tools);
	if (modern)
		add_cache_hints(result);
	text = cJSON_PrintUnformatted(result);
	cJSON_Delete(result);
	return text;
}

/* The server/discover result (without resultType, which the wire adds). */
static char *build_discover(void)
{
	cJSON *result = cJSON_CreateObject();
	char *text;

	cJSON_AddItemToObject(result, "supportedVersions", mcp_supported_versions());
	cJSON_AddBoolToObject(
		cJSON_AddObjectToObject(cJSON_AddObjectToObject(result, "capabilities"), "tools"),
		"listChanged", false);
	cJSON_AddStringToObject(result, "instructions", instructions);
	add_cache_hints(result);
	text = cJSON_PrintUnformatted(result);
	cJSON_Delete(result);
	return text;
}

struct cJSON *mcp_tools_initialize_result(const char *version)
{
	cJSON *result = cJSON_CreateObject(), *capabilities;

	cJSON_AddStringToObject(result, "protocolVersion", version);
	capabilities = cJSON_AddObjectToObject(result, "capabilities");
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(capabilities, "tools"), "listChanged", false);
	add_server_info(result, "serverInfo");
	cJSON_AddStringToObject(result, "instructions", instructions);
	return result;
}

int mcp_tools_init(struct mcp_tools *tools, const struct tr_options *opts)
{
	tools->list = build_tools_list(opts, false);
	tools->list_modern = build_tools_list(opts, true);
	tools->discover = build_discover();
	if (tools->list && tools->list_modern && tools->discover)
		return 0;
	mcp_tools_destroy(tools);
	return -1;
}

void mcp_tools_destroy(struct mcp_tools *tools)
{
	free(tools->list);
	free(tools->list_modern);
	free(tools->discover);
	tools->list = tools->list_modern = tools->discover = NULL;
}

/* --- tools/call --- */

/* The length of the UTF-8 character at s[0..len) (len >= 1), or minus the length of its
 * maximal invalid subpart, which one U+FFFD stands for (as Python's errors="replace"). */
static int utf8_char(const unsigned char *s, size_t len)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int n = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;

	if (n <= 1)
		return n ? 1 : -1;
	lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : lo;
	hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : hi;
	for (int i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
		if ((size_t)i >= len || s[i] < lo || s[i] > hi)
			return -i;
	return n;
}

/* Appends name to out (room for 3 bytes per byte of name), invalid UTF-8 as U+FFFD: a root's
 * name is bytes, a message's text is UTF-8. */
static char *append_utf8(char *out, const char *name)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t len = strlen(name);

	while (len) {
		int n = utf8_char(s, len);

		if (n > 0) {
			memcpy(out, s, (size_t)n);
			out += n;
		} else {
			memcpy(out, "\xef\xbf\xbd", 3);
			out += 3;
			n = -n;
		}
		s += n;
		len -= (size_t)n;
	}
	*out = '\0';
	return out;
}

static void answer_list_directories(struct mcp_calls *calls, const char *id, bool modern)
{
	struct mcp_roots *roots = mcp_session_roots_get(calls->roots);
	cJSON *result = cJSON_CreateObject();
	cJSON *content = cJSON_AddArrayToObject(result, "content");
	cJSON *block = cJSON_CreateObject();
	size_t size = 1;
	char *text;

	for (size_t i = 0; i < roots->n; i++)
		size += 3 * strlen(roots->dirs[i].path) + 1;
	text = calloc(1, size);
	if (text) {
		char *end = text;

		for (size_t i = 0; i < roots->n; i++) {
			if (i)
				*end++ = '\n';
			end = append_utf8(end, roots->dirs[i].path);
		}
	}
	cJSON_AddItemToArray(content, block);
	cJSON_AddStringToObject(block, "type", "text");
	cJSON_AddStringToObject(block, "text",
				!text      ? ""
				: roots->n ? text
					   : "(no allowed directories)");
	cJSON_AddBoolToObject(result, "isError", false);
	free(text);
	mcp_roots_unref(roots);
	mcp_wire_result_json(calls->wire, id, result, modern);
}

void mcp_tools_call(struct mcp_calls *calls, const struct mcp_request_id *rid, const cJSON *params,
		    bool path_nul, bool modern)
{
	const char *id = rid->raw;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	char message[320];

	if (!cJSON_IsObject(params) || !cJSON_IsString(name)) {
		mcp_wire_error(calls->wire, id, RPC_INVALID_PARAMS,
			       "Invalid params: tools/call needs params {\"name\": TOOL, "
			       "\"arguments\": {...}}");
		return;
	}
	if (strcmp(name->valuestring, "read") == 0) {
		mcp_calls_start(calls, rid, args, path_nul, modern);
	} else if (strcmp(name->valuestring, "list_allowed_directories") == 0) {
		answer_list_directories(calls, id, modern);
	} else {
		snprintf(message, sizeof(message),
			 "Unknown tool: %.*s (the tools are read and list_allowed_directories)",
			 mcp_echoed(name->valuestring), name->valuestring);
		mcp_wire_error(calls->wire, id, RPC_INVALID_PARAMS, message);
	}
}
