/* SPDX-License-Identifier: MIT */
/* office_ods.c - OpenDocument spreadsheets (.ods): content.xml streamed once, each sheet's cells
 * shown as the display text the file stores (already formatted), in pipe tables. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"

/* Columns read, as in .xlsx (A to XFD). Empty cells repeated past them are formatting runs (a
 * style applied to the rest of the sheet) and never expanded. */
#define ODS_MAX_COLUMNS 16384

struct ods_sheet {
	char *name;  /* owned */
	char *range; /* owned, the used range once scanned */
	bool hidden;
};

struct ods {
	const struct tr_office_doc *d;
	struct tr_office_zip *z;
	struct ods_sheet *sheets;
	size_t n_sheets;
	char **hidden_styles; /* table styles with table:display="false" */
	size_t n_hidden_styles;
	struct tr_buf out;
	struct tr_office_sheet_view v;
};

/* The sheet being read. */
struct ods_table {
	bool shown;
	uint32_t from_row;
	uint64_t row;              /* 1-based number of the row being read */
	uint64_t col;              /* 1-based column of the next cell */
	uint32_t min_col, max_col; /* used range (0: none) */
	uint64_t min_row, max_row;
	struct tr_buf rows; /* the row lines shown */
	struct tr_buf merged;
	uint64_t merged_count;
	struct tr_buf *cells; /* the row being read: ODS_MAX_COLUMNS, kept across tables */
	uint32_t touched;     /* cells that may hold memory: 1 + the last one written */
	uint32_t used;        /* 1 + last column with a value in this row */
	bool row_hidden;
	uint64_t row_repeat;
	bool capped;
};

static bool hidden_style(const struct ods *s, const char *style)
{
	for (size_t i = 0; style && i < s->n_hidden_styles; i++)
		if (!strcmp(s->hidden_styles[i], style))
			return true;
	return false;
}

/* What the walk of a table:table-cell collects: its paragraphs' text. */
struct ods_cell_walk {
	struct tr_buf text;
	int paragraphs;
	bool in_p;
};

static int on_cell_p(void *ctx, struct tr_office_xml *x)
{
	struct ods_cell_walk *w = ctx;

	w->in_p = !tr_office_xml_empty(x);
	if (w->paragraphs++ && tr_buf_append(&w->text, "\n", 1) < 0)
		return -1;
	return 0;
}

static int on_cell_p_end(void *ctx, struct tr_office_xml *x)
{
	struct ods_cell_walk *w = ctx;

	(void)x;
	w->in_p = false;
	return 0;
}

static int on_cell_s(void *ctx, struct tr_office_xml *x)
{
	struct ods_cell_walk *w = ctx;

	(void)x;
	return w->in_p ? tr_buf_append(&w->text, " ", 1) : 0;
}

static int on_cell_text(void *ctx, struct tr_office_xml *x, const char *chars)
{
	struct ods_cell_walk *w = ctx;

	(void)x;
	return w->in_p ? tr_buf_append(&w->text, chars, strlen(chars)) : 0;
}

/* Stores the cell's text in the columns it repeats over, within the shown rows; records the
 * used range. Returns 0 or -1 (out of memory). */
static int ods_cell_store(const struct ods *s, struct ods_table *t, const struct tr_buf *text,
			  uint64_t repeat)
{
	int rc = 0;

	for (uint64_t i = 0; i < repeat && t->col + i <= ODS_MAX_COLUMNS; i++) {
		uint32_t col = (uint32_t)(t->col + i);

		/* The row may stand for a group (number-rows-repeated) that reaches the
		 * selector's first row. */
		if (t->shown && !t->capped &&
		    (t->row >= t->from_row ||
		     (t->row_repeat && t->row_repeat > t->from_row - t->row))) {
			t->cells[col - 1].len = 0;
			if (col > t->touched)
				t->touched = col;
			if (tr_office_cell_append_capped(&t->cells[col - 1], text->data, text->len,
							 s->d->opts->max_line_chars) < 0)
				rc = -1;
		}
		if (col > t->used)
			t->used = col;
		if (!t->min_col || col < t->min_col)
			t->min_col = col;
		if (col > t->max_col)
			t->max_col = col;
	}
	return rc;
}

/* Records a merged range of span_c columns and span_r rows from the cell at t->col. Returns 0
 * or -1 (out of memory). */
static int ods_cell_merged(struct ods_table *t, const char *span_c, const char *span_r)
{
	uint64_t sc = span_c ? strtoull(span_c, NULL, 10) : 1,
		 sr = span_r ? strtoull(span_r, NULL, 10) : 1;
	char a[8], b[8];

	if (!(sc > 1 || sr > 1) || sc >= ODS_MAX_COLUMNS || sr >= 1048576)
		return 0;
	tr_office_column_name((uint32_t)t->col, a);
	tr_office_column_name((uint32_t)(t->col + sc - 1), b);
	return tr_buf_printf(&t->merged, "%s%s%" PRIu64 ":%s%" PRIu64,
			     t->merged_count++ ? ", " : "", a, t->row, b, t->row + sr - 1) < 0
		       ? -1
		       : 0;
}

