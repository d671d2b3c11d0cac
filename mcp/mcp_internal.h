/* SPDX-License-Identifier: MIT */
/* mcp_internal.h - the parts of toolfs-mcp's server, private to mcp/: the wire (mcp_wire.c), the
 * client's roots (mcp_session.c), the calls (mcp_calls.c) and the tools (mcp_tools.c), tied
 * together by the dispatch of mcp_server.c. Each part owns its state and its lock; no two of
 * these locks are ever held at once. */
#ifndef TOOLFS_MCP_INTERNAL_H
#define TOOLFS_MCP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "mcp.h"

struct cJSON;
struct tr_doc;

/* --- the wire: framing, ids, protocol versions (mcp_wire.c) --- */

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

/* Where messages go: every message's pieces pass through emit under lock, together. */
struct mcp_wire {
	mcp_emit_fn emit;
	void *emit_arg;
	pthread_mutex_t lock; /* the emit lock */
};

void mcp_wire_init(struct mcp_wire *wire, mcp_emit_fn emit, void *arg);
void mcp_wire_destroy(struct mcp_wire *wire);

/* Sends msg[0..len), one whole message with its '\n'. */
void mcp_wire_send(struct mcp_wire *wire, const char *msg, size_t len);

/* {"jsonrpc":"2.0","id":ID,"result":RESULT}\n: id the request id's raw text (NULL: null), result
 * a JSON object's text; modern (2026-07-28) adds "resultType":"complete" as its last member. */
void mcp_wire_result(struct mcp_wire *wire, const char *id, const char *result, size_t len,
		     bool modern);

/* The same for a result held in doc (borrowed: a JSON object's text, then '\n'): its bytes are
 * written straight from the document, never copied whole. */
void mcp_wire_result_doc(struct mcp_wire *wire, const char *id, const struct tr_doc *doc,
			 bool modern);

/* The same for result (consumed; NULL or out of memory: an internal error is answered). */
void mcp_wire_result_json(struct mcp_wire *wire, const char *id, struct cJSON *result, bool modern);

/* {"jsonrpc":"2.0","id":ID|null,"error":{"code":CODE,"message":MESSAGE[,"data":DATA]}}\n;
 * data (may be NULL) is consumed. */
void mcp_wire_error_data(struct mcp_wire *wire, const char *id, int code, const char *message,
			 struct cJSON *data);
void mcp_wire_error(struct mcp_wire *wire, const char *id, int code, const char *message);

/* How many bytes of name an error message echoes: at most 200, cut where a character starts so
 * that the line stays UTF-8. */
int mcp_echoed(const char *name);

/* True when line[0..len) holds only blanks (space, tab, CR). */
bool mcp_blank(const char *line, size_t len);

/* A request's id: its raw text, echoed as sent, and its value as cJSON prints it, which
 * cancellation matches. */
struct mcp_request_id {
	char *raw, *key; /* owned; NULL when the request has none */
};

/* The id of msg (the parsed line[0..len)) when it is a JSON number or string. Returns 0 (id->raw
 * NULL when there is none), -1 when it is not a valid id, -2 when out of memory; the caller frees
 * both members in every case. */
int mcp_request_id(const struct cJSON *msg, const char *line, size_t len,
		   struct mcp_request_id *id);

/* True when the read call's file_path string in line[0..len) holds \u0000. */
bool mcp_path_has_nul(const char *line, size_t len);

/* True when "jsonrpc" or "method" of line[0..len) holds \u0000. */
bool mcp_envelope_has_nul(const char *line, size_t len);

/* The version initialize answers for requested (may be NULL): itself when served, else the
 * newest, as the official SDK's server does. */
const char *mcp_handshake_version(const char *requested);

/* Every revision served, newest first (a new cJSON array; NULL when out of memory). */
struct cJSON *mcp_supported_versions(void);

enum mcp_era { MCP_ERA_LEGACY, MCP_ERA_MODERN, MCP_ERA_ANSWERED };

/* Which revision request method speaks, by its params._meta: the modern one (server/discover
 * always), a handshake one (no version there, or one of the handshake versions), or none this
 * server speaks, then answered here with -32022 (or -32602 for a malformed envelope). */
