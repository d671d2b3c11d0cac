/* SPDX-License-Identifier: MIT */
/* mcp_server.c - JSON-RPC 2.0 message handling of toolfs-mcp: the initialize handshake, ping,
 * tools/list, tools/call on a small pool of workers, cancellation and the client's roots for the
 * 2024/2025 revisions; server/discover and stateless requests for 2026-07-28. */
#include <cjson/cJSON.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "tr_tokens.h"

enum {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
	RPC_UNSUPPORTED_VERSION = -32022, /* 2026-07-28: data {supported, requested} */
};

/* The stateless revision: no handshake, every request names it in _meta with the client's
 * capabilities (docs/SPEC.md §7). */
#define MODERN_VERSION "2026-07-28"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_CLIENT_INFO "io.modelcontextprotocol/clientInfo"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"

/* How long a 2026-07-28 client may keep tools/list: the list never changes while the process
 * runs; a day is the longest the official SDK honours. */
#define TOOLS_LIST_TTL_MS 86400000

/* What a modern result adds to its members (the JSON text is spliced before the closing '}'). */
#define MODERN_RESULT_TAIL ",\"resultType\":\"complete\"}"

/* The protocol versions of the official TypeScript SDK (SUPPORTED_PROTOCOL_VERSIONS of
 * @modelcontextprotocol/sdk 1.32.2), newest first: a client's version is answered with itself
 * when listed, else with the newest, as the SDK's server does. */
static const char *const protocol_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07",
};

#define ROOTS_REQUEST_PREFIX "toolfs-roots-"

/* One tools/call of the read tool, queued or running. */
struct call {
	struct call *next;
	char *id;      /* the request id as sent (its raw JSON text); owned */
	char *key;     /* the id as cJSON prints it, which cancellation matches; owned */
	cJSON *args;   /* owned, may be NULL */
	bool path_nul; /* file_path held a NUL */
	bool modern;   /* a 2026-07-28 request: the result says resultType */
	bool cancelled;
	struct tr_cancel cancel; /* fired with cancelled: ends the read's sandboxed worker */
};

/* A request's id: its raw text, echoed as sent, and its value as cJSON prints it. */
struct request_id {
	char *raw, *key; /* owned; NULL when the request has none */
};

struct mcp_server {
	struct tr_options opts;
	mcp_emit_fn emit;
	void *emit_arg;
	pthread_mutex_t emit_lock;

	pthread_mutex_t roots_lock;
	struct mcp_roots *roots;   /* owned reference */
	bool client_roots;         /* the client declared the roots capability */
	unsigned long roots_asked; /* serial of the last roots/list request */

	char *tools_list;        /* the tools/list result, JSON */
	char *tools_list_modern; /* the same for 2026-07-28, with resultType and cache hints */
	char *discover;          /* the server/discover result, JSON */

	pthread_mutex_t lock; /* the queue, the running list, in_flight, stopping */
	pthread_cond_t work, idle;
	struct call *queue, *queue_tail, *running;
	unsigned in_flight;
	bool stopping;
	pthread_t *workers;
	unsigned n_workers;
};

/* --- output --- */

static void emit_text(struct mcp_server *s, const char *text, size_t len)
{
	pthread_mutex_lock(&s->emit_lock);
	s->emit(s->emit_arg, text, len);
	pthread_mutex_unlock(&s->emit_lock);
}

/* {"jsonrpc":"2.0","id":ID,"MEMBER":BODY}\n: ID the id's raw text (NULL: null), BODY JSON text. */
static void emit_response(struct mcp_server *s, const char *id, const char *member,
			  const char *body, size_t body_len)
{
	char *head = NULL;
	int head_len = asprintf(&head, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"%s\":", id ? id : "null",
				member);
	size_t len;
	char *msg;

	if (head_len < 0) {
		fputs("toolfs-mcp: out of memory answering a request\n", stderr);
		return;
	}
	len = (size_t)head_len + body_len + 2;
	msg = malloc(len);
	if (!msg) {
		free(head);
		fputs("toolfs-mcp: out of memory answering a request\n", stderr);
		return;
	}
	memcpy(msg, head, (size_t)head_len);
	memcpy(msg + head_len, body, body_len);
	memcpy(msg + len - 2, "}\n", 2);
	emit_text(s, msg, len);
	free(msg);
	free(head);
}

/* {"jsonrpc":"2.0","id":ID,"result":RESULT}\n, RESULT being JSON text. */
static void respond(struct mcp_server *s, const char *id, const char *result, size_t result_len)
{
	emit_response(s, id, "result", result, result_len);
}

