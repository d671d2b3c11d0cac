/* SPDX-License-Identifier: MIT */
/* pdf.h - the PDF reader's private parts: the poppler read, page rendering, text tidying and the
 * page window. */
#ifndef TR_PDF_PRIVATE_H
#define TR_PDF_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "tr_blob.h"
#include "tr_result.h"
#include "tr_selector.h"

/* --- pdf_text --- */
/* tidying of the text poppler extracts from a PDF page (pure string work). */

/* True when text (NUL-terminated, may be NULL) holds nothing but ASCII whitespace and Unicode
 * bidi embedding marks (U+202A-U+202E): a page without a text layer. */
bool tr_pdf_text_is_blank(const char *text);

/* Appends text[0..len) to out as the page text a model reads: poppler wraps each right-to-left
 * word in U+202B ... U+202C and sometimes drops the space between two such words, so a space
 * is put back wherever one embedding closes and the next opens (U+202C then U+202A/U+202B);
 * trailing whitespace is dropped. Returns 0, or -1 when out of memory (out->oom). */
int tr_pdf_text_append(struct tr_buf *out, const char *text, size_t len);

/* Code points of text[0..len) that are neither whitespace nor bidi embedding marks: how much
 * text a page's extraction holds, to choose between two of them. */
size_t tr_pdf_text_letters(const char *text, size_t len);

/* A glyph's box on the page in points, y downwards (the layout of PopplerRectangle). */
struct tr_pdf_box {
	double x1, y1, x2, y2;
};

/* Appends to out the text[0..len) of poppler's glyph selection with its spaces put where the
 * glyphs are apart: boxes[0..n_boxes) holds one box per code point of text other than the bidi
 * embedding marks (which are dropped). poppler's right-to-left words carry their spaces one
 * glyph late ("abc d ef" for "abcd ef"); here a space separates two runs of glyphs when their
 * boxes are further apart than 0.15 of the glyph height, whatever the text said. A glyph that
 * starts where the previous one ends belongs to its run (the parts of a ligature such as
 * lam-alef are given left to right), so the gap is measured once the run is complete.
 * Returns 0; 1 when the boxes do not match the text (out untouched); -1 when out of memory. */
int tr_pdf_text_respace(struct tr_buf *out, const char *text, size_t len,
			const struct tr_pdf_box *boxes, size_t n_boxes);

/* --- pdf_window --- */
/* which pages a PDF result shows and which sibling continues it (pure math). */

/* Pages of the default view (docs/SPEC.md §3: pages 1-10 as text). */
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

/* Sets next to the window of up to step pages that follows page last in a document of total
 * pages ("11-20", "12"). Returns false, with next->present false, when last is the final page. */
bool tr_pdf_next_window(uint64_t last, uint64_t total, uint64_t step, struct tr_selector *next);

/* Writes into buf (canonical SEL, e.g. "11-20" or "12") the window of up to step pages that
 * follows page last in a document of total pages. Returns its length, or -1 when last is the
 * final page (nothing follows; buf untouched) or buf is too small. */
int tr_pdf_next_selector(uint64_t last, uint64_t total, uint64_t step, char *buf, size_t size);

/* --- the PDF module (toolfs-pdf.so: pdf_poppler.c, pdf_page_text.c, pdf_page_render.c,
 * pdf_render.c) --- */

/* The interface table toolfs-pdf.so exports (util/module.c loads it); abi first. */
#define TR_PDF_ABI 2
struct tr_pdf_api {
	unsigned abi;       /* TR_PDF_ABI */
	void (*warm)(void); /* struct tr_module_head */
	/* tr_pdf_read_poppler */
	int (*read)(const struct tr_file *file, const struct tr_selector *sel,
		    const struct tr_options *opts, struct tr_result *res);
};
extern const struct tr_pdf_api tr_pdf_api;

#if defined(TR_PDF_MODULE)
#include <poppler.h>

/* --- pdf_poppler --- */
/* the PDF read on poppler-glib + cairo (built only when both are available). */

/* The read of docs/SPEC.md §3 "PDFs" (the tr_reader.read contract; type and mimeType are already set):
 * the default view (pages 1-10 as text, renders of pages without a text layer, the whole file
 * as documents[0] when within 100 pages and opts->max_pdf_size; a larger file is read from its
 * descriptor, not loaded) or a page selector (text and a render of each page, at most
 * opts->max_pdf_pages pages). Every page's text is taken first, then OCR, then the renders;
 * each poppler call after the document opens is left to file->watch (struct tr_watch), whose
 * finish answers the pages done and a timeout note for the rest (docs/SPEC.md §3 "Render
 * time"). Sets metadata.pageCount whenever the document opens. Failures (encrypted, corrupt,
 * out_of_range, io_error) go into res.
 * Returns 0, or -1 when out of memory. */
