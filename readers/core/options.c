/* options.c - defaults and parsing of the options of SPEC §4 (shared by the CLI and the daemon). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tr_options.h"

enum option_kind { KIND_COUNT, KIND_SIZE, KIND_FLAG, KIND_SYMLINKS };

struct option_spec {
	const char *name;
	enum option_kind kind;
	size_t offset;
};

#define OPT(name, kind)                                        \
	{                                                      \
#name, kind, offsetof(struct tr_options, name) \
	}
static const struct option_spec option_specs[] = {
	OPT(max_lines, KIND_COUNT),        OPT(max_line_chars, KIND_COUNT),
	OPT(max_output, KIND_SIZE),        OPT(max_image_size, KIND_SIZE),
	OPT(image_max_dim, KIND_COUNT),    OPT(image_max_b64, KIND_SIZE),
	OPT(max_pdf_size, KIND_SIZE),      OPT(max_pdf_pages, KIND_COUNT),
	OPT(max_notebook_size, KIND_SIZE), OPT(max_office_size, KIND_SIZE),
	OPT(cache_size, KIND_SIZE),        OPT(symlinks, KIND_SYMLINKS),
	OPT(hide_siblings, KIND_FLAG),
};
#undef OPT

const char *const tr_option_names[] = {
	"max_lines",         "max_line_chars",
	"max_output",        "max_image_size",
	"image_max_dim",     "image_max_b64",
	"max_pdf_size",      "max_pdf_pages",
	"max_notebook_size", "max_office_size",
	"cache_size",        "symlinks",
	"hide_siblings",     NULL,
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
		.cache_size = 256 * 1024 * 1024,
		.symlinks = TR_SYMLINKS_INSIDE,
		.hide_siblings = false,
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
		if (name_matches(name, option_specs[i].name))
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
