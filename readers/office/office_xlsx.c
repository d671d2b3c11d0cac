/* SPDX-License-Identifier: MIT */
/* office_xlsx.c - Excel workbooks: each sheet's XML streamed row by row (xmlTextReader, never a
 * DOM) into pipe tables with column letters and row numbers; cached values formatted by their
 * number format; sheets selected by number, a sheet from a row on with A.R-. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"

/* Excel's limits: columns A to XFD, rows 1 to 1,048,576. Cells past them are not read. */
#define MAX_COLUMNS 16384
#define MAX_ROWS 1048576

/* "BC12" -> column 55, row 12 (1-based). Returns false when ref is not a cell reference. */
static bool parse_ref(const char *ref, uint32_t *col, uint32_t *row)
{
	uint64_t c = 0, r = 0;
	const char *p = ref;

	while (*p == '$')
		p++;
	for (; *p >= 'A' && *p <= 'Z'; p++)
		if ((c = c * 26 + (uint64_t)(*p - 'A' + 1)) > MAX_COLUMNS)
			return false;
	if (*p == '$')
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((r = r * 10 + (uint64_t)(*p - '0')) > MAX_ROWS)
			return false;
	if (c == 0 || (r == 0 && *p != ':' && *p)) /* a column alone ("A") has no row */
		return false;
	*col = (uint32_t)c;
	*row = (uint32_t)r;
	return *p == '\0' || *p == ':';
}

/* "A1:F1200" -> its corners; a single cell "B2" is B2:B2. */
static bool parse_range(const char *range, uint32_t *c1, uint32_t *r1, uint32_t *c2, uint32_t *r2)
{
	const char *colon = range ? strchr(range, ':') : NULL;

	if (!range || !parse_ref(range, c1, r1))
		return false;
	if (!colon) {
		*c2 = *c1;
		*r2 = *r1;
		return *r1 > 0;
	}
	return parse_ref(colon + 1, c2, r2) && *c2 >= *c1 && *r2 >= *r1 && *r1 > 0;
}

/* One row being read: the escaped text of each column in the shown span. */
struct row {
	struct tr_buf *cells; /* one per column of the range */
	uint32_t used;        /* 1 + the last column index written, 0: none */
	bool outside;         /* a value fell outside the range (a wrong <dimension>) */
};

/* The number of a <row>: its r attribute, else the one after prev. */
static uint64_t row_number(struct tr_office_xml *xml, uint64_t prev)
{
	char *r = tr_office_xml_attr(xml, "r");
	uint64_t n = r ? strtoull(r, NULL, 10) : prev + 1;

	free(r);
	return n;
}

/* What the walk of a <c> collects: its <v> text, its inline string <is>. */
struct cell_walk {
	struct tr_buf value, inline_text;
	bool in_v, has_v, has_is;
};

static int on_v(void *ctx, struct tr_office_xml *xml)
{
	struct cell_walk *w = ctx;

	w->in_v = !tr_office_xml_empty(xml);
	w->has_v = true;
	return 0;
}

static int on_v_end(void *ctx, struct tr_office_xml *xml)
{
	struct cell_walk *w = ctx;

	(void)xml;
	w->in_v = false;
	return 0;
}

static int on_is(void *ctx, struct tr_office_xml *xml)
{
	struct cell_walk *w = ctx;

	w->has_is = true;
	return tr_xlsx_rich_text(xml, &w->inline_text) < 0 ? -1 : 0;
}

static int on_v_text(void *ctx, struct tr_office_xml *xml, const char *text)
{
	struct cell_walk *w = ctx;

	(void)xml;
	return w->in_v && tr_buf_append(&w->value, text, strlen(text)) < 0 ? -1 : 0;
}

/* The text a cell of type (its t attribute, NULL: a number) with value v and style (its s
 * attribute) shows, appended to shown. */
