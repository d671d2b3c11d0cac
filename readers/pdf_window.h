/* pdf_window.h - which pages a PDF result shows and which sibling continues it (pure math). */
#ifndef TR_PDF_WINDOW_H
#define TR_PDF_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "tr_selector.h"

/* Pages of the default view (SPEC §3: pages 1-10 as text). */
#define TR_PDF_DEFAULT_PAGES 10
/* The default view attaches the whole document only up to this many pages (and max_pdf_size). */
#define TR_PDF_ATTACH_MAX_PAGES 100

/* 1-based inclusive page span; first = last = 0 for a document without pages. */
struct tr_pdf_window {
	uint64_t first, last;
};

/* Fills win with the pages that sel (the default view when !sel->present) shows of a document of
 * total pages: the default view is 1..default_pages; A is A; A-B is A..B; A- is
 * A..A+max_pages-1; every span is clamped to the last page and to max_pages pages (0 counts as
 * 1). The column form (sel->column) must be rejected by the caller. Returns 0, or -1 when a
 * selector starts past the last page (win is then left zeroed). */
int tr_pdf_window(const struct tr_selector *sel, uint64_t total, uint64_t default_pages,
		  uint64_t max_pages, struct tr_pdf_window *win);

/* Writes into buf (canonical SEL, e.g. "11-20" or "12") the window of up to step pages that
 * follows page last in a document of total pages. Returns its length, or -1 when last is the
 * final page (nothing follows; buf untouched) or buf is too small. */
int tr_pdf_next_selector(uint64_t last, uint64_t total, uint64_t step, char *buf, size_t size);

#endif
