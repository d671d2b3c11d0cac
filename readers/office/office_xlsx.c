/* SPDX-License-Identifier: MIT */
/* office_xlsx.c - Excel workbooks: each sheet's XML streamed row by row (xmlTextReader, never a
 * DOM) into pipe tables with column letters and row numbers; cached values formatted by their
 * number format; sheets selected by number, a sheet from a row on with A.R-. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"

/* Excel's limits: columns A to XFD, rows 1 to 1,048,576. Cells past them are not read. */
#define MAX_COLUMNS 16384
#define MAX_ROWS 1048576

struct xlsx_sheet {
	char *name, *part; /* owned */
	bool hidden;
	char *dim;    /* owned: <dimension ref> (or the scanned used range once shown), or NULL */
	bool scanned; /* dim is the used range of the cells, not the file's <dimension> */
};

struct numfmt {
	unsigned id;
	char *code;
};

struct xlsx {
	const struct tr_office_doc *d;
	struct tr_office_zip *z;
	struct xlsx_sheet *sheets;
	size_t n_sheets;
	struct tr_buf pool; /* shared strings, each NUL-terminated */
	size_t *strings;    /* offsets into pool */
	size_t n_strings;
	unsigned *xf_fmt; /* number format id of each cell style */
	size_t n_xf;
	struct numfmt *fmts;
	size_t n_fmts;
	bool date1904;
	size_t cap_strings, cap_xf; /* allocated items of strings, xf_fmt */
	bool in_xfs;                /* inside <cellXfs> of the styles */

	struct tr_buf out;   /* the content */
	uint64_t rows_shown; /* rows in this result */
	bool capped;         /* stopped by the row cap or max_output */
	uint64_t cap_sheet;  /* where to continue when capped: sheet, row */
	uint64_t cap_row;
};

static bool oom(struct xlsx *x)
{
	x->z->oom = true;
	return false;
}

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

/* What the workbook walk fills. */
struct workbook_walk {
	struct xlsx *x;
	struct tr_office_rels rels;
};

static int on_workbook_pr(void *ctx, struct tr_office_xml *xml)
{
	struct workbook_walk *w = ctx;
	char *v = tr_office_xml_attr(xml, "date1904");

	w->x->date1904 = v && (!strcmp(v, "1") || !strcmp(v, "true"));
	free(v);
	return 0;
}

static int on_sheet(void *ctx, struct tr_office_xml *xml)
{
	struct workbook_walk *w = ctx;
	struct xlsx *x = w->x;
	char *id = tr_office_xml_attr(xml, "id");
	char *state = tr_office_xml_attr(xml, "state");
	const struct tr_office_rel *rel = tr_office_rels_find(&w->rels, id);
	struct xlsx_sheet sheet = {
		.name = tr_office_xml_attr(xml, "name"),
		.part = rel && !rel->external ? strdup(rel->target) : NULL,
		.hidden = state && strcmp(state, "visible") != 0,
	};
	struct xlsx_sheet *grown = realloc(x->sheets, (x->n_sheets + 1) * sizeof(*grown));

	free(id);
	free(state);
	if (!grown || x->z->oom) {
		free(sheet.name);
		free(sheet.part);
		return oom(x), -1;
	}
	x->sheets = grown;
	x->sheets[x->n_sheets++] = sheet;
	return 0;
}

static int load_workbook(struct xlsx *x)
{
	static const struct tr_office_rule rules[] = {
		{"workbookPr", on_workbook_pr, NULL},
		{"sheet", on_sheet, NULL},
	};
	struct workbook_walk w = {.x = x};
	const struct tr_office_walk walk = {rules, 2, NULL, &w};
	int rc = tr_office_walk_part(x->z, x->d->main_part, true, &w.rels, &walk);

	tr_office_rels_free(&w.rels);
	if (rc < 0)
		return -1;
	if (x->n_sheets == 0)
		return tr_office_zip_fail(x->z, TR_E_CORRUPT, "the workbook lists no sheets");
	return 0;
}

/* The part a workbook relationship of this type points at, or NULL. */
static char *workbook_part(struct xlsx *x, const char *type_suffix)
{
	struct tr_office_rels rels;
	const struct tr_office_rel *rel;
	char *part = NULL;

	if (tr_office_rels_load(x->z, x->d->main_part, &rels) < 0)
		return NULL;
	rel = tr_office_rels_by_type(&rels, type_suffix);
	if (rel && !rel->external && !(part = strdup(rel->target)))
		oom(x);
	tr_office_rels_free(&rels);
	return part;
}

