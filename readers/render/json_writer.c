/* SPDX-License-Identifier: MIT */
/* json_writer.c - streaming compact JSON onto a tr_doc. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "util.h"

void tr_json_init(struct tr_json *j, struct tr_doc *doc)
{
	memset(j, 0, sizeof(*j));
	j->doc = doc;
}

static void put(struct tr_json *j, const char *s, size_t len)
{
	tr_doc_append(j->doc, s, len);
}

/* Writes the comma a new value needs, unless it follows a key. */
static void before_value(struct tr_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->need_comma[j->depth])
		put(j, ",", 1);
	j->need_comma[j->depth] = true;
}

static void open_scope(struct tr_json *j, char c)
{
	before_value(j);
	put(j, &c, 1);
	if (j->depth + 1 < TR_JSON_MAX_DEPTH)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_scope(struct tr_json *j, char c)
{
	put(j, &c, 1);
	if (j->depth > 0)
		j->depth--;
}

void tr_json_begin_object(struct tr_json *j)
{
	open_scope(j, '{');
}

void tr_json_end_object(struct tr_json *j)
{
	close_scope(j, '}');
}

void tr_json_begin_array(struct tr_json *j)
{
	open_scope(j, '[');
}

void tr_json_end_array(struct tr_json *j)
{
	close_scope(j, ']');
}

void tr_json_key(struct tr_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		put(j, ",", 1);
	j->need_comma[j->depth] = true;
	put(j, "\"", 1);
	put(j, key, strlen(key));
	put(j, "\":", 2);
	j->after_key = true;
}

static const char hex_digits[] = "0123456789abcdef";

void tr_json_escape_into(struct tr_doc *doc, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t run = 0; /* start of the pending run of bytes to copy as they are */
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			int seq = tr_utf8_check_seq(s + i, len - i);

			if (seq > 0) {
				i += (size_t)seq;
				continue;
			}
			/* One U+FFFD per maximal invalid subpart; an unfinished one ends the string. */
			tr_doc_append(doc, s + run, i - run);
			tr_doc_append(doc, TR_UTF8_REPLACEMENT, 3);
			i += seq < 0 ? (size_t)-seq : len - i;
			run = i;
			continue;
		}
		tr_doc_append(doc, s + run, i - run);
		char esc[6] = {'\\', 0};
		size_t esc_len = 2;

		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		default:
			esc[1] = 'u', esc[2] = '0', esc[3] = '0';
			esc[4] = hex_digits[c >> 4], esc[5] = hex_digits[c & 15];
			esc_len = 6;
		}
		tr_doc_append(doc, esc, esc_len);
		i++;
		run = i;
	}
	tr_doc_append(doc, s + run, i - run);
}

void tr_json_string_begin(struct tr_json *j)
{
	before_value(j);
	put(j, "\"", 1);
}

void tr_json_string_part(struct tr_json *j, const char *s, size_t len)
{
	tr_json_escape_into(j->doc, s, len);
}

void tr_json_string_base64(struct tr_json *j, struct tr_blob *blob)
{
	tr_doc_append_base64(j->doc, blob);
}

void tr_json_string_end(struct tr_json *j)
{
	put(j, "\"", 1);
}

void tr_json_string(struct tr_json *j, const char *s, size_t len)
{
	tr_json_string_begin(j);
	tr_json_string_part(j, s, len);
	tr_json_string_end(j);
}

void tr_json_cstring(struct tr_json *j, const char *s)
{
	tr_json_string(j, s, strlen(s));
}

void tr_json_digest(struct tr_json *j, struct tr_digest *digest)
{
	tr_json_string_begin(j);
	tr_doc_append_digest(j->doc, digest);
	tr_json_string_end(j);
}

void tr_json_base64(struct tr_json *j, struct tr_blob *blob)
{
	tr_json_string_begin(j);
	tr_json_string_base64(j, blob);
	tr_json_string_end(j);
}

void tr_json_uint(struct tr_json *j, uint64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, v);

	before_value(j);
	put(j, buf, (size_t)n);
}

void tr_json_int(struct tr_json *j, int64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%" PRId64, v);

	before_value(j);
	put(j, buf, (size_t)n);
}

void tr_json_bool(struct tr_json *j, bool v)
{
	before_value(j);
	put(j, v ? "true" : "false", v ? 4 : 5);
}

void tr_json_fixed(struct tr_json *j, double v, int decimals)
{
	char buf[64];
	int n;

	/* JSON has no NaN or infinity, and a magnitude too long for fixed notation (1e300 has 301
	 * digits) takes an exponent rather than overrunning buf. */
	if (!isfinite(v))
		v = 0;
	if (decimals < 0 || decimals > 17)
		decimals = decimals < 0 ? 0 : 17;
	n = snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = snprintf(buf, sizeof(buf), "%.*e", decimals, v);
	before_value(j);
	put(j, buf, (size_t)n);
}
