/* SPDX-License-Identifier: MIT */
/* mcp_args.h - the read tool's arguments, the rows of mcp_args.def: its inputSchema, and the
 * checks of a call's arguments. */
#ifndef MCP_ARGS_H
#define MCP_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_options.h"

struct cJSON;

/* The rows, as MCP_ARG_file_path ..., in the table's order. */
enum mcp_arg_id {
#define MCP_ARG(name, ...) MCP_ARG_##name,
#include "mcp_args.def"
	MCP_ARGS_COUNT
};

/* A call's arguments as mcp_args_check took them: each COUNT row's value (0 when absent) and
 * the PATH row's string (borrowed from the arguments). */
struct mcp_arg_values {
	uint64_t count[MCP_ARGS_COUNT];
	const char *path;
};

/* The read tool's inputSchema: a property per row, in row order, the PATH row required;
 * max_lines stands for @MAX_LINES@. Returns a new object (the caller's), or NULL. */
struct cJSON *mcp_args_schema(uint64_t max_lines);

/* Checks the arguments of every row but the SELECTOR ones, in row order, into vals, and sets in
 * opts the reader options a row names (a CHOICE row, a COUNT row named after one). path_nul: the
 * PATH argument held a NUL. Returns 0, or -1 with the sentence saying why in buf. */
int mcp_args_check(const struct cJSON *args, bool path_nul, struct mcp_arg_values *vals,
		   struct tr_options *opts, char *buf, size_t size);

/* Writes "Invalid arguments for read: NAME must be ..." for row id, worded from it, to buf.
 * Returns buf. */
const char *mcp_args_invalid(enum mcp_arg_id id, char *buf, size_t size);

#endif
