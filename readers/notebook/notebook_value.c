/* notebook_value.c - reads values of a validated notebook text in place, never building a tree. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notebook.h"
#include "util.h"

/* The text has passed tr_json_find_error, so every value ends where its grammar says and no scan
 * here needs the text's length: strings close, containers balance, and a number inside a
 * container is followed by a delimiter. A parsed tree (cJSON) costs 64 bytes a node plus the
 * allocator's: a list of small numbers took 30 times its text, a 60 MB notebook 2.4 GB. Reading
 * in place costs the text and what is shown. */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Past the string whose opening quote is at p. */
static const char *skip_string(const char *p)
{
	p++;
	for (;;) {
		const char *q = p;

		while (*q != '"' && *q != '\\')
			q++;
		if (*q == '"')
			return q + 1;
		p = q + 2; /* an escape: the character after the backslash is never the end */
	}
}

const char *tr_nbv_skip(const char *p)
{
	size_t depth = 0;

	do {
		switch (*p) {
		case '"': p = skip_string(p); break;
		case '{':
		case '[':
			depth++;
			p++;
			break;
		case '}':
		case ']':
			depth--;
			p++;
			break;
		default:
			if (depth == 0) { /* a scalar: runs to a delimiter */
				while (*p && !strchr(",]} \t\n\r", *p))
					p++;
				return p;
			}
			p++;
		}
	} while (depth > 0);
	return p;
}

void tr_nbv_begin(struct tr_nbv_iter *it, const char *container)
{
	it->p = NULL;
	it->object = false;
	if (!container || (*container != '{' && *container != '['))
		return;
	it->object = *container == '{';
	it->p = skip_ws(container + 1);
	if (*it->p == '}' || *it->p == ']')
		it->p = NULL;
}

bool tr_nbv_next(struct tr_nbv_iter *it, const char **key, const char **value)
{
	const char *p = it->p;

	if (!p)
		return false;
	if (it->object) {
		if (key)
			*key = p;
		p = skip_ws(skip_string(p));
		p = skip_ws(p + 1); /* past ':' */
	} else if (key) {
		*key = NULL;
	}
	*value = p;
	p = skip_ws(tr_nbv_skip(p));
	it->p = *p == ',' ? skip_ws(p + 1) : NULL;
	return true;
}

