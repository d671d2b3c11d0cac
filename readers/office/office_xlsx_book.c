/* SPDX-License-Identifier: MIT */
/* office_xlsx_book.c - what an Excel workbook holds besides its sheets' cells: the sheet list
 * (workbook.xml), the shared strings and the cell styles' number formats. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"

bool tr_xlsx_oom(struct xlsx *x)
{
	x->z->oom = true;
	return false;
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
		return tr_xlsx_oom(x), -1;
	}
	x->sheets = grown;
	x->sheets[x->n_sheets++] = sheet;
	return 0;
}

int tr_xlsx_load_workbook(struct xlsx *x)
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
		tr_xlsx_oom(x);
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
int tr_xlsx_rich_text(struct tr_office_xml *xml, struct tr_buf *out)
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
		return tr_xlsx_oom(x), -1;
	x->strings[x->n_strings++] = x->pool.len;
	if (tr_xlsx_rich_text(xml, &x->pool) < 0 || tr_buf_append(&x->pool, "", 1) < 0)
		return -1;
	return 0;
}

int tr_xlsx_load_strings(struct xlsx *x)
{
	static const struct tr_office_rule rules[] = {{"si", on_si, NULL}};
	const struct tr_office_walk walk = {rules, 1, NULL, x};
	int rc = walk_workbook_part(x, "/sharedStrings", &walk);

	if (x->pool.oom)
		tr_xlsx_oom(x);
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
		return tr_xlsx_oom(x), -1;
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
		return tr_xlsx_oom(x), -1;
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

int tr_xlsx_load_styles(struct xlsx *x)
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
const char *tr_xlsx_style_format(const struct xlsx *x, const char *s)
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
