/* SPDX-License-Identifier: MIT */
/* mcp_server.c - toolfs-mcp's dispatch: each JSON-RPC 2.0 message to its part (the initialize
 * handshake, ping, tools/list and tools/call, cancellation and the client's roots for the
 * 2024/2025 revisions; server/discover and stateless requests for 2026-07-28), and the server's
 * life cycle. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_internal.h"

struct mcp_server {
	struct tr_options opts;
	struct mcp_wire wire;
	struct mcp_session_roots roots;
	struct mcp_tools tools;
	struct mcp_calls calls;
	unsigned parts; /* how many of wire, roots, tools, calls are up, in that order */
};

/* --- the handshake --- */

static void initialize(struct mcp_server *s, const char *id, const cJSON *params)
{
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");

	mcp_session_roots_declare(&s->roots,
				  cJSON_GetObjectItemCaseSensitive(params, "capabilities"));
	mcp_wire_result_json(&s->wire, id,
			     mcp_tools_initialize_result(mcp_handshake_version(
				     cJSON_IsString(version) ? version->valuestring : NULL)),
			     false);
}

/* --- dispatch --- */

/* A request of the 2026-07-28 revision: no handshake and no ping; the command-line roots (or a
 * 2025 client's) are the directories read. */
static void modern_request(struct mcp_server *s, const struct mcp_request_id *rid,
			   const char *method, const cJSON *params, const char *line, size_t len)
{
	char message[320];

	if (strcmp(method, "server/discover") == 0) {
		mcp_wire_result(&s->wire, rid->raw, s->tools.discover, strlen(s->tools.discover),
				true);
	} else if (strcmp(method, "tools/list") == 0) {
		mcp_wire_result(&s->wire, rid->raw, s->tools.list_modern,
				strlen(s->tools.list_modern), true);
	} else if (strcmp(method, "tools/call") == 0) {
		mcp_tools_call(&s->calls, rid, params, mcp_path_has_nul(line, len), true);
	} else {
		snprintf(message, sizeof(message), "Method not found: %.*s (revision %s)",
			 mcp_echoed(method), method, MODERN_VERSION);
		mcp_wire_error(&s->wire, rid->raw, RPC_METHOD_NOT_FOUND, message);
	}
}

static void handle_message(struct mcp_server *s, const cJSON *msg, const char *line, size_t len)
{
	const cJSON *id_item = cJSON_GetObjectItemCaseSensitive(msg, "id");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	struct mcp_request_id rid;
	int id_rc = mcp_request_id(msg, line, len, &rid);
	const char *id = rid.raw;
	char message[320];

	if (id_rc == -2) {
		mcp_wire_error(&s->wire, NULL, RPC_INTERNAL_ERROR, "Internal error: out of memory");
		goto out;
	}
	if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0 || id_rc < 0 ||
	    (method && !cJSON_IsString(method)) ||
	    (params && !cJSON_IsObject(params) && !cJSON_IsArray(params))) {
		mcp_wire_error(
			&s->wire, id, RPC_INVALID_REQUEST,
			"Invalid Request: a JSON-RPC 2.0 message needs \"jsonrpc\":\"2.0\", a "
			"string method and a string or number id");
		goto out;
	}
	if (mcp_envelope_has_nul(line, len)) { /* a notification so named is one nobody knows */
		if (id)
			mcp_wire_error(&s->wire, id, RPC_INVALID_REQUEST,
				       "Invalid Request: the jsonrpc or method string holds a NUL "
				       "character");
		goto out;
	}
	if (!method) {
		if (id && (cJSON_GetObjectItemCaseSensitive(msg, "result") ||
			   cJSON_GetObjectItemCaseSensitive(msg, "error")))
			mcp_session_roots_take(&s->roots, id_item, msg);
		else
			mcp_wire_error(&s->wire, id, RPC_INVALID_REQUEST,
				       "Invalid Request: no method");
		goto out;
	}
	if (!id) { /* a notification: never answered */
		if (strcmp(method->valuestring, "notifications/initialized") == 0 ||
		    strcmp(method->valuestring, "notifications/roots/list_changed") == 0)
			mcp_session_roots_request(&s->roots, &s->wire);
		else if (strcmp(method->valuestring, "notifications/cancelled") == 0)
			mcp_calls_cancel(&s->calls, params);
		goto out;
	}
	switch (mcp_request_era(&s->wire, id, method->valuestring, params, line, len)) {
	case MCP_ERA_ANSWERED: goto out;
	case MCP_ERA_MODERN:
		modern_request(s, &rid, method->valuestring, params, line, len);
		goto out;
	case MCP_ERA_LEGACY: break;
	}
	if (strcmp(method->valuestring, "initialize") == 0) {
		initialize(s, id, params);
	} else if (strcmp(method->valuestring, "ping") == 0) {
		mcp_wire_result(&s->wire, id, "{}", 2, false);
	} else if (strcmp(method->valuestring, "tools/list") == 0) {
		mcp_wire_result(&s->wire, id, s->tools.list, strlen(s->tools.list), false);
	} else if (strcmp(method->valuestring, "tools/call") == 0) {
		mcp_tools_call(&s->calls, &rid, params, mcp_path_has_nul(line, len), false);
	} else {
		snprintf(message, sizeof(message), "Method not found: %.*s",
			 mcp_echoed(method->valuestring), method->valuestring);
		mcp_wire_error(&s->wire, id, RPC_METHOD_NOT_FOUND, message);
	}
