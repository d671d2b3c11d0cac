/* SPDX-License-Identifier: MIT */
/* pdf_poppler.c - the PDF read on poppler-glib: the document opened, the pages of the view taken
 * (text, OCR, renders) under the watchdog, the attached document; the page text and the renders
 * are pdf_page_text.c's and pdf_page_render.c's. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <poppler.h>

#include "core.h"
#include "ocr.h"
#include "pdf.h"
#include "util.h"

static pthread_once_t silence_once = PTHREAD_ONCE_INIT;

/* The core never prints: poppler-glib reports syntax errors of damaged files (and its own
 * g_return_if_fail checks) through g_log in the "Poppler" domain, which would reach stderr. */
static void silence_poppler(void)
{
	tr_glib_quiet_domain("Poppler");
}

static void unref_blob(gpointer blob)
{
	tr_blob_unref(blob);
}

/* Opens the document from the loaded file; the GBytes holds a reference on blob, so the bytes
 * outlive the document however long poppler keeps them. */
static PopplerDocument *open_from_blob(struct tr_blob *blob, GError **error)
{
	GBytes *bytes = g_bytes_new_with_free_func(blob->data, blob->len, unref_blob,
						   tr_blob_ref(blob));
	PopplerDocument *doc = poppler_document_new_from_bytes(bytes, NULL, error);

	g_bytes_unref(bytes);
	return doc;
}

/* Opens the document from the file itself: poppler reads what it needs with pread, so a file
 * over max_pdf_size is never loaded whole. poppler takes ownership of the descriptor (closing it
 * also on failure), hence a duplicate, numbered >= 3 because poppler treats fd 0 as stdin. */
static PopplerDocument *open_from_fd(int fd, GError **error)
{
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	if (own < 0) {
		int err = errno;

		g_set_error_literal(error, G_FILE_ERROR, g_file_error_from_errno(err),
				    g_strerror(err));
		return NULL;
	}
	return poppler_document_new_from_fd(own, NULL, error);
}

static void fail_open(struct tr_result *res, const GError *error)
{
	if (error && error->domain == POPPLER_ERROR && error->code == POPPLER_ERROR_ENCRYPTED)
		tr_result_fail(res, TR_E_ENCRYPTED, "PDF is password-protected: %s", res->path);
	else if (error && error->domain == G_FILE_ERROR)
		tr_result_fail(res, TR_E_IO, "I/O error reading %s: %s", res->path, error->message);
	else
		tr_result_fail(res, TR_E_CORRUPT, "Failed to parse PDF: %s",
			       error && error->message ? error->message : "unknown error");
}

/* The body of a page without a text layer that OCR was due for: what OCR read, or why it read
 * nothing (docs/SPEC.md §3 "OCR"). Records its confidence in metadata.ocr. */
static void ocr_body(struct pdf_read *rd, const struct tr_pdf_ocr_page *ocr, bool render,
		     struct tr_buf *body)
{
	unsigned long long p = ocr->page;
	const char *see = render ? "; see the page image" : "";

	switch (ocr->status) {
	case TR_PDF_OCR_DONE:
		if (tr_ocr_note(rd->res, (uint32_t)p, ocr->confidence,
				ocr->lang[0] ? ocr->lang : rd->opts->ocr_lang.text) < 0)
			body->oom = true;
		else if (ocr->text[0])
			tr_pdf_text_append(body, ocr->text, strlen(ocr->text));
		else
			tr_buf_printf(body, "[page %llu: no text layer, and OCR found no text%s]",
				      p, see);
		if (ocr->script[0])
			tr_buf_printf(
				body,
				"\n[page %llu: OCR'd in %s, but the page's script is %s, which "
				"%s does not read: the text above may be noise; install the "
				"Debian package tesseract-ocr-%s]",
				p, ocr->lang, ocr->script, ocr->lang, ocr->missing);
		break;
	case TR_PDF_OCR_TIMEOUT:
		tr_buf_printf(body,
			      "[page %llu: no text layer; OCR timeout: not done within 80%% of "
			      "max_render_ms (%llu ms)%s]",
			      p, (unsigned long long)rd->opts->max_render_ms, see);
		break;
	case TR_PDF_OCR_FAILED:
		tr_buf_printf(body, "[page %llu: no text layer; OCR failed: %s%s]", p, ocr->err,
			      see);
		break;
	case TR_PDF_OCR_BUDGET:
		tr_buf_printf(
			body,
			"[page %llu: no text layer; not OCR'd: max_ocr_pages (%llu) reached%s]", p,
			(unsigned long long)rd->opts->max_ocr_pages, see);
		break;
	case TR_PDF_OCR_NONE:
	case TR_PDF_OCR_DUE: break;
	}
}

