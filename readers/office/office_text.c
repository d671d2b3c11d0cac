/* SPDX-License-Identifier: MIT */
/* office_text.c - what the Office renderers share: pipe-table cells and tables, and pictures
 * attached to images[] through the image validators and fitting of readers/image. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "office.h"
#include "text.h"
#include "util.h"

int tr_office_cell_append(struct tr_buf *out, const char *s, size_t len)
{
	size_t from = 0;

	for (size_t i = 0; i < len; i++) {
		const char *rep;

		switch (s[i]) {
		case '|': rep = "\\|"; break;
		case '\n': rep = "<br>"; break;
		case '\r':
		case '\t': rep = " "; break;
		default: continue;
		}
		if (tr_buf_append(out, s + from, i - from) < 0 ||
		    tr_buf_append(out, rep, strlen(rep)) < 0)
			return -1;
		from = i + 1;
	}
	return tr_buf_append(out, s + from, len - from);
}

int tr_office_cell_append_capped(struct tr_buf *out, const char *s, size_t len, uint64_t max_chars)
{
	uint64_t passed, total;
	size_t cut;

	if (!max_chars || len <= max_chars)
		return tr_office_cell_append(out, s, len);
	cut = tr_utf8_advance((const unsigned char *)s, len, max_chars, &passed);
	if (cut == len)
		return tr_office_cell_append(out, s, len);
	total = passed + tr_utf8_count((const unsigned char *)s + cut, len - cut);
	if (tr_office_cell_append(out, s, cut) < 0)
		return -1;
	return tr_buf_printf(out, " [... cell truncated: %" PRIu64 " of %" PRIu64 " chars shown]",
			     passed, total);
}

int tr_office_table_row(struct tr_office_table *t)
{
	if (t->n_rows == t->cap_rows) {
		size_t cap = t->cap_rows ? 2 * t->cap_rows : 8;
		size_t *grown = realloc(t->row_len, cap * sizeof(*grown));

		if (!grown)
			return -1;
		t->row_len = grown;
		t->cap_rows = cap;
	}
	t->row_len[t->n_rows++] = 0;
	return 0;
}

int tr_office_table_cell(struct tr_office_table *t)
{
	if (t->n_rows == 0 && tr_office_table_row(t) < 0)
		return -1;
	if (t->n_cells == t->cap_cells) {
		size_t cap = t->cap_cells ? 2 * t->cap_cells : 16;
		struct tr_buf *grown = realloc(t->cells, cap * sizeof(*grown));

		if (!grown)
			return -1;
		t->cells = grown;
		t->cap_cells = cap;
	}
	memset(&t->cells[t->n_cells++], 0, sizeof(struct tr_buf));
	t->row_len[t->n_rows - 1]++;
	return 0;
}

struct tr_buf *tr_office_table_current(struct tr_office_table *t)
{
	return t->n_cells ? &t->cells[t->n_cells - 1] : NULL;
}

int tr_office_table_flush(struct tr_office_table *t, struct tr_buf *out)
{
	size_t width = 0, cell = 0;
	int rc = 0;

	for (size_t r = 0; r < t->n_rows; r++)
		if (t->row_len[r] > width)
			width = t->row_len[r];
	for (size_t r = 0; r < t->n_rows && width && rc == 0; r++) {
		for (size_t c = 0; c < width && rc == 0; c++) {
			const struct tr_buf *b = c < t->row_len[r] ? &t->cells[cell + c] : NULL;

			rc = tr_buf_append(out, c ? " | " : "| ", c ? 3 : 2);
			if (rc == 0 && b && b->len)
				rc = tr_buf_append(out, b->data, b->len);
			if (rc == 0 && b && b->oom)
				rc = -1;
		}
		cell += t->row_len[r];
		if (rc == 0)
			rc = tr_buf_append(out, " |\n", 3);
		if (r == 0)
			for (size_t c = 0; c < width && rc == 0; c++)
				rc = tr_buf_append(out, c + 1 < width ? "| --- " : "| --- |\n",
						   c + 1 < width ? 6 : 8);
	}
	tr_office_table_free(t);
	return rc;
}

void tr_office_table_free(struct tr_office_table *t)
{
	for (size_t i = 0; i < t->n_cells; i++)
		tr_buf_free(&t->cells[i]);
	free(t->cells);
	free(t->row_len);
	memset(t, 0, sizeof(*t));
}

/* The displayable formats a picture may be in, with their validators. */
static const struct {
	const char *name, *media_type;
	bool (*signature)(const unsigned char *head, size_t len);
	tr_image_validate_fn validate;
} picture_formats[] = {
	{"PNG", "image/png", tr_png_signature, tr_png_validate},
	{"JPEG", "image/jpeg", tr_jpeg_signature, tr_jpeg_validate},
	{"GIF", "image/gif", tr_gif_signature, tr_gif_validate},
	{"WebP", "image/webp", tr_webp_signature, tr_webp_validate},
};