out:
	free(rid.raw);
	free(rid.key);
}

void mcp_server_handle(struct mcp_server *s, const char *line, size_t len)
{
	const char *end = NULL;
	cJSON *msg;

	if (mcp_blank(line, len))
		return;
	msg = cJSON_ParseWithLengthOpts(line, len, &end, false);
	if (msg && end && !mcp_blank(end, len - (size_t)(end - line))) {
		cJSON_Delete(msg);
		msg = NULL;
	}
	if (!msg) {
		mcp_wire_error(&s->wire, NULL, RPC_PARSE_ERROR,
			       "Parse error: a line is not one JSON value");
		return;
	}
	if (cJSON_IsObject(msg))
		handle_message(s, msg, line, len);
	else
		mcp_wire_error(&s->wire, NULL, RPC_INVALID_REQUEST,
			       cJSON_IsArray(msg) ? "Invalid Request: batches are not supported"
						  : "Invalid Request: a message is a JSON object");
	cJSON_Delete(msg);
}

void mcp_server_refuse_line(struct mcp_server *s, size_t max)
{
	char message[128];

	snprintf(message, sizeof(message),
		 "Invalid Request: the line is longer than %zu bytes (--max-request)", max);
	mcp_wire_error(&s->wire, NULL, RPC_INVALID_REQUEST, message);
}

/* --- life cycle --- */

struct mcp_server *mcp_server_new(const struct tr_options *opts, char *const *dirs, size_t n_dirs,
				  unsigned threads, mcp_emit_fn emit, void *arg)
{
	struct mcp_server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->opts = *opts;
	mcp_wire_init(&s->wire, emit, arg);
	s->parts = 1;
	if (mcp_session_roots_init(&s->roots, dirs, n_dirs) < 0)
		goto fail;
	s->parts++;
	if (mcp_tools_init(&s->tools, &s->opts) < 0)
		goto fail;
	s->parts++;
	if (mcp_calls_init(&s->calls, &s->opts, &s->roots, &s->wire, threads) < 0)
		goto fail;
	s->parts++;
	return s;
fail:
	mcp_server_free(s);
	return NULL;
}

void mcp_server_drain(struct mcp_server *s)
{
	mcp_calls_drain(&s->calls);
}

void mcp_server_free(struct mcp_server *s)
{
	if (!s)
		return;
	/* each part down in the reverse order of its start: the calls use the rest */
	if (s->parts > 3)
		mcp_calls_destroy(&s->calls);
	if (s->parts > 2)
		mcp_tools_destroy(&s->tools);
	if (s->parts > 1)
		mcp_session_roots_destroy(&s->roots);
	mcp_wire_destroy(&s->wire);
	free(s);
}