static void cell_shown(const struct xlsx *x, const char *type, const char *v, const char *style,
		       struct tr_buf *shown)
{
	if (type && !strcmp(type, "s")) {
		unsigned long i = strtoul(v, NULL, 10);

		if (i < x->n_strings)
			tr_buf_append(shown, x->pool.data + x->strings[i],
				      strlen(x->pool.data + x->strings[i]));
		else
			tr_buf_printf(shown, "#REF! (shared string %lu missing)", i);
	} else if (type && !strcmp(type, "b")) {
		tr_buf_printf(shown, "%s", strcmp(v, "0") ? "TRUE" : "FALSE");
	} else if (type && (!strcmp(type, "str") || !strcmp(type, "inlineStr") ||
			    !strcmp(type, "e") || !strcmp(type, "d"))) {
		tr_buf_append(shown, v, strlen(v));
	} else {
		char *end;
		double d = strtod(v, &end);

		if (end != v && *end == '\0')
			tr_numfmt_format(shown, d, tr_xlsx_style_format(x, style), x->date1904);
		else
			tr_buf_append(shown, v, strlen(v));
	}
}

/* Reads the <c> element the reader stands on into the row: the value by its type and format. */
static int read_cell(struct xlsx *x, struct tr_office_xml *xml, uint32_t *next_col,
		     uint32_t first_col, uint32_t n_cols, struct row *row)
{
	static const struct tr_office_rule rules[] = {
		{"v", on_v, on_v_end},
		{"is", on_is, NULL},
		{"f", tr_office_on_skip, NULL},
	};
	char *ref = tr_office_xml_attr(xml, "r"), *type = tr_office_xml_attr(xml, "t");
	char *style = tr_office_xml_attr(xml, "s");
	struct cell_walk w = {0};
	const struct tr_office_walk walk = {rules, 3, on_v_text, &w};
	struct tr_buf shown = {0};
	uint32_t col = *next_col, r;
	int rc;

	if (ref && !parse_ref(ref, &col, &r))
		col = *next_col;
	*next_col = col + 1;
	rc = tr_office_walk(xml, &walk, false);
	/* An inline string is its <is> alone (a <v> beside it is not shown, as Excel and openpyxl
	 * do); an empty <v/> is no value, never shared string 0. */
	if ((type && !strcmp(type, "inlineStr")) || (w.has_is && !w.has_v)) {
		tr_buf_free(&w.value);
		w.value = w.inline_text;
		memset(&w.inline_text, 0, sizeof(w.inline_text));
		w.has_v = w.has_is;
	} else if (w.has_v && !w.value.len && !(type && !strcmp(type, "str"))) {
		w.has_v = false;
	}
	if (rc >= 0 && w.has_v && w.value.len && (col < first_col || col - first_col >= n_cols))
		row->outside = true;
	if (rc >= 0 && w.has_v && col >= first_col && col - first_col < n_cols) {
		struct tr_buf *cell = &row->cells[col - first_col];

		cell_shown(x, type, w.value.data ? w.value.data : "", style, &shown);
		cell->len = 0;
		if (shown.len)
			tr_office_cell_append_capped(cell, shown.data, shown.len,
						     x->d->opts->max_line_chars);
		if (shown.oom || cell->oom)
			rc = -1;
		if (shown.len && col - first_col + 1 > row->used)
			row->used = col - first_col + 1;
	}
	if (w.value.oom || w.inline_text.oom)
		rc = -1;
	if (rc < 0 && x->z->error == TR_OK)
		tr_xlsx_oom(x);
	tr_buf_free(&w.value);
	tr_buf_free(&w.inline_text);
	tr_buf_free(&shown);
	free(ref);
	free(type);
	free(style);
	return rc < 0 ? -1 : 0;
}

static int on_dimension(void *ctx, struct tr_office_xml *xml)
{
	struct xlsx_sheet *sheet = ctx;

	free(sheet->dim);
	sheet->dim = tr_office_xml_attr(xml, "ref");
	return 0;
}

/* Reads the sheet's <dimension> (the reader stops at <sheetData>). */
static int read_dimension(struct xlsx *x, struct xlsx_sheet *sheet)
{
	static const struct tr_office_rule rules[] = {
		{"dimension", on_dimension, NULL},
		{"sheetData", tr_office_on_stop, NULL},
	};
	const struct tr_office_walk walk = {rules, 2, NULL, sheet};

	if (!sheet->part)
		return 0;
	return tr_office_walk_part(x->z, sheet->part, false, NULL, &walk) < 0 ? -1 : 0;
}

/* What the scan of a sheet's used range finds. */
struct scan_walk {
	uint32_t c1, c2, col;
	uint64_t r1, r2, row;
};

static int on_scan_row(void *ctx, struct tr_office_xml *xml)
{
	struct scan_walk *w = ctx;

	w->row = row_number(xml, w->row);
	w->col = 0;
	return 0;
}