/* Appends page p (its header and text, or a note when it has none) and sets *render when its
 * render is due. The first page of a result is always shown, its text cut to fit max_output; a
 * later page that does not fit is left out. Makes no poppler call (the texts were taken).
 * Returns 0 when shown, 1 when left out, -1 out of memory. */
static int add_page(struct pdf_read *rd, uint64_t p, bool first, bool *render)
{
	struct tr_buf *content = &rd->res->content, body = {0};
	uint64_t max_output = rd->opts->max_output, i = p - rd->win.first;
	enum page_state state = rd->state[i];
	char *text = rd->texts[i];
	struct tr_pdf_ocr_page *ocr = &rd->ocr[i];
	bool blank = tr_pdf_text_is_blank(text);
	bool ocr_text = ocr->status == TR_PDF_OCR_DONE && ocr->text[0];
	char header[64];
	size_t header_len, room;
	int rc = 0;

	*render = state == PAGE_READ && (rd->render_all || blank) &&
		  rd->rendered < rd->opts->max_pdf_pages;
	rd->texts[i] = NULL; /* ours to free now */
	header_len = (size_t)snprintf(header, sizeof(header), "%s--- Page %llu%s ---\n",
				      first ? "" : "\n", (unsigned long long)p,
				      ocr->status == TR_PDF_OCR_DONE ? " (OCR)" : "");
	if (state == PAGE_MISSING) {
		tr_buf_printf(&body, "[page %llu: could not be loaded]", (unsigned long long)p);
	} else if (state == PAGE_STUCK || state == PAGE_PENDING) {
		if (tr_pdf_timeout_note(rd, &body, p, "read",
					state == PAGE_STUCK ? "its text extraction did not finish"
							    : TR_PDF_NOT_STARTED,
					state == PAGE_STUCK ? NULL : "read") < 0)
			body.oom = true;
	} else if (blank && ocr->status > TR_PDF_OCR_DUE)
		ocr_body(rd, ocr, *render, &body);
	else if (blank && *render)
		tr_buf_printf(&body, "[page %llu: no text layer; see the page image]",
			      (unsigned long long)p);
	else if (blank)
		tr_buf_printf(
			&body,
			"[page %llu: no text layer; read %s:%llu.tool.json for the page image]",
			(unsigned long long)p, rd->file->src->name, (unsigned long long)p);
	else
		tr_pdf_text_append(&body, text, strlen(text));
	if (body.oom) {
		rc = -1;
		goto out;
	}
	room = content->len < max_output ? (size_t)(max_output - content->len) : 0;
	if (header_len + body.len + 1 > room && !first) {
		rc = 1;
		goto out;
	}
	if (state == PAGE_STUCK || state == PAGE_PENDING)
		rd->unread++;
	tr_buf_append(content, header, header_len);
	if (header_len + body.len + 1 > room && (!blank || ocr_text)) {
		size_t shown = tr_utf8_prefix((const unsigned char *)body.data, body.len,
					      UINT64_MAX,
					      room > header_len ? room - header_len : 0);

		tr_buf_append(content, body.data, shown);
		tr_buf_printf(content, "%s[... page %llu text truncated: %zu of %zu bytes shown]\n",
			      shown && body.data[shown - 1] != '\n' ? "\n" : "",
			      (unsigned long long)p, shown, body.len);
		rd->cut = true;
	} else {
		tr_buf_append(content, body.data, body.len);
		tr_buf_append(content, "\n", 1);
	}
	if (content->oom)
		rc = -1;
out:
	tr_buf_free(&body);
	free(text);
	return rc;
}

