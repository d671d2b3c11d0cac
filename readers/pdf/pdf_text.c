/* SPDX-License-Identifier: MIT */
/* pdf_text.c - tidying of poppler's page text: blank pages, glued bidi words, trailing space,
 * right-to-left words spaced by their glyph boxes. */
#include <math.h>
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

/* Length of the UTF-8 sequence starting at s (1 for a stray byte), at most left. */
static size_t seq_len(const unsigned char *s, size_t left)
{
	size_t n = *s < 0xC0 ? 1 : *s < 0xE0 ? 2 : *s < 0xF0 ? 3 : 4;

	return n < left ? n : left;
}

size_t tr_pdf_text_letters(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t letters = 0;

	while (len > 0) {
		size_t n = seq_len(s, len);

		if (!is_space(*s) && !is_bidi_mark(s, len))
			letters++;
		s += n;
		len -= n;
	}
	return letters;
}

/* A run of glyphs that touch: its union box and its bytes in out-of-line storage. */
struct glyph_run {
	bool open;
	struct tr_pdf_box box, last; /* the union, and the last glyph's box */
	struct tr_buf bytes;
};

static double box_height(const struct tr_pdf_box *b)
{
	return fabs(b->y2 - b->y1);
}

/* Appends run (after a space when it is apart from prev, the run before it on the line) and
 * makes it prev. */
static void flush_run(struct tr_buf *out, struct glyph_run *run, struct glyph_run *prev)
{
	if (!run->open)
		return;
	if (prev->open) {
		double gap = fmax(run->box.x1 - prev->box.x2, prev->box.x1 - run->box.x2);
		double height = fmax(box_height(&run->box), box_height(&prev->box));

		if (gap > 0.15 * height)
			tr_buf_append(out, " ", 1);
	}
	tr_buf_append(out, run->bytes.data, run->bytes.len);
	prev->open = true;
	prev->box = run->box;
	run->open = false;
	run->bytes.len = 0;
}

static void normalise(struct tr_pdf_box *b)
{
	if (b->x1 > b->x2) {
		double x = b->x1;

		b->x1 = b->x2;
		b->x2 = x;
	}
}

int tr_pdf_text_respace(struct tr_buf *out, const char *text, size_t len,
			const struct tr_pdf_box *boxes, size_t n_boxes)
{
	const unsigned char *s = (const unsigned char *)text;
	struct glyph_run run = {0}, prev = {0};
	size_t at = 0, k = 0, start = out->len;

	while (at < len) {
		size_t n = seq_len(s + at, len - at);
		struct tr_pdf_box b;

		if (is_bidi_mark(s + at, len - at)) {
			at += n;
			continue;
		}
		if (k == n_boxes)
			break;
		b = boxes[k++];
		normalise(&b);
		if (s[at] == '\n') {
			flush_run(out, &run, &prev);
			tr_buf_append(out, "\n", 1);
			prev.open = false;
		} else if (!is_space(s[at])) {
			if (run.open && fabs(b.x1 - run.last.x2) < 0.01) {
				run.box.x1 = fmin(run.box.x1, b.x1);
				run.box.x2 = fmax(run.box.x2, b.x2);
			} else {
				flush_run(out, &run, &prev);
				run.open = true;
				run.box = b;
			}
			run.last = b;
			tr_buf_append(&run.bytes, s + at, n);
		}
		at += n;
	}
	flush_run(out, &run, &prev);
	if (at < len || k != n_boxes || run.bytes.oom) {
		bool oom = run.bytes.oom || out->oom;

		tr_buf_free(&run.bytes);
		if (oom)
			return -1;
		out->len = start;
		return 1;
	}
	tr_buf_free(&run.bytes);
	return out->oom ? -1 : 0;
}