/* A result of the 2026-07-28 revision: RESULT (a JSON object's text) with resultType. */
static void respond_modern(struct mcp_server *s, const char *id, const char *result,
			   size_t result_len)
{
	size_t tail = sizeof(MODERN_RESULT_TAIL) - 1;
	char *text = result_len ? malloc(result_len - 1 + tail) : NULL;

	if (!text) {
		fputs("toolfs-mcp: out of memory answering a request\n", stderr);
		return;
	}
	memcpy(text, result, result_len - 1); /* without its closing '}' */
	memcpy(text + result_len - 1, MODERN_RESULT_TAIL, tail);
	respond(s, id, text, result_len - 1 + tail);
	free(text);
}

/* How many bytes of name an error message echoes: at most 200, cut where a character starts so
 * that the line stays UTF-8. */
static int echoed(const char *name)
{
	size_t len = strnlen(name, 201);

	if (len > 200)
		for (len = 200; len > 0 && ((unsigned char)name[len] & 0xc0) == 0x80;)
			len--;
	return (int)len;
}

/* {"jsonrpc":"2.0","id":ID|null,"error":{"code":CODE,"message":MESSAGE[,"data":DATA]}}\n;
 * data (owned, may be NULL) is consumed. */
static void respond_error_data(struct mcp_server *s, const char *id, int code, const char *message,
			       cJSON *data)
{
	cJSON *error = cJSON_CreateObject();
	char *text = NULL;

	if (error && cJSON_AddNumberToObject(error, "code", code) &&
	    cJSON_AddStringToObject(error, "message", message) &&
	    (!data || cJSON_AddItemToObject(error, "data", data))) {
		data = NULL;
		text = cJSON_PrintUnformatted(error);
	}
	cJSON_Delete(data);
	cJSON_Delete(error);
	if (text)
		emit_response(s, id, "error", text, strlen(text));
	else
		fputs("toolfs-mcp: out of memory answering a request\n", stderr);
	free(text);
}

/* {"jsonrpc":"2.0","id":ID|null,"error":{"code":CODE,"message":MESSAGE}}\n */
static void respond_error(struct mcp_server *s, const char *id, int code, const char *message)
{
	respond_error_data(s, id, code, message, NULL);
}

/* Answers with result (consumed), with resultType when modern. */
static void respond_json(struct mcp_server *s, const char *id, cJSON *result, bool modern)
{
	char *text = result ? cJSON_PrintUnformatted(result) : NULL;

	if (text && modern)
		respond_modern(s, id, text, strlen(text));
	else if (text)
		respond(s, id, text, strlen(text));
	else
		respond_error(s, id, RPC_INTERNAL_ERROR, "Internal error: out of memory");
	free(text);
	cJSON_Delete(result);
}

/* --- the tools --- */

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

static cJSON *integer_property(const char *description)
{
	cJSON *p = cJSON_CreateObject();

	cJSON_AddStringToObject(p, "type", "integer");
	cJSON_AddNumberToObject(p, "minimum", 1);
	cJSON_AddStringToObject(p, "description", description);
	return p;
}

static cJSON *string_property(const char *description)
{
	cJSON *p = cJSON_CreateObject();

	cJSON_AddStringToObject(p, "type", "string");
	cJSON_AddStringToObject(p, "description", description);
	return p;
}

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

