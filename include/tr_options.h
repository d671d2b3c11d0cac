/* SPDX-License-Identifier: MIT */
/* tr_options.h - the reader and mount options of docs/SPEC.md §4, with their defaults and parsing. */
#ifndef TR_OPTIONS_H
#define TR_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum tr_symlink_policy { TR_SYMLINKS_INSIDE, TR_SYMLINKS_NONE };

/* ocr=off|auto|on (docs/SPEC.md §4): auto OCRs PDF pages without a text layer, on images too. */
enum tr_ocr_mode { TR_OCR_OFF, TR_OCR_AUTO, TR_OCR_ON };

/* A WORD option's value: a short name of [A-Za-z0-9_] runs joined by '+' ("eng+deu"). */
struct tr_option_word {
	char text[64];
};

/* The front ends, as the option table marks which of them an option serves (a bit each). */
enum tr_front { TR_FRONT_MOUNT = 1, TR_FRONT_CLI = 2, TR_FRONT_MCP = 4 };

#define TR_OPTION_TYPE_COUNT uint64_t
#define TR_OPTION_TYPE_LIMIT uint64_t
#define TR_OPTION_TYPE_SIZE uint64_t
#define TR_OPTION_TYPE_FLAG bool
#define TR_OPTION_TYPE_SYMLINKS enum tr_symlink_policy
#define TR_OPTION_TYPE_OCR enum tr_ocr_mode
#define TR_OPTION_TYPE_WORD struct tr_option_word

/* One field per row of tr_options.def, named after the option; the row gives its default. */
struct tr_options {
#define TR_OPTION(name, kind, ...) TR_OPTION_TYPE_##kind name;
#include "tr_options.def"
#undef TR_OPTION
};

/* Fills opts with the defaults of docs/SPEC.md §4: those of toolfs and toolfs-read. */
void tr_options_init(struct tr_options *opts);

/* Fills opts with the defaults of front end front: tr_options_init's, and for TR_FRONT_MCP the
 * ones the table's mcp column chose for MCP clients. */
void tr_options_init_for(struct tr_options *opts, enum tr_front front);

/* True when a and b set every option (each row of tr_options.def) alike: a result read under
 * one is the result under the other (the reply cache's key, readers/sandbox/sandbox_cache.c). */
bool tr_options_equal(const struct tr_options *a, const struct tr_options *b);

/* Sets option name (underscores or dashes) from value, e.g. ("max_output", "100K"); value is NULL
 * for flags such as hide_siblings. Sizes accept K, M, G suffixes (powers of 1024).
 * Returns 0, 1 when name is not an option, or -1 when value is invalid for it. */
int tr_options_set(struct tr_options *opts, const char *name, const char *value);

/* True when name (underscores or dashes) is an option that takes no value. */
bool tr_options_is_flag(const char *name);

/* Names of all options in the table's order, NULL-terminated. */
extern const char *const tr_option_names[];

/* One option described: its canonical name, the form of its value ("N", "SIZE", "inside|none";
 * NULL for a flag), what it does in a few words (--help), its paragraph of toolfs(1) (roff, with
 * @DEFAULT@ for "(default: D)"), and the front ends it serves (enum tr_front bits; the others
 * accept it and ignore it). */
struct tr_option_doc {
	const char *name, *value, *help, *man;
	unsigned fronts;
};

/* Describes option name (underscores or dashes) and, when buf is not NULL, writes its default
 * as a user would give it ("2000", "100K", "inside", "off") to buf, cut to size. Returns the
 * description (static storage), or NULL when name is not an option. */
const struct tr_option_doc *tr_option_describe(const char *name, char *buf, size_t size);

/* One of the daemon's own -o options, a TR_MOUNT_OPTION row of tr_options.def: its name, the
 * form of its value (NULL when it takes none), its default in words ("the kernel's limit"), its
 * --help words (lines split by \n) and its paragraph of toolfs(1) (roff), both with @DEFAULT@
 * for "(default: D)". fs/main.c parses them; struct tr_options has no field for them. */
struct tr_mount_option_doc {
	const char *name, *value, *deflt, *help, *man;
};

/* The TR_MOUNT_OPTION rows, as TR_MOUNT_OPTION_cache ..., in the table's order: a parser that
 * switches on them with no default sees a row it lacks (-Wswitch). */
enum tr_mount_option {
#define TR_MOUNT_OPTION(name, ...) TR_MOUNT_OPTION_##name,
#include "tr_options.def"
#undef TR_MOUNT_OPTION
};

/* The TR_MOUNT_OPTION rows described, tr_mount_options[TR_MOUNT_OPTION_cache] ..., and how many
 * there are. */
extern const struct tr_mount_option_doc tr_mount_options[];
extern const size_t tr_mount_options_count;

/* Prints text, an option's help or man text, with each @DEFAULT@ as "(default: deflt)" and each
 * \n as newline ("\n" itself, or a line break and an indent). */
void tr_option_text_print(FILE *out, const char *text, const char *deflt, const char *newline);

/* Parses a size as the options take one: a positive decimal with an optional K, M or G suffix
 * (powers of 1024; "Ki"/"KiB"/"KB" alike). Returns 0 with *out set, or -1. */
int tr_parse_size(const char *text, uint64_t *out);

/* Prints the option rows of front end front's --help, each option's value in opts as its
 * default: "  max_output=SIZE           cap on a result's content (default: 100K)" for the
 * mount, "  --max_output SIZE ..." for the others; toolfs-read lists the options it ignores
 * as such, toolfs-mcp leaves them out. */
void tr_options_print_help(FILE *out, const struct tr_options *opts, enum tr_front front);

/* Writes option name's value in opts as a user would give it ("2000", "40K", "inside", "on")
 * to buf, cut to size. Returns 0, or -1 when name is not an option or size is 0. */
int tr_option_format(const struct tr_options *opts, const char *name, char *buf, size_t size);

#endif