/* Makes room in *array (of *cap items of size bytes) for item n, doubling. Returns 0 or -1. */
static int grow(void **array, size_t *cap, size_t n, size_t size)
{
	void *grown;
	size_t want;

	if (n < *cap)
		return 0;
	want = *cap ? 2 * *cap : 64;
	grown = realloc(*array, want * size);
	if (!grown)
		return -1;
	*array = grown;
	*cap = want;
	return 0;
}

/* The UTF-16 unit of an escape "_xHHHH_" at s (len bytes left), or -1 when s holds none. */
static long x_escape(const char *s, size_t len)
{
	char hex[5];

	if (len < 7 || s[0] != '_' || s[1] != 'x' || s[6] != '_')
		return -1;
	for (int i = 2; i < 6; i++)
		if (!isxdigit((unsigned char)s[i]))
			return -1;
	memcpy(hex, s + 2, 4);
	hex[4] = '\0';
	return strtol(hex, NULL, 16);
}

/* Writes code point cp as UTF-8 at out; returns its length (at most 4). */
static size_t put_utf8(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decodes the escapes of ST_Xstring in b from offset from on, in place: "_xHHHH_" is the UTF-16
 * unit HHHH (a surrogate pair as two escapes; "_x005F_" a literal "_", so "_x005F_x0041_" is
 * the text "_x0041_"); NUL is dropped, a lone surrogate becomes U+FFFD. One pass, never longer
 * than the input. */
static void decode_x_escapes(struct tr_buf *b, size_t from)
{
	size_t r = from, w = from;

	while (r < b->len) {
		long unit = b->data[r] == '_' ? x_escape(b->data + r, b->len - r) : -1;
		unsigned long cp;

		if (unit < 0) {
			b->data[w++] = b->data[r++];
			continue;
		}
		r += 7;
		cp = (unsigned long)unit;
		if (unit >= 0xd800 && unit < 0xdc00) {
			long low = x_escape(b->data + r, b->len - r);

			if (low >= 0xdc00 && low < 0xe000) {
				cp = 0x10000 + (((unsigned long)unit - 0xd800) << 10) +
				     ((unsigned long)low - 0xdc00);
				r += 7;
			} else {
				cp = 0xfffd;
			}
		} else if (unit >= 0xdc00 && unit < 0xe000) {
			cp = 0xfffd;
		}
		if (cp)
			w += put_utf8(b->data + w, cp);
	}
	b->len = w;
	if (b->data && b->cap > w)
		b->data[w] = '\0';
}

/* What a rich text walk fills: the text of the <t>s of an <si> or <is>. */
struct rich_walk {
	struct tr_buf *out;
	bool in_t;
};

static int on_rich_t(void *ctx, struct tr_office_xml *xml)
{
	struct rich_walk *w = ctx;

	w->in_t = !tr_office_xml_empty(xml);
	return 0;
}

static int on_rich_t_end(void *ctx, struct tr_office_xml *xml)
{
	struct rich_walk *w = ctx;

	(void)xml;
	w->in_t = false;
	return 0;
}

static int on_rich_text(void *ctx, struct tr_office_xml *xml, const char *text)
{
	struct rich_walk *w = ctx;

	(void)xml;
	return w->in_t && tr_buf_append(w->out, text, strlen(text)) < 0 ? -1 : 0;
}

/* Collects the text of the <si> or <is> element the reader stands on (its <t>s, not the
 * phonetic <rPh>) into out, its _xHHHH_ escapes decoded. Returns 1, or -1 on failure. */
static int rich_text(struct tr_office_xml *xml, struct tr_buf *out)
{
	static const struct tr_office_rule rules[] = {
		{"rPh", tr_office_on_skip, NULL},
		{"t", on_rich_t, on_rich_t_end},
	};
	struct rich_walk w = {.out = out};
	const struct tr_office_walk walk = {rules, 2, on_rich_text, &w};
	size_t start = out->len;

	if (tr_office_walk(xml, &walk, false) < 0)
		return -1;
	decode_x_escapes(out, start);
	return 1;
}

/* Walks the workbook's part of relationship type rel (e.g. "/styles") with walk. Returns 0; 1
 * when the workbook has no such part (it is optional); -1 on error or out of memory. */
static int walk_workbook_part(struct xlsx *x, const char *rel, const struct tr_office_walk *walk)
{
	char *part = workbook_part(x, rel);
	int rc;

	if (!part)
		return x->z->oom || x->z->error ? -1 : 1;
	rc = tr_office_walk_part(x->z, part, false, NULL, walk);
	free(part);
	return rc;
}

static int on_si(void *ctx, struct tr_office_xml *xml)
{
	struct xlsx *x = ctx;

	if (grow((void **)&x->strings, &x->cap_strings, x->n_strings, sizeof(*x->strings)) < 0)
		return oom(x), -1;
	x->strings[x->n_strings++] = x->pool.len;
	if (rich_text(xml, &x->pool) < 0 || tr_buf_append(&x->pool, "", 1) < 0)
		return -1;
	return 0;
}

static int load_strings(struct xlsx *x)
{
	static const struct tr_office_rule rules[] = {{"si", on_si, NULL}};
	const struct tr_office_walk walk = {rules, 1, NULL, x};
	int rc = walk_workbook_part(x, "/sharedStrings", &walk);

	if (x->pool.oom)
		oom(x);
	return rc < 0 ? -1 : 0;
}

static int on_cell_xfs(void *ctx, struct tr_office_xml *xml)
{
	struct xlsx *x = ctx;

	x->in_xfs = !tr_office_xml_empty(xml);
	return 0;
}

static int on_cell_xfs_end(void *ctx, struct tr_office_xml *xml)
{
	struct xlsx *x = ctx;

	(void)xml;
	x->in_xfs = false;
	return 0;
}

static int on_xf(void *ctx, struct tr_office_xml *xml)
{
	struct xlsx *x = ctx;
	char *id;

	if (!x->in_xfs)
		return 0;
	if (grow((void **)&x->xf_fmt, &x->cap_xf, x->n_xf, sizeof(*x->xf_fmt)) < 0)
		return oom(x), -1;
	id = tr_office_xml_attr(xml, "numFmtId");
	x->xf_fmt[x->n_xf++] = id ? (unsigned)strtoul(id, NULL, 10) : 0;
	free(id);
	return 0;
}

static int on_num_fmt(void *ctx, struct tr_office_xml *xml)
{
	struct xlsx *x = ctx;
	struct numfmt *grown = realloc(x->fmts, (x->n_fmts + 1) * sizeof(*grown));
	char *id, *code;

	if (!grown)
		return oom(x), -1;
	x->fmts = grown;
	id = tr_office_xml_attr(xml, "numFmtId");
	code = tr_office_xml_attr(xml, "formatCode");
	if (id && code)
		x->fmts[x->n_fmts++] = (struct numfmt){(unsigned)strtoul(id, NULL, 10), code};
	else
		free(code);
	free(id);
	return 0;
}

static int load_styles(struct xlsx *x)
{
	static const struct tr_office_rule rules[] = {
		{"cellXfs", on_cell_xfs, on_cell_xfs_end},
		{"xf", on_xf, NULL},
		{"numFmt", on_num_fmt, NULL},
	};
	const struct tr_office_walk walk = {rules, 3, NULL, x};
	int rc = walk_workbook_part(x, "/styles", &walk);

	if (rc)
		return rc > 0 ? 0 : -1;
	return x->z->oom ? -1 : 0;
}

/* The number format code of cell style s (NULL: General). */
static const char *style_format(const struct xlsx *x, const char *s)
{
	unsigned id;

	if (!s)
		return NULL;
	id = (unsigned)strtoul(s, NULL, 10);
	if (id >= x->n_xf)
		return NULL;
	id = x->xf_fmt[id];
	for (size_t i = 0; i < x->n_fmts; i++)
		if (x->fmts[i].id == id)
			return x->fmts[i].code;
	return tr_numfmt_builtin(id);
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
	return rich_text(xml, &w->inline_text) < 0 ? -1 : 0;
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
			tr_numfmt_format(shown, d, style_format(x, style), x->date1904);
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
		oom(x);
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
		oom(x);
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
		return oom(x), -1;
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
		return oom(x), -1;
	rc = tr_office_walk_part(x->z, sheet->part, true, NULL, &walk);
	if (rc == 0)
		rc = pass_tail(&p);
	for (uint32_t c = 0; c < p.n_cols; c++)
		tr_buf_free(&p.row.cells[c]);
	free(p.row.cells);
	tr_buf_free(&p.line);
	if (p.merged.oom || x->out.oom)
		oom(x);
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
		return oom(x), -1;
	res->meta.n_sheets = x->n_sheets;
	for (size_t i = 0; i < x->n_sheets; i++) {
		struct tr_sheet_meta *m = &res->meta.sheets[i];

		uint32_t c1, r1, c2, r2;
		bool ranged = parse_range(x->sheets[i].dim, &c1, &r1, &c2, &r2);

		m->name = strdup(x->sheets[i].name ? x->sheets[i].name : "");
		m->range = ranged ? strdup(x->sheets[i].dim) : NULL; /* not "1:4" */
		m->hidden = x->sheets[i].hidden;
		if (!m->name || (ranged && !m->range))
			return oom(x), -1;
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
	if (load_workbook(&x) < 0 || load_styles(&x) < 0)
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
	if (load_strings(&x) < 0)
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