/* The tools/list result; modern: with the cache hints and the server's info of 2026-07-28. */
static char *build_tools_list(const struct tr_options *opts, bool modern)
{
	bool structured = opts->mcp_structured;
	char *description = describe_read(opts), limit[160];
	cJSON *result, *tools, *read, *list;
	cJSON *schema, *props, *required, *ann;
	char *text;

	if (!description)
		return NULL;
	result = cJSON_CreateObject();
	tools = cJSON_AddArrayToObject(result, "tools");
	read = cJSON_CreateObject();
	list = cJSON_CreateObject();
	cJSON_AddItemToArray(tools, read);
	cJSON_AddStringToObject(read, "name", "read");
	cJSON_AddStringToObject(read, "title", "Read file");
	cJSON_AddStringToObject(read, "description", description);
	free(description);
	schema = cJSON_AddObjectToObject(read, "inputSchema");
	cJSON_AddStringToObject(schema, "type", "object");
	props = cJSON_AddObjectToObject(schema, "properties");
	cJSON_AddItemToObject(
		props, "file_path",
		string_property("The file to read: an absolute path inside an allowed "
				"directory, or a path relative to the first one."));
	cJSON_AddItemToObject(props, "offset",
			      integer_property("The first line (text), cell (notebook) or page "
					       "(PDF) to read, from 1. Default: the beginning."));
	snprintf(limit, sizeof(limit),
		 "How many lines, cells or pages to read. Default: %llu lines, the whole "
		 "notebook, or 10 PDF pages.",
		 (unsigned long long)opts->max_lines);
	cJSON_AddItemToObject(props, "limit", integer_property(limit));
	cJSON *pages = string_property("PDF pages to read and render as images: \"A\" or "
				       "\"A-B\", e.g. \"3\" or \"2-5\". Not with offset/limit.");
	cJSON_AddStringToObject(pages, "pattern", "^[1-9][0-9]*(-[1-9][0-9]*)?$");
	cJSON_AddItemToObject(props, "pages", pages);
	cJSON *region = string_property(
		"A rectangle to look at closely, in pixels (ImageMagick geometry WxH+X+Y): of an "
		"image, \"800x600+1200+400\" (source pixels, cropped at full resolution, then "
		"scaled down to fit if need be, never enlarged); of a PDF page, \"P@WxH+X+Y\", "
		"e.g. \"3@400x300+100+500\" (pixels of the page image pages \"3\" shows, rendered "
		"again at the zoom that fills the output). "
		"Clipped to the image or page. Not with pages or offset/limit.");
	cJSON_AddStringToObject(region, "pattern",
				"^([1-9][0-9]*@)?[1-9][0-9]*x[1-9][0-9]*\\+(0|[1-9][0-9]*)\\+(0|[1-"
				"9][0-9]*)$");
	cJSON_AddItemToObject(props, "region", region);
	cJSON_AddItemToObject(
		props, "time",
		string_property(
			"Audio and video: the span to read, \"T\" (from T on), \"T1-T2\" "
			"or \"T1-\", each time in seconds (decimals allowed), MM:SS or "
			"HH:MM:SS, e.g. \"0-600\" or \"1:30-2:00\". Not with offset/limit."));
	cJSON_AddItemToObject(
		props, "max_tokens",
		integer_property("The most tokens of text to return (estimated in "
				 "o200k_base, line numbers included); a longer file "
				 "ends where they run out, with the offset to read on. "
				 "Default: the server's max_tokens."));
	cJSON *ocr = string_property("OCR (Tesseract): \"auto\" reads the text of scanned PDF "
				     "pages (no text layer), \"on\" also of images (screenshots, "
				     "photos of documents), \"off\" never. Default: the server's "
				     "ocr.");
	cJSON *ocr_values = cJSON_AddArrayToObject(ocr, "enum");

	cJSON_AddItemToArray(ocr_values, cJSON_CreateString("off"));
	cJSON_AddItemToArray(ocr_values, cJSON_CreateString("auto"));
	cJSON_AddItemToArray(ocr_values, cJSON_CreateString("on"));
	cJSON_AddItemToObject(props, "ocr", ocr);
	required = cJSON_AddArrayToObject(schema, "required");
	cJSON_AddItemToArray(required, cJSON_CreateString("file_path"));
	cJSON_AddBoolToObject(schema, "additionalProperties", false);
	if (structured)
		cJSON_AddItemToObject(read, "outputSchema", tool_result_schema());
	ann = cJSON_AddObjectToObject(read, "annotations");
	cJSON_AddStringToObject(ann, "title", "Read file");
	cJSON_AddBoolToObject(ann, "readOnlyHint", true);
	cJSON_AddBoolToObject(ann, "destructiveHint", false);
	cJSON_AddBoolToObject(ann, "idempotentHint", true);
	cJSON_AddBoolToObject(ann, "openWorldHint", false);

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
	cJSON_AddBoolToObject(ann, "readOnlyHint", true);
	cJSON_AddBoolToObject(ann, "destructiveHint", false);
	cJSON_AddBoolToObject(ann, "idempotentHint", true);
	cJSON_AddBoolToObject(ann, "openWorldHint", false);

	if (modern)
		add_cache_hints(result);
	text = cJSON_PrintUnformatted(result);
	cJSON_Delete(result);
	return text;
}

/* Every revision served, newest first: the modern one, then the handshake ones. */
static cJSON *supported_versions(void)
{
	cJSON *list = cJSON_CreateArray();

	cJSON_AddItemToArray(list, cJSON_CreateString(MODERN_VERSION));
	for (size_t i = 0; i < sizeof(protocol_versions) / sizeof(protocol_versions[0]); i++)
		cJSON_AddItemToArray(list, cJSON_CreateString(protocol_versions[i]));
	return list;
}