int tr_pdf_read_poppler(const struct tr_file *file, const struct tr_selector *sel,
			const struct tr_options *opts, struct tr_result *res);

/* --- pdf_render --- */
/* renders one PDF page (poppler + cairo) into an encoded image for images[]. */

/* Why a page's render or text was not done in time when it never began (docs/SPEC.md §3
 * "Render time"). */
#define TR_PDF_NOT_STARTED "not started, the time went to earlier work"
/* ... and when it began: a render stopped at the deadline, by the render itself or by the
 * read's answer while cairo was inside one drawing operation (struct tr_watch). */
#define TR_PDF_DRAWING_STOPPED "drawing stopped"

/* docs/SPEC.md §3: page renders have this long edge in pixels. */
#define TR_PDF_RENDER_LONG_EDGE 1568

/* An encoded page image. */
struct tr_pdf_render {
	struct tr_blob *data;   /* owned reference: PNG or JPEG bytes */
	const char *media_type; /* static: "image/png" or "image/jpeg" */
	uint32_t width, height; /* pixels */
};

/* Pixel size of page (its rotation applied) scaled so that the long edge is long_edge: the long
 * side gets exactly long_edge, the other side its rounded share (at least 1). */
void tr_pdf_render_size(PopplerPage *page, uint32_t long_edge, uint32_t *width, uint32_t *height);

/* Renders page with its rotation on white at long_edge pixels (tr_pdf_render_size) and encodes
 * it as PNG; when the PNG's base64 would exceed max_b64 bytes and libvips is built in, as JPEG
 * instead (quality lowered until it fits, down to a floor). The pixel surface is freed before
 * returning, so only one page's pixels exist at a time. On success fills *out (the caller owns
 * out->data) and returns 0. Returns 1 when cairo cannot render or encode the page (*out
 * untouched; err gets a short reason, NUL-terminated), 2 when deadline (tr_deadline_after_ms;
 * 0: none) passed before or while it was drawn (drawing stops within one drawing operation;
 * err says so), -1 when out of memory. */
int tr_pdf_render_page(PopplerPage *page, uint32_t long_edge, uint64_t max_b64, uint64_t deadline,
		       struct tr_pdf_render *out, char *err, size_t err_size);

/* tr_pdf_render_page of the rectangle region (inside the page image of long_edge pixels: clip it
 * with tr_region_clip first) drawn again by poppler at the zoom that makes the region's long edge
 * long_edge pixels, not an upscale of the page image. Same returns. */
int tr_pdf_render_region(PopplerPage *page, const struct tr_region *region, uint32_t long_edge,
			 uint64_t max_b64, uint64_t deadline, struct tr_pdf_render *out, char *err,
			 size_t err_size);

/* Renders page with its rotation on white at dpi, downscaled to the OCR caps (ocr.h), into 8-bit
 * grey pixels (*grey malloc'd, rows *width bytes apart). Returns as tr_pdf_render_page. */
int tr_pdf_render_grey(PopplerPage *page, uint32_t dpi, uint64_t deadline, unsigned char **grey,
		       uint32_t *width, uint32_t *height, char *err, size_t err_size);

/* --- pdf_ocr --- */
/* OCR of the pages of a window that have no text layer (docs/SPEC.md §3 "OCR"). */

enum tr_pdf_ocr_status {
	TR_PDF_OCR_NONE,    /* not due: the page has text, or ocr=off */
	TR_PDF_OCR_DUE,     /* to be OCR'd (set by the caller) */
	TR_PDF_OCR_DONE,    /* text holds what OCR read */
	TR_PDF_OCR_FAILED,  /* err says why */
	TR_PDF_OCR_TIMEOUT, /* the time ran out first (80% of max_render_ms) */
	TR_PDF_OCR_BUDGET,  /* past max_ocr_pages */
};

struct tr_pdf_ocr_page {
	uint64_t page; /* 1-based */
	enum tr_pdf_ocr_status status;
	char *text; /* malloc'd, when done */
	int confidence;
	char lang[64];                /* the language it was read in (struct tr_ocr_text) */
	char script[32], missing[16]; /* a script no installed language reads (ditto) */
	char err[256];
};