/* Takes the text of every page of rd->win (into rd->texts and rd->state), each left to the
 * watchdog (struct tr_watch): text extraction takes no cancel hook. Pages are not skipped at the
 * deadline (a page's text is cheap and under no budget of its own); a page whose extraction
 * does not return is stopped by the read's answer, and the pages after it are not started.
 * Returns 0, or -1 when out of memory. */
static int take_texts(struct pdf_read *rd)
{
	rd->phase = PDF_TEXTS;
	for (uint64_t i = 0; i < rd->n_win; i++) {
		PopplerPage *page;
		char *text = NULL;
		int rc = 0;

		rd->at = i;
		tr_watch_leave(rd->file);
		page = poppler_document_get_page(rd->doc, (int)(rd->win.first + i - 1));
		if (page) {
			rc = tr_pdf_page_text(page, &text);
			g_object_unref(page);
		}
		tr_watch_enter(rd->file);
		if (rc < 0)
			return -1;
		rd->texts[i] = text;
		rd->state[i] = page ? PAGE_READ : PAGE_MISSING;
	}
	return 0;
}

/* ocr != off: OCRs the pages of rd->win without a text layer (into rd->ocr), left to the
 * watchdog (the OCR threads render). Returns 0; 1 when res failed (the language is missing);
 * -1 when out of memory. */
static int ocr_window(struct pdf_read *rd)
{
	uint64_t n = rd->n_win;
	char err[256] = "";
	bool lang_missing = false;
	int rc;

	if (rd->opts->ocr == TR_OCR_OFF || n == 0)
		return 0;
	for (uint64_t i = 0; i < n; i++)
		if (rd->state[i] == PAGE_READ && tr_pdf_text_is_blank(rd->texts[i]))
			rd->ocr[i].status = TR_PDF_OCR_DUE;
	rd->phase = PDF_OCR;
	tr_watch_leave(rd->file);
	rc = tr_pdf_ocr_pages(rd->doc, rd->file, rd->opts, rd->ocr, (size_t)n, &lang_missing, err,
			      sizeof(err));
	tr_watch_enter(rd->file);
	if (rc == 1 && lang_missing) {
		tr_result_fail(rd->res, TR_E_UNSUPPORTED, "%s", err);
		return 1;
	}
	for (uint64_t i = 0; rc == 1 && i < n; i++) {
		/* No OCR module: auto keeps the pages as they were, on says why. */
		if (rd->ocr[i].status != TR_PDF_OCR_DUE)
			continue;
		rd->ocr[i].status = rd->opts->ocr == TR_OCR_ON ? TR_PDF_OCR_FAILED
							       : TR_PDF_OCR_NONE;
		snprintf(rd->ocr[i].err, sizeof(rd->ocr[i].err), "%s", err);
	}
	return rc < 0 ? -1 : 0;
}

/* True (with a line in content) when page p is one OCR was due for but did not reach (the
 * max_ocr_pages budget or the time): the result stops before it and next starts at it. */
static bool ocr_stops_at(struct pdf_read *rd, uint64_t p)
{
	const struct tr_pdf_ocr_page *ocr = &rd->ocr[p - rd->win.first];

	if (ocr->status != TR_PDF_OCR_BUDGET && ocr->status != TR_PDF_OCR_TIMEOUT)
		return false;
	if (ocr->status == TR_PDF_OCR_BUDGET)
		tr_buf_printf(&rd->res->content,
			      "\n[page %llu: not OCR'd in this result: max_ocr_pages (%llu) "
			      "reached; the next window starts at it]\n",
			      (unsigned long long)p, (unsigned long long)rd->opts->max_ocr_pages);
	else
		tr_buf_printf(
			&rd->res->content,
			"\n[page %llu: not OCR'd in this result: timeout (80%% of max_render_ms, "
			"%llu ms, spent); the next window starts at it]\n",
			(unsigned long long)p, (unsigned long long)rd->opts->max_render_ms);
	return true;
}

/* Shows the pages of rd->win from page from on (their text, their renders when due), up to
 * one that does not fit or one OCR did not reach. Returns 0, or -1 when out of memory. */
static int show_pages(struct pdf_read *rd, uint64_t from)
{
	rd->phase = PDF_PAGES;
	for (uint64_t p = from; p && p <= rd->win.last; p++) {
		bool render = false;
		int rc;

		if (p != rd->win.first && ocr_stops_at(rd, p))
			break;
		rc = add_page(rd, p, p == rd->win.first, &render);
		if (rc < 0)
			return -1;
		if (rc > 0)
			break;
		rd->last = p;
		if (render && tr_pdf_add_render(rd, p) < 0)
			return -1;
	}
	return rd->res->content.oom ? -1 : 0;
}