/* The server/discover result (without resultType, which respond_modern adds). */
static char *build_discover(void)
{
	cJSON *result = cJSON_CreateObject();
	char *text;

	cJSON_AddItemToObject(result, "supportedVersions", supported_versions());
	cJSON_AddBoolToObject(
		cJSON_AddObjectToObject(cJSON_AddObjectToObject(result, "capabilities"), "tools"),
		"listChanged", false);
	cJSON_AddStringToObject(result, "instructions", instructions);
	add_cache_hints(result);
	text = cJSON_PrintUnformatted(result);
	cJSON_Delete(result);
	return text;
}

static struct mcp_roots *current_roots(struct mcp_server *s)
{
	struct mcp_roots *roots;

	pthread_mutex_lock(&s->roots_lock);
	roots = mcp_roots_ref(s->roots);
	pthread_mutex_unlock(&s->roots_lock);
	return roots;
}

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

static void answer_list_directories(struct mcp_server *s, const char *id, bool modern)
{
	struct mcp_roots *roots = current_roots(s);
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
	respond_json(s, id, result, modern);
}

/* Runs a read call and answers it unless it was cancelled meanwhile. */
static void run_call(struct mcp_server *s, struct call *c)
{
	struct mcp_roots *roots = current_roots(s);
	size_t len = 0;
	char *result = mcp_read_tool(roots, &s->opts, c->args, c->path_nul, &c->cancel, &len);
	bool cancelled;

	mcp_roots_unref(roots);
	pthread_mutex_lock(&s->lock);
	cancelled = c->cancelled;
	pthread_mutex_unlock(&s->lock);
	if (cancelled)
		; /* the client gave up on it: no answer (MCP cancellation) */
	else if (result && c->modern)
		respond_modern(s, c->id, result, len);
	else if (result)
		respond(s, c->id, result, len);
	else
		respond_error(s, c->id, RPC_INTERNAL_ERROR, "Internal error: out of memory");
	free(result);
}

static void call_free(struct call *c)
{
	if (!c)
		return;
	free(c->id);
	free(c->key);
	cJSON_Delete(c->args);
	tr_cancel_destroy(&c->cancel);
	free(c);
}

static void unlink_call(struct call **list, struct call *c)
{
	for (; *list; list = &(*list)->next) {
		if (*list == c) {
			*list = c->next;
			return;
		}
	}
}

