/* SPDX-License-Identifier: MIT */
/* fuzz_mcp.c - libFuzzer target for toolfs-mcp's input path: the input is stdin's bytes, split
 * into lines as the server frames them and handled by mcp_server_handle with the calls served
 * inline, reading a small tree made once. Every message the server writes must be one line of
 * a JSON-RPC 2.0 object: a response with a result or an error of the codes of docs/SPEC.md §7
 * (-32022 with its data), or the server's own roots/list request; UTF-8 when the input is. The 2026-07-28 requests and
 * their _meta are reached through the seeds and tests/fuzz/fuzz_mcp.dict. mcp_file_uri_path is
 * fed the input too. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "mcp.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tree[512];

/* A tree to read: text, a notebook-ish JSON, a binary, a folder, a link out of it. */
static void make_tree(void)
{
	static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\1\0\0\0\1\x08\x02\0\0\0";
	const char *tmp = getenv("TMPDIR");
	char path[sizeof(tree) + 16];
	FILE *f;

	/* Under TMPDIR, which tests/fuzz/run.sh removes when it ends. */
	if ((size_t)snprintf(tree, sizeof(tree), "%s/fuzz_mcp.XXXXXX",
			     tmp && *tmp ? tmp : "/tmp") >= sizeof(tree))
		fuzz_fail("TMPDIR is too long");
	if (!mkdtemp(tree))
		fuzz_fail("mkdtemp");
	snprintf(path, sizeof(path), "%s/a.txt", tree);
	if ((f = fopen(path, "w"))) {
		for (int i = 1; i <= 50; i++)
			fprintf(f, "line %d\n", i);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/n.ipynb", tree);
	if ((f = fopen(path, "w"))) {
		fputs("{\"cells\":[{\"cell_type\":\"code\",\"source\":\"1\",\"outputs\":[]}],"
		      "\"metadata\":{},\"nbformat\":4,\"nbformat_minor\":5}",
		      f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/p.png", tree);
	if ((f = fopen(path, "w"))) {
		fwrite(png, 1, sizeof(png) - 1, f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/sub", tree);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sub/b.txt", tree);
	if ((f = fopen(path, "w"))) {
		fputs("inner\n", f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/out", tree);
	if (symlink("/etc/hostname", path) < 0)
		fuzz_fail("symlink");
}

/* -32022's data (MCP 2026-07-28): the versions served, 2026-07-28 first, and the one asked. */
static void check_unsupported(const cJSON *data, const char *line)
{
	const cJSON *supported = cJSON_GetObjectItemCaseSensitive(data, "supported");
	const cJSON *requested = cJSON_GetObjectItemCaseSensitive(data, "requested");
	const cJSON *first = cJSON_GetArrayItem(supported, 0);

	if (!cJSON_IsArray(supported) || !cJSON_IsString(first) ||
	    strcmp(first->valuestring, "2026-07-28") != 0 || !cJSON_IsString(requested))
		fuzz_fail("-32022 without its data: %.200s", line);
	/* the request named one of these, and was answered -32022 */
	for (const cJSON *v = supported->child; v; v = v->next)
		if (!cJSON_IsString(v) || strcmp(v->valuestring, requested->valuestring) == 0)
			fuzz_fail("-32022 for a version served: %.200s", line);
}

/* What check_message knows of the input. */
struct session {
	size_t messages;
	bool utf8;  /* the input is UTF-8: so must every message be */
	char *line; /* the message being received, in pieces; owned */
	size_t len;
};

static void check_message(void *arg, const char *line, size_t len)
{
	struct session *session = arg;
	const cJSON *version, *error, *code, *result, *type;
	cJSON *msg;

	session->messages++;
	if (len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1))
		fuzz_fail("a message is not one line");
	if (session->utf8 && tr_utf8_valid_len((const unsigned char *)line, len) != len)
		fuzz_fail("a message is not UTF-8: %.200s", line);
	msg = cJSON_ParseWithLength(line, len);
	if (!cJSON_IsObject(msg))
		fuzz_fail("a message is not a JSON object: %.200s", line);
	version = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
	if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0)
		fuzz_fail("no jsonrpc 2.0: %.200s", line);
	error = cJSON_GetObjectItemCaseSensitive(msg, "error");
	result = cJSON_GetObjectItemCaseSensitive(msg, "result");
	if (error) {
		code = cJSON_GetObjectItemCaseSensitive(error, "code");
		if (!cJSON_IsNumber(code) ||
		    (code->valueint != -32700 && code->valueint != -32600 &&
		     code->valueint != -32601 && code->valueint != -32602 &&
		     code->valueint != -32022))
			fuzz_fail("unexpected error: %.200s", line);
		if (code->valueint == -32022)
			check_unsupported(cJSON_GetObjectItemCaseSensitive(error, "data"), line);
	} else if (!result && !cJSON_GetObjectItemCaseSensitive(msg, "method")) {
		fuzz_fail("neither result, error nor request: %.200s", line);
	}
	/* 2026-07-28 results say resultType "complete" (it is the last member, spliced in) */
	type = cJSON_GetObjectItemCaseSensitive(result, "resultType");
	if (type && (!cJSON_IsString(type) || strcmp(type->valuestring, "complete") != 0))
		fuzz_fail("a resultType that is not \"complete\": %.200s", line);
	cJSON_Delete(msg);
}

/* The server's output comes in pieces; a raw newline ends a message (JSON text holds none). */
static void receive(void *arg, const char *bytes, size_t len)
{
	struct session *session = arg;
	char *line = realloc(session->line, session->len + len + 1);

	if (!line)
		fuzz_fail("out of memory");
	memcpy(line + session->len, bytes, len);
	session->line = line;
	session->len += len;
	line[session->len] = '\0';
	if (session->len && line[session->len - 1] == '\n') {
		check_message(session, line, session->len);
		session->len = 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_options opts;
	struct mcp_server *server;
	char *dirs[1] = {tree};
	char *text = malloc(size + 1), *uri;
	struct session session = {0, tr_utf8_valid_len(data, size) == size, NULL, 0};

	if (!tree[0])
		make_tree();
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	uri = mcp_file_uri_path(text);
	free(uri);
	/* Client roots could point the server anywhere on this machine: no file: URI gets
	 * through (mcp_file_uri_path is fuzzed above on its own). */
	for (char *p = text; (p = memmem(p, (size_t)(text + size - p), "file:", 5)); p++)
		p[2] = 'x';
	tr_options_init(&opts);
	opts.max_output = 4096;
	server = mcp_server_new(&opts, dirs, 1, 0, receive, &session);
	if (!server)
		fuzz_fail("mcp_server_new");
	for (size_t start = 0; start <= size;) {
		char *nl = memchr(text + start, '\n', size - start);
		size_t end = nl ? (size_t)(nl - text) : size;

		if (end > start || nl)
			mcp_server_handle(server, text + start, end - start);
		start = end + 1;
	}
	mcp_server_free(server);
	if (session.len)
		fuzz_fail("a message without its newline");
	free(session.line);
	free(text);
	return 0;
}