/* OCRs the pages of pages[0..n) marked TR_PDF_OCR_DUE in parallel, one thread per CPU, each rendering under a lock (poppler's
 * document is not thread-safe) and recognising outside it, in page order, at most
 * opts->max_ocr_pages of them: later ones get TR_PDF_OCR_BUDGET. Returns 0; 1 with err when
 * OCR cannot run at all (the module or the language is missing: lang_missing tells which);
 * -1 when out of memory. */
int tr_pdf_ocr_pages(PopplerDocument *doc, const struct tr_file *file,
		     const struct tr_options *opts, struct tr_pdf_ocr_page *pages, size_t n,
		     bool *lang_missing, char *err, size_t err_size);
/* --- pdf_poppler.c, pdf_page_text.c, pdf_page_render.c: one read --- */

/* How far a page's text was taken (struct pdf_read.state). */
enum page_state {
	PAGE_PENDING = 0, /* not started */
	PAGE_READ,        /* its text is in texts[] (NULL: it has none) */
	PAGE_MISSING,     /* poppler could not load it */
	PAGE_STUCK,       /* its text extraction did not return by the deadline */
};

/* Where a read is, for its finish (struct tr_watch) while a poppler call does not return. */
enum pdf_phase {
	PDF_OPENING, /* nothing left to the watchdog yet */
	PDF_TEXTS,   /* taking the text of page win.first + at */
	PDF_OCR,     /* OCR of the pages without a text layer */
	PDF_PAGES,   /* showing the pages; rendering is the page being rendered (0: none) */
	PDF_REGION,  /* rendering the region of page at */
};

/* One read in progress. The reader's thread owns it, and the watchdog while it finishes the
 * read (struct tr_watch: never both). */
struct pdf_read {
	const struct tr_file *file;
	const struct tr_options *opts;
	const struct tr_selector *sel;
	PopplerDocument *doc;
	struct tr_result *res;
	struct tr_blob *whole; /* the loaded file, attached by the default view (or NULL) */
	uint64_t n_pages;
	struct tr_pdf_window win;
	bool render_all;   /* a page selector: every shown page is rendered */
	uint64_t rendered; /* images added so far (at most opts->max_pdf_pages) */
	bool cut;          /* a page's text was cut to fit opts->max_output */
	uint64_t timeouts; /* renders stopped or skipped at file->deadline (max_render_ms) */
	uint64_t unread;   /* pages whose text was not taken by the deadline */
	uint64_t last;     /* the last page shown */
	/* per page of win (n_win of them): its text (malloc'd, taken by add_page), how far it was
	 * taken, its OCR (status TR_PDF_OCR_NONE when ocr is off) */
	uint64_t n_win;
	char **texts;
	unsigned char *state; /* enum page_state */
	struct tr_pdf_ocr_page *ocr;
	enum pdf_phase phase;
	uint64_t at;        /* PDF_TEXTS: the index in win; PDF_REGION: the page */
	uint64_t rendering; /* PDF_PAGES: the page being rendered, 0 none */
	bool finishing;     /* the watchdog finishes the read: no poppler call is made */
};

static inline const char *tr_pdf_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The page's text (docs/SPEC.md §3): its text layer, then its form-field values and free-text
 * annotations marked as such. Sets *text (malloc'd, NULL when the page has none). Returns 0,
 * or -1 when out of memory. */
int tr_pdf_page_text(PopplerPage *page, char **text);

/* Appends to out the one wording of a page's timeout (docs/SPEC.md §3 "Render time"):
 * "[page P: timeout: not DONE within max_render_ms (N ms), WHY]", followed by "; read
 * NAME:P.tool.json to ALONE it alone" when alone is not NULL. Returns 0, or -1 when out of
 * memory. */
int tr_pdf_timeout_note(struct pdf_read *rd, struct tr_buf *out, uint64_t p, const char *done,
			const char *why, const char *alone);
/* Renders page p into images[]; a page cairo cannot render is noted in content instead.
 * Returns 0, or -1 when out of memory. */
int tr_pdf_add_render(struct pdf_read *rd, uint64_t p);
/* Fails rd->res for a region render that did not succeed (rc 1 or 2 of tr_pdf_render_region). */
void tr_pdf_fail_region_render(struct pdf_read *rd, int rc, uint64_t p, const char *err);
/* A region selector P@WxH+X+Y: the rectangle of page P's page image drawn again at the zoom
 * that fills the output. Returns 0, or -1 when out of memory. */
int tr_pdf_read_region(struct pdf_read *rd, const struct tr_selector *sel, uint64_t n_pages);

#endif

#endif
