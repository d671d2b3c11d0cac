/* SPDX-License-Identifier: MIT */
/* pdf_window.c - page windows of PDF results and the selector of the next one. */
#include "pdf.h"

/* a + n - 1 clamped to limit, without overflow (n >= 1). */
static uint64_t span_end(uint64_t a, uint64_t n, uint64_t limit)
{
	if (n - 1 > UINT64_MAX - a)
		return limit;
	return a + n - 1 < limit ? a + n - 1 : limit;
}

int tr_pdf_window(const struct tr_selector *sel, uint64_t total, uint64_t default_pages,
		  uint64_t max_pages, struct tr_pdf_window *win)
{
	uint64_t end;

	win->first = win->last = 0;
	if (max_pages == 0)
		max_pages = 1;
	if (default_pages == 0)
		default_pages = 1;
	if (!sel->present) {
		if (total > 0) {
			win->first = 1;
			win->last = span_end(1, default_pages, total);
		}
		return 0;
	}
	if (sel->start == 0 || sel->start > total)
		return -1;
	end = sel->end ? (sel->end < total ? sel->end : total)
		       : span_end(sel->start, max_pages, total);
	win->first = sel->start;
	win->last = span_end(sel->start, max_pages, end);
	return 0;
}

bool tr_pdf_next_window(uint64_t last, uint64_t total, uint64_t step, struct tr_selector *next)
{
	*next = (struct tr_selector){.present = last < total};
	if (next->present) {
		next->start = last + 1;
		next->end = span_end(next->start, step ? step : 1, total);
	}
	return next->present;
}

int tr_pdf_next_selector(uint64_t last, uint64_t total, uint64_t step, char *buf, size_t size)
{
	struct tr_selector next;
	int n;

	if (!tr_pdf_next_window(last, total, step, &next))
		return -1;
	n = tr_selector_format(&next, buf, size);
	return n >= 0 && (size_t)n < size ? n : -1;
}