/* Makes the result a success: the document attached (the default view), range, truncation,
 * next, short result. */
static int close_window(struct pdf_read *rd)
{
	struct tr_result *res = rd->res;
	uint64_t n_pages = rd->n_pages, last = rd->last;
	struct tr_window w = {.unit = TR_UNIT_PAGE};
	char size_text[32], extra[160] = "";

	if (rd->whole && n_pages <= TR_PDF_ATTACH_MAX_PAGES &&
	    tr_result_add_document(res, tr_blob_ref(rd->whole), "application/pdf") < 0)
		return -1;
	res->success = true;
	w.first = rd->win.first;
	w.last = last;
	w.total = n_pages;
	w.cut = rd->cut;
	tr_pdf_next_window(last, n_pages,
			   rd->sel->present ? rd->opts->max_pdf_pages : TR_PDF_DEFAULT_PAGES,
			   &w.next);
	if (tr_result_set_window(res, rd->file->src->name, &w) < 0)
		return -1;
	tr_format_size(res->meta.size, size_text, sizeof(size_text));
	/* ", 2 page images", ", 1 page not rendered (timeout)" and ", 2 pages not read (timeout)"
	 * when there are any */
	if (res->n_images)
		snprintf(extra, sizeof(extra), ", %zu page %s", res->n_images,
			 tr_pdf_plural(res->n_images, "image", "images"));
	if (res->meta.n_ocr)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", %zu %s OCR'd",
			 res->meta.n_ocr, tr_pdf_plural(res->meta.n_ocr, "page", "pages"));
	if (rd->timeouts)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 ", %llu %s not rendered (timeout)", (unsigned long long)rd->timeouts,
			 tr_pdf_plural(rd->timeouts, "page", "pages"));
	if (rd->unread)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 ", %llu %s not read (timeout)", (unsigned long long)rd->unread,
			 tr_pdf_plural(rd->unread, "page", "pages"));
	if (n_pages == 0)
		tr_result_set_short(res, "Read PDF: no pages, %s", size_text);
	else
		tr_result_set_short(
			res, "Read PDF: %llu of %llu %s (%llu-%llu), %s%s",
			(unsigned long long)(last - rd->win.first + 1), (unsigned long long)n_pages,
			tr_pdf_plural(n_pages, "page", "pages"), (unsigned long long)rd->win.first,
			(unsigned long long)last, size_text, extra);
	return res->short_result ? 0 : -1;
}

/* Fills the successful result: the window's pages (every page's text first, then OCR, then
 * the renders), range, truncation, next, short result. */
static int read_pages(struct pdf_read *rd)
{
	const struct tr_selector *sel = rd->sel;
	struct tr_result *res = rd->res;
	uint64_t n_pages = rd->n_pages;
	int rc;

	if (sel->has_region)
		return tr_pdf_read_region(rd, sel, n_pages);
	if (sel->present && sel->column) {
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Column selectors (%llu.%llu-) apply to text files only; select PDF "
			       "pages with N, A-B or A-",
			       (unsigned long long)sel->start, (unsigned long long)sel->column);
		return 0;
	}
	if (tr_pdf_window(sel, n_pages, TR_PDF_DEFAULT_PAGES, rd->opts->max_pdf_pages, &rd->win) <
	    0) {
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Page %llu is past the end of the document (%llu %s)",
			       (unsigned long long)sel->start, (unsigned long long)n_pages,
			       tr_pdf_plural(n_pages, "page", "pages"));
		return 0;
	}
	rd->render_all = sel->present;
	rd->n_win = rd->win.first ? rd->win.last - rd->win.first + 1 : 0;
	if (rd->n_win) {
		rd->texts = calloc(rd->n_win, sizeof(*rd->texts));
		rd->state = calloc(rd->n_win, sizeof(*rd->state));
		rd->ocr = calloc(rd->n_win, sizeof(*rd->ocr));
		if (!rd->texts || !rd->state || !rd->ocr)
			return -1;
		for (uint64_t i = 0; i < rd->n_win; i++)
			rd->ocr[i].page = rd->win.first + i;
	}
	if (take_texts(rd) < 0)
		return -1;
	rc = ocr_window(rd);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (show_pages(rd, rd->win.first) < 0)
		return -1;
	return close_window(rd);
}

