/* SPDX-License-Identifier: MIT */
/* pdf_poppler.c - the PDF read on poppler-glib: page text, page renders, the attached document. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fontconfig/fontconfig.h>
#include <poppler.h>

#include "core.h"
#include "ocr.h"
#include "pdf.h"
#include "util.h"

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

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The long edge of page renders: docs/SPEC.md §3, 1568 px or less when image_max_dim says so. */
static uint32_t render_long_edge(const struct tr_options *opts)
{
	uint32_t long_edge = opts->image_max_dim < TR_PDF_RENDER_LONG_EDGE
				     ? (uint32_t)opts->image_max_dim
				     : TR_PDF_RENDER_LONG_EDGE;

	return long_edge ? long_edge : 1;
}

/* Appends to out the one wording of a page's timeout (docs/SPEC.md §3 "Render time"):
 * "[page P: timeout: not DONE within max_render_ms (N ms), WHY]", followed by "; read
 * NAME:P.tool.json to ALONE it alone" when alone is not NULL (earlier pages used the time: the
 * page alone may still make it). Returns 0, or -1 when out of memory. */
static int timeout_note(struct pdf_read *rd, struct tr_buf *out, uint64_t p, const char *done,
			const char *why, const char *alone)
{
	char hint[128] = "";

	if (alone)
		snprintf(hint, sizeof(hint), "; read %s:%llu.tool.json to %s it alone",
			 rd->file->src->name, (unsigned long long)p, alone);
	return tr_buf_printf(out,
			     "[page %llu: timeout: not %s within max_render_ms (%llu ms), %s%s]",
			     (unsigned long long)p, done,
			     (unsigned long long)rd->opts->max_render_ms, why, hint) < 0
		       ? -1
		       : 0;
}

/* Renders page p into images[]; a page cairo cannot render is noted in content instead. The
 * render is left to the watchdog (struct tr_watch): a drawing operation cairo does not return
 * from is stopped by the read's answer. Finishing, nothing is drawn: the page being drawn is
 * stopped, later ones are not started. Returns 0, or -1 when out of memory. */
static int add_render(struct pdf_read *rd, uint64_t p)
{
	struct tr_pdf_render img;
	char err[160] = "";
	int rc = 2;

	if (rd->finishing) {
		snprintf(err, sizeof(err), "%s",
			 p == rd->rendering ? TR_PDF_DRAWING_STOPPED : TR_PDF_NOT_STARTED);
	} else {
		PopplerPage *page;

		rd->rendering = p;
		tr_watch_leave(rd->file);
		page = poppler_document_get_page(rd->doc, (int)(p - 1));
		if (page) {
			rc = tr_pdf_render_page(page, render_long_edge(rd->opts),
						rd->opts->image_max_b64, rd->file->deadline, &img,
						err, sizeof(err));
			g_object_unref(page);
		} else {
			rc = 1;
			snprintf(err, sizeof(err), "the page could not be loaded");
		}
		tr_watch_enter(rd->file);
		rd->rendering = 0;
	}
	if (rc < 0)
		return -1;
	if (rc == 2) {
		/* docs/SPEC.md §3: the page is listed as a timeout; its text stays. */
		bool alone = rd->rendered + rd->timeouts > 0;

		rd->timeouts++;
		if (timeout_note(rd, &rd->res->content, p, "rendered", err,
				 alone ? "render" : NULL) < 0 ||
		    tr_buf_append(&rd->res->content, "\n", 1) < 0)
			return -1;
		return 0;
	}
	if (rc > 0)
		return tr_buf_printf(&rd->res->content, "[page %llu: could not be rendered: %s]\n",
				     (unsigned long long)p, err);
	rd->rendered++;
	return tr_result_add_image(rd->res, img.data, img.media_type, img.width, img.height,
				   (uint32_t)p, 0);
}

/* At most this many form fields and annotations give text per page: a hostile page may list
 * millions; those past it are counted in one line. */
#define PDF_MAX_PAGE_NOTES 1000

/* The text layer selected glyph by glyph from the top-right corner to the bottom-left one,
 * spaced by the glyphs' boxes (tr_pdf_text_respace). For a right-to-left page this keeps the
 * lines a selection from the top-left corner loses: there the first line's selection starts
 * at its left end, which is a right-to-left line's end, and the last line's stops at its right
 * end, its start. Returns 0 (*out malloc'd or NULL), or -1 when out of memory. */
