/* SPDX-License-Identifier: MIT */
/* fuzz_names.c - libFuzzer target for the name grammar of docs/SPEC.md §4 (regions and times
 * included): tr_selector_parse and tr_selector_format, tr_virtual_name_parse, tr_format_parse,
 * tr_options_set. Parses are checked against an independent matcher of the SEL grammar and by
 * formatting back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "tr_options.h"
#include "tr_selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Matches [1-9][0-9]* at s[*i]; *value gets it, *overflow whether it passes UINT64_MAX. */
static bool match_number(const char *s, size_t len, size_t *i, uint64_t *value, bool *overflow)
{
	size_t start = *i;

	if (*i >= len || s[*i] < '1' || s[*i] > '9')
		return false;
	*value = 0;
	while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
		unsigned d = (unsigned)(s[*i] - '0');

		if (*value > (UINT64_MAX - d) / 10)
			*overflow = true;
		*value = *value * 10 + d;
		(*i)++;
	}
	return *i > start;
}

/* Matches a pixel number of a region at s[*i]: "0" when zero_ok, or [1-9][0-9]* up to
 * UINT32_MAX. */
static bool match_pixels(const char *s, size_t len, size_t *i, bool zero_ok, uint32_t *value)
{
	uint64_t n = 0;
	bool overflow = false;

	if (zero_ok && *i < len && s[*i] == '0') {
		(*i)++;
		*value = 0;
		return true;
	}
	if (!match_number(s, len, i, &n, &overflow) || overflow || n > UINT32_MAX)
		return false;
	*value = (uint32_t)n;
	return true;
}

/* The region grammar: [P@]WxH+X+Y, P >= 1, W and H >= 1, X and Y >= 0, each pixel number at
 * most 2^32-1. Returns 1 when it matches, 0 when not, -1 when P overflows. */
static int region_matches(const char *s, size_t len, struct tr_selector *want)
{
	size_t i = 0;
	bool overflow = false;
	uint64_t page = 0;
	struct tr_region *r = &want->region;

	memset(want, 0, sizeof(*want));
	want->present = true;
	want->has_region = true;
	if (memchr(s, '@', len)) {
		if (!match_number(s, len, &i, &page, &overflow) || i >= len || s[i++] != '@')
			return 0;
		want->start = want->end = page;
	}
	if (!match_pixels(s, len, &i, false, &r->width) || i >= len || s[i++] != 'x' ||
	    !match_pixels(s, len, &i, false, &r->height) || i >= len || s[i++] != '+' ||
	    !match_pixels(s, len, &i, true, &r->x) || i >= len || s[i++] != '+' ||
	    !match_pixels(s, len, &i, true, &r->y) || i != len)
		return 0;
	return overflow ? -1 : 1;
}

static bool same_region(const struct tr_selector *a, const struct tr_selector *b)
{
	return a->has_region == b->has_region && a->region.x == b->region.x &&
	       a->region.y == b->region.y && a->region.width == b->region.width &&
	       a->region.height == b->region.height;
}

/* The SEL grammar: A | A- | A-B (B >= A) | A.C- | [P@]WxH+X+Y, numbers 1-based without leading
 * zeros. Returns 1 when text matches, 0 when not, -1 when a number overflows (either answer is
 * fine then). */
static int sel_matches(const char *s, size_t len, struct tr_selector *want)
{
	size_t i = 0;
	bool overflow = false;
	uint64_t a, b;
	int region = region_matches(s, len, want);

	if (region != 0)
		return region;
	memset(want, 0, sizeof(*want));
	want->present = true;
	if (!match_number(s, len, &i, &a, &overflow))
		return 0;
	want->start = a;
	if (i == len) {
		want->end = a;
	} else if (s[i] == '-') {
		i++;
		if (i < len) {
			if (!match_number(s, len, &i, &b, &overflow) || i != len)
				return 0;
			if (!overflow && b < a)
				return 0;
			want->end = b;
		}
	} else if (s[i] == '.') {
		i++;
		if (!match_number(s, len, &i, &b, &overflow) || i + 1 != len || s[i] != '-')
			return 0;
		want->column = b;
	} else {
		return 0;
	}
	return overflow ? -1 : 1;
}

/* A time selector (T, T1-T2, T1-: selector_time.c, unit-tested there): what the SEL grammar
 * above leaves is tried as one; it parses alone to the same span, and formats back to text that
 * parses as the same span (times are read to the millisecond the canonical form writes; a whole
 * second may come back as the plain A the media reader reads so). */
static void check_time(const char *s, size_t len, const struct tr_selector *sel, int match)
{
	struct tr_selector direct, again;
	char text[96];
	int n;

	if (match == 1)
		fuzz_fail("\"%.*s\" is a SEL of the grammar and was parsed as a time", (int)len, s);
	if (tr_selector_parse_time(s, len, &direct) != 0 || !tr_selector_equal(&direct, sel))
		fuzz_fail("\"%.*s\": tr_selector_parse and tr_selector_parse_time differ", (int)len,
			  s);
	n = tr_selector_format(sel, text, sizeof(text));
	if (n < 0 || (size_t)n >= sizeof(text) ||
	    tr_selector_parse_time(text, (size_t)n, &again) != 0 || !tr_selector_equal(&again, sel))
		fuzz_fail("time \"%.*s\" formats as \"%s\", another span", (int)len, s, text);
}