enum mcp_era mcp_request_era(struct mcp_wire *wire, const char *id, const char *method,
			     const struct cJSON *params, const char *line, size_t len);

/* --- the client's roots (mcp_session.c) --- */

/* The directories read now: the command line's until the client gives its own. */
struct mcp_session_roots {
	pthread_mutex_t lock;
	struct mcp_roots *roots; /* owned reference */
	bool client_roots;       /* the client declared the roots capability */
	unsigned long asked;     /* serial of the last roots/list request */
};

/* Starts with dirs (none: the current directory). Returns 0, or -1 when out of memory (sr is
 * then destroyed). */
int mcp_session_roots_init(struct mcp_session_roots *sr, char *const *dirs, size_t n_dirs);
void mcp_session_roots_destroy(struct mcp_session_roots *sr);

/* A new reference on the roots in force (the caller unrefs it). */
struct mcp_roots *mcp_session_roots_get(struct mcp_session_roots *sr);

/* Records whether initialize's capabilities (may be NULL) declare roots. */
void mcp_session_roots_declare(struct mcp_session_roots *sr, const struct cJSON *caps);

/* Asks a client that declared roots for roots/list (through wire). */
void mcp_session_roots_request(struct mcp_session_roots *sr, struct mcp_wire *wire);

/* A response msg (id its id) to one of the server's requests: the answer to the latest
 * roots/list replaces the roots, unless it gives no usable one. */
void mcp_session_roots_take(struct mcp_session_roots *sr, const struct cJSON *id,
			    const struct cJSON *msg);

/* --- the calls: queue, workers and cancellation (mcp_calls.c) --- */

struct mcp_call;

/* The read calls queued and running, and the workers that run them. */
struct mcp_calls {
	const struct tr_options *opts;   /* borrowed */
	struct mcp_session_roots *roots; /* borrowed */
	struct mcp_wire *wire;           /* borrowed */

	pthread_mutex_t lock; /* the queue, the running list, in_flight, stopping */
	pthread_cond_t work, idle;
	struct mcp_call *queue, *queue_tail, *running;
	unsigned in_flight;
	bool stopping;
	pthread_t *workers;
	unsigned n_workers;
};

/* Starts threads workers (0: calls run inline in mcp_calls_start). Returns 0, or -1 when none
 * could start or out of memory (calls is then destroyed). */
int mcp_calls_init(struct mcp_calls *calls, const struct tr_options *opts,
		   struct mcp_session_roots *roots, struct mcp_wire *wire, unsigned threads);

/* Queues a read call of id with args (copied, may be NULL); path_nul: its file_path held
 * \u0000; modern: a 2026-07-28 request. Answered by a worker, unless cancelled first. */
void mcp_calls_start(struct mcp_calls *calls, const struct mcp_request_id *id,
		     const struct cJSON *args, bool path_nul, bool modern);

/* notifications/cancelled with params: a queued call is dropped; a running one is not answered,
 * and its read's sandboxed worker, or its wait for one, is ended. */
void mcp_calls_cancel(struct mcp_calls *calls, const struct cJSON *params);

/* Waits until every queued and running call has been answered (or dropped when cancelled). */
void mcp_calls_drain(struct mcp_calls *calls);

/* Drains, stops the workers and frees the queue's state. */
void mcp_calls_destroy(struct mcp_calls *calls);

/* --- the tools and what the server says of itself (mcp_tools.c) --- */

/* The results that never change while the process runs, built once from the options. */
struct mcp_tools {
	char *list;        /* the tools/list result, JSON */
	char *list_modern; /* the same for 2026-07-28, with the cache hints */
	char *discover;    /* the server/discover result, JSON */
};

/* Returns 0, or -1 when out of memory (tools is then destroyed). */
int mcp_tools_init(struct mcp_tools *tools, const struct tr_options *opts);
void mcp_tools_destroy(struct mcp_tools *tools);

/* The initialize result for version, naming the server and its instructions (NULL when out of
 * memory). */
struct cJSON *mcp_tools_initialize_result(const char *version);

/* tools/call with params: the read tool queued on calls, list_allowed_directories answered
 * now, anything else refused with -32602. */
void mcp_tools_call(struct mcp_calls *calls, const struct mcp_request_id *id,
		    const struct cJSON *params, bool path_nul, bool modern);

#endif
