/* SPDX-License-Identifier: MIT */
/* options.c - defaults, parsing and --help rows of the options of docs/SPEC.md §4, generated from the
 * table include/tr_options.def (shared by the daemon, the CLI and the MCP server). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_options.h"

enum option_kind {
	KIND_COUNT,
	KIND_LIMIT,
	KIND_SIZE,
	KIND_FLAG,
	KIND_SYMLINKS,
	KIND_OCR,
	KIND_WORD
};

struct option_spec {
	struct tr_option_doc doc;
	enum option_kind kind;
	size_t offset;
	uint64_t default_value;
	const char *default_text; /* KIND_WORD's default */
	bool mcp_differs;         /* toolfs-mcp's default is mcp_value */
	uint64_t mcp_value;
};

/* The table's tokens (tr_options.def) as values. */
#define FRONTS_ALL (TR_FRONT_MOUNT | TR_FRONT_CLI | TR_FRONT_MCP)
#define FRONTS_MOUNT TR_FRONT_MOUNT
#define FRONTS_MCP TR_FRONT_MCP
#define MCP_DEFAULT_SAME false, 0
#define MCP_DEFAULT_MCP(value) true, (value)
/* The default column: a number, or a string literal for WORD. */
#define DEFAULTS_COUNT(def) (uint64_t)(def), NULL
#define DEFAULTS_LIMIT(def) (uint64_t)(def), NULL
#define DEFAULTS_SIZE(def) (uint64_t)(def), NULL
#define DEFAULTS_FLAG(def) (uint64_t)(def), NULL
#define DEFAULTS_SYMLINKS(def) (uint64_t)(def), NULL
#define DEFAULTS_OCR(def) (uint64_t)(def), NULL
#define DEFAULTS_WORD(def) 0, (def)