/* Reads one table:table-cell (the reader stands on it): its display text into the row. */
static int ods_cell(struct ods *s, struct tr_office_xml *x, struct ods_table *t)
{
	static const struct tr_office_rule rules[] = {
		{"p", on_cell_p, on_cell_p_end},
		{"annotation", tr_office_on_skip, NULL},
		{"s", on_cell_s, NULL},
	};
	char *rep = tr_office_xml_attr(x, "number-columns-repeated");
	char *span_c = tr_office_xml_attr(x, "number-columns-spanned");
	char *span_r = tr_office_xml_attr(x, "number-rows-spanned");
	char *value = tr_office_xml_attr(x, "value");
	uint64_t repeat = rep ? strtoull(rep, NULL, 10) : 1;
	struct ods_cell_walk w = {0};
	const struct tr_office_walk walk = {rules, 3, on_cell_text, &w};
	int rc;

	if (repeat == 0)
		repeat = 1;
	rc = tr_office_walk(x, &walk, false);
	if (rc >= 0 && !w.text.len && value)
		rc = tr_buf_append(&w.text, value, strlen(value)) < 0 ? -1 : rc;
	if (rc >= 0 && w.text.len)
		rc = ods_cell_store(s, t, &w.text, repeat);
	if (rc >= 0 && (span_c || span_r) && t->shown && t->col <= ODS_MAX_COLUMNS)
		rc = ods_cell_merged(t, span_c, span_r);
	t->col += repeat;
	free(rep);
	free(span_c);
	free(span_r);
	free(value);
	if (w.text.oom)
		rc = -1;
	tr_buf_free(&w.text);
	if (rc < 0 && !s->z->error)
		s->z->oom = true;
	return rc < 0 ? -1 : 0;
}

/* Ends a row: records the used rows and writes its line while the caps allow. */
static int ods_row_end(struct ods *s, struct ods_table *t, size_t index)
{
	const struct tr_options *opts = s->d->opts;
	uint64_t repeat = t->row_repeat ? t->row_repeat : 1;
	int rc = 0;

	if (t->used) {
		if (!t->min_row)
			t->min_row = t->row;
		t->max_row = t->row + repeat - 1;
	}
	/* From the selector's first row on: no loop over the repeats before it. */
	for (uint64_t i = t->from_row > t->row ? t->from_row - t->row : 0;
	     t->used && t->shown && !t->capped && i < repeat && rc == 0; i++) {
		uint64_t number = t->row + i;
		size_t before = t->rows.len;

		rc = tr_buf_printf(&t->rows, "| %" PRIu64 "%s |", number,
				   t->row_hidden ? " (hidden)" : "");
		for (uint32_t c = 0; c < t->used && rc == 0; c++) {
			rc = tr_buf_append(&t->rows, " ", 1);
			if (rc == 0 && t->cells[c].len)
				rc = tr_buf_append(&t->rows, t->cells[c].data, t->cells[c].len);
			if (rc == 0)
				rc = tr_buf_append(&t->rows, " |", 2);
		}
		if (rc == 0)
			rc = tr_buf_append(&t->rows, "\n", 1);
		/* The header comes later: 64 bytes and 6 per column are kept for it. */
		if (rc == 0 && s->v.rows_shown > 0 &&
		    (s->v.rows_shown >= opts->max_lines ||
		     s->out.len + t->rows.len + 64 + 6 * (uint64_t)t->used > opts->max_output)) {
			t->rows.len = before;
			t->capped = true;
			s->v.capped = true;
			s->v.cap_sheet = index;
			s->v.cap_row = number;
			break;
		}
		s->v.rows_shown++;
	}
	for (uint32_t c = 0; c < t->used; c++)
		t->cells[c].len = 0;
	t->used = 0;
	t->row += repeat;
	return rc;
}

