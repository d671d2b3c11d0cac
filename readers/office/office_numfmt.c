/* SPDX-License-Identifier: MIT */
/* office_numfmt.c - spreadsheet number formats applied to cached cell values: General, digit
 * patterns (0 # ? , . % E+), sections for negatives and zero, literals, and date/time formats
 * written as ISO 8601. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"
#include "util.h"

const char *tr_numfmt_builtin(unsigned id)
{
	switch (id) {
	case 1: return "0";
	case 2: return "0.00";
	case 3: return "#,##0";
	case 4: return "#,##0.00";
	case 9: return "0%";
	case 10: return "0.00%";
	case 11: return "0.00E+00";
	case 14: return "yyyy-mm-dd";
	case 15: return "d-mmm-yy";
	case 16: return "d-mmm";
	case 17: return "mmm-yy";
	case 18: return "h:mm AM/PM";
	case 19: return "h:mm:ss AM/PM";
	case 20: return "h:mm";
	case 21: return "h:mm:ss";
	case 22: return "yyyy-mm-dd h:mm";
	case 37: return "#,##0 ;(#,##0)";
	case 38: return "#,##0 ;[Red](#,##0)";
	case 39: return "#,##0.00;(#,##0.00)";
	case 40: return "#,##0.00;[Red](#,##0.00)";
	case 45: return "mm:ss";
	case 46: return "[h]:mm:ss";
	case 47: return "mm:ss.0";
	case 48: return "##0.0E+0";
	case 49: return "@";
	default: return NULL;
	}
}

/* Excel's General: up to 15 significant digits, no exponent for ordinary magnitudes. */
static int format_general(struct tr_buf *out, double v)
{
	char text[64];

	if (v == 0)
		return tr_buf_append(out, "0", 1);
	snprintf(text, sizeof(text), "%.15G", v);
	return tr_buf_append(out, text, strlen(text));
}

/* Bytes of the character at s (len >= 1 bytes left): a UTF-8 sequence's length, 1 for ASCII
 * and for a byte that starts no valid sequence. "\\", "_" and "*" take the whole character after
 * them (`_₽`, `\\€`), never a single byte of it. */
static size_t char_bytes(const char *s, size_t len)
{
	int n = len ? tr_utf8_check_seq((const unsigned char *)s, len) : 1;

	return n > 0 ? (size_t)n : 1;
}

/* The date and time parts a format shows. */
struct date_kind {
	bool date, time, seconds, elapsed;
};

/* Classifies section s[0..len): letters outside quotes, escapes and brackets. */
static bool date_format(const char *s, size_t len, struct date_kind *k)
{
	bool m = false;

	memset(k, 0, sizeof(*k));
	for (size_t i = 0; i < len; i++) {
		char c = (char)tolower((unsigned char)s[i]);

		if (s[i] == '"') {
			while (++i < len && s[i] != '"')
				;
		} else if ((s[i] == '\\' || s[i] == '_' || s[i] == '*') && i + 1 < len) {
			i += char_bytes(s + i + 1, len - i - 1);
		} else if (s[i] == '[') {
			size_t j = i + 1;

			if (j < len && (tolower((unsigned char)s[j]) == 'h' ||
					tolower((unsigned char)s[j]) == 'm' ||
					tolower((unsigned char)s[j]) == 's')) {
				k->elapsed = true;
				k->time = true;
				if (tolower((unsigned char)s[j]) == 's')
					k->seconds = true;
			}
			while (++i < len && s[i] != ']')
				;
		} else if (c == 'y' || c == 'd') {
			k->date = true;
		} else if (c == 'h') {
			k->time = true;
		} else if (c == 's') {
			k->time = k->seconds = true;
		} else if (c == 'm') {
			m = true;
		} else if (c == '0' || c == '#' || c == '?') {
			if (!(k->time && i > 0 && s[i - 1] == '.'))
				return false; /* a digit pattern, except fractions of seconds */
		}
	}
	if (m && !k->time)
		k->date = true;
	return k->date || k->time;
}

/* Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm). */
static void civil_from_days(long long z, long long *y, unsigned *m, unsigned *d)
{
	long long era, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	yoe = z - era * 146097;
	yoe = (yoe - yoe / 1460 + yoe / 36524 - yoe / 146096) / 365;
	doy = (z - era * 146097) - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int format_date(struct tr_buf *out, double v, const struct date_kind *k, bool date1904)
{
	/* Serial 0 is 1899-12-30 in the 1900 system (which keeps Lotus' 1900-02-29 as serial 60),
	 * 1904-01-01 in the 1904 system. */
	long long days, secs, y;
	unsigned mo, d;
	int rc = 0;

	if (!isfinite(v) || v < 0 || v > 2958466)
		return format_general(out, v);
	days = (long long)floor(v);
	secs = llround((v - (double)days) * 86400.0);
	if (secs >= 86400) {
		days++;
		secs -= 86400;
	}
	if (k->elapsed) {
		long long total = llround(v * 86400.0);

		return tr_buf_printf(out, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60,
				     total % 60);
	}
	if (k->date) {
		if (!date1904 && days == 60) {
			y = 1900;
			mo = 2;
			d = 29;
		} else {
			long long epoch = date1904 ? -24107 : -25569; /* 1904-01-01, 1899-12-30 */

			if (!date1904 && days < 60)
				days++; /* before the fictitious 1900-02-29 */
			civil_from_days(days + epoch, &y, &mo, &d);
		}
		rc = tr_buf_printf(out, "%04lld-%02u-%02u", y, mo, d);
		if (rc == 0 && k->time)
			rc = tr_buf_append(out, " ", 1);
	}
	if (rc == 0 && k->time) {
		if (k->seconds)
			rc = tr_buf_printf(out, "%02lld:%02lld:%02lld", secs / 3600, secs / 60 % 60,
					   secs % 60);
		else
			rc = tr_buf_printf(out, "%02lld:%02lld", secs / 3600, secs / 60 % 60);
	}
	return rc;
}

/* Appends the literal characters of s[from..to) (quoted text, escapes, currency brackets). */
static int append_literals(struct tr_buf *out, const char *s, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		int rc = 0;

		if (s[i] == '"') {
			size_t start = ++i;

			while (i < to && s[i] != '"')
				i++;
			rc = tr_buf_append(out, s + start, i - start);
		} else if (s[i] == '\\' && i + 1 < to) {
			size_t n = char_bytes(s + i + 1, to - i - 1);

			rc = tr_buf_append(out, s + i + 1, n);
			i += n;
		} else if (s[i] == '_' && i + 1 < to) {
			i += char_bytes(s + i + 1, to - i - 1);
			rc = tr_buf_append(out, " ", 1);
		} else if (s[i] == '*' && i + 1 < to) {
			i += char_bytes(s + i + 1, to - i - 1);
		} else if (s[i] == '[') {
			size_t start = i + 1;

			while (i < to && s[i] != ']')
				i++;
			if (start < to && s[start] == '$') {
				size_t end = start + 1;

				while (end < i && s[end] != '-')
					end++;
				rc = tr_buf_append(out, s + start + 1, end - start - 1);
			}
		} else if (s[i] != ',' && s[i] != '@') {
			rc = tr_buf_append(out, s + i, 1);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

static bool is_digit_char(char c)
{
	return c == '0' || c == '#' || c == '?';
}

/* What a digit pattern section holds: where its digits stand (first, last: the span of digit
 * characters; first == len: none), its decimal point, grouping and scaling. */
struct digit_pattern {
	size_t first, last, dot;
	int int_zeros, dec_min, dec_max, exp_digits, scale_commas;
	bool group, percent, exponent;
};

/* The index of the last byte of the quoted text, escape or bracket at s[i] (i itself when s[i]
 * starts none of them). */
static size_t skip_literal(const char *s, size_t len, size_t i)
{
	if (s[i] == '"') {
		while (++i < len && s[i] != '"')
			;
	} else if ((s[i] == '\\' || s[i] == '_' || s[i] == '*') && i + 1 < len) {
		i += char_bytes(s + i + 1, len - i - 1);
	} else if (s[i] == '[') {
		while (++i < len && s[i] != ']')
			;
	}
	return i;
}

/* Reads the digit pattern of section s[0..len) into pat. */
static void scan_pattern(const char *s, size_t len, struct digit_pattern *pat)
{
	*pat = (struct digit_pattern){.first = len, .dot = len};
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"' || s[i] == '[' ||
		    ((s[i] == '\\' || s[i] == '_' || s[i] == '*') && i + 1 < len)) {
			i = skip_literal(s, len, i);
			continue;
		}
		if (s[i] == '%')
			pat->percent = true;
		if (pat->exponent) {
			if (is_digit_char(s[i])) {
				pat->exp_digits++;
				pat->last = i;
			}
			continue;
		}
		if (is_digit_char(s[i])) {
			if (pat->first == len)
				pat->first = i;
			pat->last = i;
			if (pat->dot == len) {
				pat->int_zeros += s[i] == '0';
				if (pat->scale_commas) {
					pat->group = true;
					pat->scale_commas = 0;
				}
			} else {
				pat->dec_max++;
				pat->dec_min = s[i] == '0' ? pat->dec_max : pat->dec_min;
			}
		} else if (s[i] == '.' && pat->first != len && pat->dot == len) {
			pat->dot = i;
		} else if (s[i] == '.' && pat->first == len && pat->dot == len && i + 1 < len &&
			   is_digit_char(s[i + 1])) {
			pat->dot = pat->first = i;
		} else if (s[i] == ',' && pat->first != len && pat->dot == len) {
			pat->scale_commas++;
		} else if ((s[i] == 'E' || s[i] == 'e') && pat->first != len && i + 1 < len &&
			   (s[i + 1] == '+' || s[i + 1] == '-')) {
			pat->exponent = true;
			pat->last = ++i;
		}
	}
}

/* Appends v in scientific notation: "1.23E+04". */
static int append_exponent(struct tr_buf *out, double v, const struct digit_pattern *pat)
{
	char digits[400], *p;

	snprintf(digits, sizeof(digits), "%.*E", pat->dec_max, v);
	p = strchr(digits, 'E');
	if (p) {
		int e = atoi(p + 1),
		    width = pat->exp_digits > 0 && pat->exp_digits < 6 ? pat->exp_digits : 1;

		snprintf(p, sizeof(digits) - (size_t)(p - digits), "E%c%0*d", e < 0 ? '-' : '+',
			 width, e < 0 ? -e : e);
	}
	return tr_buf_append(out, digits, strlen(digits));
}

/* Appends finite v in fixed notation: zero padding, grouping, the decimals the pattern shows. */
static int append_fixed(struct tr_buf *out, double v, const struct digit_pattern *pat)
{
	char digits[400], *frac;
	size_t int_len;
	int rc = 0;

	/* Excel rounds halves away from zero; printf would round 2.5 to even. */
	if (pat->dec_max <= 15 && fabs(v) < 1e15) {
		double scale = pow(10, pat->dec_max);

		v = round(v * scale) / scale;
	}
	snprintf(digits, sizeof(digits), "%.*f", pat->dec_max, v);
	frac = strchr(digits, '.');
	int_len = frac ? (size_t)(frac - digits) : strlen(digits);
	if (frac) { /* '#' decimals: trailing zeros dropped down to the '0' ones */
		size_t keep = strlen(frac) - 1;

		while (keep > (size_t)pat->dec_min && frac[keep] == '0')
			frac[keep--] = '\0';
		if (keep == 0)
			frac[0] = '\0';
	}
	if (!(int_len == 1 && digits[0] == '0' && pat->int_zeros == 0)) {
		/* (else "#.##" shows .5, not 0.5) */
		for (int pad = pat->int_zeros - (int)int_len; pad > 0 && rc == 0; pad--)
			rc = tr_buf_append(out, "0", 1);
		for (size_t i = 0; i < int_len && rc == 0; i++) {
			if (pat->group && i > 0 && (int_len - i) % 3 == 0)
				rc = tr_buf_append(out, ",", 1);
			if (rc == 0)
				rc = tr_buf_append(out, digits + i, 1);
		}
	}
	if (rc == 0 && frac && frac[0])
		rc = tr_buf_append(out, frac, strlen(frac));
	return rc;
}

/* A digit pattern section: prefix literals, digits with grouping, decimals, exponent,
 * percent, suffix literals. */
static int format_number(struct tr_buf *out, double v, const char *s, size_t len, bool sign)
{
	struct digit_pattern pat;
	int rc;

	scan_pattern(s, len, &pat);
	if (pat.first == len) /* no digits: literal text only (e.g. "-" for zero) */
		return append_literals(out, s, 0, len);
	if (pat.percent)
		v *= 100;
	for (int i = 0; i < pat.scale_commas; i++)
		v /= 1000;
	if (append_literals(out, s, 0, pat.first) < 0)
		return -1;
	if (sign && tr_buf_append(out, "-", 1) < 0)
		return -1;
	if (pat.exponent)
		rc = append_exponent(out, v, &pat);
	else if (!isfinite(v) || fabs(v) >= 1e300)
		return format_general(out, v);
	else
		rc = append_fixed(out, v, &pat);
	if (rc < 0)
		return -1;
	return append_literals(out, s, pat.last + 1, len);
}

int tr_numfmt_format(struct tr_buf *out, double value, const char *code, bool date1904)
{
	const char *sections[4];
	size_t lens[4], n = 0, start = 0, len;
	struct date_kind kind;
	const char *s;
	bool sign = false;

	if (!code || !*code || strcasecmp(code, "General") == 0 || strcmp(code, "@") == 0)
		return format_general(out, value);
	len = strlen(code);
	for (size_t i = 0; i <= len && n < 4; i++) {
		if (i < len && code[i] == '"') {
			while (++i < len && code[i] != '"')
				;
			continue;
		}
		if (i < len && code[i] == '\\') {
			i++;
			continue;
		}
		if (i == len || code[i] == ';') {
			sections[n] = code + start;
			lens[n++] = i - start;
			start = i + 1;
		}
	}
	s = sections[0];
	len = lens[0];
	if (value < 0 && n >= 2) {
		s = sections[1];
		len = lens[1];
		value = -value;
	} else if (value == 0 && n >= 3) {
		s = sections[2];
		len = lens[2];
	} else if (value < 0) {
		sign = true;
		value = -value;
	}
	if (date_format(s, len, &kind))
		return format_date(out, sign ? -value : value, &kind, date1904);
	if (len >= 7 && strncasecmp(s, "General", 7) == 0)
		return (sign && tr_buf_append(out, "-", 1) < 0) ? -1 : format_general(out, value);
	return format_number(out, value, s, len, sign);
}
