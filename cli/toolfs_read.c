/* SPDX-License-Identifier: MIT */
/* toolfs_read.c - the toolfs-read CLI: prints the bytes the virtual file FILE[:SEL].tool[.FMT].json
 * holds, using the reader core alone (no mount). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tr_read.h"

enum { EXIT_READ_OK = 0, EXIT_READ_FAILED = 1, EXIT_USAGE = 2 };

static void usage(FILE *out)
{
	struct tr_options defaults;
	char types[160];

	fputs("Usage: toolfs-read [--select SEL] [--format FMT] [--OPTION VALUE]... FILE\n"
	      "\n"
	      "Prints FILE's ToolResult as JSON, the bytes of FILE[:SEL].tool[.FMT].json in a\n"
	      "toolfs mount.\n"
	      "\n"
	      "Options:\n"
	      "  --select SEL              A, A-, A-B (lines, cells, pages, sheets or slides)\n"
	      "                            or A.C- (line A from column C; sheet A from row C)\n"
	      "                            (default: the file's default view)\n"
	      "  --format FMT              tool, anthropic, openai, mcp, or txt: the text a\n"
	      "                            model reads, with footer lines, no JSON\n"
	      "                            (default: tool; docs/SPEC.md §6)\n"
	      "  -h, --help                show this help and exit\n"
	      "  -V, --version             show the version and exit\n"
	      "\n"
	      "Reader options (--NAME VALUE or --NAME=VALUE; dashes or underscores; sizes take\n"
	      "K, M, G):\n",
	      out);
	tr_options_init(&defaults);
	for (size_t i = 0; tr_option_names[i]; i++) {
		const struct tr_option_doc *doc = tr_option_describe(tr_option_names[i], NULL, 0);
		char name[64];

		if (doc->mount_only) {
			snprintf(name, sizeof(name), "--%s%s%s", doc->name, doc->value ? " " : "",
				 doc->value ? doc->value : "");
			fprintf(out, "  %-25s a toolfs mount option, ignored here\n", name);
		} else {
			tr_option_print_help(out, &defaults, tr_option_names[i], "--", " ");
		}
	}
	tr_content_types_list(types, sizeof(types));
	fprintf(out, "\nContent types (the result's contentType):\n  %s\n", types);
	fputs("\n"
	      "Exit status:\n"
	      "  0  the file was read (success is true); --help, --version\n"
	      "  1  it could not be read as asked (success is false; the JSON says why)\n"
	      "  2  usage error\n"
	      "\n"
	      "See toolfs-read(1) and toolfs(7).\n",
	      out);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("toolfs-read: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'toolfs-read --help'.\n", stderr);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	struct tr_options opts;
	struct tr_selector sel = {0};
	enum tr_format fmt = TR_FORMAT_TOOL;
	const char *file = NULL;
	bool options_done = false;

	tr_options_init(&opts);
	for (int i = 1; i < argc; i++) {
		char *arg = argv[i];

		if (options_done || arg[0] != '-' || arg[1] == '\0') {
			if (file)
				return usage_error("more than one FILE given: %s", arg);
			file = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			options_done = true;
			continue;
		}
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			usage(stdout);
			return EXIT_READ_OK;
		}
		if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
			printf("toolfs-read %s\n", TOOLFS_VERSION);
			return EXIT_READ_OK;
		}
		char name[64];
		const char *value;
		int split = tr_options_split_arg(argc, argv, &i, name, sizeof(name), &value);

		if (split == -1)
			return usage_error("unknown option: %s", arg);
		if (split == -2)
			return usage_error("option %s needs a value", arg);
		if (strcmp(name, "select") == 0) {
			const char *text = value[0] == ':' ? value + 1 : value;

			if (tr_selector_parse(text, strlen(text), &sel) < 0)
				return usage_error("invalid selector: %s (use A, A-, A-B or A.C-)",
						   value);
		} else if (strcmp(name, "format") == 0) {
			if (tr_format_parse(value, &fmt) < 0)
				return usage_error(
					"unknown format: %s (tool, anthropic, openai, mcp, txt)",
					value);
		} else {
			int rc = tr_options_set(&opts, name, value);

			if (rc > 0)
				return usage_error("unknown option: %s", arg);
			if (rc < 0)
				return usage_error("invalid value for %s", arg);
		}
	}
	if (!file)
		return usage_error("%s", "no FILE given");

	struct tr_result res;
	struct tr_doc *doc = NULL;
	struct tr_render_style style;
	int status = EXIT_READ_FAILED;

	if (tr_result_init(&res, file) < 0 || tr_read_path(AT_FDCWD, file, &sel, &opts, &res) < 0)
		goto out_of_memory;
	res.abs_path = realpath(file, NULL);
	tr_render_style_init(&style, &opts);
	style.sel = &sel;
	doc = tr_render_ex(&res, fmt, &style);
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
	return status;
}