/* Writes the finished table: header, rows, merged ranges; records its used range. */
static int ods_table_end(struct ods *s, struct ods_table *t, size_t index)
{
	struct ods_sheet *sheet = &s->sheets[index - 1];
	char a[8], b[8];
	int rc = 0;

	if (t->max_col) {
		tr_office_column_name(t->min_col, a);
		tr_office_column_name(t->max_col, b);
		if (asprintf(&sheet->range, "%s%" PRIu64 ":%s%" PRIu64, a, t->min_row, b,
			     t->max_row) < 0) {
			sheet->range = NULL;
			return -1;
		}
	}
	if (!t->shown)
		return 0;
	rc = tr_buf_printf(&s->out, "%s--- Sheet %zu: %s (%s%s", s->out.len ? "\n" : "", index,
			   sheet->name ? sheet->name : "", sheet->range ? sheet->range : "empty",
			   sheet->hidden ? ", hidden sheet" : "");
	if (rc == 0 && t->from_row > 1)
		rc = tr_buf_printf(&s->out, ", from row %" PRIu32, t->from_row);
	if (rc == 0)
		rc = tr_buf_append(&s->out, ") ---\n", 6);
	if (rc == 0 && t->max_col) {
		rc = tr_buf_append(&s->out, "| row |", 7);
		for (uint32_t c = 1; c <= t->max_col && rc == 0; c++) {
			tr_office_column_name(c, a);
			rc = tr_buf_printf(&s->out, " %s |", a);
		}
		rc |= tr_buf_append(&s->out, "\n| --- |", 8);
		for (uint32_t c = 1; c <= t->max_col && rc == 0; c++)
			rc = tr_buf_append(&s->out, " --- |", 6);
		rc |= tr_buf_append(&s->out, "\n", 1);
	}
	if (rc == 0 && t->rows.len)
		rc = tr_buf_append(&s->out, t->rows.data, t->rows.len);
	else if (rc == 0 && !t->capped)
		rc = tr_buf_append(&s->out, "(no rows with values)\n", 22);
	if (rc == 0 && t->merged_count && !t->capped)
		rc = tr_buf_printf(&s->out, "Merged cells (value in the first cell): %s\n",
				   t->merged.data);
	return rc;
}

/* Clears t for the next table; the cells array stays (only the cells written are freed, so
 * that many tables cost no 16,384-cell pass each). */
static void ods_table_reset(struct ods_table *t)
{
	struct tr_buf *cells = t->cells;

	for (size_t c = 0; c < t->touched; c++)
		tr_buf_free(&cells[c]);
	tr_buf_free(&t->rows);
	tr_buf_free(&t->merged);
	memset(t, 0, sizeof(*t));
	t->cells = cells;
}

/* What the walk of a spreadsheet's content.xml is in. */
struct ods_walk {
	struct ods *s;
	struct ods_table *t;
	char *style_name; /* the style:style being read, owned */
	size_t index;     /* the table being read, 1-based (0: none yet) */
};

static int on_ods_style(void *ctx, struct tr_office_xml *x)
{
	struct ods_walk *w = ctx;

	free(w->style_name);
	w->style_name = tr_office_xml_attr(x, "name");
	return 0;
}

/* A table style with table:display="false" hides its tables. */
static int on_table_properties(void *ctx, struct tr_office_xml *x)
{
	struct ods_walk *w = ctx;
	struct ods *s = w->s;
	char *display;
	int rc = 0;

	if (!w->style_name)
		return 0;
	display = tr_office_xml_attr(x, "display");
	if (display && !strcmp(display, "false")) {
		char **grown = realloc(s->hidden_styles, (s->n_hidden_styles + 1) * sizeof(*grown));

		if (!grown) {
			rc = -1;
		} else {
			s->hidden_styles = grown;
			s->hidden_styles[s->n_hidden_styles++] = w->style_name;
			w->style_name = NULL;
		}
	}
	free(display);
	return rc;
}

static int on_ods_table_end(void *ctx, struct tr_office_xml *x)
{
	struct ods_walk *w = ctx;
	struct ods_table *t = w->t;
	int rc;

	(void)x;
	if (!w->index)
		return 0;
	rc = ods_table_end(w->s, t, w->index);
	if (t->shown) {
		w->s->v.shown++;
		w->s->v.shown_last = w->index;
	}
	t->shown = false;
	return rc;
}

