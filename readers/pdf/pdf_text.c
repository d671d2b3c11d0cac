/* SPDX-License-Identifier: MIT */
/* pdf_text.c - tidying of poppler's page text: blank pages, glued bidi words, trailing space. */
#include <string.h>

#include "pdf.h"

/* UTF-8 of U+202A..U+202E (LRE, RLE, PDF, LRO, RLO): E2 80 AA..AE. */
static bool is_bidi_mark(const unsigned char *s, size_t left)
{
	return left >= 3 && s[0] == 0xE2 && s[1] == 0x80 && s[2] >= 0xAA && s[2] <= 0xAE;
}

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v';
}

bool tr_pdf_text_is_blank(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t left = text ? strlen(text) : 0;

	while (left > 0) {
		if (is_space(*s)) {
			s++;
			left--;
		} else if (is_bidi_mark(s, left)) {
			s += 3;
			left -= 3;
		} else {
			return false;
		}
	}
	return true;
}

int tr_pdf_text_append(struct tr_buf *out, const char *text, size_t len)
{
	static const char pop[] = "\xE2\x80\xAC", rle[] = "\xE2\x80\xAB", lre[] = "\xE2\x80\xAA";
	const char *p = text, *end = text + len, *hit;

	while (end > text && is_space((unsigned char)end[-1]))
		end--;
	while ((hit = memmem(p, (size_t)(end - p), pop, 3)) != NULL) {
		const char *after = hit + 3;

		tr_buf_append(out, p, (size_t)(after - p));
		if (end - after >= 3 && (memcmp(after, rle, 3) == 0 || memcmp(after, lre, 3) == 0))
			tr_buf_append(out, " ", 1);
		p = after;
	}
	tr_buf_append(out, p, (size_t)(end - p));
	return out->oom ? -1 : 0;
}
