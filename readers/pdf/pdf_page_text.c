/* SPDX-License-Identifier: MIT */
/* pdf_page_text.c - a PDF page's text on poppler-glib: its text layer (in reading order, right-to-left
 * pages too), then its form-field values and free-text annotations. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <poppler.h>

#include "pdf.h"
#include "util.h"

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
int tr_pdf_page_text(PopplerPage *page, char **text)
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
