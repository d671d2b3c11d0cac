/* SPDX-License-Identifier: MIT */
/* selector.c - the SEL grammar of docs/SPEC.md §4 and the NAME[:SEL].tool[.FMT].json names. */
#include <stdio.h>
#include <string.h>

#include "tr_selector.h"

/* Each format's name and the suffix of its virtual files; no suffix is a suffix of another. */
static const struct format_info {
	const char *name;
	const char *suffix;
} formats[] = {
	[TR_FORMAT_TOOL] = {"tool", ".tool.json"},
	[TR_FORMAT_ANTHROPIC] = {"anthropic", ".tool.anthropic.json"},
	[TR_FORMAT_OPENAI] = {"openai", ".tool.openai.json"},
	[TR_FORMAT_MCP] = {"mcp", ".tool.mcp.json"},
	[TR_FORMAT_TXT] = {"txt", ".tool.txt"},
};

#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

const char *tr_format_name(enum tr_format fmt)
{
	return (unsigned)fmt < N_FORMATS ? formats[fmt].name : NULL;
}

const char *tr_format_suffix(enum tr_format fmt)
{
	return (unsigned)fmt < N_FORMATS ? formats[fmt].suffix : NULL;
}

int tr_format_parse(const char *name, enum tr_format *fmt)
{
	for (size_t i = 0; i < N_FORMATS; i++) {
		if (strcmp(name, formats[i].name) == 0) {
			*fmt = (enum tr_format)i;
			return 0;
		}
	}
	return -1;
}

/* Parses a 1-based decimal without sign or leading zeros at text[*pos]. */
static int parse_positive(const char *text, size_t len, size_t *pos, uint64_t *out)
{
	size_t i = *pos;
	uint64_t n = 0;

	if (i >= len || text[i] < '1' || text[i] > '9')
		return -1;
	for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
		uint64_t digit = (uint64_t)(text[i] - '0');

		if (n > (UINT64_MAX - digit) / 10)
			return -1; /* exactly past UINT64_MAX, not up to 9 short of it */
		n = n * 10 + digit;
	}
	*pos = i;
	*out = n;
	return 0;
}

/* A, A-, A-B or A.C- */
static int parse_units(const char *text, size_t len, struct tr_selector *sel)
{
	size_t pos = 0;
	struct tr_selector s = {.present = true};

	if (parse_positive(text, len, &pos, &s.start) < 0)
		return -1;
	if (pos == len) {
		s.end = s.start;
	} else if (text[pos] == '.') {
		pos++;
		if (parse_positive(text, len, &pos, &s.column) < 0)
			return -1;
		if (pos + 1 != len || text[pos] != '-')
			return -1;
	} else if (text[pos] == '-') {
		pos++;
		if (pos < len) {
			if (parse_positive(text, len, &pos, &s.end) < 0 || pos != len)
				return -1;
			if (s.end < s.start)
				return -1;
		}
	} else {
		return -1;
	}
	*sel = s;
	return 0;
}

int tr_selector_parse(const char *text, size_t len, struct tr_selector *sel)
{
	if (parse_units(text, len, sel) == 0)
		return 0;
	return tr_selector_parse_time(text, len, sel);
}

int tr_selector_format(const struct tr_selector *sel, char *buf, size_t size)
{
	unsigned long long a = sel->start, b = sel->end, c = sel->column;

	if (sel->time)
		return tr_selector_format_time(sel, buf, size);
	if (c)
		return snprintf(buf, size, "%llu.%llu-", a, c);
	if (b == 0)
		return snprintf(buf, size, "%llu-", a);
	if (a == b)
		return snprintf(buf, size, "%llu", a);
	return snprintf(buf, size, "%llu-%llu", a, b);
}

int tr_virtual_name_parse(const char *name, size_t *base_len, struct tr_selector *sel,
			  enum tr_format *fmt)
{
	size_t len = strlen(name);
	size_t stem = 0;
	size_t i;

	/* NAME[:SEL] followed by one of the format suffixes */
	for (i = 0; i < N_FORMATS; i++) {
		size_t suffix_len = strlen(formats[i].suffix);

		if (len > suffix_len &&
		    memcmp(name + len - suffix_len, formats[i].suffix, suffix_len) == 0) {
			stem = len - suffix_len;
			*fmt = (enum tr_format)i;
			break;
		}
	}
	if (i == N_FORMATS)
		return -1;
	if (stem == 0)
		return -1;
	/* Optional ":SEL" at the end of the stem. */
	memset(sel, 0, sizeof(*sel));
	*base_len = stem;
	/* A time selector may hold colons itself (clip.mp4:1:30-2:00): the longest tail that is
	 * one with a colon wins. */
	for (size_t i = 1; i + 1 < stem; i++) {
		struct tr_selector parsed;

		if (name[i] == ':' && memchr(name + i + 1, ':', stem - i - 1) &&
		    tr_selector_parse_time(name + i + 1, stem - i - 1, &parsed) == 0) {
			*sel = parsed;
			*base_len = i;
			return 0;
		}
	}
	for (size_t i = stem; i > 0; i--) {
		if (name[i - 1] == ':') {
			struct tr_selector parsed;

			if (i - 1 > 0 && tr_selector_parse(name + i, stem - i, &parsed) == 0) {
				*sel = parsed;
				*base_len = i - 1;
			}
			break;
		}
	}
	return 0;
}
