/* SPDX-License-Identifier: MIT */
/* mcp_wire.c - the JSON-RPC 2.0 wire of toolfs-mcp: messages framed one a line under the emit
 * lock (a read's result streamed from its document), request ids, and the protocol versions
 * served: the handshake revisions and 2026-07-28's stateless envelope. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_internal.h"
#include "tr_doc.h"

/* What a modern result adds to its members (the JSON text is spliced before the closing '}'). */
#define MODERN_RESULT_TAIL ",\"resultType\":\"complete\"}"

/* The protocol versions of the official TypeScript SDK (SUPPORTED_PROTOCOL_VERSIONS of
 * @modelcontextprotocol/sdk 1.32.2), newest first: a client's version is answered with itself
 * when listed, else with the newest, as the SDK's server does. */
static const char *const protocol_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07",
};

#define N_VERSIONS (sizeof(protocol_versions) / sizeof(protocol_versions[0]))

/* --- framing --- */

void mcp_wire_init(struct mcp_wire *wire, mcp_emit_fn emit, void *arg)
{
	wire->emit = emit;
	wire->emit_arg = arg;
	pthread_mutex_init(&wire->lock, NULL);
}

void mcp_wire_destroy(struct mcp_wire *wire)
{
	pthread_mutex_destroy(&wire->lock);
}

void mcp_wire_send(struct mcp_wire *wire, const char *msg, size_t len)
{
	pthread_mutex_lock(&wire->lock);
	wire->emit(wire->emit_arg, msg, len);
	pthread_mutex_unlock(&wire->lock);
}

static void out_of_memory(void)
{
	fputs("toolfs-mcp: out of memory answering a request\n", stderr);
}

/* A response's head, {"jsonrpc":"2.0","id":ID,"MEMBER": (malloc'd; NULL when out of memory). */
static char *response_head(const char *id, const char *member, size_t *len)
{
	char *head = NULL;
	int n = asprintf(&head, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"%s\":", id ? id : "null", member);

	if (n < 0) {
		out_of_memory();
		return NULL;
	}
	*len = (size_t)n;
	return head;
}

/* HEAD BODY [MODERN_RESULT_TAIL] }\n, body's closing '}' left to the tail when modern. */
static void emit_response(struct mcp_wire *wire, const char *id, const char *member,
			  const char *body, size_t body_len, bool modern)
{
	size_t head_len;
	char *head = response_head(id, member, &head_len);

	if (!head)
		return;
	pthread_mutex_lock(&wire->lock);
	wire->emit(wire->emit_arg, head, head_len);
	wire->emit(wire->emit_arg, body, modern ? body_len - 1 : body_len);
	if (modern)
		wire->emit(wire->emit_arg, MODERN_RESULT_TAIL, sizeof(MODERN_RESULT_TAIL) - 1);
	wire->emit(wire->emit_arg, "}\n", 2);
	pthread_mutex_unlock(&wire->lock);
	free(head);
}

void mcp_wire_result(struct mcp_wire *wire, const char *id, const char *result, size_t len,
		     bool modern)
{
	emit_response(wire, id, "result", result, len, modern && len);
}

static int emit_piece(void *arg, const void *bytes, size_t len)
{
	struct mcp_wire *wire = arg;

	wire->emit(wire->emit_arg, bytes, len);
	return 0;
}

void mcp_wire_result_doc(struct mcp_wire *wire, const char *id, const struct tr_doc *doc,
			 bool modern)
{
	uint64_t size = tr_doc_size(doc);
	size_t head_len;
	char end[2], *head;

	/* the rendered result is one JSON object and its newline */
	if (size < 3 || tr_doc_read(doc, size - 2, end, 2) != 2 || memcmp(end, "}\n", 2) != 0) {
		mcp_wire_error(wire, id, RPC_INTERNAL_ERROR, "Internal error: out of memory");
		return;
	}
	head = response_head(id, "result", &head_len);
	if (!head)
		return;
	/* The result's bytes go from the document to the wire piece by piece, under the lock that
	 * keeps each message whole: a 10 MB result is never copied whole. */
	pthread_mutex_lock(&wire->lock);
	wire->emit(wire->emit_arg, head, head_len);
	/* cannot fail: it allocates nothing, and emit_piece never stops it */
	(void)tr_doc_write_to(doc, modern ? size - 2 : size - 1, emit_piece, wire);
	if (modern)
		wire->emit(wire->emit_arg, MODERN_RESULT_TAIL, sizeof(MODERN_RESULT_TAIL) - 1);
	wire->emit(wire->emit_arg, "}\n", 2);
	pthread_mutex_unlock(&wire->lock);
	free(head);
}

void mcp_wire_result_json(struct mcp_wire *wire, const char *id, cJSON *result, bool modern)
{
	char *text = result ? cJSON_PrintUnformatted(result) : NULL;

	if (text)
		mcp_wire_result(wire, id, text, strlen(text), modern);
	else
		mcp_wire_error(wire, id, RPC_INTERNAL_ERROR, "Internal error: out of memory");
	free(text);
	cJSON_Delete(result);
}

