/* SPDX-License-Identifier: MIT */
/* selector_time.c - the time selectors of audio and video (docs/SPEC.md §4): T, T1-T2 and T1-,
 * each time in seconds (decimals allowed: 1.5), MM:SS or HH:MM:SS (the last field may have
 * decimals: 1:30.5). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tr_selector.h"

/* Times past this many seconds (100 days) do not parse. */
#define TIME_MAX 8640000.0

/* Digits at text[*pos] (at least one, at most 9) as a number; with frac, an optional ".ddd". */
static int parse_number(const char *text, size_t len, size_t *pos, bool frac, double *out)
{
	size_t i = *pos, digits = 0;
	double n = 0, scale = 0.1;

	for (; i < len && text[i] >= '0' && text[i] <= '9' && digits < 9; i++, digits++)
		n = n * 10 + (text[i] - '0');
	if (!digits || (i < len && text[i] >= '0' && text[i] <= '9'))
		return -1;
	if (frac && i < len && text[i] == '.') {
		size_t start = ++i;

		for (; i < len && text[i] >= '0' && text[i] <= '9' && i - start < 6;
		     i++, scale /= 10)
			n += (text[i] - '0') * scale;
		if (i == start || (i < len && text[i] >= '0' && text[i] <= '9'))
			return -1;
	}
	*pos = i;
	*out = n;
	return 0;
}

/* One time: S[.f], M:SS[.f] or H:MM:SS[.f]; MM and SS are two digits under 60. */
static int parse_time(const char *text, size_t len, size_t *pos, double *out)
{
	double fields[3];
	int n = 0;

	for (;;) {
		size_t start = *pos;

		if (parse_number(text, len, pos, true, &fields[n]) < 0)
			return -1;
		if (n > 0 && (strspn(text + start, "0123456789") != 2 || fields[n] >= 60))
			return -1;
		n++;
		if (*pos < len && text[*pos] == ':' && n < 3 &&
		    !memchr(text + start, '.', *pos - start))
			(*pos)++;
		else
			break;
	}
	*out = n == 3   ? fields[0] * 3600 + fields[1] * 60 + fields[2]
	       : n == 2 ? fields[0] * 60 + fields[1]
			: fields[0];
	/* to the millisecond the canonical form writes, so that it reads back as the same span */
	*out = round(*out * 1000) / 1000;
	return *out > TIME_MAX ? -1 : 0;
}

int tr_selector_parse_time(const char *text, size_t len, struct tr_selector *sel)
{
	struct tr_selector s = {.present = true, .time = true, .t1 = -1};
	size_t pos = 0;

	if (parse_time(text, len, &pos, &s.t0) < 0)
		return -1;
	if (pos == len) {
		s.t1 = s.t0;
	} else if (text[pos] == '-') {
		pos++;
		if (pos < len && (parse_time(text, len, &pos, &s.t1) < 0 || s.t1 <= s.t0))
			return -1;
		if (pos != len)
			return -1;
	} else {
		return -1;
	}
	*sel = s;
	return 0;
}

/* A time in seconds: "90", "1.5", "0.125". */
static int format_seconds(double t, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%.3f", t);

	if (n > 0 && (size_t)n < size) {
		while (n > 0 && buf[n - 1] == '0')
			buf[--n] = '\0';
		if (n > 0 && buf[n - 1] == '.')
			buf[--n] = '\0';
	}
	return n;
}

int tr_selector_format_time(const struct tr_selector *sel, char *buf, size_t size)
{
	char a[32], b[32];

	format_seconds(sel->t0, a, sizeof(a));
	format_seconds(sel->t1, b, sizeof(b));
	if (sel->t1 < 0)
		return snprintf(buf, size, "%s-", a);
	if (sel->t1 == sel->t0)
		return snprintf(buf, size, "%s", a);
	return snprintf(buf, size, "%s-%s", a, b);
}
