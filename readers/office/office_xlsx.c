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

static int load_workbook(struct xlsx *x)
{
	struct tr_office_rels rels;
	struct tr_office_xml xml;
	int rc;

	if (tr_office_rels_load(x->z, x->d->main_part, &rels) < 0)
		return -1;
	rc = tr_office_xml_open(&xml, x->z, x->d->main_part);
	if (rc > 0)
		rc = tr_office_zip_fail(x->z, TR_E_CORRUPT, "the part %s is missing",
					x->d->main_part);
	while (rc == 0 && (rc = tr_office_xml_next(&xml)) == 1) {
		rc = 0;
		if (tr_office_xml_start(&xml, "workbookPr")) {
			char *v = tr_office_xml_attr(&xml, "date1904");

			x->date1904 = v && (!strcmp(v, "1") || !strcmp(v, "true"));
			free(v);
		} else if (tr_office_xml_start(&xml, "sheet")) {
			char *id = tr_office_xml_attr(&xml, "id");
			char *state = tr_office_xml_attr(&xml, "state");
			const struct tr_office_rel *rel = tr_office_rels_find(&rels, id);
			struct xlsx_sheet sheet = {
				.name = tr_office_xml_attr(&xml, "name"),
				.part = rel && !rel->external ? strdup(rel->target) : NULL,
				.hidden = state && strcmp(state, "visible") != 0,
			};
			struct xlsx_sheet *grown = realloc(x->sheets,
							   (x->n_sheets + 1) * sizeof(*grown));

			free(id);
			free(state);
			if (!grown || x->z->oom) {
				free(sheet.name);
				free(sheet.part);
				rc = -1;
				oom(x);
				break;
			}
			x->sheets = grown;
			x->sheets[x->n_sheets++] = sheet;
		}
	}
	tr_office_xml_close(&xml);
	tr_office_rels_free(&rels);
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

/* Collects the text of an <si> or <is> element (its <t>s, not the phonetic <rPh>) into out,
 * its _xHHHH_ escapes decoded. */
static int rich_text(struct tr_office_xml *xml, const char *element, struct tr_buf *out)
{
	int depth = tr_office_xml_depth(xml), rc;
	size_t start = out->len;
	bool in_t = false;

	if (tr_office_xml_empty(xml))
		return 1;
	while ((rc = tr_office_xml_next(xml)) == 1) {
		int type = tr_office_xml_type(xml);
		const char *text;

		if (type == XML_READER_TYPE_END_ELEMENT && tr_office_xml_depth(xml) == depth &&
		    !strcmp(tr_office_xml_name(xml), element)) {
			decode_x_escapes(out, start);
			return 1;
		}
		if (tr_office_xml_start(xml, "rPh")) {
			if (tr_office_xml_skip(xml) < 0)
				return -1;
		} else if (tr_office_xml_start(xml, "t")) {
			in_t = !tr_office_xml_empty(xml);
		} else if (type == XML_READER_TYPE_END_ELEMENT &&
			   !strcmp(tr_office_xml_name(xml), "t")) {
			in_t = false;
		} else if (in_t && (text = tr_office_xml_text(xml)) &&
			   tr_buf_append(out, text, strlen(text)) < 0) {
			return -1;
		}
	}
	return rc;
}

/* Opens the workbook's part of relationship type rel (e.g. "/styles") in xml. Returns 0; 1 when
 * the workbook has no such part (it is optional); -1 on error or out of memory. */
static int open_workbook_part(struct xlsx *x, const char *rel, struct tr_office_xml *xml)
{
	char *part = workbook_part(x, rel);
	int rc;

	if (!part)
		return x->z->oom || x->z->error ? -1 : 1;
	rc = tr_office_xml_open(xml, x->z, part);
	free(part);
	return rc;
}

static int load_strings(struct xlsx *x)
{
	struct tr_office_xml xml;
	size_t cap = 0;
	int rc;

	rc = open_workbook_part(x, "/sharedStrings", &xml);
	if (rc)
		return rc > 0 ? 0 : -1;
	while ((rc = tr_office_xml_next(&xml)) == 1) {
		if (!tr_office_xml_start(&xml, "si"))
			continue;
		if (grow((void **)&x->strings, &cap, x->n_strings, sizeof(*x->strings)) < 0) {
			rc = -1;
			oom(x);
			break;
		}
		x->strings[x->n_strings++] = x->pool.len;
		if (rich_text(&xml, "si", &x->pool) < 0 || tr_buf_append(&x->pool, "", 1) < 0) {
			rc = -1;
			break;
		}
	}
	tr_office_xml_close(&xml);
	if (x->pool.oom)
		oom(x);
	return rc < 0 ? -1 : 0;
}

static int load_styles(struct xlsx *x)
{
	struct tr_office_xml xml;
	bool in_xfs = false;
	size_t cap = 0;
	int rc;

	rc = open_workbook_part(x, "/styles", &xml);
	if (rc)
		return rc > 0 ? 0 : -1;
	while ((rc = tr_office_xml_next(&xml)) == 1) {
		char *id, *code;

		if (tr_office_xml_start(&xml, "cellXfs")) {
			in_xfs = !tr_office_xml_empty(&xml);
		} else if (tr_office_xml_end(&xml, "cellXfs")) {
			in_xfs = false;
		} else if (in_xfs && tr_office_xml_start(&xml, "xf")) {
			if (grow((void **)&x->xf_fmt, &cap, x->n_xf, sizeof(*x->xf_fmt)) < 0) {
				rc = -1;
				oom(x);
				break;
			}
			id = tr_office_xml_attr(&xml, "numFmtId");
			x->xf_fmt[x->n_xf++] = id ? (unsigned)strtoul(id, NULL, 10) : 0;
			free(id);
		} else if (tr_office_xml_start(&xml, "numFmt")) {
			struct numfmt *grown = realloc(x->fmts, (x->n_fmts + 1) * sizeof(*grown));

			if (!grown) {
				rc = -1;
				oom(x);
				break;
			}
			x->fmts = grown;
			id = tr_office_xml_attr(&xml, "numFmtId");
			code = tr_office_xml_attr(&xml, "formatCode");
			if (id && code)
				x->fmts[x->n_fmts++] = (struct numfmt){
					(unsigned)strtoul(id, NULL, 10), code};
			else
				free(code);
			free(id);
		}
	}
	tr_office_xml_close(&xml);
	return rc < 0 || x->z->oom ? -1 : 0;
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

/* Reads the <c> element the reader stands on into the row: the value by its type and format. */
static int read_cell(struct xlsx *x, struct tr_office_xml *xml, uint32_t *next_col,
		     uint32_t first_col, uint32_t n_cols, struct row *row)
{
	char *ref = tr_office_xml_attr(xml, "r"), *type = tr_office_xml_attr(xml, "t");
	char *style = tr_office_xml_attr(xml, "s");
	struct tr_buf value = {0}, inline_text = {0}, shown = {0};
	uint32_t col = *next_col, r;
	int depth = tr_office_xml_depth(xml), rc = 1;
	bool in_v = false, has_v = false, has_is = false;

	if (ref && !parse_ref(ref, &col, &r))
		col = *next_col;
	*next_col = col + 1;
	if (!tr_office_xml_empty(xml)) {
		while ((rc = tr_office_xml_next(xml)) == 1) {
			int t = tr_office_xml_type(xml);
			const char *text;

			if (t == XML_READER_TYPE_END_ELEMENT && tr_office_xml_depth(xml) == depth)
				break;
			if (tr_office_xml_start(xml, "v")) {
				in_v = !tr_office_xml_empty(xml);
				has_v = true;
			} else if (tr_office_xml_end(xml, "v")) {
				in_v = false;
			} else if (tr_office_xml_start(xml, "is")) {
				has_is = true;
				if (rich_text(xml, "is", &inline_text) < 0)
					rc = -1;
			} else if (tr_office_xml_start(xml, "f")) {
				if (tr_office_xml_skip(xml) < 0)
					rc = -1;
			} else if (in_v && (text = tr_office_xml_text(xml))) {
				if (tr_buf_append(&value, text, strlen(text)) < 0)
					rc = -1;
			}
			if (rc < 0)
				break;
		}
	}
	/* An inline string is its <is> alone (a <v> beside it is not shown, as Excel and openpyxl
	 * do); an empty <v/> is no value, never shared string 0. */
	if ((type && !strcmp(type, "inlineStr")) || (has_is && !has_v)) {
		tr_buf_free(&value);
		value = inline_text;
		memset(&inline_text, 0, sizeof(inline_text));
		has_v = has_is;
	} else if (has_v && !value.len && !(type && !strcmp(type, "str"))) {
		has_v = false;
	}
	if (rc >= 0 && has_v && value.len && (col < first_col || col - first_col >= n_cols))
		row->outside = true;
	if (rc >= 0 && has_v && col >= first_col && col - first_col < n_cols) {
		const char *v = value.data ? value.data : "";

		if (type && !strcmp(type, "s")) {
			unsigned long i = strtoul(v, NULL, 10);

			if (i < x->n_strings)
				tr_buf_append(&shown, x->pool.data + x->strings[i],
					      strlen(x->pool.data + x->strings[i]));
			else
				tr_buf_printf(&shown, "#REF! (shared string %lu missing)", i);
		} else if (type && !strcmp(type, "b")) {
			tr_buf_printf(&shown, "%s", strcmp(v, "0") ? "TRUE" : "FALSE");
		} else if (type && (!strcmp(type, "str") || !strcmp(type, "inlineStr") ||
				    !strcmp(type, "e") || !strcmp(type, "d"))) {
			tr_buf_append(&shown, v, strlen(v));
		} else {
			char *end;
			double d = strtod(v, &end);

			if (end != v && *end == '\0')
				tr_numfmt_format(&shown, d, style_format(x, style), x->date1904);
			else
				tr_buf_append(&shown, v, strlen(v));
		}
		struct tr_buf *cell = &row->cells[col - first_col];

		cell->len = 0;
		if (shown.len)
			tr_office_cell_append_capped(cell, shown.data, shown.len,
						     x->d->opts->max_line_chars);
		if (shown.oom || cell->oom)
			rc = -1;
		if (shown.len && col - first_col + 1 > row->used)
			row->used = col - first_col + 1;
	}
	if (value.oom || inline_text.oom)
		rc = -1;
	if (rc < 0 && x->z->error == TR_OK)
		oom(x);
	tr_buf_free(&value);
	tr_buf_free(&inline_text);
	tr_buf_free(&shown);
	free(ref);
	free(type);
	free(style);
	return rc < 0 ? -1 : 0;
}

/* Reads the sheet's <dimension> (the reader stops at <sheetData>). */
static int read_dimension(struct xlsx *x, struct xlsx_sheet *sheet)
{
	struct tr_office_xml xml;
	int rc;

	if (!sheet->part)
		return 0;
	rc = tr_office_xml_open(&xml, x->z, sheet->part);
	if (rc)
		return rc > 0 ? 0 : -1;
	while ((rc = tr_office_xml_next(&xml)) == 1) {
		if (tr_office_xml_start(&xml, "dimension")) {
			free(sheet->dim);
			sheet->dim = tr_office_xml_attr(&xml, "ref");
		} else if (tr_office_xml_start(&xml, "sheetData")) {
			break;
		}
	}
	tr_office_xml_close(&xml);
	return rc < 0 ? -1 : 0;
}

/* Scans the whole sheet for its used range when it has no <dimension>. */
static int scan_range(struct xlsx *x, struct xlsx_sheet *sheet)
{
	struct tr_office_xml xml;
	uint32_t c1 = UINT32_MAX, c2 = 0, col = 0;
	uint64_t r1 = UINT64_MAX, r2 = 0, row = 0;
	char a[16], b[16];
	int rc = tr_office_xml_open(&xml, x->z, sheet->part);

	sheet->scanned = true;
	if (rc)
		return rc > 0 ? 0 : -1;
	while ((rc = tr_office_xml_next(&xml)) == 1) {
		if (tr_office_xml_start(&xml, "row")) {
			row = row_number(&xml, row);
			col = 0;
		} else if (tr_office_xml_start(&xml, "c")) {
			char *ref = tr_office_xml_attr(&xml, "r");
			uint32_t cr;

			col++;
			if (ref)
				parse_ref(ref, &col, &cr);
			free(ref);
			if (row == 0 || row > MAX_ROWS || col == 0 || col > MAX_COLUMNS)
				continue;
			c1 = col < c1 ? col : c1;
			c2 = col > c2 ? col : c2;
			r1 = row < r1 ? row : r1;
			r2 = row > r2 ? row : r2;
		}
	}
	tr_office_xml_close(&xml);
	if (rc < 0)
		return -1;
	free(sheet->dim);
	sheet->dim = NULL;
	if (c2 == 0)
		return 0;
	tr_office_column_name(c1, a);
	tr_office_column_name(c2, b);
	if (asprintf(&sheet->dim, "%s%" PRIu64 ":%s%" PRIu64, a, r1, b, r2) < 0) {
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

/* Writes sheet number index (1-based) from row from_row on, until the caps, with sheet->dim as
 * its range; sets *outside when a value lies outside that range. */
static int render_pass(struct xlsx *x, size_t index, uint32_t from_row, bool *outside)
{
	struct xlsx_sheet *sheet = &x->sheets[index - 1];
	const struct tr_options *opts = x->d->opts;
	uint32_t c1 = 1, r1 = 1, c2 = 1, r2 = 1, n_cols, hidden_cols = 0;
	uint64_t row_no = 0, merged_count = 0, past_rows = 0;
	struct tr_office_xml xml;
	struct tr_buf line = {0}, merged = {0};
	struct row row = {0};
	bool ranged, any_row = false, header = false, chart = false, root = false;
	int rc;

	*outside = false;
	ranged = parse_range(sheet->dim, &c1, &r1, &c2, &r2);
	n_cols = ranged ? c2 - c1 + 1 : 0;
	row.cells = calloc(n_cols ? n_cols : 1, sizeof(*row.cells));
	if (!row.cells)
		return oom(x), -1;
	rc = tr_office_xml_open(&xml, x->z, sheet->part);
	if (rc > 0)
		rc = tr_office_zip_fail(x->z, TR_E_CORRUPT, "the part %s is missing", sheet->part);
	while (rc == 0 && (rc = tr_office_xml_next(&xml)) == 1) {
		rc = 0;
		if (!root && tr_office_xml_type(&xml) == XML_READER_TYPE_ELEMENT) {
			root = true;
			chart = !strcmp(tr_office_xml_name(&xml), "chartsheet");
		}
		if (tr_office_xml_start(&xml, "col")) {
			char *h = tr_office_xml_attr(&xml, "hidden"),
			     *mn = tr_office_xml_attr(&xml, "min"),
			     *mx = tr_office_xml_attr(&xml, "max");

			if (h && (!strcmp(h, "1") || !strcmp(h, "true")) && mn && mx && ranged) {
				unsigned long lo = strtoul(mn, NULL, 10),
					      hi = strtoul(mx, NULL, 10);

				lo = lo < c1 ? c1 : lo;
				hi = hi > c2 ? c2 : hi;
				if (hi >= lo)
					hidden_cols += (uint32_t)(hi - lo + 1);
			}
			free(h);
			free(mn);
			free(mx);
		} else if (tr_office_xml_start(&xml, "sheetData")) {
			header = true;
			rc = sheet_header(x, index, ranged ? sheet->dim : "empty", c1, n_cols,
					  hidden_cols, from_row);
		} else if (tr_office_xml_start(&xml, "row")) {
			char *h = tr_office_xml_attr(&xml, "hidden");
			bool hidden = h && (!strcmp(h, "1") || !strcmp(h, "true"));
			uint32_t next_col = c1;
			int depth = tr_office_xml_depth(&xml);

			row_no = row_number(&xml, row_no);
			free(h);
			if (row_no > MAX_ROWS && !tr_office_xml_empty(&xml))
				past_rows++;
			if (row_no < from_row || row_no > MAX_ROWS || tr_office_xml_empty(&xml)) {
				rc = tr_office_xml_skip(&xml) < 0 ? -1 : 0;
				continue;
			}
			for (uint32_t c = 0; c < row.used; c++)
				row.cells[c].len = 0;
			row.used = 0;
			while (rc == 0 && (rc = tr_office_xml_next(&xml)) == 1) {
				rc = 0;
				if (tr_office_xml_type(&xml) == XML_READER_TYPE_END_ELEMENT &&
				    tr_office_xml_depth(&xml) == depth)
					break;
				if (tr_office_xml_start(&xml, "c"))
					rc = read_cell(x, &xml, &next_col, c1, n_cols, &row);
			}
			if (row.outside || (row.used && (row_no < r1 || row_no > r2)))
				*outside = true;
			if (rc != 0 || row.used == 0)
				continue;
			line.len = 0;
			if (format_row(&line, (uint32_t)row_no, hidden, &row) < 0) {
				rc = -1;
				oom(x);
				break;
			}
			if (x->rows_shown > 0 && (x->rows_shown >= opts->max_lines ||
						  x->out.len + line.len > opts->max_output)) {
				x->capped = true;
				x->cap_sheet = index;
				x->cap_row = row_no;
				break;
			}
			rc = tr_buf_append(&x->out, line.data, line.len);
			x->rows_shown++;
			any_row = true;
		} else if (tr_office_xml_start(&xml, "mergeCell")) {
			char *ref = tr_office_xml_attr(&xml, "ref");

			if (ref)
				rc = tr_buf_printf(&merged, "%s%s", merged_count++ ? ", " : "",
						   ref);
			free(ref);
		}
	}
	/* A chart sheet (or a sheet without <sheetData>) has a header all the same, so that the
	 * sheets after it keep their numbers. */
	if (rc == 0 && !header)
		rc = sheet_header(x, index, chart ? "chart sheet" : "empty", c1, 0, 0, from_row);
	if (rc == 0 && !x->capped) {
		if (!any_row)
			rc = tr_buf_append(&x->out, "(no rows with values)\n", 22);
		if (rc == 0 && merged_count)
			rc = tr_buf_printf(&x->out, "Merged cells (value in the first cell): %s\n",
					   merged.data);
		if (rc == 0 && past_rows)
			rc = tr_buf_printf(&x->out, "(%" PRIu64 " row%s past row %d left out)\n",
					   past_rows, past_rows == 1 ? "" : "s", MAX_ROWS);
	}
	tr_office_xml_close(&xml);
	for (uint32_t c = 0; c < n_cols; c++)
		tr_buf_free(&row.cells[c]);
	free(row.cells);
	tr_buf_free(&line);
	if (merged.oom || x->out.oom)
		oom(x);
	tr_buf_free(&merged);
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
