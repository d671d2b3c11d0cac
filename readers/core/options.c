/* options.c - defaults and parsing of the options of docs/SPEC.md §4 (shared by the CLI and the daemon). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_options.h"

enum option_kind { KIND_COUNT, KIND_SIZE, KIND_FLAG, KIND_SYMLINKS };

struct option_spec {
	struct tr_option_doc doc;
	enum option_kind kind;
	size_t offset;
};

#define OPT(name, kind, value, help, mount_only)                                          \
	{                                                                                 \
		{#name, value, help, mount_only}, kind, offsetof(struct tr_options, name) \
	}
static const struct option_spec option_specs[] = {
	OPT(max_lines, KIND_COUNT, "N", "lines in a default text window", false),
	OPT(max_line_chars, KIND_COUNT, "N", "characters shown of one line", false),
	OPT(max_output, KIND_SIZE, "SIZE", "cap on a result's content", false),
	OPT(max_image_size, KIND_SIZE, "SIZE", "larger images are too_large", false),
	OPT(image_max_dim, KIND_COUNT, "N", "images with a longer edge are downscaled", false),
	OPT(image_max_b64, KIND_SIZE, "SIZE", "images with more base64 are downscaled", false),
	OPT(max_pdf_size, KIND_SIZE, "SIZE", "larger PDFs are not attached whole", false),
	OPT(max_pdf_pages, KIND_COUNT, "N", "pages rendered per result", false),
	OPT(max_notebook_size, KIND_SIZE, "SIZE", "larger notebooks are too_large", false),
	OPT(max_office_size, KIND_SIZE, "SIZE", "larger Office and ODF files are too_large", false),
	OPT(max_render_ms, KIND_COUNT, "MS", "renders past this many ms are a timeout", false),
	OPT(max_read_memory, KIND_SIZE, "SIZE", "memory concurrent big reads share; more wait",
	    false),
	OPT(cache_size, KIND_SIZE, "SIZE", "memory for rendered siblings", true),
	OPT(symlinks, KIND_SYMLINKS, "inside|none", "symlinks get siblings (inside) or not", true),
	OPT(hide_siblings, KIND_FLAG, NULL, "do not list NAME.tool.json", true),
	OPT(mcp_structured, KIND_FLAG, NULL, "mcp format: structuredContent, not _meta", false),
	OPT(mcp_documents, KIND_FLAG, NULL, "mcp format: PDFs as resource blocks", false),
};
#undef OPT

const char *const tr_option_names[] = {
	"max_lines",
	"max_line_chars",
	"max_output",
	"max_image_size",
	"image_max_dim",
	"image_max_b64",
	"max_pdf_size",
	"max_pdf_pages",
	"max_notebook_size",
	"max_office_size",
	"max_render_ms",
	"max_read_memory",
	"cache_size",
	"symlinks",
	"hide_siblings",
	"mcp_structured",
	"mcp_documents",
	NULL,
};

void tr_options_init(struct tr_options *opts)
{
	*opts = (struct tr_options){
		.max_lines = 2000,
		.max_line_chars = 2000,
		.max_output = 100 * 1024,
		.max_image_size = 20 * 1024 * 1024,
		.image_max_dim = 2000,
		.image_max_b64 = 5 * 1024 * 1024,
		.max_pdf_size = 32 * 1024 * 1024,
		.max_pdf_pages = 20,
		.max_notebook_size = 64 * 1024 * 1024,
		.max_office_size = 64 * 1024 * 1024,
		.max_render_ms = 10000,
		.max_read_memory = 256 * 1024 * 1024,
		.cache_size = 256 * 1024 * 1024,
		.symlinks = TR_SYMLINKS_INSIDE,
		.hide_siblings = false,
		.mcp_structured = false,
		.mcp_documents = false,
	};
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
	for (size_t i = 0; i < sizeof(option_specs) / sizeof(option_specs[0]); i++)
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
			opts->symlinks = TR_SYMLINKS_INSIDE;
		else if (value && strcmp(value, "none") == 0)
			opts->symlinks = TR_SYMLINKS_NONE;
		else
			return -1;
		return 0;
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
		snprintf(buf, size, "%s", opts->symlinks == TR_SYMLINKS_INSIDE ? "inside" : "none");
		break;
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

int tr_options_split_arg(int argc, char **argv, int *i, char *name, size_t size, const char **value)
{
	const char *arg = argv[*i];
	const char *eq;
	size_t len;

	if (strncmp(arg, "--", 2) != 0)
		return -1;
	eq = strchr(arg + 2, '=');
	len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
	if (len == 0 || len >= size)
		return -1;
	memcpy(name, arg + 2, len);
	name[len] = '\0';
	*value = NULL;
	if (eq) {
		*value = eq + 1;
	} else if (!tr_options_is_flag(name)) {
		if (*i + 1 >= argc)
			return -2;
		*value = argv[++*i];
	}
	return 0;
}

void tr_option_print_help(FILE *out, const struct tr_options *opts, const char *name,
			  const char *prefix, const char *sep)
{
	const struct tr_option_doc *doc = tr_option_describe(name, NULL, 0);
	char row[64], value[32];

	if (!doc)
		return;
	tr_option_format(opts, name, value, sizeof(value));
	snprintf(row, sizeof(row), "%s%s%s%s", prefix, doc->name, doc->value ? sep : "",
		 doc->value ? doc->value : "");
	fprintf(out, "  %-25s %s (default: %s)\n", row, doc->help, value);
}