static int on_scan_cell(void *ctx, struct tr_office_xml *xml)
{
	struct scan_walk *w = ctx;
	char *ref = tr_office_xml_attr(xml, "r");
	uint32_t cr;

	w->col++;
	if (ref)
		parse_ref(ref, &w->col, &cr);
	free(ref);
	if (w->row == 0 || w->row > MAX_ROWS || w->col == 0 || w->col > MAX_COLUMNS)
		return 0;
	w->c1 = w->col < w->c1 ? w->col : w->c1;
	w->c2 = w->col > w->c2 ? w->col : w->c2;
	w->r1 = w->row < w->r1 ? w->row : w->r1;
	w->r2 = w->row > w->r2 ? w->row : w->r2;
	return 0;
}

/* Scans the whole sheet for its used range when it has no <dimension>. */
static int scan_range(struct xlsx *x, struct xlsx_sheet *sheet)
{
	static const struct tr_office_rule rules[] = {
		{"row", on_scan_row, NULL},
		{"c", on_scan_cell, NULL},
	};
	struct scan_walk w = {.c1 = UINT32_MAX, .r1 = UINT64_MAX};
	const struct tr_office_walk walk = {rules, 2, NULL, &w};
	char a[16], b[16];
	int rc;

	sheet->scanned = true;
	rc = tr_office_walk_part(x->z, sheet->part, false, NULL, &walk);
	if (rc)
		return rc > 0 ? 0 : -1;
	free(sheet->dim);
	sheet->dim = NULL;
	if (w.c2 == 0)
		return 0;
	tr_office_column_name(w.c1, a);
	tr_office_column_name(w.c2, b);
	if (asprintf(&sheet->dim, "%s%" PRIu64 ":%s%" PRIu64, a, w.r1, b, w.r2) < 0) {
		sheet->dim = NULL;
		tr_xlsx_oom(x);
		return -1;
	}
	return 0;
}

/* Appends one row line "| 12 | a | b |" to line. */
static int format_row(struct tr_buf *line, uint32_t number, bool hidden, const struct row *row)
{
	if (tr_buf_printf(line, "| %" PRIu32 "%s |", number, hidden ? " (hidden)" : "") < 0)
		return -1;
	for (uint32_t c = 0; c < row->used; c++) {
		if (tr_buf_append(line, " ", 1) < 0 ||
		    tr_buf_append(line, row->cells[c].data, row->cells[c].len) < 0 ||
		    tr_buf_append(line, " |", 2) < 0)
			return -1;
	}
	return tr_buf_append(line, "\n", 1);
}

/* Appends the header of sheet index: "--- Sheet 2: Revenue (A1:F1200, 3 hidden columns) ---",
 * the table's head when it has columns. */
static int sheet_header(struct xlsx *x, size_t index, const char *kind, uint32_t c1,
			uint32_t n_cols, uint32_t hidden_cols, uint32_t from_row)
{
	const struct xlsx_sheet *sheet = &x->sheets[index - 1];
	char a[16];
	int rc;

	rc = tr_buf_printf(&x->out, "%s--- Sheet %zu: %s (%s", x->out.len ? "\n" : "", index,
			   sheet->name ? sheet->name : "", kind);
	if (rc == 0 && hidden_cols)
		rc = tr_buf_printf(&x->out, ", %" PRIu32 " hidden column%s", hidden_cols,
				   hidden_cols == 1 ? "" : "s");
	if (rc == 0 && sheet->hidden)
		rc = tr_buf_printf(&x->out, ", hidden sheet");
	if (rc == 0 && from_row > 1)
		rc = tr_buf_printf(&x->out, ", from row %" PRIu32, from_row);
	if (rc == 0)
		rc = tr_buf_printf(&x->out, ") ---\n");
	if (rc == 0 && n_cols) {
		rc = tr_buf_append(&x->out, "| row |", 7);
		for (uint32_t c = 0; c < n_cols && rc == 0; c++) {
			tr_office_column_name(c1 + c, a);
			rc = tr_buf_printf(&x->out, " %s |", a);
		}
		rc |= tr_buf_append(&x->out, "\n| --- |", 8);
		for (uint32_t c = 0; c < n_cols && rc == 0; c++)
			rc = tr_buf_append(&x->out, " --- |", 6);
		rc |= tr_buf_append(&x->out, "\n", 1);
	}
	return rc;
}

