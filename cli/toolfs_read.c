/* SPDX-License-Identifier: MIT */
/* toolfs_read.c - the toolfs-read CLI: prints the bytes the virtual file FILE[:SEL].tool[.FMT].json
 * holds, using the reader core alone (no mount). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tr_args.h"
#include "tr_library.h"
#include "tr_read.h"

enum { EXIT_READ_OK = 0, EXIT_READ_FAILED = 1, EXIT_USAGE = 2 };

static void usage(FILE *out)
{
	struct tr_options defaults;

	fputs("Usage: toolfs-read [--select SEL] [--format FMT] [--OPTION VALUE]... FILE\n"
	      "\n"
	      "Prints FILE's ToolResult as JSON, the bytes of FILE[:SEL].tool[.FMT].json in a\n"
	      "toolfs mount.\n"
	      "\n"
	      "Options:\n",
	      out);
	tr_args_print_front_options(out, TR_FRONT_CLI);
	fputs("\n"
	      "Reader options (--NAME VALUE or --NAME=VALUE; dashes or underscores; sizes take\n"
	      "K, M, G):\n",
	      out);
	tr_options_init_for(&defaults, TR_FRONT_CLI);
	tr_options_print_help(out, &defaults, TR_FRONT_CLI);
	tr_args_print_help_tail(
		out, "the file was read (success is true); --help, --version",
		"it could not be read as asked (success is false; the JSON says why)",
		"toolfs-read(1)");
}

/* What the command line names: the file, its selector and the format. */
struct cli_request {
	const char *file;
	struct tr_selector sel;
	enum tr_format fmt;
};

static int take_operand(const struct tr_args *args, const char *arg)
{
	struct cli_request *req = args->ctx;

	if (req->file)
		return tr_args_error(args, "more than one FILE given: %s", arg);
	req->file = arg;
	return 0;
}

/* --select and --format; the reader options are the parser's. */
static int take_option(const struct tr_args *args, const char *name, const char *value)
{
	struct cli_request *req = args->ctx;

	if (strcmp(name, "select") == 0) {
		const char *text = value[0] == ':' ? value + 1 : value;

		if (tr_selector_parse(text, strlen(text), &req->sel) < 0)
			return tr_args_error(args,
					     "invalid selector: %s (use A, A-, A-B, A.C-, WxH+X+Y, "
					     "P@WxH+X+Y or a time T1-T2)",
					     value);
		return TR_ARG_TAKEN;
	}
	if (strcmp(name, "format") == 0) {
		if (tr_format_parse(value, &req->fmt) < 0)
			return tr_args_error(
				args, "unknown format: %s (tool, anthropic, openai, mcp, txt)",
				value);
		return TR_ARG_TAKEN;
	}
	return TR_ARG_NOT_MINE;
}

/* The reader library's notices (tr_library_set_log), on stderr as this program logs. */
static void log_notice(const char *message)
{
	fprintf(stderr, "toolfs-read: %s\n", message);
}

int main(int argc, char **argv)
{
	struct tr_options opts;
	struct cli_request req = {.fmt = TR_FORMAT_TOOL};
	const struct tr_args args = {
		.program = "toolfs-read",
		.front = TR_FRONT_CLI,
		.usage = usage,
		.operand = take_operand,
		.option = take_option,
		.ctx = &req,
	};
	const char *file;
	int parsed;

	tr_options_init_for(&opts, TR_FRONT_CLI);
	parsed = tr_args_parse(&args, argc, argv, &opts);
	if (parsed >= 0)
		return parsed;
	file = req.file;
	if (!file)
		return tr_args_error(&args, "%s", "no FILE given");
	tr_library_init(&opts);
	tr_library_set_log(log_notice);

	struct tr_result res;
	struct tr_doc *doc = NULL;
	struct tr_render_style style;
	int status = EXIT_READ_FAILED;

	if (tr_result_init(&res, file) < 0 ||
	    tr_read_path(AT_FDCWD, file, &req.sel, &opts, &res) < 0)
		goto out_of_memory;
	res.abs_path = realpath(file, NULL);
	tr_render_style_init(&style, &opts);
	style.sel = &req.sel;
	doc = tr_render_ex(&res, req.fmt, &style);
	if (!doc)
		goto out_of_memory;
	if (tr_doc_write_fd(doc, STDOUT_FILENO) < 0) {
		perror("toolfs-read: writing the result");
		goto out;
	}
	status = res.success ? EXIT_READ_OK : EXIT_READ_FAILED;
	goto out;
out_of_memory:
	fputs("toolfs-read: out of memory\n", stderr);
out:
	tr_doc_unref(doc);
	tr_result_destroy(&res);
	tr_library_shutdown();
	return status;
}