/* The read's finish (struct tr_watch), on the watchdog's thread while the reader's thread is
 * inside a poppler call that did not return: the result from what the read has, every poppler
 * call left out (docs/SPEC.md §3 "Render time"). A page whose text extraction is stuck is
 * `not read`, the pages after it `not started`; a page whose drawing is stuck is `not
 * rendered`, drawing stopped; OCR that did not return is an OCR timeout. */
static int finish_read(void *ctx)
{
	struct pdf_read *rd = ctx;
	uint64_t from = rd->win.first;

	rd->finishing = true;
	switch (rd->phase) {
	case PDF_OPENING: return 0; /* never left to the watchdog */
	case PDF_REGION: tr_pdf_fail_region_render(rd, 2, rd->at, TR_PDF_DRAWING_STOPPED); return 0;
	case PDF_TEXTS: rd->state[rd->at] = PAGE_STUCK; break;
	case PDF_OCR: {
		/* the OCR threads still write rd->ocr: a fresh one, from the texts alone (the
		 * other is left to the worker's end) */
		struct tr_pdf_ocr_page *ocr = calloc(rd->n_win, sizeof(*ocr));

		if (!ocr)
			return -1;
		for (uint64_t i = 0; i < rd->n_win; i++) {
			ocr[i].page = rd->win.first + i;
			if (rd->state[i] == PAGE_READ && tr_pdf_text_is_blank(rd->texts[i]))
				ocr[i].status = TR_PDF_OCR_TIMEOUT;
		}
		rd->ocr = ocr;
		break;
	}
	case PDF_PAGES: /* only renders are left to the watchdog here */
		from = rd->last + 1;
		if (rd->rendering && tr_pdf_add_render(rd, rd->rendering) < 0)
			return -1;
		break;
	}
	if (show_pages(rd, from) < 0)
		return -1;
	return close_window(rd);
}

int tr_pdf_read_poppler(const struct tr_file *file, const struct tr_selector *sel,
			const struct tr_options *opts, struct tr_result *res)
{
	struct pdf_read rd = {.file = file, .opts = opts, .sel = sel, .res = res};
	uint64_t size = (uint64_t)file->st.st_size;
	/* The default view of a file within max_pdf_size loads it once: poppler parses it from
	 * memory, it is hashed on the way and attached as documents[0]. A larger one is read from
	 * its descriptor, as page selectors are, and not attached (docs/SPEC.md §3). */
	bool load = !sel->present && size <= opts->max_pdf_size;
	GError *error = NULL;
	int rc = 0, n_pages;

	pthread_once(&silence_once, silence_poppler);
	if (load) {
		if (tr_load_file(file->fd, size, &rd.whole, &res->meta) < 0)
			return tr_result_fail_load(res, errno);
		rd.doc = open_from_blob(rd.whole, &error);
	} else {
		rd.doc = open_from_fd(file->fd, &error);
	}
	if (!rd.doc) {
		fail_open(res, error);
		goto out;
	}
	n_pages = poppler_document_get_n_pages(rd.doc);
	if (n_pages < 0)
		n_pages = 0;
	res->meta.page_count = n_pages;
	rd.n_pages = (uint64_t)n_pages;
	tr_watch_set(file, finish_read, &rd);
	rc = read_pages(&rd);
	tr_watch_set(file, NULL, NULL);
out:
	for (uint64_t i = 0; i < rd.n_win; i++) {
		if (rd.texts)
			free(rd.texts[i]);
		if (rd.ocr)
			free(rd.ocr[i].text);
	}
	free(rd.texts);
	free(rd.state);
	free(rd.ocr);
	g_clear_error(&error);
	if (rd.doc)
		g_object_unref(rd.doc);
	tr_blob_unref(rd.whole);
	return rc;
}

const struct tr_pdf_api tr_pdf_api = {
	.abi = TR_PDF_ABI,
	.read = tr_pdf_read_poppler,
};