/* One pass over a sheet: what render_pass walks with. */
struct sheet_pass {
	struct xlsx *x;
	size_t index;
	uint32_t from_row;
	bool *outside;
	uint32_t c1, r1, c2, r2, n_cols, hidden_cols;
	uint32_t next_col; /* of the row being read */
	uint64_t row_no, merged_count, past_rows;
	struct tr_buf line, merged;
	struct row row;
	bool ranged, any_row, header, chart, root;
};

static int on_col(void *ctx, struct tr_office_xml *xml)
{
	struct sheet_pass *p = ctx;
	char *h = tr_office_xml_attr(xml, "hidden"), *mn = tr_office_xml_attr(xml, "min"),
	     *mx = tr_office_xml_attr(xml, "max");

	if (h && (!strcmp(h, "1") || !strcmp(h, "true")) && mn && mx && p->ranged) {
		unsigned long lo = strtoul(mn, NULL, 10), hi = strtoul(mx, NULL, 10);

		lo = lo < p->c1 ? p->c1 : lo;
		hi = hi > p->c2 ? p->c2 : hi;
		if (hi >= lo)
			p->hidden_cols += (uint32_t)(hi - lo + 1);
	}
	free(h);
	free(mn);
	free(mx);
	return 0;
}

static int on_sheet_data(void *ctx, struct tr_office_xml *xml)
{
	struct sheet_pass *p = ctx;

	(void)xml;
	p->header = true;
	return sheet_header(p->x, p->index, p->ranged ? p->x->sheets[p->index - 1].dim : "empty",
			    p->c1, p->n_cols, p->hidden_cols, p->from_row);
}

static int on_row_cell(void *ctx, struct tr_office_xml *xml)
{
	struct sheet_pass *p = ctx;
	return read_cell(p->x, xml, &p->next_col, p->c1, p->n_cols, &p->row);
}

/* Reads the <row> the reader stands on and writes its line while the caps allow; returns 1
 * when they stop the sheet. */
static int on_row(void *ctx, struct tr_office_xml *xml)
{
	static const struct tr_office_rule rules[] = {{"c", on_row_cell, NULL}};
	struct sheet_pass *p = ctx;
	struct xlsx *x = p->x;
	const struct tr_office_walk walk = {rules, 1, NULL, p};
	char *h = tr_office_xml_attr(xml, "hidden");
	bool hidden = h && (!strcmp(h, "1") || !strcmp(h, "true"));
	int rc;

	p->next_col = p->c1;
	p->row_no = row_number(xml, p->row_no);
	free(h);
	if (p->row_no > MAX_ROWS && !tr_office_xml_empty(xml))
		p->past_rows++;
	if (p->row_no < p->from_row || p->row_no > MAX_ROWS || tr_office_xml_empty(xml))
		return tr_office_xml_skip(xml) < 0 ? -1 : 0;
	for (uint32_t c = 0; c < p->row.used; c++)
		p->row.cells[c].len = 0;
	p->row.used = 0;
	rc = tr_office_walk(xml, &walk, false);
	if (p->row.outside || (p->row.used && (p->row_no < p->r1 || p->row_no > p->r2)))
		*p->outside = true;
	if (rc != 0 || p->row.used == 0)
		return rc;
	p->line.len = 0;
	if (format_row(&p->line, (uint32_t)p->row_no, hidden, &p->row) < 0)
		return tr_xlsx_oom(x), -1;
	if (x->rows_shown > 0 && (x->rows_shown >= x->d->opts->max_lines ||
				  x->out.len + p->line.len > x->d->opts->max_output)) {
		x->capped = true;
		x->cap_sheet = p->index;
		x->cap_row = p->row_no;
		return 1;
	}
	rc = tr_buf_append(&x->out, p->line.data, p->line.len);
	x->rows_shown++;
	p->any_row = true;
	return rc;
}

static int on_merge_cell(void *ctx, struct tr_office_xml *xml)
{
	struct sheet_pass *p = ctx;
	char *ref = tr_office_xml_attr(xml, "ref");
	int rc = 0;

	if (ref)
		rc = tr_buf_printf(&p->merged, "%s%s", p->merged_count++ ? ", " : "", ref);
	free(ref);
	return rc;
}

