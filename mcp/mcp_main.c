/* SPDX-License-Identifier: MIT */
/* mcp_main.c - toolfs-mcp: the MCP server of docs/SPEC.md §7 on stdio (newline-delimited JSON-RPC 2.0;
 * nothing but protocol on stdout, diagnostics on stderr, exit 0 at the end of input). */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"
#include "tr_args.h"
#include "tr_library.h"

/* Workers serving tools/call: a few reads at once, on machines with few cores too. */
#define MCP_THREADS 4

/* The longest request line taken by default (--max-request): a read call is a few hundred
 * bytes; a client that sends more is broken or hostile. */
#define MCP_MAX_REQUEST (1024 * 1024)

/* What the line buffer keeps between lines: one longer line does not leave it large. */
#define LINE_KEEP (64 * 1024)

static void usage(FILE *out)
{
	struct tr_options d;

	tr_options_init_for(&d, TR_FRONT_MCP);
	fputs("Usage: toolfs-mcp [--OPTION VALUE ...] [ROOT ...]\n"
	      "\n"
	      "A Model Context Protocol server on stdio whose tool `read` returns the\n"
	      "toolfs result of a file inside the ROOT directories (default: the current\n"
	      "directory; a client that declares roots replaces them): text with line\n"
	      "numbers, images fitted for vision models, PDFs, notebooks, Word, Excel and\n"
	      "PowerPoint files, SVG drawings, audio and video. Its other tool,\n"
	      "list_allowed_directories, names the roots.\n"
	      "\n"
	      "Options:\n",
	      out);
	tr_args_print_front_options(out, TR_FRONT_MCP);
	fputs("\n"
	      "Reader options (--NAME VALUE or --NAME=VALUE; dashes or underscores; sizes take\n"
	      "K, M, G; defaults chosen for MCP clients where they differ from toolfs-read's):\n",
	      out);
	tr_options_print_help(out, &d, TR_FRONT_MCP);
	tr_args_print_help_tail(out,
				"standard input ended (the client closed it); --help, --version",
				"the server could not start (out of memory)", "toolfs-mcp(1)");
}

/* Writes one message to stdout; the server serializes the calls. A closed stdout (the client
 * went away) is not an error worth more than a note. */
static void write_stdout(void *arg, const char *line, size_t len)
{
	static bool broken;

	(void)arg;
	while (len && !broken) {
		ssize_t n = write(STDOUT_FILENO, line, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			broken = true;
			fprintf(stderr, "toolfs-mcp: writing to stdout: %s\n", strerror(errno));
			break;
		}
		line += n;
		len -= (size_t)n;
	}
}

/* Shrinks *buf back to LINE_KEEP bytes when it grew past them. */
static void line_shrink(char **buf, size_t *cap)
{
	char *smaller;

	if (*cap <= LINE_KEEP)
		return;
	smaller = realloc(*buf, LINE_KEEP);
	if (smaller) {
		*buf = smaller;
		*cap = LINE_KEEP;
	}
}

/* Feeds the lines of fd to server until its end: each line up to max bytes (without its '\n') is
 * handled; a longer one is dropped as it arrives, never held, and refused. A last line without
 * '\n' counts too. Returns 0, or -1 when out of memory. */
static int serve_lines(struct mcp_server *server, int fd, size_t max)
{
	static char chunk[64 * 1024];
	size_t cap = LINE_KEEP, len = 0;
	char *buf = malloc(cap);
	bool dropping = false; /* inside a line over max */
	ssize_t n;

	if (!buf)
		return -1;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		const char *p = chunk, *end;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "toolfs-mcp: reading stdin: %s\n", strerror(errno));
			break;
		}
		end = chunk + n;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t take = (size_t)((nl ? nl : end) - p);

			if (!dropping && take > max - len) {
				dropping = true;
				len = 0;
				line_shrink(&buf, &cap);
			}
			if (!dropping) {
				if (len + take > cap) {
					size_t grown = cap;
					char *bigger;

					while (grown < len + take)
						grown = grown > max / 2 ? max : grown * 2;
					bigger = realloc(buf, grown);
					if (!bigger) {
						free(buf);
						return -1;
					}
					buf = bigger;
					cap = grown;
				}
				memcpy(buf + len, p, take);
				len += take;
			}
			if (!nl)
				break;
			if (dropping)
				mcp_server_refuse_line(server, max);
			else
				mcp_server_handle(server, buf, len);
			dropping = false;
			len = 0;
			line_shrink(&buf, &cap);
			p = nl + 1;
		}
	}
	if (dropping)
		mcp_server_refuse_line(server, max);
	else if (len)
		mcp_server_handle(server, buf, len);
	free(buf);
	return 0;
}

/* What the command line names: the roots and the longest request line. */
struct mcp_cmdline {
	char **roots;
	size_t n_roots;
	uint64_t max_request;
};

static int take_root(const struct tr_args *args, const char *arg)
{
	struct mcp_cmdline *cmd = args->ctx;

	cmd->roots[cmd->n_roots++] = (char *)arg;
	return 0;
}

/* --max-request; the reader options are the parser's. */
static int take_option(const struct tr_args *args, const char *name, const char *value)
{
	struct mcp_cmdline *cmd = args->ctx;

	if (strcmp(name, "max-request") != 0 && strcmp(name, "max_request") != 0)
		return TR_ARG_NOT_MINE;
	if (!value || tr_parse_size(value, &cmd->max_request) < 0 ||
	    cmd->max_request > SIZE_MAX / 2)
		return TR_ARG_INVALID;
	return TR_ARG_TAKEN;
}

/* The reader library's notices (tr_library_set_log), on stderr as this program logs. */
static void log_notice(const char *message)
{
	fprintf(stderr, "toolfs-mcp: %s\n", message);
}

int main(int argc, char **argv)
{
	struct tr_options opts;
	struct mcp_server *server;
	struct mcp_cmdline cmd = {
		.roots = calloc((size_t)argc, sizeof(*cmd.roots)),
		.max_request = MCP_MAX_REQUEST,
	};
	const struct tr_args args = {
		.program = "toolfs-mcp",
		.front = TR_FRONT_MCP,
		.usage = usage,
		.operand = take_root,
		.option = take_option,
		.ctx = &cmd,
	};
	int status = 0;

	if (!cmd.roots)
		return 1;
	tr_options_init_for(&opts, TR_FRONT_MCP);
	status = tr_args_parse(&args, argc, argv, &opts);
	if (status >= 0)
		goto out;
	status = 0;
	tr_library_init(&opts);
	tr_library_set_log(log_notice);
	/* Few arenas (MCP_THREADS workers share two) and large blocks mapped on their own, given
	 * back whole when freed: a server that idles between calls should not hold its peak. */
	mallopt(M_ARENA_MAX, 2);
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	/* A client that closes its end must not kill the server with SIGPIPE mid-answer. */
	signal(SIGPIPE, SIG_IGN);
	server = mcp_server_new(&opts, cmd.roots, cmd.n_roots, MCP_THREADS, write_stdout, NULL);
	if (!server) {
		fputs("toolfs-mcp: out of memory\n", stderr);
		status = 1;
		goto out;
	}
	if (serve_lines(server, STDIN_FILENO, (size_t)cmd.max_request) < 0) {
		fputs("toolfs-mcp: out of memory\n", stderr);
		status = 1;
	}
	/* End of input: the calls already received are answered, then the server exits. */
	mcp_server_free(server);
out:
	tr_library_shutdown();
	free(cmd.roots);
	return status;
}