/* A table starts a sheet (an empty <table:table/> ends the one being read). */
static int on_ods_table(void *ctx, struct tr_office_xml *x)
{
	struct ods_walk *w = ctx;
	struct ods *s = w->s;
	struct ods_table *t = w->t;
	struct ods_sheet *grown;
	char *style;
	size_t index;

	if (tr_office_xml_empty(x) || tr_office_xml_depth(x) == 0)
		return tr_office_xml_empty(x) ? on_ods_table_end(ctx, x) : 0;
	grown = realloc(s->sheets, (w->index + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	style = tr_office_xml_attr(x, "style-name");
	s->sheets = grown;
	s->sheets[w->index] = (struct ods_sheet){
		.name = tr_office_xml_attr(x, "name"),
		.hidden = hidden_style(s, style),
	};
	free(style);
	index = ++w->index;
	s->n_sheets = index;
	ods_table_reset(t);
	t->row = 1;
	t->col = 1;
	t->shown = !s->v.capped && index >= s->v.first && index <= s->v.last &&
		   (!s->sheets[index - 1].hidden || (s->d->sel->present && index == s->v.first));
	if (index >= s->v.first && index <= s->v.last && !t->shown && !s->v.capped)
		s->v.hidden_skipped = true;
	t->from_row = index == s->v.first && s->d->sel->column ? (uint32_t)s->d->sel->column : 1;
	return 0;
}

static int on_ods_row(void *ctx, struct tr_office_xml *x)
{
	struct ods_walk *w = ctx;
	struct ods_table *t = w->t;
	char *rep, *vis;

	if (!w->index)
		return 0;
	rep = tr_office_xml_attr(x, "number-rows-repeated");
	vis = tr_office_xml_attr(x, "visibility");
	t->row_repeat = rep ? strtoull(rep, NULL, 10) : 1;
	t->row_hidden = vis && strcmp(vis, "visible") != 0;
	t->col = 1;
	free(rep);
	free(vis);
	return tr_office_xml_empty(x) ? ods_row_end(w->s, t, w->index) : 0;
}

static int on_ods_row_end(void *ctx, struct tr_office_xml *x)
{
	struct ods_walk *w = ctx;

	(void)x;
	return w->index ? ods_row_end(w->s, w->t, w->index) : 0;
}

static int on_ods_cell(void *ctx, struct tr_office_xml *x)
{
	struct ods_walk *w = ctx;

	return w->index ? ods_cell(w->s, x, w->t) : 0;
}

/* Streams content.xml: automatic styles (hidden tables), then every table. */
static int ods_read(struct ods *s, struct ods_table *t)
{
	static const struct tr_office_rule rules[] = {
		{"style", on_ods_style, NULL},
		{"table-properties", on_table_properties, NULL},
		{"table", on_ods_table, on_ods_table_end},
		{"table-row", on_ods_row, on_ods_row_end},
		{"table-cell", on_ods_cell, NULL},
		{"covered-table-cell", on_ods_cell, NULL},
	};
	struct ods_walk w = {.s = s, .t = t};
	const struct tr_office_walk walk = {rules, 6, NULL, &w};
	int rc = tr_office_walk_part(s->z, s->d->main_part, true, NULL, &walk);

	free(w.style_name);
	return rc < 0 ? -1 : 0;
}

int tr_office_ods(const struct tr_office_doc *d, struct tr_result *res)
{
	const struct tr_selector *sel = d->sel;
	struct ods s = {.d = d, .z = d->z};
	struct ods_table *t = calloc(1, sizeof(*t));
	struct tr_buf *cells = calloc(ODS_MAX_COLUMNS, sizeof(*cells));
	int rc = -1;

	res->type = TR_TYPE_SPREADSHEET;
	if (!t || !cells) {
		free(t);
		free(cells);
		d->z->oom = true;
		return -1;
	}
	t->cells = cells;
	s.v.first = sel->present ? (size_t)sel->start : 1;
	s.v.last = sel->present && sel->end ? (size_t)sel->end : SIZE_MAX;
	s.v.from_row = sel->column;
	if (ods_read(&s, t) < 0)
		goto out;
	if (s.n_sheets == 0) {
		tr_office_zip_fail(d->z, TR_E_CORRUPT, "the spreadsheet has no tables");
		goto out;
	}
	res->meta.sheets = calloc(s.n_sheets, sizeof(*res->meta.sheets));
	if (!res->meta.sheets) {
		d->z->oom = true;
		goto out;
	}
	res->meta.n_sheets = s.n_sheets;
	for (size_t i = 0; i < s.n_sheets; i++) {
		res->meta.sheets[i] = (struct tr_sheet_meta){
			.name = s.sheets[i].name ? s.sheets[i].name : strdup(""),
			.range = s.sheets[i].range,
			.hidden = s.sheets[i].hidden,
		};
		s.sheets[i].name = s.sheets[i].range = NULL;
	}
	if (sel->present && sel->start > s.n_sheets) {
		rc = tr_office_sheets_past_end(d, s.n_sheets, res);
		goto out;
	}
	s.v.n_sheets = s.n_sheets;
	if (s.v.last > s.n_sheets)
		s.v.last = s.n_sheets;
	s.v.after = s.v.last + 1;
	while (s.v.after <= s.n_sheets && res->meta.sheets[s.v.after - 1].hidden)
		s.v.after++;
	rc = tr_office_sheets_result(d, &s.v, &s.out, res);
out:
	if (rc < 0 && !d->z->error)
		d->z->oom = true;
	ods_table_reset(t);
	free(t->cells);
	free(t);
	for (size_t i = 0; i < s.n_sheets; i++) {
		free(s.sheets[i].name);
		free(s.sheets[i].range);
	}
	free(s.sheets);
	for (size_t i = 0; i < s.n_hidden_styles; i++)
		free(s.hidden_styles[i]);
	free(s.hidden_styles);
	tr_buf_free(&s.out);
	return rc;
}