static const struct option_spec option_specs[] = {
#define TR_OPTION(name, kind, def, mcp, fronts, value, help, man) \
	{{#name, value, help, man, FRONTS_##fronts},              \
	 KIND_##kind,                                             \
	 offsetof(struct tr_options, name),                       \
	 DEFAULTS_##kind(def),                                    \
	 MCP_DEFAULT_##mcp},
#include "tr_options.def"
#undef TR_OPTION
};

#define N_OPTIONS (sizeof(option_specs) / sizeof(option_specs[0]))

/* Whether two values of an option's kind are alike (tr_options_equal). */
#define TR_OPTION_SAME_COUNT(a, b) ((a) == (b))
#define TR_OPTION_SAME_LIMIT(a, b) ((a) == (b))
#define TR_OPTION_SAME_SIZE(a, b) ((a) == (b))
#define TR_OPTION_SAME_FLAG(a, b) ((a) == (b))
#define TR_OPTION_SAME_SYMLINKS(a, b) ((a) == (b))
#define TR_OPTION_SAME_OCR(a, b) ((a) == (b))
#define TR_OPTION_SAME_WORD(a, b) (strncmp((a).text, (b).text, sizeof((a).text)) == 0)

bool tr_options_equal(const struct tr_options *a, const struct tr_options *b)
{
#define TR_OPTION(name, kind, ...)                    \
	if (!TR_OPTION_SAME_##kind(a->name, b->name)) \
		return false;
#include "tr_options.def"
#undef TR_OPTION
	return true;
}

const char *const tr_option_names[] = {
#define TR_OPTION(name, ...) #name,
#include "tr_options.def"
#undef TR_OPTION
	NULL,
};

const struct tr_mount_option_doc tr_mount_options[] = {
#define TR_MOUNT_OPTION(name, value, deflt, help, man) {#name, value, deflt, help, man},
#include "tr_options.def"
#undef TR_MOUNT_OPTION
};

const size_t tr_mount_options_count = sizeof(tr_mount_options) / sizeof(tr_mount_options[0]);

/* True when text is a WORD value: [A-Za-z0-9_] runs joined by '+', shorter than the field. */
static bool word_valid(const char *text)
{
	size_t len = text ? strlen(text) : 0;

	if (len == 0 || len >= sizeof(((struct tr_option_word *)0)->text) || text[0] == '+' ||
	    text[len - 1] == '+' || strstr(text, "++"))
		return false;
	return strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+") ==
	       len;
}

/* The values of ocr=, by enum tr_ocr_mode. */
static const char *const ocr_names[] = {"off", "auto", "on"};

/* Stores value (text for KIND_WORD) in spec's field of opts, as the field's type. */
static void store(struct tr_options *opts, const struct option_spec *spec, uint64_t value,
		  const char *text)
{
	char *field = (char *)opts + spec->offset;

	switch (spec->kind) {
	case KIND_OCR: *(enum tr_ocr_mode *)field = (enum tr_ocr_mode)value; break;
	case KIND_WORD:
		snprintf(((struct tr_option_word *)field)->text, sizeof(struct tr_option_word),
			 "%s", text);
		break;
	case KIND_FLAG: *(bool *)field = value != 0; break;
	case KIND_SYMLINKS: *(enum tr_symlink_policy *)field = (enum tr_symlink_policy)value; break;
	case KIND_COUNT:
	case KIND_LIMIT:
	case KIND_SIZE: *(uint64_t *)field = value; break;
	}
}

void tr_options_init_for(struct tr_options *opts, enum tr_front front)
{
	*opts = (struct tr_options){0};
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_spec *spec = &option_specs[i];

		store(opts, spec,
		      front == TR_FRONT_MCP && spec->mcp_differs ? spec->mcp_value
								 : spec->default_value,
		      spec->default_text);
	}
}

void tr_options_init(struct tr_options *opts)
{
	tr_options_init_for(opts, TR_FRONT_MOUNT);
}

/* Compares an option name written with dashes or underscores to its canonical form. */
static bool name_matches(const char *given, const char *canonical)
{
	for (; *given && *canonical; given++, canonical++) {
		char c = *given == '-' ? '_' : *given;

		if (c != *canonical)
			return false;
	}
	return *given == '\0' && *canonical == '\0';
}

static const struct option_spec *find_spec(const char *name)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (name_matches(name, option_specs[i].doc.name))
			return &option_specs[i];
	return NULL;
}

bool tr_options_is_flag(const char *name)
{
	const struct option_spec *spec = find_spec(name);

	return spec && spec->kind == KIND_FLAG;
}

/* Parses a positive decimal with an optional K/M/G suffix (powers of 1024 when allowed). */
static int parse_number(const char *value, bool allow_suffix, uint64_t *out)
{
	char *end;
	unsigned long long n;

	if (!value || *value < '0' || *value > '9')
		return -1;
	errno = 0;
	n = strtoull(value, &end, 10);
	if (errno)
		return -1;
	if (allow_suffix && *end) {
		unsigned shift = 0;

		switch (*end) {
		case 'k':
		case 'K': shift = 10; break;
		case 'm':
		case 'M': shift = 20; break;
		case 'g':
		case 'G': shift = 30; break;
		default: return -1;
		}
		end++;
		if (*end == 'i' || *end == 'B')
			end += *end == 'i' && end[1] == 'B' ? 2 : 1;
		if (n > (UINT64_MAX >> shift))
			return -1;
		n <<= shift;
	}
	if (*end || n == 0)
		return -1;
	*out = n;
	return 0;
}

int tr_parse_size(const char *text, uint64_t *out)
{
	return parse_number(text, true, out);
}

int tr_options_set(struct tr_options *opts, const char *name, const char *value)
{
	const struct option_spec *spec = find_spec(name);
	char *field;

	if (!spec)
		return 1;
	field = (char *)opts + spec->offset;
	switch (spec->kind) {
	case KIND_FLAG:
		if (value && strcmp(value, "1") != 0 && strcmp(value, "true") != 0)
			return strcmp(value, "0") == 0 || strcmp(value, "false") == 0
				       ? (*(bool *)field = false, 0)
				       : -1;
		*(bool *)field = true;
		return 0;
	case KIND_SYMLINKS:
		if (value && strcmp(value, "inside") == 0)
			store(opts, spec, TR_SYMLINKS_INSIDE, NULL);
		else if (value && strcmp(value, "none") == 0)
			store(opts, spec, TR_SYMLINKS_NONE, NULL);
		else
			return -1;
		return 0;
	case KIND_OCR:
		for (int mode = TR_OCR_OFF; mode <= TR_OCR_ON; mode++)
			if (value && strcmp(value, ocr_names[mode]) == 0)
				return store(opts, spec, (uint64_t)mode, NULL), 0;
		return -1;
	case KIND_WORD:
		if (!word_valid(value))
			return -1;
		store(opts, spec, 0, value);
		return 0;
	case KIND_LIMIT: /* a count, or no limit: 0 or off */
		if (value && (strcmp(value, "off") == 0 || strcmp(value, "0") == 0))
			return *(uint64_t *)field = 0, 0;
		return parse_number(value, false, (uint64_t *)field);
	case KIND_COUNT:
	case KIND_SIZE: return parse_number(value, spec->kind == KIND_SIZE, (uint64_t *)field);
	}
	return -1;
}

/* Writes a size the way a user would give it: the largest K/M/G unit that divides it. */
static void format_size(uint64_t n, char *buf, size_t size)
{
	static const char units[] = "GMK";

	for (int i = 0; i < 3; i++) {
		unsigned shift = 10 * (3 - i);

		if (n >= (1ULL << shift) && n % (1ULL << shift) == 0) {
			snprintf(buf, size, "%llu%c", (unsigned long long)(n >> shift), units[i]);
			return;
		}
	}
	snprintf(buf, size, "%llu", (unsigned long long)n);
}

int tr_option_format(const struct tr_options *opts, const char *name, char *buf, size_t size)
{
	const struct option_spec *spec = find_spec(name);
	const char *field;

	if (!spec || size == 0)
		return -1;
	field = (const char *)opts + spec->offset;
	switch (spec->kind) {
	case KIND_FLAG: snprintf(buf, size, "%s", *(const bool *)field ? "on" : "off"); break;
	case KIND_SYMLINKS:
		snprintf(buf, size, "%s",
			 *(const enum tr_symlink_policy *)field == TR_SYMLINKS_INSIDE ? "inside"
										      : "none");
		break;
	case KIND_OCR:
		snprintf(buf, size, "%s", ocr_names[*(const enum tr_ocr_mode *)field]);
		break;
	case KIND_WORD:
		snprintf(buf, size, "%s", ((const struct tr_option_word *)field)->text);
		break;
	case KIND_LIMIT:
		if (!*(const uint64_t *)field) {
			snprintf(buf, size, "off");
			break;
		}
		/* fall through */
	case KIND_COUNT:
		snprintf(buf, size, "%llu", (unsigned long long)*(const uint64_t *)field);
		break;
	case KIND_SIZE: format_size(*(const uint64_t *)field, buf, size); break;
	}
	return 0;
}

const struct tr_option_doc *tr_option_describe(const char *name, char *buf, size_t size)
{
	const struct option_spec *spec = find_spec(name);
	struct tr_options defaults;

	if (!spec)
		return NULL;
	if (buf && size > 0) {
		tr_options_init(&defaults);
		tr_option_format(&defaults, name, buf, size);
	}
	return &spec->doc;
}

void tr_options_print_help(FILE *out, const struct tr_options *opts, enum tr_front front)
{
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct tr_option_doc *doc = &option_specs[i].doc;
		bool mount = front == TR_FRONT_MOUNT;
		char row[64], value[32];

		if (!(doc->fronts & front) && front != TR_FRONT_CLI)
			continue;
		snprintf(row, sizeof(row), "%s%s%s%s", mount ? "" : "--", doc->name,
			 doc->value ? (mount ? "=" : " ") : "", doc->value ? doc->value : "");
		if (!(doc->fronts & front)) {
			fprintf(out, "  %-25s a %s option, ignored here\n", row,
				doc->fronts & TR_FRONT_MOUNT ? "toolfs mount" : "toolfs-mcp");
			continue;
		}
		tr_option_format(opts, doc->name, value, sizeof(value));
		fprintf(out, "  %-25s %s (default: %s)\n", row, doc->help, value);
	}
}

void tr_option_text_print(FILE *out, const char *text, const char *deflt, const char *newline)
{
	static const char mark[] = "@DEFAULT@";

	while (*text) {
		size_t len = strcspn(text, "@\n");

		fwrite(text, 1, len, out);
		text += len;
		if (strncmp(text, mark, sizeof(mark) - 1) == 0) {
			fprintf(out, "(default: %s)", deflt);
			text += sizeof(mark) - 1;
		} else if (*text == '\n') {
			fputs(newline, out);
			text++;
		} else if (*text) {
			fputc(*text++, out);
		}
	}
}
