/* SPDX-License-Identifier: MIT */
/* notebook_json.c - finds the first JSON syntax error at the position CPython's json reports. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "notebook.h"

/* cJSON stops at a different place than Python for many errors (one past a bad key, at the last
 * byte of a truncated file), and people check notebooks with Python. So on failure the text is
 * rescanned by this small validator, which follows CPython 3.11's _json.c scanner step by step.
 * It is iterative: nesting depth is bounded only by memory. */

struct json_scan {
	const unsigned char *s;
	size_t len;
	unsigned char *stack; /* '{' or '[' per open container */
	size_t depth, cap;
};

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static size_t skip_ws(const struct json_scan *js, size_t i)
{
	while (i < js->len && is_ws(js->s[i]))
		i++;
	return i;
}

static bool hex4(const unsigned char *p, unsigned *value)
{
	unsigned v = 0;

	for (int k = 0; k < 4; k++) {
		unsigned char c = p[k];

		v <<= 4;
		if (is_digit(c))
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return false;
	}
	*value = v;
	return true;
}

/* The string whose quote is at s[i]: returns true and sets *end past the closing quote, or false
 * and sets *err. */
static bool scan_string(const struct json_scan *js, size_t i, size_t *end, size_t *err)
{
	const unsigned char *s = js->s;
	size_t len = js->len, begin = i;

	i++;
	for (;;) {
		while (i < len && s[i] != '"' && s[i] != '\\') {
			if (s[i] <= 0x1f) {
				*err = i; /* Invalid control character at */
				return false;
			}
			i++;
		}
		if (i >= len) {
			*err = begin; /* Unterminated string starting at */
			return false;
		}
		if (s[i] == '"') {
			*end = i + 1;
			return true;
		}
		i++; /* past the backslash */
		if (i == len) {
			*err = begin;
			return false;
		}
		if (s[i] != 'u') {
			if (!s[i] || !strchr("\"\\/bfnrt", s[i])) {
				*err = i - 1; /* Invalid \escape, at the backslash */
				return false;
			}
			i++;
			continue;
		}
		size_t u = i, stop = i + 5;
		unsigned code, low;

		if (stop >= len || !hex4(s + u + 1, &code)) {
			*err = u; /* Invalid \uXXXX escape, at the 'u' */
			return false;
		}
		i = stop;
		if (code >= 0xd800 && code <= 0xdbff && stop + 6 < len && s[stop] == '\\' &&
		    s[stop + 1] == 'u') {
			if (!hex4(s + stop + 2, &low)) {
				*err = stop + 1;
				return false;
			}
			if (low >= 0xdc00 && low <= 0xdfff)
				i = stop + 6;
		}
	}
}

/* A number at s[i] per _match_number_unicode: returns true and sets *end, false when none. */
static bool scan_number(const struct json_scan *js, size_t i, size_t *end)
{
	const unsigned char *s = js->s;
	size_t len = js->len;

	if (s[i] == '-' && ++i >= len)
		return false;
	if (s[i] >= '1' && s[i] <= '9') {
		i++;
		while (i < len && is_digit(s[i]))
			i++;
	} else if (s[i] == '0') {
		i++;
	} else {
		return false;
	}
	if (i + 1 < len && s[i] == '.' && is_digit(s[i + 1])) {
		i += 2;
		while (i < len && is_digit(s[i]))
			i++;
	}
	if (i + 1 < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = i++;

		if (i + 1 < len && (s[i] == '-' || s[i] == '+'))
			i++;
		while (i < len && is_digit(s[i]))
			i++;
		if (!is_digit(s[i - 1]))
			i = e; /* not an exponent: the number ends before the 'e' */
	}
	*end = i;
	return true;
}

/* The literal word (null, true, NaN, ...) at s[i]. */
static bool scan_word(const struct json_scan *js, size_t i, const char *word, size_t *end)
{
	size_t n = strlen(word);

	if (n > js->len - i)
		return false;
	if (memcmp(js->s + i, word, n) != 0)
		return false;
	*end = i + n;
	return true;
}

