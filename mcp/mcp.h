/* SPDX-License-Identifier: MIT */
/* mcp.h - toolfs-mcp (docs/SPEC.md §7): a Model Context Protocol server on the reader core, private to
 * mcp/. The message handling is a function of one input line, so the fuzzer drives it
 * without stdio. */
#ifndef TOOLFS_MCP_H
#define TOOLFS_MCP_H

#include <stdbool.h>
#include <stddef.h>

#include "tr_confine.h"
#include "tr_options.h"
#include "tr_read.h"
#include "tr_result.h"

/* --- roots and confinement (mcp_roots.c) --- */

/* The directories the server may read, each a struct tr_root (its fd, real path and given name).
 * Shared by calls in flight and replaced whole when the client's roots change;
 * reference-counted. */
struct mcp_roots {
	int refs; /* atomic */
	size_t n;
	struct tr_root *dirs; /* owned, n of them */
};

/* Builds roots from directory names (each opened with tr_root_open; ones that are not
 * directories are left out with a diagnostic on stderr when warn). Returns a new set (refs 1,
 * possibly empty) or NULL when out of memory. */
struct mcp_roots *mcp_roots_new(char *const *dirs, size_t n, bool warn);
struct mcp_roots *mcp_roots_ref(struct mcp_roots *roots);
/* Drops a reference; NULL is a no-op. */
void mcp_roots_unref(struct mcp_roots *roots);

/* Decodes a file:// URI (file:///p or file://localhost/p, percent-escapes) into a path.
 * Returns a malloc'd path, or NULL when uri is not such a URI. */
char *mcp_file_uri_path(const char *uri);

/* Opens file_path (absolute, or relative to the first root) with the core's confined open
 * (include/tr_confine.h) under the symlink policy symlinks: a relative path beneath the first
 * root, an absolute one beneath the first root whose real or given name it starts with; every
 * step, links followed included, stays beneath that root. On success returns an O_PATH fd
 * (caller closes; of any type: the caller checks) and sets *shown (owned: the path relative to
 * its root, as the result names it) and *real (owned: the file's absolute name now, for its
 * file:// URI; may be NULL). Otherwise returns -1 and fills res (freshly initialised by this
 * call: the caller destroys it) with the failure: outside_root with a sentence saying what to
 * do, not_found (with close names from the folder when it opens beneath the root), not_regular
 * for a link loop or a link under symlinks=none, or the errno's code. Returns -2 when out of
 * memory. */
int mcp_open_confined(const struct mcp_roots *roots, const char *file_path,
		      enum tr_symlink_policy symlinks, char **shown, char **real,
		      struct tr_result *res);

/* --- raw JSON text (mcp_json.c) --- */

/* Finds the member keys[0].keys[1]... (nested objects; the first of duplicate keys, as
 * cJSON_GetObjectItem takes it) in the JSON text s[0..len): sets *at and *size to its value's
 * raw text and returns true; false when a member is missing or the text on the way is not JSON. */
bool mcp_json_find(const char *s, size_t len, const char *const *keys, size_t n_keys, size_t *at,
		   size_t *size);

/* True when tok[0..len) is one JSON number, or one JSON string of valid UTF-8 (RFC 8259). */
bool mcp_json_is_id(const char *tok, size_t len);

/* The value of hexadecimal digit c, or -1 (JSON's \uXXXX, a file:// URI's %XX). */
int mcp_hex_digit(char c);

/* True when the JSON string token tok[0..len) holds the escape \u0000 (cJSON's value stops there). */
bool mcp_json_string_has_nul(const char *tok, size_t len);

/* --- the read tool (mcp_read.c) --- */

/* A CallToolResult of the read tool for the JSON arguments args (a cJSON object, borrowed);
 * path_nul: the request's file_path held a NUL, which cJSON's string does not show; cancel
 * (borrowed, may be NULL) ends the read's sandboxed worker when fired. Returns the result's JSON
 * and a newline as a document (the caller unrefs it), NULL only when out of memory. Argument
 * errors are results with isError true. */
struct cJSON;
struct tr_doc *mcp_read_tool(const struct mcp_roots *roots, const struct tr_options *opts,
			     const struct cJSON *args, bool path_nul,
			     const struct tr_cancel *cancel);

/* The read tool's largest result: the official TypeScript SDK's stdio client drops a line over
 * 10 MiB; the JSON-RPC envelope takes the rest. */
#define MCP_MAX_RESULT (10 * 1024 * 1024 - 64 * 1024)

/* --- the server (mcp_server.c and the parts of mcp_internal.h) --- */

/* Receives the server's messages (each JSON, then '\n') in pieces, in order: the pieces of one
 * message come in consecutive calls, never mixed with another's (the server serializes them). */
typedef void (*mcp_emit_fn)(void *arg, const char *line, size_t len);

struct mcp_server;

/* A server reading under opts (copied) in the directories dirs (none: the current directory),
 * answering through emit. threads is the number of workers serving tools/call concurrently; 0
 * serves them inline, in mcp_server_handle (the fuzzer). Returns NULL when out of memory. */
struct mcp_server *mcp_server_new(const struct tr_options *opts, char *const *dirs, size_t n_dirs,
				  unsigned threads, mcp_emit_fn emit, void *arg);

/* Handles one input line (without its '\n'; any bytes): answers, queues a call, records a
 * response to a request of the server's, or answers -32700 / -32600. Never fails. */
void mcp_server_handle(struct mcp_server *server, const char *line, size_t len);

/* Answers a line that was longer than max bytes (and not kept) with -32600 naming the limit. */
void mcp_server_refuse_line(struct mcp_server *server, size_t max);

/* Waits until every queued and running call has been answered (or dropped when cancelled). */
void mcp_server_drain(struct mcp_server *server);

/* Drains, stops the workers and frees everything; NULL is a no-op. */
void mcp_server_free(struct mcp_server *server);

#endif
