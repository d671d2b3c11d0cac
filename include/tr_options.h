/* tr_options.h - the reader and mount options of docs/SPEC.md §4, with their defaults and parsing. */
#ifndef TR_OPTIONS_H
#define TR_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum tr_symlink_policy { TR_SYMLINKS_INSIDE, TR_SYMLINKS_NONE };

struct tr_options {
	uint64_t max_lines;              /* 2000: lines in a default text window */
	uint64_t max_line_chars;         /* 2000: code points shown of one line */
	uint64_t max_output;             /* 100 KiB: cap on content bytes */
	uint64_t max_image_size;         /* 20 MiB */
	uint64_t image_max_dim;          /* 2000 px */
	uint64_t image_max_b64;          /* 5 MiB of base64 */
	uint64_t max_pdf_size;           /* 32 MiB */
	uint64_t max_pdf_pages;          /* 20 rendered pages per result */
	uint64_t max_notebook_size;      /* 64 MiB */
	uint64_t max_office_size;        /* 64 MiB: .docx/.xlsx/.pptx/ODF files (compressed) */
	uint64_t max_render_ms;          /* 10000: time budget of one result's renders */
	uint64_t max_read_memory;        /* 256 MiB: what reads in flight may hold at once */
	uint64_t cache_size;             /* 256 MiB (daemon) */
	enum tr_symlink_policy symlinks; /* inside (daemon) */
	bool hide_siblings;              /* false (daemon) */
	bool mcp_structured;             /* false: mcp results carry structuredContent */
	bool mcp_documents;              /* false: mcp results embed PDFs as resource blocks */
};

/* Fills opts with the defaults of docs/SPEC.md §4. */
void tr_options_init(struct tr_options *opts);

/* Sets option name (underscores or dashes) from value, e.g. ("max_output", "100K"); value is NULL
 * for flags such as hide_siblings. Sizes accept K, M, G suffixes (powers of 1024).
 * Returns 0, 1 when name is not an option, or -1 when value is invalid for it. */
int tr_options_set(struct tr_options *opts, const char *name, const char *value);

/* True when name (underscores or dashes) is an option that takes no value. */
bool tr_options_is_flag(const char *name);

/* Names of all options, NULL-terminated, for usage texts. */
extern const char *const tr_option_names[];

/* One option described for usage texts: its canonical name, the form of its value ("N", "SIZE",
 * "inside|none"; NULL for a flag), what it does in a few words, and whether only the mount uses
 * it (front ends without a mount accept it and ignore it). */
struct tr_option_doc {
	const char *name, *value, *help;
	bool mount_only;
};

/* Describes option name (underscores or dashes) and, when buf is not NULL, writes its default
 * as a user would give it ("2000", "100K", "inside", "off") to buf, cut to size. Returns the
 * description (static storage), or NULL when name is not an option. */
const struct tr_option_doc *tr_option_describe(const char *name, char *buf, size_t size);

/* Splits the command-line option at argv[*i] ("--name VALUE", "--name=VALUE" or "--flag", as
 * toolfs-read and toolfs-mcp take them) into name (NUL-terminated, at most size bytes) and
 * *value (borrowed from argv; NULL for a flag: a name tr_options_is_flag accepts, or "select"
 * and "format" are not flags), moving *i past a separate value. Returns 0; -1 when argv[*i] does
 * not start with "--" or its name does not fit; -2 when its value is missing. */
int tr_options_split_arg(int argc, char **argv, int *i, char *name, size_t size,
			 const char **value);

/* Parses a size as the options take one: a positive decimal with an optional K, M or G suffix
 * (powers of 1024; "Ki"/"KiB"/"KB" alike). Returns 0 with *out set, or -1. */
int tr_parse_size(const char *text, uint64_t *out);

/* Prints one row of a --help text for option name: prefix, the name, sep and its value's
 * placeholder, then its help and its value in opts as the default, e.g.
 * "  --max_output SIZE         cap on a result's content (default: 40K)". */
void tr_option_print_help(FILE *out, const struct tr_options *opts, const char *name,
			  const char *prefix, const char *sep);

/* Writes option name's value in opts as a user would give it ("2000", "40K", "inside", "on")
 * to buf, cut to size. Returns 0, or -1 when name is not an option or size is 0. */
int tr_option_format(const struct tr_options *opts, const char *name, char *buf, size_t size);

#endif