/* The root element: a chart sheet has no cells. */
static int on_any(void *ctx, struct tr_office_xml *xml)
{
	struct sheet_pass *p = ctx;

	if (!p->root) {
		p->root = true;
		p->chart = !strcmp(tr_office_xml_name(xml), "chartsheet");
	}
	return 0;
}

/* The lines after the rows: a header when there was no <sheetData>, the notes. */
static int pass_tail(struct sheet_pass *p)
{
	struct xlsx *x = p->x;
	int rc = 0;

	/* A chart sheet (or a sheet without <sheetData>) has a header all the same, so that the
	 * sheets after it keep their numbers. */
	if (!p->header)
		rc = sheet_header(x, p->index, p->chart ? "chart sheet" : "empty", p->c1, 0, 0,
				  p->from_row);
	if (rc == 0 && !x->capped) {
		if (!p->any_row)
			rc = tr_buf_append(&x->out, "(no rows with values)\n", 22);
		if (rc == 0 && p->merged_count)
			rc = tr_buf_printf(&x->out, "Merged cells (value in the first cell): %s\n",
					   p->merged.data);
		if (rc == 0 && p->past_rows)
			rc = tr_buf_printf(&x->out, "(%" PRIu64 " row%s past row %d left out)\n",
					   p->past_rows, p->past_rows == 1 ? "" : "s", MAX_ROWS);
	}
	return rc;
}

/* Writes sheet number index (1-based) from row from_row on, until the caps, with sheet->dim as
 * its range; sets *outside when a value lies outside that range. */
static int render_pass(struct xlsx *x, size_t index, uint32_t from_row, bool *outside)
{
	static const struct tr_office_rule rules[] = {
		{"col", on_col, NULL}, {"sheetData", on_sheet_data, NULL},
		{"row", on_row, NULL}, {"mergeCell", on_merge_cell, NULL},
		{NULL, on_any, NULL},
	};
	struct xlsx_sheet *sheet = &x->sheets[index - 1];
	struct sheet_pass p = {.x = x,
			       .index = index,
			       .from_row = from_row,
			       .outside = outside,
			       .c1 = 1,
			       .r1 = 1,
			       .c2 = 1,
			       .r2 = 1};
	const struct tr_office_walk walk = {rules, 5, NULL, &p};
	int rc;

	*outside = false;
	p.ranged = parse_range(sheet->dim, &p.c1, &p.r1, &p.c2, &p.r2);
	p.n_cols = p.ranged ? p.c2 - p.c1 + 1 : 0;
	p.row.cells = calloc(p.n_cols ? p.n_cols : 1, sizeof(*p.row.cells));
	if (!p.row.cells)
		return tr_xlsx_oom(x), -1;
	rc = tr_office_walk_part(x->z, sheet->part, true, NULL, &walk);
	if (rc == 0)
		rc = pass_tail(&p);
	for (uint32_t c = 0; c < p.n_cols; c++)
		tr_buf_free(&p.row.cells[c]);
	free(p.row.cells);
	tr_buf_free(&p.line);
	if (p.merged.oom || x->out.oom)
		tr_xlsx_oom(x);
	tr_buf_free(&p.merged);
	return rc < 0 || x->z->oom ? -1 : 0;
}

/* Writes sheet number index (1-based) from row from_row on, until the caps. The range is the
 * file's <dimension> while every value lies inside it; otherwise (a wrong, partial or missing
 * dimension) the sheet is scanned for the used range of its cells and written again. */
static int render_sheet(struct xlsx *x, size_t index, uint32_t from_row)
{
	struct xlsx_sheet *sheet = &x->sheets[index - 1];
	size_t out_len = x->out.len;
	uint64_t rows_shown = x->rows_shown;
	bool outside;

	if (!sheet->part)
		return tr_office_zip_fail(x->z, TR_E_CORRUPT, "sheet %zu (%s) has no part", index,
					  sheet->name ? sheet->name : "");
	if (!sheet->dim && !sheet->scanned && scan_range(x, sheet) < 0)
		return -1;
	if (render_pass(x, index, from_row, &outside) < 0)
		return -1;
	if (!outside || sheet->scanned)
		return 0;
	x->out.len = out_len;
	if (x->out.data)
		x->out.data[out_len] = '\0';
	x->rows_shown = rows_shown;
	x->capped = false;
	if (scan_range(x, sheet) < 0)
		return -1;
	return render_pass(x, index, from_row, &outside);
}