static void *worker_main(void *arg)
{
	struct mcp_server *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct call *c;

		while (!s->queue && !s->stopping)
			pthread_cond_wait(&s->work, &s->lock);
		if (!s->queue)
			break;
		c = s->queue;
		s->queue = c->next;
		if (!s->queue)
			s->queue_tail = NULL;
		c->next = s->running;
		s->running = c;
		/* under the lock: cancel_call fires only what it finds running */
		(void)tr_cancel_init(&c->cancel); /* when it fails: a cancel that never fires */
		pthread_mutex_unlock(&s->lock);
		run_call(s, c);
		pthread_mutex_lock(&s->lock);
		unlink_call(&s->running, c);
		call_free(c);
		if (--s->in_flight == 0) {
			pthread_cond_broadcast(&s->idle);
			/* Idle: give the pages of the reads just done back to the kernel. The worker
			 * arenas otherwise keep every page they held (an image decode, a PDF page
			 * render), and the server's RSS stays at its peak between calls. */
			pthread_mutex_unlock(&s->lock);
			malloc_trim(0);
			pthread_mutex_lock(&s->lock);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void start_call(struct mcp_server *s, const struct request_id *id, const cJSON *args,
		       bool path_nul, bool modern)
{
	struct call *c = calloc(1, sizeof(*c));

	if (c)
		c->cancel.fd =
			-1; /* its eventfd is made when it runs: a queue holds no descriptor */
	if (!c || !(c->id = strdup(id->raw)) || !(c->key = strdup(id->key)) ||
	    (args && !(c->args = cJSON_Duplicate(args, true)))) {
		call_free(c);
		respond_error(s, id->raw, RPC_INTERNAL_ERROR, "Internal error: out of memory");
		return;
	}
	c->path_nul = path_nul;
	c->modern = modern;
	if (!s->n_workers) {
		(void)tr_cancel_init(&c->cancel); /* when it fails: a cancel that never fires */
		run_call(s, c);
		call_free(c);
		return;
	}
	pthread_mutex_lock(&s->lock);
	if (s->queue_tail)
		s->queue_tail->next = c;
	else
		s->queue = c;
	s->queue_tail = c;
	s->in_flight++;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->lock);
}

/* notifications/cancelled: a queued call is dropped; a running one is not answered, and its
 * read's sandboxed worker, or its wait for one, is ended. */
static void cancel_call(struct mcp_server *s, const cJSON *params)
{
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(params, "requestId");
	char *id = req && (cJSON_IsString(req) || cJSON_IsNumber(req)) ? cJSON_PrintUnformatted(req)
								       : NULL;

	if (!id)
		return;
	pthread_mutex_lock(&s->lock);
	for (struct call *c = s->running; c; c = c->next)
		if (strcmp(c->key, id) == 0) {
			c->cancelled = true;
			tr_cancel_fire(&c->cancel);
		}
	for (struct call *c = s->queue, *prev = NULL; c; prev = c, c = c->next) {
		if (strcmp(c->key, id) != 0)
			continue;
		if (prev)
			prev->next = c->next;
		else
			s->queue = c->next;
		if (s->queue_tail == c)
			s->queue_tail = prev;
		call_free(c);
		if (--s->in_flight == 0)
			pthread_cond_broadcast(&s->idle);
		break;
	}
	pthread_mutex_unlock(&s->lock);
	free(id);
}

static void tools_call(struct mcp_server *s, const struct request_id *rid, const cJSON *params,
		       bool path_nul, bool modern)
{
	const char *id = rid->raw;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(params, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	char message[320];

	if (!cJSON_IsObject(params) || !cJSON_IsString(name)) {
		respond_error(s, id, RPC_INVALID_PARAMS,
			      "Invalid params: tools/call needs params {\"name\": TOOL, "
			      "\"arguments\": {...}}");
		return;
	}
	if (strcmp(name->valuestring, "read") == 0) {
		start_call(s, rid, args, path_nul, modern);
	} else if (strcmp(name->valuestring, "list_allowed_directories") == 0) {
		answer_list_directories(s, id, modern);
	} else {
		snprintf(message, sizeof(message),
			 "Unknown tool: %.*s (the tools are read and list_allowed_directories)",
			 echoed(name->valuestring), name->valuestring);
		respond_error(s, id, RPC_INVALID_PARAMS, message);
	}
}

/* --- the handshake and roots --- */

static void initialize(struct mcp_server *s, const char *id, const cJSON *params)
{
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	const cJSON *caps = cJSON_GetObjectItemCaseSensitive(params, "capabilities");
	const char *answer = protocol_versions[0];
	cJSON *result = cJSON_CreateObject(), *capabilities;

	for (size_t i = 0; cJSON_IsString(version) &&
			   i < sizeof(protocol_versions) / sizeof(protocol_versions[0]);
	     i++)
		if (strcmp(version->valuestring, protocol_versions[i]) == 0)
			answer = protocol_versions[i];
	pthread_mutex_lock(&s->roots_lock);
	s->client_roots = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(caps, "roots"));
	pthread_mutex_unlock(&s->roots_lock);
	cJSON_AddStringToObject(result, "protocolVersion", answer);
	capabilities = cJSON_AddObjectToObject(result, "capabilities");
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(capabilities, "tools"), "listChanged", false);
	add_server_info(result, "serverInfo");
	cJSON_AddStringToObject(result, "instructions", instructions);
	respond_json(s, id, result, false);
}

static void request_roots(struct mcp_server *s)
{
	char msg[128];
	unsigned long serial;
	bool ask;

	pthread_mutex_lock(&s->roots_lock);
	ask = s->client_roots;
	serial = ask ? ++s->roots_asked : 0;
	pthread_mutex_unlock(&s->roots_lock);
	if (!ask)
		return;
	snprintf(msg, sizeof(msg),
		 "{\"jsonrpc\":\"2.0\",\"id\":\"" ROOTS_REQUEST_PREFIX
		 "%lu\",\"method\":\"roots/list\"}\n",
		 serial);
	emit_text(s, msg, strlen(msg));
}

