/* SPDX-License-Identifier: MIT */
/* svg_detect.c - is this the start of an SVG document: the prolog skipped, the root element's
 * name and namespace read; and the inflate of .svgz files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "svg.h"

#define SVG_NS "http://www.w3.org/2000/svg"

/* A cursor over the head; p never passes end. */
struct cursor {
	const char *p, *end;
};

static bool at(const struct cursor *c, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(c->end - c->p) >= n && memcmp(c->p, lit, n) == 0;
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static void skip_space(struct cursor *c)
{
	while (c->p < c->end && is_space(*c->p))
		c->p++;
}

/* Moves past the next occurrence of lit; false when it is not within the head. */
static bool skip_past(struct cursor *c, const char *lit)
{
	size_t n = strlen(lit);
	const char *hit = memmem(c->p, (size_t)(c->end - c->p), lit, n);

	if (!hit)
		return false;
	c->p = hit + n;
	return true;
}

/* Past a doctype ("<!DOCTYPE" already consumed): quoted literals, an internal subset in
 * brackets with its own quotes and comments, up to the closing '>'. */
static bool skip_doctype(struct cursor *c)
{
	bool subset = false;

	while (c->p < c->end) {
		char ch = *c->p;

		if (ch == '"' || ch == '\'') {
			const char *q = memchr(c->p + 1, ch, (size_t)(c->end - c->p - 1));

			if (!q)
				return false;
			c->p = q + 1;
		} else if (subset && at(c, "<!--")) {
			if (!skip_past(c, "-->"))
				return false;
		} else if (ch == '[') {
			subset = true;
			c->p++;
		} else if (ch == ']') {
			subset = false;
			c->p++;
		} else if (ch == '>' && !subset) {
			c->p++;
			return true;
		} else {
			c->p++;
		}
	}
	return false;
}

static bool name_char(char ch)
{
	return ch && !is_space(ch) && !strchr("/>=\"'<", ch);
}

/* Reads a name at c (up to whitespace, '/', '>' or '='); false when empty. */
static bool read_name(struct cursor *c, const char **name, size_t *len)
{
	*name = c->p;
	while (c->p < c->end && name_char(*c->p))
		c->p++;
	*len = (size_t)(c->p - *name);
	return *len > 0;
}

static bool span_is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* The root's start tag at c (after '<'): true when its local name is svg and the namespace of
 * its prefix (or the default one) is SVG's. */
static bool root_is_svg(struct cursor *c)
{
	const char *name, *colon;
	size_t len, prefix_len = 0;

	if (!read_name(c, &name, &len))
		return false;
	colon = memchr(name, ':', len);
	if (colon) {
		prefix_len = (size_t)(colon - name);
		if (!span_is(colon + 1, len - prefix_len - 1, "svg"))
			return false;
	} else if (!span_is(name, len, "svg")) {
		return false;
	}
	for (;;) {
		const char *attr, *value, *q;
		size_t attr_len;
		char quote;

		skip_space(c);
		if (c->p >= c->end || *c->p == '>' || *c->p == '/')
			return false; /* the tag ended without the namespace */
		if (!read_name(c, &attr, &attr_len))
			return false;
		skip_space(c);
		if (c->p >= c->end || *c->p != '=')
			return false;
		c->p++;
		skip_space(c);
		if (c->p >= c->end || (*c->p != '"' && *c->p != '\''))
			return false;
		quote = *c->p++;
		value = c->p;
		q = memchr(c->p, quote, (size_t)(c->end - c->p));
		if (!q)
			return false;
		c->p = q + 1;
		bool binds = colon ? attr_len == 6 + prefix_len && memcmp(attr, "xmlns:", 6) == 0 &&
					     memcmp(attr + 6, name, prefix_len) == 0
				   : span_is(attr, attr_len, "xmlns");

		if (binds)
			return span_is(value, (size_t)(q - value), SVG_NS);
	}
}

bool tr_svg_detect(const unsigned char *text, size_t len)
{
	struct cursor c = {(const char *)text, (const char *)text + len};

	if (at(&c, "\xef\xbb\xbf"))
		c.p += 3;
	for (;;) {
		skip_space(&c);
		if (at(&c, "<?")) {
			if (!skip_past(&c, "?>"))
				return false;
		} else if (at(&c, "<!--")) {
			if (!skip_past(&c, "-->"))
				return false;
		} else if (at(&c, "<!DOCTYPE")) {
			c.p += 9;
			if (!skip_doctype(&c))
				return false;
		} else if (at(&c, "<")) {
			c.p++;
			return root_is_svg(&c);
		} else {
			return false;
		}
	}
}

bool tr_svg_gzip_signature(const unsigned char *data, size_t len)
{
	return len >= 3 && data[0] == 0x1f && data[1] == 0x8b && data[2] == 8;
}

int tr_svg_inflate(const unsigned char *data, size_t len, size_t limit, char **out, size_t *out_len,
		   char *err, size_t err_size)
{
	z_stream z = {0};
	size_t cap = len * 4 + 4096, used = 0;
	char *buf;
	int zrc = Z_OK, rc;

	*out = NULL;
	*out_len = 0;
	if (cap > limit + 1)
		cap = limit + 1;
	buf = malloc(cap);
	if (!buf)
		return -1;
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		free(buf);
		return -1;
	}
	z.next_in = (unsigned char *)data;
	while (zrc == Z_OK && used < limit) {
		if (used + 1 >= cap) {
			size_t grown = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
			char *more = realloc(buf, grown);

			if (!more) {
				inflateEnd(&z);
				free(buf);
				return -1;
			}
			buf = more;
			cap = grown;
		}
		/* zlib counts in uInt: feed and take at most 1 GiB at a time. */
		size_t in_left = len - (size_t)(z.next_in - data);

		z.avail_in = in_left > (1u << 30) ? 1u << 30 : (uInt)in_left;
		z.next_out = (unsigned char *)buf + used;
		z.avail_out = (uInt)((cap - 1 - used) > (1u << 30) ? 1u << 30 : cap - 1 - used);
		size_t before = z.avail_out;

		zrc = inflate(&z, Z_NO_FLUSH);
		used += before - z.avail_out;
		if (zrc == Z_BUF_ERROR && z.avail_in == 0 && z.avail_out > 0)
			break; /* input ended before the stream did */
		if (zrc == Z_BUF_ERROR)
			zrc = Z_OK;
	}
	if (used > limit)
		used = limit;
	buf[used] = '\0';
	*out = buf;
	*out_len = used;
	if (zrc == Z_STREAM_END)
		rc = 0;
	else if (zrc == Z_OK && used >= limit)
		rc = 1;
	else if (zrc == Z_MEM_ERROR)
		rc = -1;
	else {
		snprintf(err, err_size, "gzip data %s after %zu bytes inflated",
			 zrc == Z_OK || zrc == Z_BUF_ERROR ? "ends early"
							   : (z.msg ? z.msg : "is invalid"),
			 used);
		rc = 2;
	}
	inflateEnd(&z);
	if (rc < 0) {
		free(buf);
		*out = NULL;
	}
	return rc;
}