static void check_selector(const char *s, size_t len)
{
	struct tr_selector sel, want, again;
	char text[96];
	int rc = tr_selector_parse(s, len, &sel);
	int match = sel_matches(s, len, &want);

	if (rc == 0 && sel.time) {
		check_time(s, len, &sel, match);
		return;
	}
	if (match >= 0 && (rc == 0) != (match == 1))
		fuzz_fail("tr_selector_parse says %d for \"%.*s\", the grammar %d", rc, (int)len, s,
			  match);
	if (rc != 0)
		return;
	if (match == 1 && (sel.start != want.start || sel.end != want.end ||
			   sel.column != want.column || !sel.present || !same_region(&sel, &want)))
		fuzz_fail("tr_selector_parse got other numbers for \"%.*s\"", (int)len, s);
	int n = tr_selector_format(&sel, text, sizeof(text));

	if (n < 0 || (size_t)n >= sizeof(text))
		fuzz_fail("tr_selector_format gave %d", n);
	if (tr_selector_parse(text, (size_t)n, &again) != 0 || again.start != sel.start ||
	    again.end != sel.end || again.column != sel.column || !same_region(&again, &sel) ||
	    !tr_selector_equal(&again, &sel))
		fuzz_fail("\"%s\" does not parse back to \"%.*s\"", text, (int)len, s);
	/* Canonical: the text itself, except A-A which is written A (a region is always). */
	if (((size_t)n != len || memcmp(text, s, len)) &&
	    (sel.has_region || !(sel.end == sel.start && !sel.column)))
		fuzz_fail("\"%.*s\" formats as \"%s\"", (int)len, s, text);
}

static void check_virtual_name(const char *name)
{
	struct tr_selector sel, sel2;
	enum tr_format fmt, fmt2;
	size_t base_len, base_len2, len = strlen(name);
	char *rebuilt;
	char sel_text[96];

	if (tr_virtual_name_parse(name, &base_len, &sel, &fmt) != 0)
		return;
	if (base_len == 0 || base_len >= len || !tr_format_name(fmt))
		fuzz_fail("virtual name \"%s\": base length %zu", name, base_len);
	if (sel.time) { /* its text may come back as a plain A (check_time): the parts only */
		check_time(name + base_len + 1, len - base_len - 1 - strlen(tr_format_suffix(fmt)),
			   &sel, 0);
		return;
	}
	/* NAME[:SEL] and the format's suffix built back from the parts must parse the same. */
	rebuilt = malloc(len + 128);
	if (!rebuilt)
		fuzz_fail("out of memory");
	memcpy(rebuilt, name, base_len);
	rebuilt[base_len] = '\0';
	if (sel.present) {
		tr_selector_format_after(name, base_len, &sel, sel_text, sizeof(sel_text));
		strcat(rebuilt, ":");
		strcat(rebuilt, sel_text);
	}
	strcat(rebuilt, tr_format_suffix(fmt));
	if (tr_virtual_name_parse(rebuilt, &base_len2, &sel2, &fmt2) != 0 ||
	    base_len2 != base_len || fmt2 != fmt || sel2.present != sel.present ||
	    sel2.start != sel.start || sel2.end != sel.end || sel2.column != sel.column ||
	    !same_region(&sel2, &sel))
		fuzz_fail("\"%s\" rebuilt as \"%s\" parses otherwise", name, rebuilt);
	if (strcmp(rebuilt, name) != 0 &&
	    !(sel.present && !sel.has_region && sel.end == sel.start && !sel.column))
		fuzz_fail("\"%s\" rebuilt as \"%s\"", name, rebuilt);
	free(rebuilt);
}

static void check_option(const char *text)
{
	struct tr_options opts, before;
	char *copy = strdup(text), *eq;
	int rc;

	if (!copy)
		fuzz_fail("out of memory");
	eq = strchr(copy, '=');
	if (eq)
		*eq = '\0';
	tr_options_init(&opts);
	before = opts;
	rc = tr_options_set(&opts, copy, eq ? eq + 1 : NULL);
	if (rc < -1 || rc > 1)
		fuzz_fail("tr_options_set returned %d", rc);
	if (rc == 1 && memcmp(&opts, &before, sizeof(opts)))
		fuzz_fail("an unknown option changed the options");
	/* ocr_lang names traineddata files: nothing but [A-Za-z0-9_] runs joined by + gets in */
	const char *lang = opts.ocr_lang.text;
	size_t lang_len = strlen(lang);

	if (lang_len == 0 || lang[0] == '+' || lang[lang_len - 1] == '+' || strstr(lang, "++") ||
	    strspn(lang, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+") !=
		    lang_len)
		fuzz_fail("ocr_lang took \"%s\"", lang);
	(void)tr_options_is_flag(copy);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	enum tr_format fmt;

	if (!text)
		fuzz_fail("out of memory");
	memcpy(text, data, size);
	text[size] = '\0';
	check_selector(text, size);
	check_virtual_name(text);
	check_option(text);
	if (tr_format_parse(text, &fmt) == 0 && strcmp(tr_format_name(fmt), text))
		fuzz_fail("format \"%s\" parses as %d", text, fmt);
	free(text);
	return 0;
}