/* A response to one of the server's requests: roots/list's answer replaces the roots. */
static void take_response(struct mcp_server *s, const cJSON *id, const cJSON *msg)
{
	const cJSON *result = cJSON_GetObjectItemCaseSensitive(msg, "result");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(result, "roots");
	const cJSON *root;
	unsigned long serial;
	char **dirs;
	size_t n = 0;
	struct mcp_roots *roots, *old;

	if (!cJSON_IsString(id) ||
	    strncmp(id->valuestring, ROOTS_REQUEST_PREFIX, strlen(ROOTS_REQUEST_PREFIX)) != 0)
		return;
	serial = strtoul(id->valuestring + strlen(ROOTS_REQUEST_PREFIX), NULL, 10);
	if (!cJSON_IsArray(list)) {
		fputs("toolfs-mcp: the client's roots/list failed; keeping the directories\n",
		      stderr);
		return;
	}
	dirs = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(*dirs));
	if (!dirs)
		return;
	cJSON_ArrayForEach(root, list)
	{
		const cJSON *uri = cJSON_GetObjectItemCaseSensitive(root, "uri");
		char *path = cJSON_IsString(uri) ? mcp_file_uri_path(uri->valuestring) : NULL;

		if (path)
			dirs[n++] = path;
		else
			fputs("toolfs-mcp: a client root is not a file:// URI; left out\n", stderr);
	}
	roots = mcp_roots_new(dirs, n, true);
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	if (!roots)
		return;
	if (roots->n == 0) {
		/* As the reference server does: no usable root keeps the ones we have. */
		fputs("toolfs-mcp: the client gave no usable root; keeping the directories\n",
		      stderr);
		mcp_roots_unref(roots);
		return;
	}
	pthread_mutex_lock(&s->roots_lock);
	old = NULL;
	/* only the answer to the latest request counts: an older one is stale */
	if (serial && serial == s->roots_asked) {
		old = s->roots;
		s->roots = roots;
		roots = NULL;
	}
	pthread_mutex_unlock(&s->roots_lock);
	mcp_roots_unref(old);
	mcp_roots_unref(roots);
}

/* --- dispatch --- */

static bool blank(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	return true;
}

/* The id of msg (the parsed line[0..len)): its raw text when it is a JSON number or string, as
 * sent. Returns 0 (id->raw NULL when there is none), -1 when it is not a valid id, -2 when out
 * of memory. */
static int request_id(const cJSON *msg, const char *line, size_t len, struct request_id *id)
{
	static const char *const id_key[] = {"id"};
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(msg, "id");
	size_t at, size;

	id->raw = id->key = NULL;
	if (!item)
		return 0;
	if (!(cJSON_IsString(item) || cJSON_IsNumber(item)) ||
	    !mcp_json_find(line, len, id_key, 1, &at, &size) || !mcp_json_is_id(line + at, size))
		return -1;
	id->raw = strndup(line + at, size);
	id->key = cJSON_PrintUnformatted(item);
	return id->raw && id->key ? 0 : -2;
}

/* True when the read call's file_path string in line[0..len) holds a NUL. */
/* True when the string member keys[0..n) of the message's text holds \u0000, where cJSON's value
 * stops: the rest of the string is then unseen and the value must not pass as its prefix. */
static bool member_has_nul(const char *line, size_t len, const char *const *keys, size_t n)
{
	size_t at, size;

	return mcp_json_find(line, len, keys, n, &at, &size) && line[at] == '"' &&
	       mcp_json_string_has_nul(line + at, size);
}

static bool path_has_nul(const char *line, size_t len)
{
	static const char *const path_keys[] = {"params", "arguments", "file_path"};

	return member_has_nul(line, len, path_keys, 3);
}

/* True when "jsonrpc" or "method" holds \u0000 (see member_has_nul). */
static bool envelope_has_nul(const char *line, size_t len)
{
	static const char *const jsonrpc_key[] = {"jsonrpc"}, *const method_key[] = {"method"};

	return member_has_nul(line, len, jsonrpc_key, 1) ||
	       member_has_nul(line, len, method_key, 1);
}

/* --- the 2026-07-28 revision --- */

enum era { ERA_LEGACY, ERA_MODERN, ERA_ANSWERED };

/* Which revision request method speaks, by its params._meta: the modern one (server/discover
 * always), a handshake one (no version there, or one of protocol_versions), or none this server
 * speaks, then answered here with -32022 (or -32602 for a malformed envelope). */