static int right_to_left_text(PopplerPage *page, double width, double height, char **out)
{
	PopplerRectangle area = {width, 0, 0, height}, *boxes = NULL;
	guint n_boxes = 0;
	char *text = poppler_page_get_text_for_area(page, &area);
	struct tr_buf buf = {0};
	int rc = 0;

	_Static_assert(sizeof(struct tr_pdf_box) == sizeof(PopplerRectangle) &&
			       offsetof(struct tr_pdf_box, x2) == offsetof(PopplerRectangle, x2),
		       "struct tr_pdf_box has PopplerRectangle's layout");
	*out = NULL;
	if (text && poppler_page_get_text_layout_for_area(page, &area, &boxes, &n_boxes))
		rc = tr_pdf_text_respace(&buf, text, strlen(text), (struct tr_pdf_box *)boxes,
					 n_boxes);
	if (rc == 0 && buf.len && tr_buf_append(&buf, "", 1) == 0)
		*out = buf.data;
	else
		tr_buf_free(&buf);
	g_free(boxes);
	g_free(text);
	return rc < 0 || buf.oom ? -1 : 0;
}

/* The page's text layer in reading order, into out. Selecting by line over the whole page
 * keeps every line of a left-to-right page (poppler_page_get_text selects glyph by glyph and
 * loses some); a page that has right-to-left text, or none, is also selected from the
 * top-right corner (right_to_left_text) and the extraction holding more text wins. Returns 0,
 * or -1 when out of memory. */
static int page_layer_text(PopplerPage *page, struct tr_buf *out)
{
	static const char rle[] = "\xE2\x80\xAB";
	PopplerRectangle all = {0, 0, 0, 0};
	char *text, *rtl = NULL;
	size_t len;
	int rc = 0;

	poppler_page_get_size(page, &all.x2, &all.y2);
	text = poppler_page_get_selected_text(page, POPPLER_SELECTION_LINE, &all);
	len = text ? strlen(text) : 0;
	if (tr_pdf_text_is_blank(text) || memmem(text, len, rle, 3))
		rc = right_to_left_text(page, all.x2, all.y2, &rtl);
	if (rtl && tr_pdf_text_letters(rtl, strlen(rtl)) >= tr_pdf_text_letters(text, len))
		tr_buf_append(out, rtl, strlen(rtl));
	else if (len)
		tr_buf_append(out, text, len);
	free(rtl);
	g_free(text);
	return rc < 0 || out->oom ? -1 : 0;
}

/* One form field or annotation with text: where it is (PDF space, y upwards) and its line. */
struct page_note {
	double top, left;
	char *line; /* malloc'd */
};

static int compare_notes(const void *a, const void *b)
{
	const struct page_note *x = a, *y = b;

	if (x->top != y->top)
		return x->top > y->top ? -1 : 1;
	return x->left < y->left ? -1 : x->left > y->left;
}

/* The value a form field shows: a text field's text, a choice field's selected items (comma
 * separated), a check box or radio button's state when on; NULL when it shows none
 * (g_malloc'd). */
static char *field_value(PopplerFormField *field)
{
	switch (poppler_form_field_get_field_type(field)) {
	case POPPLER_FORM_FIELD_TEXT: return poppler_form_field_text_get_text(field);
	case POPPLER_FORM_FIELD_CHOICE: {
		GString *chosen = g_string_new(NULL);
		int n = poppler_form_field_choice_get_n_items(field);

		for (int i = 0; i < n && i < PDF_MAX_PAGE_NOTES; i++) {
			char *item;

			if (!poppler_form_field_choice_is_item_selected(field, i))
				continue;
			item = poppler_form_field_choice_get_item(field, i);
			if (item)
				g_string_append_printf(chosen, "%s%s", chosen->len ? ", " : "",
						       item);
			g_free(item);
		}
		return g_string_free(chosen, chosen->len == 0);
	}
	case POPPLER_FORM_FIELD_BUTTON:
		if (poppler_form_field_button_get_button_type(field) != POPPLER_FORM_BUTTON_PUSH &&
		    poppler_form_field_button_get_state(field))
			return g_strdup("checked");
		return NULL;
	case POPPLER_FORM_FIELD_UNKNOWN:
	case POPPLER_FORM_FIELD_SIGNATURE: return NULL;
	}
	return NULL;
}

/* Adds a note "[KIND NAME: VALUE]" (no NAME: "[KIND: VALUE]") at area when value holds text;
 * counts it in *more instead when notes is full. Takes value (g_malloc'd, may be NULL).
 * Returns 0, or -1 when out of memory. */
