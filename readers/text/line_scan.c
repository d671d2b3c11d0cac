/* SPDX-License-Identifier: MIT */
/* line_scan.c - the line machine: universal newlines, counting outside the window with vector
 * counts, cat -n formatting with per-line and whole-content caps inside it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "tr_tokens.h"

/* Counting outside the window goes block by block, so that the line where the window starts is
 * found with memchr inside one small block. */
#define COUNT_BLOCK (16 * 1024)

/* The piece being scanned; cr is the first "\r" at or after p (end when none). */
struct cursor {
	const unsigned char *p, *end, *cr;
};

static void find_cr(struct cursor *c)
{
	const unsigned char *q = memchr(c->p, '\r', (size_t)(c->end - c->p));

	c->cr = q ? q : c->end;
}

void tr_line_scan_init(struct tr_line_scan *ls, const struct tr_line_window *win)
{
	memset(ls, 0, sizeof(*ls));
	ls->win = *win;
	if (ls->win.first < 1)
		ls->win.first = 1;
	if (ls->win.last < ls->win.first)
		ls->win.last = ls->win.first;
	if (ls->win.column < 1)
		ls->win.column = 1;
	if (ls->win.max_line_chars < 1)
		ls->win.max_line_chars = 1;
}

static bool in_window(const struct tr_line_scan *ls)
{
	uint64_t line = ls->terminators + 1;

	return !ls->capped && !ls->column_past_end && line >= ls->win.first && line <= ls->win.last;
}

/* Consumes the "\r" at c->p: "\r\n", a lone "\r", or undecided at the end of the piece. */
static void take_cr(struct tr_line_scan *ls, struct cursor *c)
{
	const unsigned char *t = c->p;

	ls->terminators++;
	ls->open_line = false;
	if (t + 1 == c->end) {
		ls->pending_cr = true;
		c->p = c->end;
	} else if (t[1] == '\n') {
		ls->endings |= TR_EOL_CRLF;
		c->p = t + 2;
	} else {
		ls->endings |= TR_EOL_CR;
		c->p = t + 1;
	}
	find_cr(c);
}

/* Counts "\n" in [c->p, stop), which holds no "\r", passing at most *need of them: stops right
 * after the *need-th, or at stop. */
static void count_lf(struct tr_line_scan *ls, struct cursor *c, const unsigned char *stop,
		     uint64_t *need)
{
	while (c->p < stop && *need) {
		const unsigned char *block_end = stop - c->p > COUNT_BLOCK ? c->p + COUNT_BLOCK
									   : stop;
		uint64_t n = tr_count_byte(c->p, (size_t)(block_end - c->p), '\n');

		if (n < *need) {
			ls->terminators += n;
			*need -= n;
			if (n)
				ls->endings |= TR_EOL_LF;
			ls->open_line = block_end[-1] != '\n';
			c->p = block_end;
			continue;
		}
		/* The last line to pass ends in this block. */
		ls->endings |= TR_EOL_LF;
		while (*need) {
			const unsigned char *q = memchr(c->p, '\n', (size_t)(block_end - c->p));

			ls->terminators++;
			(*need)--;
			c->p = q + 1;
		}
		ls->open_line = false;
	}
}

/* Passes up to need line terminators without looking at the lines. */
static void skip_lines(struct tr_line_scan *ls, struct cursor *c, uint64_t need)
{
	while (need && c->p < c->end) {
		if (c->p < c->cr) {
			count_lf(ls, c, c->cr, &need);
			continue;
		}
		take_cr(ls, c);
		need--;
	}
}

/* Receives the repaired UTF-8 of a window line: drops the columns before win.column, keeps up
 * to max_line_chars code points, counts the rest. */
static int line_sink(void *ctx, const unsigned char *s, size_t len)
{
	struct tr_line_scan *ls = ctx;
	uint64_t n;
	size_t off;

	if (ls->skip_left) {
		off = tr_utf8_advance(s, len, ls->skip_left, &n);
		ls->skip_left -= n;
		ls->skipped += n;
		s += off;
		len -= off;
	}
	if (len && ls->stored < ls->win.max_line_chars) {
		off = tr_utf8_advance(s, len, ls->win.max_line_chars - ls->stored, &n);
		tr_buf_append(&ls->line, s, off);
		ls->stored += n;
		s += off;
		len -= off;
	}
	if (len)
		ls->rest += tr_utf8_count(s, len);
	return 0;
}

static void begin_line(struct tr_line_scan *ls)
{
	bool first = ls->terminators + 1 == ls->win.first;

	ls->in_line = true;
	ls->line.len = 0;
	ls->repair.n_pending = 0;
	ls->skip_left = first ? ls->win.column - 1 : 0;
	ls->skipped = ls->stored = ls->rest = 0;
}

/* Formats the window line that just ended, unless max_output or max_tokens ends the window
 * before it. */