static int fill_sheet_meta(struct xlsx *x, struct tr_result *res)
{
	res->meta.sheets = calloc(x->n_sheets, sizeof(*res->meta.sheets));
	if (!res->meta.sheets)
		return tr_xlsx_oom(x), -1;
	res->meta.n_sheets = x->n_sheets;
	for (size_t i = 0; i < x->n_sheets; i++) {
		struct tr_sheet_meta *m = &res->meta.sheets[i];

		uint32_t c1, r1, c2, r2;
		bool ranged = parse_range(x->sheets[i].dim, &c1, &r1, &c2, &r2);

		m->name = strdup(x->sheets[i].name ? x->sheets[i].name : "");
		m->range = ranged ? strdup(x->sheets[i].dim) : NULL; /* not "1:4" */
		m->hidden = x->sheets[i].hidden;
		if (!m->name || (ranged && !m->range))
			return tr_xlsx_oom(x), -1;
	}
	return 0;
}

static void xlsx_free(struct xlsx *x)
{
	for (size_t i = 0; i < x->n_sheets; i++) {
		free(x->sheets[i].name);
		free(x->sheets[i].part);
		free(x->sheets[i].dim);
	}
	free(x->sheets);
	tr_buf_free(&x->pool);
	free(x->strings);
	free(x->xf_fmt);
	for (size_t i = 0; i < x->n_fmts; i++)
		free(x->fmts[i].code);
	free(x->fmts);
	tr_buf_free(&x->out);
}

/* The first sheet at or after index that the default view shows (n_sheets + 1: none). */
static size_t next_visible(const struct xlsx *x, size_t index)
{
	while (index <= x->n_sheets && x->sheets[index - 1].hidden)
		index++;
	return index;
}

int tr_office_xlsx(const struct tr_office_doc *d, struct tr_result *res)
{
	const struct tr_selector *sel = d->sel;
	struct xlsx x = {.d = d, .z = d->z};
	size_t first, last, shown_last = 0, shown = 0;
	bool hidden_skipped = false;
	int rc = -1;

	res->type = TR_TYPE_SPREADSHEET;
	if (tr_xlsx_load_workbook(&x) < 0 || tr_xlsx_load_styles(&x) < 0)
		goto out;
	for (size_t i = 0; i < x.n_sheets; i++)
		if (read_dimension(&x, &x.sheets[i]) < 0)
			goto out;
	first = sel->present ? (size_t)sel->start : 1;
	last = sel->present && sel->end ? (size_t)sel->end : x.n_sheets;
	if (sel->present && sel->start > x.n_sheets) {
		if (fill_sheet_meta(&x, res) < 0)
			goto out;
		rc = tr_office_sheets_past_end(d, x.n_sheets, res);
		goto out;
	}
	if (last > x.n_sheets)
		last = x.n_sheets;
	if (tr_xlsx_load_strings(&x) < 0)
		goto out;
	for (size_t i = first; i <= last && !x.capped; i++) {
		/* Hidden sheets: shown when the selector names them first, else only listed. */
		if (x.sheets[i - 1].hidden && !(sel->present && i == first)) {
			hidden_skipped = true;
			continue;
		}
		/* Sheets without rows (chart sheets, empty ones) add headers alone, up to 200 KB
		 * each at 16,384 columns: they stop at max_output too. */
		if (shown && x.out.len >= d->opts->max_output) {
			x.capped = true;
			x.cap_sheet = i;
			x.cap_row = 1;
			break;
		}
		if (render_sheet(&x, i, i == first && sel->column ? (uint32_t)sel->column : 1) < 0)
			goto out;
		shown_last = i;
		shown++;
	}
	if (fill_sheet_meta(&x, res) < 0)
		goto out;
	{
		struct tr_office_sheet_view v = {
			.n_sheets = x.n_sheets,
			.first = first,
			.last = last,
			.shown = shown,
			.shown_last = shown_last,
			.after = next_visible(&x, last + 1),
			.hidden_skipped = hidden_skipped,
			.capped = x.capped,
			.cap_sheet = x.cap_sheet,
			.cap_row = x.cap_row,
			.rows_shown = x.rows_shown,
			.from_row = sel->column,
		};

		if (tr_office_sheets_result(d, &v, &x.out, res) < 0)
			goto out;
	}
	rc = 0;
out:
	if (rc < 0 && !x.z->error)
		x.z->oom = true;
	xlsx_free(&x);
	return rc;
}