static int add_note(struct page_note *notes, size_t *n, size_t *more, const PopplerRectangle *area,
		    const char *kind, const char *name, char *value)
{
	struct tr_buf line = {0};
	int rc = 0;

	if (!value || tr_pdf_text_is_blank(value)) {
		g_free(value);
		return 0;
	}
	if (*n == PDF_MAX_PAGE_NOTES) {
		(*more)++;
		g_free(value);
		return 0;
	}
	tr_buf_printf(&line, "[%s%s%s: ", kind, name && name[0] ? " " : "",
		      name && name[0] ? name : "");
	tr_pdf_text_append(&line, value, strlen(value));
	tr_buf_append(&line, "]", 2); /* with its NUL */
	g_free(value);
	if (line.oom) {
		rc = -1;
		tr_buf_free(&line);
	} else {
		notes[*n].top = fmax(area->y1, area->y2);
		notes[*n].left = fmin(area->x1, area->x2);
		notes[(*n)++].line = line.data;
	}
	return rc;
}

/* Appends to out, one line each, the values of the page's form fields and the text of its
 * free-text annotations (their appearance text, which poppler-glib's page text leaves out and
 * pdftotext shows), top to bottom and left to right, at most PDF_MAX_PAGE_NOTES of them.
 * Returns 0, or -1 when out of memory. */
static int page_notes(PopplerPage *page, struct tr_buf *out)
{
	GList *fields = poppler_page_get_form_field_mapping(page);
	GList *annots = poppler_page_get_annot_mapping(page);
	struct page_note *notes = NULL;
	size_t n = 0, more = 0;
	int rc = 0;

	if ((fields || annots) && !(notes = calloc(PDF_MAX_PAGE_NOTES, sizeof(*notes))))
		rc = -1;
	for (GList *l = fields; l && rc == 0; l = l->next) {
		PopplerFormFieldMapping *m = l->data;
		char *name = poppler_form_field_get_partial_name(m->field);

		rc = add_note(notes, &n, &more, &m->area, "field", name, field_value(m->field));
		g_free(name);
	}
	for (GList *l = annots; l && rc == 0; l = l->next) {
		PopplerAnnotMapping *m = l->data;

		if (poppler_annot_get_annot_type(m->annot) != POPPLER_ANNOT_FREE_TEXT ||
		    (poppler_annot_get_flags(m->annot) & POPPLER_ANNOT_FLAG_HIDDEN))
			continue;
		rc = add_note(notes, &n, &more, &m->area, "annotation", NULL,
			      poppler_annot_get_contents(m->annot));
	}
	if (n)
		qsort(notes, n, sizeof(*notes), compare_notes);
	for (size_t i = 0; i < n; i++) {
		tr_buf_printf(out, "%s%s", out->len ? "\n" : "", notes[i].line);
		free(notes[i].line);
	}
	if (more)
		tr_buf_printf(out, "\n[%zu more form fields and annotations not shown]", more);
	free(notes);
	poppler_page_free_form_field_mapping(fields);
	poppler_page_free_annot_mapping(annots);
	return rc < 0 || out->oom ? -1 : 0;
}

/* The page's text (docs/SPEC.md §3): its text layer, then its form-field values and free-text
 * annotations marked as such. Sets *text (malloc'd, NULL when the page has none). Returns 0,
 * or -1 when out of memory. */