static void end_line(struct tr_line_scan *ls)
{
	uint64_t number = ls->terminators + 1;
	char prefix[32], marker[96];
	int prefix_len, marker_len = 0;

	tr_utf8_repair_flush(&ls->repair, line_sink, ls);
	ls->in_line = false;
	if (number == ls->win.first) {
		ls->first_chars = ls->skipped + ls->stored + ls->rest;
		if (ls->win.column > 1 && ls->stored + ls->rest == 0) {
			ls->column_past_end = true;
			return;
		}
	}
	prefix_len = snprintf(prefix, sizeof(prefix), "%6" PRIu64 "\t", number);
	if (ls->rest)
		marker_len = snprintf(marker, sizeof(marker),
				      " [... line truncated: %" PRIu64 " of %" PRIu64
				      " chars shown]",
				      ls->stored, ls->stored + ls->rest);
	size_t size = (size_t)prefix_len + ls->line.len + (size_t)marker_len + 1;

	if (ls->shown_last && ls->content.len + size > ls->win.max_output) {
		ls->capped = true;
		return;
	}
	tr_buf_append(&ls->content, prefix, (size_t)prefix_len);
	if (ls->line.len)
		tr_buf_append(&ls->content, ls->line.data, ls->line.len);
	if (marker_len)
		tr_buf_append(&ls->content, marker, (size_t)marker_len);
	tr_buf_append(&ls->content, "\n", 1);
	if (ls->win.max_tokens && !ls->content.oom) {
		/* the line as shown, number and tab included: they cost tokens too */
		uint64_t milli = tr_tokens_weigh(ls->content.data + ls->content.len - size, size);

		/* a cap whose thousandths pass 2^64 caps nothing a read could hold */
		uint64_t cap = ls->win.max_tokens > UINT64_MAX / 1000 ? UINT64_MAX
								      : ls->win.max_tokens * 1000;

		if (ls->shown_last && ls->milli_tokens + milli > cap) {
			ls->content.len -= size;
			ls->content.data[ls->content.len] = '\0';
			ls->capped = true;
			return;
		}
		ls->milli_tokens += milli;
	}
	ls->shown_last = number;
	if (ls->rest && !ls->cut_line) {
		ls->cut_line = number;
		ls->cut_column = ls->skipped + ls->stored + 1;
	}
}

/* Reads the window line at c->p up to its terminator or the end of the piece. */
static void capture_line(struct tr_line_scan *ls, struct cursor *c)
{
	const unsigned char *t = memchr(c->p, '\n', (size_t)(c->cr - c->p));

	if (!t)
		t = c->cr;
	if (!ls->in_line)
		begin_line(ls);
	if (t > c->p) {
		ls->open_line = true;
		tr_utf8_repair_feed(&ls->repair, c->p, (size_t)(t - c->p), line_sink, ls);
	}
	if (t == c->end) {
		c->p = t;
		return;
	}
	end_line(ls);
	if (*t == '\n') {
		ls->terminators++;
		ls->endings |= TR_EOL_LF;
		ls->open_line = false;
		c->p = t + 1;
	} else {
		c->p = t;
		take_cr(ls, c);
	}
}

int tr_line_scan_feed(struct tr_line_scan *ls, const void *data, size_t len)
{
	struct cursor c = {data, (const unsigned char *)data + len, NULL};

	if (!len)
		return 0;
	if (ls->pending_cr) {
		ls->pending_cr = false;
		if (*c.p == '\n') {
			ls->endings |= TR_EOL_CRLF;
			c.p++;
		} else {
			ls->endings |= TR_EOL_CR;
		}
	}
	find_cr(&c);
	while (c.p < c.end) {
		uint64_t line = ls->terminators + 1;

		if (line < ls->win.first)
			skip_lines(ls, &c, ls->win.first - line);
		else if (in_window(ls))
			capture_line(ls, &c);
		else
			skip_lines(ls, &c, UINT64_MAX);
	}
	return ls->content.oom || ls->line.oom ? -1 : 0;
}

int tr_line_scan_finish(struct tr_line_scan *ls)
{
	if (ls->pending_cr) {
		ls->pending_cr = false;
		ls->endings |= TR_EOL_CR;
	}
	if (ls->in_line)
		end_line(ls);
	return ls->content.oom || ls->line.oom ? -1 : 0;
}

uint64_t tr_line_scan_total(const struct tr_line_scan *ls)
{
	return ls->terminators + (ls->open_line ? 1 : 0);
}

const char *tr_line_scan_ending(const struct tr_line_scan *ls)
{
	switch (ls->endings) {
	case 0: return "none";
	case TR_EOL_LF: return "lf";
	case TR_EOL_CRLF: return "crlf";
	case TR_EOL_CR: return "cr";
	default: return "mixed";
	}
}

void tr_line_scan_destroy(struct tr_line_scan *ls)
{
	tr_buf_free(&ls->content);
	tr_buf_free(&ls->line);
}