/* Attaches the picture blob (its reference taken) of media_type and info to res, downscaled
 * when the options want it, and appends its reference to text. Returns as tr_office_picture. */
static int attach_picture(struct tr_office_zip *z, const char *part, uint32_t slide,
			  const struct tr_options *opts, struct tr_result *res, struct tr_buf *text,
			  struct tr_blob *blob, const char *media_type,
			  const struct tr_image_info *info)
{
	char fitted[200] = "";
#if defined(TR_HAVE_VIPS)
	char err[256] = "";

	if (tr_fit_needed(info->width, info->height, blob->len, opts)) {
		struct tr_fit fit;

		if (tr_fit_image(blob, opts, z->deadline, &fit, err, sizeof(err)) != TR_OK) {
			tr_blob_unref(blob);
			return tr_buf_printf(text,
					     "[picture %s: %s %" PRIu32 "x%" PRIu32
					     " could not be downscaled: %s]",
					     tr_path_base_name(part), media_type, info->width,
					     info->height, err) < 0
				       ? -1
				       : 0;
		}
		snprintf(fitted, sizeof(fitted),
			 ", shown at %" PRIu32 "x%" PRIu32 " as %s; multiply coordinates by %.3f "
			 "to map back",
			 fit.width, fit.height, fit.media_type, fit.scale);
		tr_blob_unref(blob);
		blob = fit.data;
		if (tr_result_add_image(res, blob, fit.media_type, fit.width, fit.height, 0, 0) <
		    0) {
			z->oom = true;
			return -1;
		}
	} else
#endif
		if (tr_result_add_image(res, blob, media_type, info->width, info->height, 0, 0) <
		    0) {
		z->oom = true;
		return -1;
	}
	res->images[res->n_images - 1].slide = slide;
	return tr_buf_printf(text, "[image %zu: %s %" PRIu32 "x%" PRIu32 "%s]", res->n_images,
			     media_type, info->width, info->height, fitted) < 0
		       ? -1
		       : 0;
}

int tr_office_picture(struct tr_office_zip *z, const char *part, uint32_t slide,
		      const struct tr_options *opts, struct tr_result *res, struct tr_buf *text)
{
	struct tr_buf bytes = {0};
	struct tr_image_info info;
	struct tr_blob *blob;
	const char *media_type = NULL;
	char err[256] = "";
	zip_int64_t idx;
	uint64_t size;
	int rc;

	if (res->n_images >= TR_OFFICE_MAX_IMAGES)
		return tr_buf_printf(text,
				     "[picture %s: not attached, %d pictures at most per result]",
				     tr_path_base_name(part), TR_OFFICE_MAX_IMAGES) < 0
			       ? -1
			       : 0;
	rc = tr_office_zip_entry(z, part, 0, &idx, &size);
	if (rc > 0)
		return tr_buf_printf(text, "[picture %s: missing from the archive]",
				     tr_path_base_name(part)) < 0
			       ? -1
			       : 0;
	if (rc < 0)
		return -1;
	if (size > opts->max_image_size)
		return tr_buf_printf(text, "[picture %s: %" PRIu64 " bytes, over max_image_size]",
				     tr_path_base_name(part), size) < 0
			       ? -1
			       : 0;
	if (tr_office_zip_read(z, part, opts->max_image_size, &bytes) != 0) {
		tr_buf_free(&bytes);
		return -1;
	}
	for (size_t i = 0; i < sizeof(picture_formats) / sizeof(picture_formats[0]); i++) {
		if (!picture_formats[i].signature((const unsigned char *)bytes.data, bytes.len))
			continue;
		if (picture_formats[i].validate((const unsigned char *)bytes.data, bytes.len, &info,
						err, sizeof(err)) == 0)
			media_type = picture_formats[i].media_type;
		break;
	}
	if (!media_type) {
		rc = tr_buf_printf(text, "[picture %s: not shown (%s)]", tr_path_base_name(part),
				   err[0] ? err : "not a PNG, JPEG, GIF or WebP image");
		tr_buf_free(&bytes);
		return rc < 0 ? -1 : 0;
	}
	blob = tr_blob_adopt(bytes.data, bytes.len);
	if (!blob) {
		z->oom = true;
		return -1;
	}
	return attach_picture(z, part, slide, opts, res, text, blob, media_type, &info);
}