/* Decodes the 4 hex digits at p. */
static unsigned hex4(const char *p)
{
	unsigned v = 0;

	for (int k = 0; k < 4; k++) {
		char c = p[k];

		v = v << 4 | (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

static size_t put_utf8(char *out, unsigned cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decodes the escape whose backslash is at p into out (up to 4 bytes); sets *len and returns the
 * text past it. A lone surrogate becomes U+FFFD. */
static const char *decode_escape(const char *p, char *out, size_t *len)
{
	unsigned cp, low;

	switch (p[1]) {
	case 'b': *out = '\b'; break;
	case 'f': *out = '\f'; break;
	case 'n': *out = '\n'; break;
	case 'r': *out = '\r'; break;
	case 't': *out = '\t'; break;
	case 'u':
		cp = hex4(p + 2);
		p += 6;
		if (cp >= 0xd800 && cp <= 0xdbff && p[0] == '\\' && p[1] == 'u' &&
		    (low = hex4(p + 2)) >= 0xdc00 && low <= 0xdfff) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
			p += 6;
		} else if (cp >= 0xd800 && cp <= 0xdfff) {
			cp = 0xfffd;
		}
		*len = put_utf8(out, cp);
		return p;
	default: /* " \ / */ *out = p[1];
	}
	*len = 1;
	return p + 2;
}

int tr_nbv_append_string(struct tr_buf *buf, const char *p)
{
	if (!tr_nbv_is_string(p))
		return 0;
	p++;
	for (;;) {
		const char *q = p;
		char decoded[4];
		size_t n;

		while (*q != '"' && *q != '\\')
			q++;
		if (q > p && tr_buf_append(buf, p, (size_t)(q - p)) < 0)
			return -1;
		if (*q == '"')
			return 0;
		p = decode_escape(q, decoded, &n);
		if (n == 1 && decoded[0] == '\0')
			return 0; /* the text ends at a NUL, as a C string does */
		if (tr_buf_append(buf, decoded, n) < 0)
			return -1;
	}
}

char *tr_nbv_strdup(const char *p)
{
	struct tr_buf buf = {0};

	if (tr_nbv_append_string(&buf, p) < 0 || tr_buf_append(&buf, "", 1) < 0) {
		tr_buf_free(&buf);
		return NULL;
	}
	return buf.data;
}

bool tr_nbv_string_is(const char *p, const char *s)
{
	size_t n = strlen(s);
	const char *q;
	char *decoded;
	bool same;

	if (!tr_nbv_is_string(p))
		return false;
	if (strncmp(p + 1, s, n) == 0 && p[n + 1] == '"')
		return true;
	for (q = p + 1; *q != '"' && *q != '\\'; q++)
		;
	if (*q == '"')
		return false; /* no escape: the bytes are the text */
	decoded = tr_nbv_strdup(p);
	same = decoded && strcmp(decoded, s) == 0;
	free(decoded);
	return same;
}

const char *tr_nbv_field(const char *obj, const char *key)
{
	struct tr_nbv_iter it;
	const char *k, *v;

	if (!tr_nbv_is_object(obj))
		return NULL;
	tr_nbv_begin(&it, obj);
	while (tr_nbv_next(&it, &k, &v))
		if (tr_nbv_string_is(k, key))
			return v; /* the first of duplicate keys, as cJSON took it */
	return NULL;
}

size_t tr_nbv_count(const char *container)
{
	struct tr_nbv_iter it;
	const char *v;
	size_t n = 0;

	tr_nbv_begin(&it, container);
	while (tr_nbv_next(&it, NULL, &v))
		n++;
	return n;
}

bool tr_nbv_is_number(const char *p)
{
	return p && (*p == '-' || (*p >= '0' && *p <= '9') || *p == 'N' || *p == 'I');
}

double tr_nbv_number(const char *p)
{
	if (*p == 'N')
		return NAN;
	if (*p == 'I')
		return INFINITY;
	if (p[0] == '-' && p[1] == 'I')
		return -INFINITY;
	return strtod(p, NULL);
}

int tr_nbv_int(const char *p)
{
	double d = tr_nbv_number(p);

	if (isnan(d))
		return 0;
	if (d >= INT_MAX)
		return INT_MAX;
	if (d <= (double)INT_MIN)
		return INT_MIN;
	return (int)d;
}

/* Code points of a number as cJSON prints it. */
static uint64_t number_chars(const char *p)
{
	double d = tr_nbv_number(p), test;
	char text[64];
	int n;

	if (isnan(d) || isinf(d))
		return 4; /* null */
	if (d == (double)tr_nbv_int(p))
		return (uint64_t)snprintf(text, sizeof(text), "%d", tr_nbv_int(p));
	n = snprintf(text, sizeof(text), "%1.15g", d);
	if (sscanf(text, "%lg", &test) != 1 || test != d)
		n = snprintf(text, sizeof(text), "%1.17g", d);
	return (uint64_t)n;
}

/* Code points of a string as cJSON prints it: quoted, with \" \\ \b \f \n \r \t and \u00XX for
 * other control characters, everything else as it is. */
static int string_chars(const char *p, uint64_t *chars)
{
	struct tr_buf s = {0};
	uint64_t n = 2;

	if (tr_nbv_append_string(&s, p) < 0) {
		tr_buf_free(&s);
		return -1;
	}
	n += tr_utf8_count((const unsigned char *)s.data, s.len);
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.data[i];

		if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
		    c == '\t')
			n += 1;
		else if (c < 0x20)
			n += 5;
	}
	tr_buf_free(&s);
	*chars += n;
	return 0;
}

static int value_chars(const char *p, uint64_t *chars)
{
	struct tr_nbv_iter it;
	const char *k, *v;
	size_t members = 0;

	switch (*p) {
	case '"': return string_chars(p, chars);
	case '{':
	case '[':
		tr_nbv_begin(&it, p);
		while (tr_nbv_next(&it, &k, &v)) {
			members++;
			if (k && (string_chars(k, chars) < 0 || (*chars += 1, 0)))
				return -1;
			if (value_chars(v, chars) < 0)
				return -1;
		}
		*chars += 2 + (members ? members - 1 : 0);
		return 0;
	case 't': *chars += 4; return 0;
	case 'f': *chars += 5; return 0;
	case 'n': *chars += 4; return 0;
	default: *chars += number_chars(p); return 0;
	}
}

int64_t tr_nbv_printed_chars(const char *p)
{
	uint64_t chars = 0;

	return value_chars(p, &chars) < 0 ? -1 : (int64_t)chars;
}