static enum era request_era(struct mcp_server *s, const char *id, const char *method,
			    const cJSON *params, const char *line, size_t len)
{
	static const char *const version_keys[] = {"params", "_meta", META_VERSION};
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(meta, META_VERSION);
	bool discover = strcmp(method, "server/discover") == 0;
	char message[320];

	if (!version) {
		if (!discover && (cJSON_GetObjectItemCaseSensitive(meta, META_CAPABILITIES) ||
				  cJSON_GetObjectItemCaseSensitive(meta, META_CLIENT_INFO))) {
			respond_error(s, id, RPC_INVALID_PARAMS,
				      "Invalid params: a 2026-07-28 request names its version in "
				      "_meta[\"" META_VERSION "\"]");
			return ERA_ANSWERED;
		}
		return discover ? ERA_MODERN : ERA_LEGACY;
	}
	if (!cJSON_IsString(version)) {
		respond_error(s, id, RPC_INVALID_PARAMS,
			      "Invalid params: _meta[\"" META_VERSION "\"] must be a string");
		return ERA_ANSWERED;
	}
	if (member_has_nul(line, len, version_keys, 3)) {
		respond_error(s, id, RPC_INVALID_PARAMS,
			      "Invalid params: _meta[\"" META_VERSION "\"] holds a NUL character");
		return ERA_ANSWERED;
	}
	if (strcmp(version->valuestring, MODERN_VERSION) == 0) {
		if (!discover &&
		    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(meta, META_CAPABILITIES))) {
			respond_error(s, id, RPC_INVALID_PARAMS,
				      "Invalid params: a 2026-07-28 request carries the client's "
				      "capabilities in _meta[\"" META_CAPABILITIES "\"]");
			return ERA_ANSWERED;
		}
		return ERA_MODERN;
	}
	for (size_t i = 0; i < sizeof(protocol_versions) / sizeof(protocol_versions[0]); i++)
		if (strcmp(version->valuestring, protocol_versions[i]) == 0)
			return discover ? ERA_MODERN : ERA_LEGACY;
	cJSON *data = cJSON_CreateObject();

	cJSON_AddItemToObject(data, "supported", supported_versions());
	cJSON_AddStringToObject(data, "requested", version->valuestring);
	snprintf(message, sizeof(message), "Unsupported protocol version: %.*s",
		 echoed(version->valuestring), version->valuestring);
	respond_error_data(s, id, RPC_UNSUPPORTED_VERSION, message, data);
	return ERA_ANSWERED;
}

/* A request of the 2026-07-28 revision: no handshake and no ping; the command-line roots (or a
 * 2025 client's) are the directories read. */
static void modern_request(struct mcp_server *s, const struct request_id *rid, const char *method,
			   const cJSON *params, const char *line, size_t len)
{
	char message[320];

	if (strcmp(method, "server/discover") == 0) {
		respond_modern(s, rid->raw, s->discover, strlen(s->discover));
	} else if (strcmp(method, "tools/list") == 0) {
		respond_modern(s, rid->raw, s->tools_list_modern, strlen(s->tools_list_modern));
	} else if (strcmp(method, "tools/call") == 0) {
		tools_call(s, rid, params, path_has_nul(line, len), true);
	} else {
		snprintf(message, sizeof(message), "Method not found: %.*s (revision %s)",
			 echoed(method), method, MODERN_VERSION);
		respond_error(s, rid->raw, RPC_METHOD_NOT_FOUND, message);
	}
}

static void handle_message(struct mcp_server *s, const cJSON *msg, const char *line, size_t len)
{
	const cJSON *id_item = cJSON_GetObjectItemCaseSensitive(msg, "id");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	struct request_id rid;
	int id_rc = request_id(msg, line, len, &rid);
	const char *id = rid.raw;
	char message[320];

	if (id_rc == -2) {
		respond_error(s, NULL, RPC_INTERNAL_ERROR, "Internal error: out of memory");
		goto out;
	}
	if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0 || id_rc < 0 ||
	    (method && !cJSON_IsString(method)) ||
	    (params && !cJSON_IsObject(params) && !cJSON_IsArray(params))) {
		respond_error(
			s, id, RPC_INVALID_REQUEST,
			"Invalid Request: a JSON-RPC 2.0 message needs \"jsonrpc\":\"2.0\", a "
			"string method and a string or number id");
		goto out;
	}
	if (envelope_has_nul(line, len)) { /* a notification so named is one nobody knows */
		if (id)
			respond_error(s, id, RPC_INVALID_REQUEST,
				      "Invalid Request: the jsonrpc or method string holds a NUL "
				      "character");
		goto out;
	}
	if (!method) {
		if (id && (cJSON_GetObjectItemCaseSensitive(msg, "result") ||
			   cJSON_GetObjectItemCaseSensitive(msg, "error")))
			take_response(s, id_item, msg);
		else
			respond_error(s, id, RPC_INVALID_REQUEST, "Invalid Request: no method");
		goto out;
	}
	if (!id) { /* a notification: never answered */
		if (strcmp(method->valuestring, "notifications/initialized") == 0 ||
		    strcmp(method->valuestring, "notifications/roots/list_changed") == 0)
			request_roots(s);
		else if (strcmp(method->valuestring, "notifications/cancelled") == 0)
			cancel_call(s, params);
		goto out;
	}
	switch (request_era(s, id, method->valuestring, params, line, len)) {
	case ERA_ANSWERED: goto out;
	case ERA_MODERN: modern_request(s, &rid, method->valuestring, params, line, len); goto out;
	case ERA_LEGACY: break;
	}
	if (strcmp(method->valuestring, "initialize") == 0) {
		initialize(s, id, params);
	} else if (strcmp(method->valuestring, "ping") == 0) {
		respond(s, id, "{}", 2);
	} else if (strcmp(method->valuestring, "tools/list") == 0) {
		respond(s, id, s->tools_list, strlen(s->tools_list));
	} else if (strcmp(method->valuestring, "tools/call") == 0) {
		tools_call(s, &rid, params, path_has_nul(line, len), false);
	} else {
		snprintf(message, sizeof(message), "Method not found: %.*s",
			 echoed(method->valuestring), method->valuestring);
		respond_error(s, id, RPC_METHOD_NOT_FOUND, message);
	}