/* Marks where a picture stands in the rendering until its line is known. XML 1.0 text cannot
 * hold U+0001, so the marker never collides with document text. */
#define PICTURE_MARK '\x01'

int tr_office_rendering_picture(struct tr_office_rendering *r, const char *part,
				struct tr_buf *text)
{
	char *copy = strdup(part);
	char **parts = copy ? realloc(r->parts, (r->n + 1) * sizeof(*parts)) : NULL;

	if (!parts) {
		free(copy);
		return -1;
	}
	r->parts = parts;
	r->parts[r->n++] = copy;
	return tr_buf_printf(text, "%c[image: %s]", PICTURE_MARK, tr_path_base_name(part));
}

/* Records each picture's line and removes the markers. */
static int locate_pictures(struct tr_office_rendering *r)
{
	uint64_t line = 1;
	size_t w = 0, k = 0;

	r->lines = calloc(r->n ? r->n : 1, sizeof(*r->lines));
	if (!r->lines)
		return -1;
	for (size_t i = 0; i < r->out.len; i++) {
		char c = r->out.data[i];

		if (c == PICTURE_MARK) {
			if (k < r->n)
				r->lines[k++] = line;
			continue;
		}
		if (c == '\n')
			line++;
		r->out.data[w++] = c;
	}
	r->out.len = w;
	if (r->out.data)
		r->out.data[w] = '\0';
	return 0;
}

int tr_office_rendering_finish(const struct tr_office_doc *d, struct tr_office_rendering *r,
			       int64_t ins, int64_t del, struct tr_result *res)
{
	struct tr_buf scratch = {0};
	int rc = 0;

	res->type = TR_TYPE_DOCUMENT;
	if (r->out.oom || locate_pictures(r) < 0 ||
	    tr_text_window_buffer(r->out.data ? r->out.data : "", r->out.len, d->name, d->sel,
				  d->opts, res) < 0) {
		d->z->oom = true;
		return -1;
	}
	if (ins || del) {
		res->meta.tracked_ins = ins;
		res->meta.tracked_del = del;
	}
	for (size_t i = 0; res->success && i < r->n && rc == 0; i++) {
		if (r->lines[i] < res->range_start || r->lines[i] > res->range_end)
			continue;
		scratch.len = 0;
		rc = tr_office_picture(d->z, r->parts[i], 0, d->opts, res, &scratch);
	}
	tr_buf_free(&scratch);
	return rc;
}

void tr_office_rendering_free(struct tr_office_rendering *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->parts[i]);
	free(r->parts);
	free(r->lines);
	tr_buf_free(&r->out);
	memset(r, 0, sizeof(*r));
}

bool tr_office_blank(const struct tr_buf *b)
{
	for (size_t i = 0; i < b->len; i++)
		if (b->data[i] != ' ' && b->data[i] != '\t' && b->data[i] != '\n')
			return false;
	return true;
}

int tr_office_rendering_block(struct tr_office_rendering *r, const char *prefix, const char *text,
			      size_t len, bool list)
{
	struct tr_buf view = {.data = (char *)text, .len = len};

	if (tr_office_blank(&view))
		return 0;
	if (r->out.len && !(list && r->prev_list) && tr_buf_append(&r->out, "\n", 1) < 0)
		return -1;
	r->prev_list = list;
	/* A marker stands before the text itself: a line break that opens a heading or a list
	 * item would leave "# " alone on its line. A heading stays one line. */
	while (prefix[0] && len && (*text == '\n' || *text == ' ' || *text == '\t')) {
		text++;
		len--;
	}
	if (tr_buf_append(&r->out, prefix, strlen(prefix)) < 0)
		return -1;
	for (size_t i = 0, from = 0; i <= len; i++) {
		if (i < len && !(prefix[0] == '#' && text[i] == '\n'))
			continue;
		if (tr_buf_append(&r->out, text + from, i - from) < 0 ||
		    tr_buf_append(&r->out, i < len ? " " : "\n", 1) < 0)
			return -1;
		from = i + 1;
	}
	return 0;
}

void tr_office_column_name(uint32_t col, char *buf)
{
	char tmp[8];
	int n = 0;

	while (col && n < 7) {
		col--;
		tmp[n++] = (char)('A' + col % 26);
		col /= 26;
	}
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
}

