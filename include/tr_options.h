/* tr_options.h - the reader and mount options of SPEC §4, with their defaults and parsing. */
#ifndef TR_OPTIONS_H
#define TR_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

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
	uint64_t cache_size;             /* 256 MiB (daemon) */
	enum tr_symlink_policy symlinks; /* inside (daemon) */
	bool hide_siblings;              /* false (daemon) */
};

/* Fills opts with the defaults of SPEC §4. */
void tr_options_init(struct tr_options *opts);

/* Sets option name (underscores or dashes) from value, e.g. ("max_output", "100K"); value is NULL
 * for flags such as hide_siblings. Sizes accept K, M, G suffixes (powers of 1024).
 * Returns 0, 1 when name is not an option, or -1 when value is invalid for it. */
int tr_options_set(struct tr_options *opts, const char *name, const char *value);

/* True when name (underscores or dashes) is an option that takes no value. */
bool tr_options_is_flag(const char *name);

/* Names of all options, NULL-terminated, for usage texts. */
extern const char *const tr_option_names[];

#endif
