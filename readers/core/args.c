/* SPDX-License-Identifier: MIT */
/* args.c - the command-line parser of the three front ends (tr_args.h): operands, --help,
 * --version, their own options, and the reader options as -o lists or --NAME VALUE. */
#include <stdbool.h>
#include <string.h>

#include "tr_args.h"
#include "tr_result.h"

enum { EXIT_USAGE = 2 };

int tr_args_error(const struct tr_args *args, const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", args->program);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help'.\n", args->program);
	return EXIT_USAGE;
}

/* Applies one -o item of toolfs: the front end's own, a reader option, or an extra one. */
static int parse_mount_item(const struct tr_args *args, char *item, struct tr_options *opts)
{
	char *value = strchr(item, '=');
	int rc = TR_ARG_NOT_MINE;

	if (value)
		*value++ = '\0';
	if (args->option)
		rc = args->option(args, item, value);
	if (rc == TR_ARG_NOT_MINE) {
		int set = tr_options_set(opts, item, value);

		if (set == 1) {
			if (value)
				value[-1] = '=';
			return args->extra ? args->extra(args, item)
					   : tr_args_error(args, "unknown option: %s", item);
		}
		rc = set < 0 ? TR_ARG_INVALID : TR_ARG_TAKEN;
	}
	if (rc == TR_ARG_INVALID) {
		fprintf(stderr, "%s: invalid -o %s%s%s\nTry '%s --help'.\n", args->program, item,
			value ? "=" : "", value ? value : "", args->program);
		return EXIT_USAGE;
	}
	return rc;
}

/* Applies an -o list (comma-separated items). Returns 0 or an exit status. */
static int parse_mount_list(const struct tr_args *args, char *list, struct tr_options *opts)
{
	for (char *save = NULL, *item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		int rc = parse_mount_item(args, item, opts);

		if (rc)
			return rc;
	}
	return 0;
}

/* Applies the --NAME[=VALUE] option at argv[*i], moving *i past a separate value (every name
 * but a reader flag's takes one). Returns 0 or an exit status. */
static int parse_long(const struct tr_args *args, int argc, char **argv, int *i,
		      struct tr_options *opts)
{
	const char *arg = argv[*i], *eq = strchr(arg + 2, '='), *value = NULL;
	size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
	char name[64];
	int rc = TR_ARG_NOT_MINE;

	if (len == 0 || len >= sizeof(name))
		return tr_args_error(args, "unknown option: %s", arg);
	memcpy(name, arg + 2, len);
	name[len] = '\0';
	if (eq) {
		value = eq + 1;
	} else if (!tr_options_is_flag(name)) {
		if (*i + 1 >= argc)
			return tr_args_error(args, "option %s needs a value", arg);
		value = argv[++*i];
	}
	if (args->option)
		rc = args->option(args, name, value);
	if (rc == TR_ARG_NOT_MINE) {
		rc = tr_options_set(opts, name, value);
		if (rc > 0)
			return tr_args_error(args, "unknown option: %s", arg);
		rc = rc < 0 ? TR_ARG_INVALID : rc;
	}
	return rc == TR_ARG_INVALID ? tr_args_error(args, "invalid value for %s", arg) : rc;
}

int tr_args_parse(const struct tr_args *args, int argc, char **argv, struct tr_options *opts)
{
	bool options_done = false;

	for (int i = 1; i < argc; i++) {
		char *arg = argv[i];
		int rc;

		if (options_done || arg[0] != '-' || arg[1] == '\0') {
			rc = args->operand(args, arg);
		} else if (strcmp(arg, "--") == 0) {
			options_done = true;
			rc = 0;
		} else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			args->usage(stdout);
			return 0;
		} else if (strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0) {
			printf("%s %s\n", args->program, TOOLFS_VERSION);
			return 0;
		} else if (args->front == TR_FRONT_MOUNT && strncmp(arg, "-o", 2) == 0) {
			char *list = arg[2] ? arg + 2 : (i + 1 < argc ? argv[++i] : NULL);

			rc = list ? parse_mount_list(args, list, opts)
				  : tr_args_error(args, "%s needs an argument", "-o");
		} else if (args->front != TR_FRONT_MOUNT && arg[1] == '-') {
			rc = parse_long(args, argc, argv, &i, opts);
		} else {
			rc = args->option ? args->option(args, arg, NULL) : TR_ARG_NOT_MINE;
			if (rc == TR_ARG_NOT_MINE || rc == TR_ARG_INVALID)
				rc = tr_args_error(args, "unknown option: %s", arg);
		}
		if (rc)
			return rc;
	}
	return -1;
}

void tr_args_print_help_tail(FILE *out, const char *exit_ok, const char *exit_failed,
			     const char *page)
{
	char types[160];

	tr_content_types_list(types, sizeof(types));
	fprintf(out,
		"\nContent types (the result's contentType):\n  %s\n"
		"\n"
		"Exit status:\n"
		"  0  %s\n"
		"  1  %s\n"
		"  2  usage error\n"
		"\n"
		"See %s and toolfs(7).\n",
		types, exit_ok, exit_failed, page);
}

void tr_args_print_row(FILE *out, const char *tag, const char *help, const char *deflt)
{
	fprintf(out, "  %-25s%s", tag, strlen(tag) > 25 ? "  " : " ");
	tr_option_text_print(out, help, deflt, "\n                            ");
	fputc('\n', out);
}

void tr_args_print_front_options(FILE *out, enum tr_front front)
{
	static const struct {
		unsigned fronts;
		const char *flags, *value, *help;
	} rows[] = {
#define TR_FRONT_OPTION(fronts, flags, value, help) {fronts, flags, value, help},
#include "tr_front_options.def"
	};
	char tag[64];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (!(rows[i].fronts & front))
			continue;
		snprintf(tag, sizeof(tag), "%s%s%s", rows[i].flags, rows[i].value ? " " : "",
			 rows[i].value ? rows[i].value : "");
		tr_args_print_row(out, tag, rows[i].help, NULL);
	}
}