int tr_office_sheets_past_end(const struct tr_office_doc *d, size_t n, struct tr_result *res)
{
	res->range_unit = TR_UNIT_SHEET;
	res->range_total = n;
	tr_result_fail(res, TR_E_OUT_OF_RANGE,
		       "Sheet %" PRIu64 " is past the end of the workbook (%zu sheet%s)",
		       d->sel->start, n, n == 1 ? "" : "s");
	return res->short_result ? 0 : -1;
}

int tr_office_sheets_result(const struct tr_office_doc *d, const struct tr_office_sheet_view *v,
			    struct tr_buf *out, struct tr_result *res)
{
	size_t end = v->shown_last ? v->shown_last : v->first;
	struct tr_window w = {
		.unit = TR_UNIT_SHEET,
		.first = v->first,
		.last = end,
		.total = v->n_sheets,
		.cut = v->capped || v->last < v->n_sheets || v->hidden_skipped || v->from_row > 1,
	};

	res->success = true;
	if (v->capped)
		w.next = (struct tr_selector){
			.present = true, .start = v->cap_sheet, .column = v->cap_row};
	else if (v->after <= v->n_sheets)
		w.next = (struct tr_selector){.present = true, .start = v->after};
	tr_result_set_window(res, d->name, &w);
	tr_buf_free(&res->content);
	res->content = *out;
	memset(out, 0, sizeof(*out));
	if (v->capped)
		tr_result_set_short(res,
				    "Read %" PRIu64 " row%s of %zu sheet%s (sheets %zu-%zu of %zu, "
				    "cut at sheet %" PRIu64 " row %" PRIu64 ")",
				    v->rows_shown, v->rows_shown == 1 ? "" : "s", v->shown,
				    v->shown == 1 ? "" : "s", v->first, end, v->n_sheets,
				    v->cap_sheet, v->cap_row);
	else
		tr_result_set_short(res,
				    "Read %" PRIu64 " row%s of %zu sheet%s (sheets %zu-%zu of %zu)",
				    v->rows_shown, v->rows_shown == 1 ? "" : "s", v->shown,
				    v->shown == 1 ? "" : "s", v->first, end, v->n_sheets);
	return res->short_result ? 0 : -1;
}

int tr_office_link_end(struct tr_buf *para, size_t start, char **url)
{
	size_t len = para->len - start;
	int rc = 0;

	if (len != strlen(*url) || memcmp(para->data + start, *url, len) != 0)
		rc = tr_buf_printf(para, " (%s)", *url);
	free(*url);
	*url = NULL;
	return rc;
}

int tr_office_rendering_table(struct tr_office_rendering *r, struct tr_office_table *t)
{
	if (r->out.len && tr_buf_append(&r->out, "\n", 1) < 0) {
		tr_office_table_free(t);
		return -1;
	}
	r->prev_list = false;
	return tr_office_table_flush(t, &r->out);
}

/* --- presentations (.pptx, .odp) --- */

int tr_office_cell_paragraph(struct tr_office_table *table, const struct tr_buf *para)
{
	struct tr_buf *cell = tr_office_table_current(table);
	int rc = 0;

	if (!cell)
		return 0;
	if (cell->len)
		rc = tr_buf_append(cell, "<br>", 4);
	return rc == 0 ? tr_office_cell_append(cell, para->data, para->len) : rc;
}

int tr_office_paragraph_to(struct tr_office_table *table, struct tr_buf *title,
			   const struct tr_buf *para)
{
	int rc = 0;

	if (table)
		return tr_office_cell_paragraph(table, para);
	if (title->len)
		rc = tr_buf_append(title, " ", 1);
	for (size_t i = 0; i < para->len && rc == 0; i++)
		rc = tr_buf_append(title, para->data[i] == '\n' ? " " : para->data + i, 1);
	return rc;
}

int tr_office_slide_compose(struct tr_buf *out, size_t index, const struct tr_buf *title,
			    bool hidden, const struct tr_buf *body, const struct tr_buf *pictures,
			    const struct tr_buf *notes)
{
	int rc = tr_buf_printf(out, "--- Slide %zu%s%.*s%s ---\n", index, title->len ? ": " : "",
			       (int)title->len, title->data ? title->data : "",
			       hidden ? " (hidden slide)" : "");

	if (rc == 0 && body->len)
		rc = tr_buf_append(out, body->data, body->len);
	if (rc == 0 && pictures->len)
		rc = tr_buf_append(out, pictures->data, pictures->len);
	if (rc == 0 && notes->len) {
		rc = tr_buf_append(out, "Notes:\n", 7);
		if (rc == 0)
			rc = tr_buf_append(out, notes->data, notes->len);
	}
	return rc < 0 || out->oom || pictures->oom ? -1 : 0;
}

