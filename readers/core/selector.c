/* SPDX-License-Identifier: MIT */
/* selector.c - the SEL grammar of docs/SPEC.md §4 and the NAME[:SEL].tool[.FMT].json names. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_selector.h"

/* Each format's name and the suffix of its virtual files; no suffix is a suffix of another. */
static const struct format_info {
	const char *name;
	const char *suffix;
} formats[] = {
#define TR_OUTPUT_FORMAT(id, name, suffix) [TR_FORMAT_##id] = {name, suffix},
#include "tr_results.def"
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

/* Parses a decimal of at most UINT32_MAX at text[*pos]: "0" or one without leading zeros, or
 * (positive) one from 1. */
static int parse_u32(const char *text, size_t len, size_t *pos, bool positive, uint32_t *out)
{
	uint64_t n = 0;

	if (!positive && *pos < len && text[*pos] == '0') {
		(*pos)++;
		*out = 0;
		return 0;
	}
	if (parse_positive(text, len, pos, &n) < 0 || n > UINT32_MAX)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

/* Parses WxH+X+Y at text[pos] to the end. */
static int parse_region(const char *text, size_t len, size_t pos, struct tr_region *r)
{
	if (parse_u32(text, len, &pos, true, &r->width) < 0 || pos >= len || text[pos++] != 'x')
		return -1;
	if (parse_u32(text, len, &pos, true, &r->height) < 0 || pos >= len || text[pos++] != '+')
		return -1;
	if (parse_u32(text, len, &pos, false, &r->x) < 0 || pos >= len || text[pos++] != '+')
		return -1;
	if (parse_u32(text, len, &pos, false, &r->y) < 0 || pos != len)
		return -1;
	return 0;
}

/* A region selector: WxH+X+Y, or P@WxH+X+Y (a page's). Returns 0, or -1 when text is not one. */
static int selector_parse_region(const char *text, size_t len, struct tr_selector *sel)
{
	const char *at = memchr(text, '@', len);
	struct tr_selector s = {.present = true, .has_region = true};
	size_t pos = 0;

	if (at) {
		if (parse_positive(text, len, &pos, &s.start) < 0 || text + pos != at)
			return -1;
		s.end = s.start;
		pos++;
	}
	if (parse_region(text, len, pos, &s.region) < 0)
		return -1;
	*sel = s;
	return 0;
}

/* A, A-, A-B, A.C- or a region */
static int parse_units(const char *text, size_t len, struct tr_selector *sel)
{
	size_t pos = 0;
	struct tr_selector s = {.present = true};

	if (selector_parse_region(text, len, sel) == 0)
		return 0;
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
	const struct tr_region *r = &sel->region;

	if (sel->has_region && a)
		return snprintf(buf, size, "%llu@%ux%u+%u+%u", a, r->width, r->height, r->x, r->y);
	if (sel->has_region)
		return snprintf(buf, size, "%ux%u+%u+%u", r->width, r->height, r->x, r->y);
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

bool tr_selector_equal(const struct tr_selector *a, const struct tr_selector *b)
{
	const struct tr_region *ra = &a->region, *rb = &b->region;

	return a->present == b->present && a->start == b->start && a->end == b->end &&
	       a->column == b->column && a->has_region == b->has_region &&
	       (!a->has_region || (ra->x == rb->x && ra->y == rb->y && ra->width == rb->width &&
				   ra->height == rb->height)) &&
	       a->time == b->time && (!a->time || (a->t0 == b->t0 && a->t1 == b->t1));
}

int tr_region_clip(const struct tr_region *r, uint32_t width, uint32_t height,
		   struct tr_region *out)
{
	if (r->x >= width || r->y >= height)
		return -1;
	*out = *r;
	/* x < width, so width - x does not wrap and the sum is never formed */
	if (out->width > width - r->x)
		out->width = width - r->x;
	if (out->height > height - r->y)
		out->height = height - r->y;
	return 0;
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

/* Whether name[0..name_len) ":" text splits back into that name and sel. */
static bool splits_back(const char *name, size_t name_len, const char *text,
			const struct tr_selector *sel)
{
	size_t len = name_len + strlen(text) + sizeof(":.tool.json");
	char *whole = malloc(len);
	struct tr_selector again;
	enum tr_format fmt;
	size_t base_len;
	bool same;

	if (!whole)
		return true; /* nothing better to write */
	snprintf(whole, len, "%.*s:%s.tool.json", (int)name_len, name, text);
	same = tr_virtual_name_parse(whole, &base_len, &again, &fmt) == 0 && base_len == name_len &&
	       tr_selector_equal(&again, sel);
	free(whole);
	return same;
}

int tr_selector_format_after(const char *name, size_t name_len, const struct tr_selector *sel,
			     char *buf, size_t size)
{
	int n = tr_selector_format(sel, buf, size);

	if (n < 0 || (size_t)n >= size || !sel->present || sel->time || sel->has_region ||
	    sel->column || sel->start != sel->end || splits_back(name, name_len, buf, sel))
		return n;
	return snprintf(buf, size, "%llu-%llu", (unsigned long long)sel->start,
			(unsigned long long)sel->end);
}