void mcp_wire_error_data(struct mcp_wire *wire, const char *id, int code, const char *message,
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
		emit_response(wire, id, "error", text, strlen(text), false);
	else
		out_of_memory();
	free(text);
}

void mcp_wire_error(struct mcp_wire *wire, const char *id, int code, const char *message)
{
	mcp_wire_error_data(wire, id, code, message, NULL);
}

int mcp_echoed(const char *name)
{
	size_t len = strnlen(name, 201);

	if (len > 200)
		for (len = 200; len > 0 && ((unsigned char)name[len] & 0xc0) == 0x80;)
			len--;
	return (int)len;
}

/* --- ids and envelopes --- */

bool mcp_blank(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	return true;
}

int mcp_request_id(const cJSON *msg, const char *line, size_t len, struct mcp_request_id *id)
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

/* True when the string member keys[0..n) of the message's text holds \u0000, where cJSON's value
 * stops: the rest of the string is then unseen and the value must not pass as its prefix. */
static bool member_has_nul(const char *line, size_t len, const char *const *keys, size_t n)
{
	size_t at, size;

	return mcp_json_find(line, len, keys, n, &at, &size) && line[at] == '"' &&
	       mcp_json_string_has_nul(line + at, size);
}

bool mcp_path_has_nul(const char *line, size_t len)
{
	static const char *const path_keys[] = {"params", "arguments", "file_path"};

	return member_has_nul(line, len, path_keys, 3);
}

bool mcp_envelope_has_nul(const char *line, size_t len)
{
	static const char *const jsonrpc_key[] = {"jsonrpc"}, *const method_key[] = {"method"};

	return member_has_nul(line, len, jsonrpc_key, 1) ||
	       member_has_nul(line, len, method_key, 1);
}

/* --- protocol versions --- */

const char *mcp_handshake_version(const char *requested)
{
	for (size_t i = 0; requested && i < N_VERSIONS; i++)
		if (strcmp(requested, protocol_versions[i]) == 0)
			return protocol_versions[i];
	return protocol_versions[0];
}

cJSON *mcp_supported_versions(void)
{
	cJSON *list = cJSON_CreateArray();

	cJSON_AddItemToArray(list, cJSON_CreateString(MODERN_VERSION));
	for (size_t i = 0; i < N_VERSIONS; i++)
		cJSON_AddItemToArray(list, cJSON_CreateString(protocol_versions[i]));
	return list;
}

/* A version no revision served names: -32022 with the versions served. */
static void refuse_version(struct mcp_wire *wire, const char *id, const char *version)
{
	cJSON *data = cJSON_CreateObject();
	char message[320];

	cJSON_AddItemToObject(data, "supported", mcp_supported_versions());
	cJSON_AddStringToObject(data, "requested", version);
	snprintf(message, sizeof(message), "Unsupported protocol version: %.*s",
		 mcp_echoed(version), version);
	mcp_wire_error_data(wire, id, RPC_UNSUPPORTED_VERSION, message, data);
}

enum mcp_era mcp_request_era(struct mcp_wire *wire, const char *id, const char *method,
			     const cJSON *params, const char *line, size_t len)
{
	static const char *const version_keys[] = {"params", "_meta", META_VERSION};
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	const cJSON *version = cJSON_GetObjectItemCaseSensitive(meta, META_VERSION);
	bool discover = strcmp(method, "server/discover") == 0;

	if (!version) {
		if (!discover && (cJSON_GetObjectItemCaseSensitive(meta, META_CAPABILITIES) ||
				  cJSON_GetObjectItemCaseSensitive(meta, META_CLIENT_INFO))) {
			mcp_wire_error(wire, id, RPC_INVALID_PARAMS,
				       "Invalid params: a 2026-07-28 request names its version in "
				       "_meta[\"" META_VERSION "\"]");
			return MCP_ERA_ANSWERED;
		}
		return discover ? MCP_ERA_MODERN : MCP_ERA_LEGACY;
	}
	if (!cJSON_IsString(version)) {
		mcp_wire_error(wire, id, RPC_INVALID_PARAMS,
			       "Invalid params: _meta[\"" META_VERSION "\"] must be a string");
		return MCP_ERA_ANSWERED;
	}
	if (member_has_nul(line, len, version_keys, 3)) {
		mcp_wire_error(wire, id, RPC_INVALID_PARAMS,
			       "Invalid params: _meta[\"" META_VERSION "\"] holds a NUL character");
		return MCP_ERA_ANSWERED;
	}
	if (strcmp(version->valuestring, MODERN_VERSION) == 0) {
		if (!discover &&
		    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(meta, META_CAPABILITIES))) {
			mcp_wire_error(wire, id, RPC_INVALID_PARAMS,
				       "Invalid params: a 2026-07-28 request carries the client's "
				       "capabilities in _meta[\"" META_CAPABILITIES "\"]");
			return MCP_ERA_ANSWERED;
		}
		return MCP_ERA_MODERN;
	}
	for (size_t i = 0; i < N_VERSIONS; i++)
		if (strcmp(version->valuestring, protocol_versions[i]) == 0)
			return discover ? MCP_ERA_MODERN : MCP_ERA_LEGACY;
	refuse_version(wire, id, version->valuestring);
	return MCP_ERA_ANSWERED;
}
