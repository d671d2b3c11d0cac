/* SPDX-License-Identifier: MIT */
/* tr_args.h - the one command-line parser of toolfs, toolfs-read and toolfs-mcp. */
#ifndef TR_ARGS_H
#define TR_ARGS_H

#include <stdio.h>

#include "tr_options.h"

/* What a front end's option callback says of an option. */
enum { TR_ARG_TAKEN = 0, TR_ARG_NOT_MINE = -1, TR_ARG_INVALID = -2 };

/* A front end's command line: its name, which options it reads, and its callbacks. All
 * borrowed; ctx is the callbacks' own. */
struct tr_args {
	const char *program; /* "toolfs-read": in --version and in messages */
	/* TR_FRONT_MOUNT takes the reader options as -o NAME[=VALUE][,...] (toolfs); the others
	 * as --NAME VALUE, --NAME=VALUE or --FLAG, dashes or underscores. */
	enum tr_front front;
	void (*usage)(FILE *out); /* --help, -h */
	/* An argument that is not an option ("-" and those after "--" too). Returns 0, or an exit
	 * status after tr_args_error. */
	int (*operand)(const struct tr_args *args, const char *arg);
	/* An option of the front end's own, asked first: a short option ("-f", value NULL), a long
	 * one ("select", value borrowed from argv; a long name takes a value unless it is a reader
	 * flag) or an -o item ("allow_other", "cache" with "strict"). Returns TR_ARG_TAKEN,
	 * TR_ARG_NOT_MINE (the reader options get it), TR_ARG_INVALID (a usage error naming it), or
	 * an exit status after tr_args_error. NULL: no options of its own. */
	int (*option)(const struct tr_args *args, const char *name, const char *value);
	/* An -o item ("name" or "name=value") that neither option nor the reader options took, e.g.
	 * one for FUSE. Returns 0 or an exit status. NULL: such an item is a usage error. */
	int (*extra)(const struct tr_args *args, const char *item);
	void *ctx;
};

/* Parses argv[1..argc-1] into opts and args' callbacks: operands, "--", -h/--help (args->usage
 * to stdout), -V/--version ("PROGRAM VERSION" to stdout), the front end's own options and the
 * reader options of tr_options.def. Returns -1 when the program goes on, or the status to exit
 * with: 0 after --help or --version, 2 (or a callback's status) after a usage error, which is
 * on stderr. -o lists are split in argv itself. */
int tr_args_parse(const struct tr_args *args, int argc, char **argv, struct tr_options *opts);

/* Prints "PROGRAM: " fmt with arg, and "Try 'PROGRAM --help'.", to stderr. Returns 2, the exit
 * status of a usage error. */
int tr_args_error(const struct tr_args *args, const char *fmt, const char *arg);

/* Prints one --help row: "  TAG", then help from column 28 (two spaces past a longer tag), each
 * \n of it a line under the first one's words, @DEFAULT@ as "(default: deflt)". */
void tr_args_print_row(FILE *out, const char *tag, const char *help, const char *deflt);

/* Prints the --help rows of front's own options, the rows of include/tr_front_options.def that
 * name it, in the table's order. */
void tr_args_print_front_options(FILE *out, enum tr_front front);

/* Prints the end every front end's --help shares: the content types, the exit status (0:
 * exit_ok, 1: exit_failed, 2: usage error) and "See PAGE and toolfs(7).". */
void tr_args_print_help_tail(FILE *out, const char *exit_ok, const char *exit_failed,
			     const char *page);

#endif
