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
	fputs("usage: toolfs-read [--select SEL] [--format FMT] [--OPTION VALUE ...] FILE\n"
	      "\n"
	      "Prints FILE's ToolResult as JSON, the bytes of FILE[:SEL].tool[.FMT].json in a\n"
	      "toolfs mount. Exit status: 0 success, 1 the file could not be read as asked\n"
	      "(the JSON says why), 2 usage error.\n"
	      "\n"
	      "  --select SEL   A, A-, A-B (lines, cells, pages, sheets or slides) or A.C- (line "
	      "A\n"
	      "                 from column C; sheet A from row C)\n"
	      "  --format FMT   tool (default), anthropic, openai or mcp (SPEC §6)\n"
	      "  --help, --version\n"
	      "\n"
	      "options (dashes or underscores; sizes take K, M, G):\n",
	      out);
	for (size_t i = 0; tr_option_names[i]; i++)
		fprintf(out, "  --%s%s\n", tr_option_names[i],
			tr_options_is_flag(tr_option_names[i]) ? "" : " VALUE");
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
		if (strcmp(arg, "--version") == 0) {
			printf("toolfs-read %s\n", TOOLFS_VERSION);
			return EXIT_READ_OK;
		}
		if (strncmp(arg, "--", 2) != 0)
			return usage_error("unknown option: %s", arg);

		/* --name VALUE or --name=VALUE */
		char name[64];
		const char *value = NULL;
		const char *eq = strchr(arg + 2, '=');
		size_t name_len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);

		if (name_len == 0 || name_len >= sizeof(name))
			return usage_error("unknown option: %s", arg);
		memcpy(name, arg + 2, name_len);
		name[name_len] = '\0';
		bool is_flag = tr_options_is_flag(name);

		if (eq) {
			value = eq + 1;
		} else if (!is_flag) {
			if (i + 1 >= argc)
				return usage_error("option --%s needs a value", name);
			value = argv[++i];
		}
		if (strcmp(name, "select") == 0) {
			const char *text = value[0] == ':' ? value + 1 : value;

			if (tr_selector_parse(text, strlen(text), &sel) < 0)
				return usage_error("invalid selector: %s (use A, A-, A-B or A.C-)",
						   value);
		} else if (strcmp(name, "format") == 0) {
			if (tr_format_parse(value, &fmt) < 0)
				return usage_error(
					"unknown format: %s (tool, anthropic, openai, mcp)", value);
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
	int status = EXIT_READ_FAILED;

	if (tr_result_init(&res, file) < 0 || tr_read_path(AT_FDCWD, file, &sel, &opts, &res) < 0)
		goto out_of_memory;
	res.abs_path = realpath(file, NULL);
	doc = tr_render(&res, fmt);
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