/* Drops the images from index keep on (a slide left out of the result). */
static void drop_images(struct tr_result *res, size_t keep)
{
	while (res->n_images > keep)
		tr_blob_unref(res->images[--res->n_images].data);
}

/* The slides a window shows: first to last, rendered into out up to shown_last. */
struct slides_window {
	size_t first, last, shown_last;
	bool capped, cut;
	struct tr_buf out;
};

/* Renders slides w->first to w->last into w->out while max_output allows (the first one is cut
 * to it). Returns 0 or -1 (recorded in d->z, or out of memory). */
static int compose_slides(const struct tr_office_doc *d,
			  int (*render)(void *ctx, size_t index, struct tr_buf *out), void *ctx,
			  struct tr_result *res, struct slides_window *w)
{
	struct tr_buf slide = {0};
	int rc = -1;

	for (size_t i = w->first; i <= w->last; i++) {
		size_t images_before = res->n_images;

		slide.len = 0;
		if (render(ctx, i, &slide) < 0)
			goto out;
		if (w->out.len + (w->out.len ? 1 : 0) + slide.len > d->opts->max_output) {
			if (w->out.len) {
				drop_images(res, images_before);
				w->capped = true;
				break;
			}
			/* The first slide always shows, its text cut at max_output. */
			slide.len = tr_utf8_prefix((const unsigned char *)slide.data, slide.len,
						   UINT64_MAX, d->opts->max_output);
			w->cut = true;
		}
		if ((w->out.len && tr_buf_append(&w->out, "\n", 1) < 0) ||
		    tr_buf_append(&w->out, slide.data, slide.len) < 0) {
			d->z->oom = true;
			goto out;
		}
		w->shown_last = i;
		if (w->cut) {
			if (tr_buf_printf(&w->out, "\n[slide %zu cut at max_output]\n", i) < 0)
				goto out;
			w->capped = i < w->last;
			break;
		}
	}
	rc = 0;
out:
	tr_buf_free(&slide);
	return rc;
}

int tr_office_slides(const struct tr_office_doc *d, size_t n_slides,
		     int (*render)(void *ctx, size_t index, struct tr_buf *out), void *ctx,
		     struct tr_result *res)
{
	const struct tr_selector *sel = d->sel;
	struct slides_window w = {0};
	int rc = -1;

	res->type = TR_TYPE_PRESENTATION;
	res->meta.slide_count = (int64_t)n_slides;
	res->range_unit = TR_UNIT_SLIDE;
	res->range_total = n_slides;
	w.first = sel->present ? (size_t)sel->start : 1;
	w.last = sel->present && sel->end ? (size_t)sel->end : n_slides;
	if (w.last > n_slides)
		w.last = n_slides;
	if (n_slides == 0 && !sel->present) {
		res->success = true;
		tr_result_set_short(res, "Presentation has no slides");
		rc = res->short_result ? 0 : -1;
		goto out;
	}
	if (sel->present && sel->start > n_slides) {
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Slide %" PRIu64
			       " is past the end of the presentation (%zu slide%s)",
			       sel->start, n_slides, n_slides == 1 ? "" : "s");
		rc = res->short_result ? 0 : -1;
		goto out;
	}
	if (compose_slides(d, render, ctx, res, &w) < 0)
		goto out;
	res->success = true;
	tr_result_set_window(
		res, d->name,
		&(struct tr_window){
			.unit = TR_UNIT_SLIDE,
			.first = w.first,
			.last = w.shown_last,
			.total = n_slides,
			.cut = w.capped || w.cut,
			.next = {.present = w.shown_last < n_slides, .start = w.shown_last + 1},
		});
	tr_buf_free(&res->content);
	res->content = w.out;
	memset(&w.out, 0, sizeof(w.out));
	tr_result_set_short(res, "Read %zu slide%s (%zu-%zu of %zu)", w.shown_last - w.first + 1,
			    w.shown_last - w.first + 1 == 1 ? "" : "s", w.first, w.shown_last,
			    n_slides);
	rc = res->short_result ? 0 : -1;
out:
	if (rc < 0 && !d->z->error)
		d->z->oom = true;
	tr_buf_free(&w.out);
	return rc;
}
