/* SPDX-License-Identifier: MIT */
/* notebook_text.c - cleans output text for a model (terminal escapes, carriage returns) and
 * measures and cuts UTF-8 by code points. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "notebook.h"
#include "util.h"

#define ESC 0x1b
#define BEL 0x07

static int append_bytes(struct tr_buf *buf, const char *s, size_t len)
{
	return len ? tr_buf_append(buf, s, len) : 0;
}

/* Returns the index just past the escape sequence that starts with the ESC at s[i]. */
static size_t skip_escape(const unsigned char *s, size_t len, size_t i)
{
	size_t j = i + 2;

	if (i + 1 >= len)
		return i + 1;
	if (s[i + 1] == '[') {
		while (j < len && s[j] >= 0x30 && s[j] <= 0x3f)
			j++;
		while (j < len && s[j] >= 0x20 && s[j] <= 0x2f)
			j++;
		if (j < len && s[j] >= 0x40 && s[j] <= 0x7e)
			j++;
		return j;
	}
	if (s[i + 1] == ']') {
		for (; j < len; j++) {
			if (s[j] == BEL)
				return j + 1;
			if (s[j] == ESC && j + 1 < len && s[j + 1] == '\\')
				return j + 2;
		}
		return len;
	}
	return i + 1;
}

static int append_stripped(struct tr_buf *buf, const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, run = 0;

	if (len == 0)
		return 0; /* text may be NULL then */
	while (i < len) {
		if (s[i] != ESC) {
			i++;
			continue;
		}
		if (append_bytes(buf, text + run, i - run) < 0)
			return -1;
		i = skip_escape(s, len, i);
		run = i;
	}
	return append_bytes(buf, text + run, len - run);
}

/* Appends one line (no '\n') holding carriage returns as a terminal shows it: each segment
 * after a CR overwrites the line's first code points. */
static int append_overwritten(struct tr_buf *buf, const char *line, size_t len)
{
	struct tr_buf cur = {0}, next = {0};
	size_t seg = 0;
	int rc = -1;

	while (len > 0 && line[len - 1] == '\r')
		len--;
	while (seg <= len) {
		const char *cr = memchr(line + seg, '\r', len - seg);
		size_t end = cr ? (size_t)(cr - line) : len;
		size_t seg_len = end - seg;

		if (seg_len > 0) {
			uint64_t chars = tr_utf8_count((const unsigned char *)line + seg, seg_len);
			size_t keep_from = tr_utf8_prefix((const unsigned char *)cur.data, cur.len,
							  chars, SIZE_MAX);
			struct tr_buf swap;

			next.len = 0;
			if (append_bytes(&next, line + seg, seg_len) < 0 ||
			    (keep_from < cur.len &&
			     append_bytes(&next, cur.data + keep_from, cur.len - keep_from) < 0))
				goto out;
			swap = cur;
			cur = next;
			next = swap;
		}
		seg = end + 1;
	}
	rc = append_bytes(buf, cur.data, cur.len);
out:
	tr_buf_free(&cur);
	tr_buf_free(&next);
	return rc;
}

static int append_lines_overwritten(struct tr_buf *buf, const char *s, size_t len)
{
	size_t start = 0;

	while (start < len) {
		const char *nl = memchr(s + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - s) : len;

		if (memchr(s + start, '\r', end - start)) {
			if (append_overwritten(buf, s + start, end - start) < 0)
				return -1;
		} else if (append_bytes(buf, s + start, end - start) < 0) {
			return -1;
		}
		if (nl && tr_buf_append(buf, "\n", 1) < 0)
			return -1;
		start = end + 1;
	}
	return 0;
}

int tr_nb_append_clean(struct tr_buf *buf, const char *s, size_t len, bool overwrite)
{
	struct tr_buf stripped = {0};
	int rc;

	if (!overwrite || len == 0 || !memchr(s, '\r', len))
		return append_stripped(buf, s, len);
	rc = append_stripped(&stripped, s, len);
	if (rc == 0)
		rc = append_lines_overwritten(buf, stripped.data, stripped.len);
	if (rc < 0)
		buf->oom = true;
	tr_buf_free(&stripped);
	return rc;
}