static int push(struct json_scan *js, unsigned char open)
{
	if (js->depth == js->cap) {
		size_t cap = js->cap ? js->cap * 2 : 64;
		unsigned char *grown = realloc(js->stack, cap);

		if (!grown)
			return -1;
		js->stack = grown;
		js->cap = cap;
	}
	js->stack[js->depth++] = open;
	return 0;
}

/* Walks the text; see tr_json_find_error for the return values. */
static int scan(struct json_scan *js, size_t *offset)
{
	const unsigned char *s = js->s;
	size_t len = js->len, i = skip_ws(js, 0), end, err;

value:
	if (i >= len)
		goto expecting_value;
	switch (s[i]) {
	case '"':
		if (!scan_string(js, i, &end, &err)) {
			*offset = err;
			return 1;
		}
		i = end;
		goto after_value;
	case '{':
		i = skip_ws(js, i + 1);
		if (i < len && s[i] == '}') {
			i++;
			goto after_value;
		}
		if (push(js, '{') < 0)
			return -1;
		goto key;
	case '[':
		i = skip_ws(js, i + 1);
		if (i < len && s[i] == ']') {
			i++;
			goto after_value;
		}
		if (push(js, '[') < 0)
			return -1;
		goto value;
	case 'n':
		if (scan_word(js, i, "null", &end))
			break;
		goto expecting_value;
	case 't':
		if (scan_word(js, i, "true", &end))
			break;
		goto expecting_value;
	case 'f':
		if (scan_word(js, i, "false", &end))
			break;
		goto expecting_value;
	case 'N':
		if (scan_word(js, i, "NaN", &end))
			break;
		goto expecting_value;
	case 'I':
		if (scan_word(js, i, "Infinity", &end))
			break;
		goto expecting_value;
	default:
		if (s[i] == '-' && scan_word(js, i, "-Infinity", &end))
			break;
		if (scan_number(js, i, &end))
			break;
		goto expecting_value;
	}
	i = end;
	goto after_value;

key:
	if (i >= len || s[i] != '"') {
		*offset = i; /* Expecting property name enclosed in double quotes */
		return 1;
	}
	if (!scan_string(js, i, &end, &err)) {
		*offset = err;
		return 1;
	}
	i = skip_ws(js, end);
	if (i >= len || s[i] != ':') {
		*offset = i; /* Expecting ':' delimiter */
		return 1;
	}
	i = skip_ws(js, i + 1);
	goto value;

after_value:
	i = skip_ws(js, i);
	if (js->depth == 0) {
		if (i != len) {
			*offset = i; /* Extra data */
			return 1;
		}
		return 0;
	}
	unsigned char open = js->stack[js->depth - 1];

	if (i < len && s[i] == (open == '{' ? '}' : ']')) {
		js->depth--;
		i++;
		goto after_value;
	}
	if (i >= len || s[i] != ',') {
		*offset = i; /* Expecting ',' delimiter */
		return 1;
	}
	i = skip_ws(js, i + 1);
	if (open == '{')
		goto key;
	goto value;

expecting_value:
	*offset = i; /* Expecting value */
	return 1;
}

int tr_json_find_error(const char *text, size_t len, size_t *offset)
{
	struct json_scan js = {.s = (const unsigned char *)text, .len = len};
	int rc = scan(&js, offset);

	free(js.stack);
	return rc;
}

void tr_json_line_column(const char *text, size_t offset, uint64_t *line, uint64_t *column)
{
	uint64_t ln = 1, col = 1;

	for (size_t i = 0; i < offset; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n') {
			ln++;
			col = 1;
		} else if ((c & 0xc0) != 0x80) {
			col++;
		}
	}
	*line = ln;
	*column = col;
}