static int page_text(PopplerPage *page, char **text)
{
	struct tr_buf buf = {0};

	*text = NULL;
	if (page_layer_text(page, &buf) < 0 || page_notes(page, &buf) < 0 ||
	    (buf.len && tr_buf_append(&buf, "", 1) < 0)) {
		tr_buf_free(&buf);
		return -1;
	}
	*text = buf.data;
	return 0;
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
		if (timeout_note(rd, &body, p, "read",
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

/* Fails res for a region render that did not succeed (rc 1 or 2 of tr_pdf_render_region). */
static void fail_region_render(struct pdf_read *rd, int rc, uint64_t p, const char *err)
{
	if (rc == 2)
		tr_result_fail(rd->res, TR_E_TIMEOUT,
			       "Timeout: the region of page %llu was not rendered within "
			       "max_render_ms (%llu ms): %s",
			       (unsigned long long)p, (unsigned long long)rd->opts->max_render_ms,
			       err);
	else
		tr_result_fail(rd->res, TR_E_CORRUPT,
			       "The region of page %llu could not be rendered: %s",
			       (unsigned long long)p, err);
}

/* A region selector P@WxH+X+Y (page 1 without P@): the rectangle of page P's page image (the
 * render a page selector attaches) drawn again at the zoom that fills the output. The page's
 * text is not repeated (docs/SPEC.md §3). Returns 0, or -1 when out of memory. */
static int read_region(struct pdf_read *rd, const struct tr_selector *sel, uint64_t n_pages)
{
	struct tr_result *res = rd->res;
	const struct tr_region *asked = &sel->region;
	uint64_t p = sel->start ? sel->start : 1;
	uint32_t long_edge = render_long_edge(rd->opts), grid_w, grid_h;
	struct tr_pdf_render img;
	struct tr_region r;
	PopplerPage *page;
	char err[160] = "";
	double scale;
	int rc;

	if (p > n_pages) {
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Page %llu is past the end of the document (%llu %s)",
			       (unsigned long long)p, (unsigned long long)n_pages,
			       plural(n_pages, "page", "pages"));
		return 0;
	}
	page = poppler_document_get_page(rd->doc, (int)(p - 1));
	if (!page) {
		tr_result_fail(res, TR_E_CORRUPT, "Page %llu of the PDF could not be loaded",
			       (unsigned long long)p);
		return 0;
	}
	tr_pdf_render_size(page, long_edge, &grid_w, &grid_h);
	if (tr_region_clip(asked, grid_w, grid_h, &r) < 0) {
		g_object_unref(page);
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Region %ux%u+%u+%u is outside page %llu's %ux%u page image (X must "
			       "be below %u and Y below %u)",
			       asked->width, asked->height, asked->x, asked->y,
			       (unsigned long long)p, grid_w, grid_h, grid_w, grid_h);
		return 0;
	}
	rd->phase = PDF_REGION;
	rd->at = p;
	tr_watch_leave(rd->file);
	rc = tr_pdf_render_region(page, &r, long_edge, rd->opts->image_max_b64, rd->file->deadline,
				  &img, err, sizeof(err));
	g_object_unref(page);
	tr_watch_enter(rd->file);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		fail_region_render(rd, rc, p, err);
		return 0;
	}
	scale = (double)(r.width > r.height ? r.width : r.height) /
		(img.width > img.height ? img.width : img.height);
	if (tr_result_add_image(res, img.data, img.media_type, img.width, img.height, (uint32_t)p,
				0) < 0)
		return -1;
	res->meta.has_region = true;
	res->meta.region = r;
	tr_buf_printf(&res->content,
		      "--- Page %llu, region %ux%u+%u+%u ---\n[Region %ux%u+%u+%u of page %llu's "
		      "%ux%u page image, rendered again at %ux%u (zoom %.3f); a point (x, y) of "
		      "the attached image is (%u + x * %.3f, %u + y * %.3f) in the page image. "
		      "The page's text is not repeated: read %s:%llu.tool.json for it]\n",
		      (unsigned long long)p, r.width, r.height, r.x, r.y, r.width, r.height, r.x,
		      r.y, (unsigned long long)p, grid_w, grid_h, img.width, img.height, 1 / scale,
		      r.x, scale, r.y, scale, rd->file->src->name, (unsigned long long)p);
	if (res->content.oom)
		return -1;
	res->success = true;
	tr_result_set_short(res,
			    "Read PDF: region %ux%u+%u+%u of page %llu of %llu, shown at %ux%u",
			    r.width, r.height, r.x, r.y, (unsigned long long)p,
			    (unsigned long long)n_pages, img.width, img.height);
	return res->short_result ? 0 : -1;
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
			rc = page_text(page, &text);
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
		if (render && add_render(rd, p) < 0)
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
			 plural(res->n_images, "image", "images"));
	if (res->meta.n_ocr)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), ", %zu %s OCR'd",
			 res->meta.n_ocr, plural(res->meta.n_ocr, "page", "pages"));
	if (rd->timeouts)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 ", %llu %s not rendered (timeout)", (unsigned long long)rd->timeouts,
			 plural(rd->timeouts, "page", "pages"));
	if (rd->unread)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 ", %llu %s not read (timeout)", (unsigned long long)rd->unread,
			 plural(rd->unread, "page", "pages"));
	if (n_pages == 0)
		tr_result_set_short(res, "Read PDF: no pages, %s", size_text);
	else
		tr_result_set_short(res, "Read PDF: %llu of %llu %s (%llu-%llu), %s%s",
				    (unsigned long long)(last - rd->win.first + 1),
				    (unsigned long long)n_pages, plural(n_pages, "page", "pages"),
				    (unsigned long long)rd->win.first, (unsigned long long)last,
				    size_text, extra);
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
		return read_region(rd, sel, n_pages);
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
			       plural(n_pages, "page", "pages"));
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
	case PDF_REGION: fail_region_render(rd, 2, rd->at, TR_PDF_DRAWING_STOPPED); return 0;
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
		if (rd->rendering && add_render(rd, rd->rendering) < 0)
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

/* struct tr_module_head: fontconfig's configuration and font caches, which poppler asks for a
 * font a page names but does not embed (10 ms of every worker's first such page). */
static void pdf_warm(void)
{
	(void)FcInit();
}

const struct tr_pdf_api tr_pdf_api = {
	.abi = TR_PDF_ABI,
	.warm = pdf_warm,
	.read = tr_pdf_read_poppler,
};
