/* SPDX-License-Identifier: MIT */
/* mcp_json.c - the raw text of members of a JSON request line, where cJSON's values lose what was
 * sent: ids echoed byte for byte, and NULs inside strings. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "mcp.h"

enum { MAX_DEPTH = 1000 }; /* cJSON's CJSON_NESTING_LIMIT: deeper lines never parse */

static size_t skip_space(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* The end of the string token at s[i] == '"', or 0 when it does not end. */
static size_t string_end(const char *s, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return 0;
}

/* The end of the value at s[i], or 0 when it is not one. */
static size_t value_end(const char *s, size_t len, size_t i, int depth)
{
	size_t start = i;
	char close;

	if (i >= len || depth > MAX_DEPTH)
		return 0;
	if (s[i] == '"')
		return string_end(s, len, i);
	if (s[i] != '{' && s[i] != '[') {
		/* a number or a literal: up to the next delimiter */
		while (i < len && s[i] && !strchr(",]} \t\r\n", s[i]))
			i++;
		return i > start ? i : 0;
	}
	close = s[i] == '{' ? '}' : ']';
	i = skip_space(s, len, i + 1);
	if (i < len && s[i] == close)
		return i + 1;
	for (;;) {
		if (close == '}') {
			if (i >= len || s[i] != '"' || !(i = string_end(s, len, i)))
				return 0;
			i = skip_space(s, len, i);
			if (i >= len || s[i] != ':')
				return 0;
			i = skip_space(s, len, i + 1);
		}
		i = value_end(s, len, i, depth + 1);
		if (!i)
			return 0;
		i = skip_space(s, len, i);
		if (i < len && s[i] == ',') {
			i = skip_space(s, len, i + 1);
			continue;
		}
		return i < len && s[i] == close ? i + 1 : 0;
	}
}

int mcp_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The \uXXXX escape at s[i] (s[i] == '\\', s[i + 1] == 'u'): its code unit, or -1. */
static long escape_unit(const char *s, size_t end, size_t i)
{
	long unit = 0;

	if (i + 6 > end)
		return -1;
	for (size_t k = i + 2; k < i + 6; k++) {
		int d = mcp_hex_digit(s[k]);

		if (d < 0)
			return -1;
		unit = unit << 4 | d;
	}
	return unit;
}

/* True when the string token s[i..end) decodes to key. As cJSON keeps keys as C strings, a
 * \u0000 ends the decoded key there. */
static bool key_is(const char *s, size_t i, size_t end, const char *key)
{
	static const char escapes[] = "\"\"\\\\//b\bf\fn\nr\rt\t";

	for (i++, end--; i < end; key++) {
		long c = (unsigned char)s[i];

		if (c == '\\') {
			const char *e = i + 1 < end ? strchr(escapes, s[i + 1]) : NULL;

			if (s[i + 1] == 'u') {
				c = escape_unit(s, end, i);
				i += 6;
			} else if (e && (e - escapes) % 2 == 0 && s[i + 1]) {
				c = (unsigned char)e[1];
				i += 2;
			} else {
				return false;
			}
			if (c == 0)
				return *key == '\0';
		} else {
			i++;
		}
		if (c < 0 || !*key || c != (unsigned char)*key)
			return false;
	}
	return *key == '\0';
}

bool mcp_json_find(const char *s, size_t len, const char *const *keys, size_t n_keys, size_t *at,
		   size_t *size)
{
	size_t i = skip_space(s, len, 0), end;

	for (size_t k = 0; k < n_keys; k++) {
		if (i >= len || s[i] != '{')
			return false;
		i = skip_space(s, len, i + 1);
		for (;;) {
			size_t key_end;
			bool match;

			if (i >= len || s[i] != '"' || !(key_end = string_end(s, len, i)))
				return false;
			match = key_is(s, i, key_end, keys[k]);
			i = skip_space(s, len, key_end);
			if (i >= len || s[i] != ':')
				return false;
			i = skip_space(s, len, i + 1);
			if (match) /* the first of duplicate keys, as cJSON_GetObjectItem */
				break;
			i = value_end(s, len, i, 0);
			if (!i)
				return false;
			i = skip_space(s, len, i);
			if (i >= len || s[i] != ',')
				return false;
			i = skip_space(s, len, i + 1);
		}
	}
	end = value_end(s, len, i, 0);
	if (!end)
		return false;
	*at = i;
	*size = end - i;
	return true;
}

/* Length of the UTF-8 sequence at s[0..len) (RFC 3629: no overlong forms, no surrogates,
 * <= U+10FFFF), or 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t n;
	unsigned long cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (size_t k = 1; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* True when tok is one JSON string (RFC 8259) of valid UTF-8. */
static bool is_string(const char *tok, size_t len)
{
	if (len < 2 || tok[0] != '"' || tok[len - 1] != '"')
		return false;
	for (size_t i = 1; i < len - 1;) {
		unsigned char c = (unsigned char)tok[i];
		size_t n;

		if (c == '"' || c < 0x20)
			return false;
		if (c == '\\') {
			if (i + 1 >= len - 1)
				return false;
			if (tok[i + 1] == 'u') {
				if (escape_unit(tok, len - 1, i) < 0)
					return false;
				i += 6;
			} else if (tok[i + 1] && strchr("\"\\/bfnrt", tok[i + 1])) {
				i += 2;
			} else {
				return false;
			}
			continue;
		}
		n = utf8_sequence((const unsigned char *)tok + i, len - 1 - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

/* True when tok is one JSON number (RFC 8259): -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_number(const char *tok, size_t len)
{
	size_t i = 0, digits;

	if (i < len && tok[i] == '-')
		i++;
	if (i < len && tok[i] == '0') {
		i++;
	} else {
		for (digits = 0; i < len && tok[i] >= '0' && tok[i] <= '9'; digits++)
			i++;
		if (!digits)
			return false;
	}
	if (i < len && tok[i] == '.') {
		for (i++, digits = 0; i < len && tok[i] >= '0' && tok[i] <= '9'; digits++)
			i++;
		if (!digits)
			return false;
	}
	if (i < len && (tok[i] == 'e' || tok[i] == 'E')) {
		i++;
		if (i < len && (tok[i] == '+' || tok[i] == '-'))
			i++;
		for (digits = 0; i < len && tok[i] >= '0' && tok[i] <= '9'; digits++)
			i++;
		if (!digits)
			return false;
	}
	return i == len;
}

bool mcp_json_is_id(const char *tok, size_t len)
{
	return is_number(tok, len) || is_string(tok, len);
}

bool mcp_json_string_has_nul(const char *tok, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (tok[i] != '\\')
			continue;
		if (tok[i + 1] == 'u' && escape_unit(tok, len, i) == 0)
			return true;
		i++; /* the escaped character */
	}
	return false;
}