out:
	free(rid.raw);
	free(rid.key);
}

void mcp_server_handle(struct mcp_server *s, const char *line, size_t len)
{
	const char *end = NULL;
	cJSON *msg;

	if (blank(line, len))
		return;
	msg = cJSON_ParseWithLengthOpts(line, len, &end, false);
	if (msg && end && !blank(end, len - (size_t)(end - line))) {
		cJSON_Delete(msg);
		msg = NULL;
	}
	if (!msg) {
		respond_error(s, NULL, RPC_PARSE_ERROR,
			      "Parse error: a line is not one JSON value");
		return;
	}
	if (cJSON_IsObject(msg))
		handle_message(s, msg, line, len);
	else
		respond_error(s, NULL, RPC_INVALID_REQUEST,
			      cJSON_IsArray(msg) ? "Invalid Request: batches are not supported"
						 : "Invalid Request: a message is a JSON object");
	cJSON_Delete(msg);
}

void mcp_server_refuse_line(struct mcp_server *s, size_t max)
{
	char message[128];

	snprintf(message, sizeof(message),
		 "Invalid Request: the line is longer than %zu bytes (--max-request)", max);
	respond_error(s, NULL, RPC_INVALID_REQUEST, message);
}

/* --- life cycle --- */

struct mcp_server *mcp_server_new(const struct tr_options *opts, char *const *dirs, size_t n_dirs,
				  unsigned threads, mcp_emit_fn emit, void *arg)
{
	static char *const here[] = {"."};
	struct mcp_server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->opts = *opts;
	s->emit = emit;
	s->emit_arg = arg;
	pthread_mutex_init(&s->emit_lock, NULL);
	pthread_mutex_init(&s->roots_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->idle, NULL);
	s->roots = n_dirs ? mcp_roots_new(dirs, n_dirs, true) : mcp_roots_new(here, 1, true);
	s->tools_list = build_tools_list(opts, false);
	s->tools_list_modern = build_tools_list(opts, true);
	s->discover = build_discover();
	s->workers = threads ? calloc(threads, sizeof(*s->workers)) : NULL;
	if (!s->roots || !s->tools_list || !s->tools_list_modern || !s->discover ||
	    (threads && !s->workers)) {
		mcp_server_free(s);
		return NULL;
	}
	for (unsigned i = 0; i < threads; i++) {
		if (pthread_create(&s->workers[i], NULL, worker_main, s) != 0)
			break;
		s->n_workers++;
	}
	if (threads && !s->n_workers) {
		mcp_server_free(s);
		return NULL;
	}
	return s;
}

void mcp_server_drain(struct mcp_server *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->in_flight)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

void mcp_server_free(struct mcp_server *s)
{
	if (!s)
		return;
	mcp_server_drain(s);
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->lock);
	for (unsigned i = 0; i < s->n_workers; i++)
		pthread_join(s->workers[i], NULL);
	free(s->workers);
	free(s->tools_list);
	free(s->tools_list_modern);
	free(s->discover);
	mcp_roots_unref(s->roots);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->roots_lock);
	pthread_mutex_destroy(&s->emit_lock);
	free(s);
}
