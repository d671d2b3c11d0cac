/* SPDX-License-Identifier: MIT */
/* office_odf.c - OpenDocument text (.odt): content.xml streamed once, rendered as .docx is
 * (headings, lists, tables, links, notes, tracked changes); and the ODF space and table
 * helpers office_odp.c shares. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"

#define MAX_LIST_DEPTH 16

/* One level of a list style of content.xml's automatic styles. */
struct odf_list_level {
	char *style; /* owned */
	int level;   /* 1-based */
	bool numbered;
};

struct odt {
	const struct tr_office_doc *d;
	struct tr_office_zip *z;
	struct tr_office_rendering r;
	struct odf_list_level *levels;
	size_t n_levels;

	struct tr_buf para, notes, note, citation, author;
	int heading;
	int list_depth;
	const char *list_style[MAX_LIST_DEPTH]; /* borrowed from levels[] or NULL */
	unsigned counts[MAX_LIST_DEPTH];
	bool item_first; /* the next paragraph is the first of its list item */
	int tbl_depth;
	struct tr_office_table table;
	char *href;
	size_t link_start;
	int note_body, in_citation, annotation, creator;
	int64_t ins, del;
	unsigned comments;
	char *list_style_name; /* the text:list-style being read, owned */
};

static bool numbered_level(const struct odt *o, const char *style, int level)
{
	for (size_t i = 0; style && i < o->n_levels; i++)
		if (o->levels[i].level == level && !strcmp(o->levels[i].style, style))
			return o->levels[i].numbered;
	return false;
}

/* The buffer text nodes go to now. */
static struct tr_buf *target(struct odt *o)
{
	if (o->in_citation)
		return &o->citation;
	if (o->annotation)
		return o->creator ? &o->author : &o->note;
	if (o->note_body)
		return &o->note;
	return &o->para;
}

static int end_paragraph(struct odt *o)
{
	char prefix[64] = "";
	bool list = o->list_depth > 0 && !o->heading;
	int rc = 0;

	if (o->tbl_depth) {
		if (!tr_office_blank(&o->para))
			rc = tr_office_cell_paragraph(&o->table, &o->para);
	} else if (!tr_office_blank(&o->para)) {
		int depth = o->list_depth < MAX_LIST_DEPTH ? o->list_depth : MAX_LIST_DEPTH;

		if (o->heading) {
			int h = o->heading > 9 ? 9 : o->heading;

			memset(prefix, '#', (size_t)h);
			prefix[h] = ' ';
			prefix[h + 1] = '\0';
		} else if (list && o->item_first) {
			int indent = 2 * (depth - 1);

			if (numbered_level(o, o->list_style[depth - 1], depth)) {
				o->counts[depth - 1]++;
				snprintf(prefix, sizeof(prefix), "%*s%u. ", indent, "",
					 o->counts[depth - 1]);
			} else {
				snprintf(prefix, sizeof(prefix), "%*s- ", indent, "");
			}
			o->item_first = false;
		} else if (list) {
			snprintf(prefix, sizeof(prefix), "%*s", 2 * depth, "");
		}
		rc = tr_office_rendering_block(&o->r, prefix, o->para.data, o->para.len, list);
	}
	o->para.len = 0;
	o->heading = 0;
	return rc;
}

/* Appends the note or comment just read to the notes, its reference to the paragraph. */
static int end_note(struct odt *o, bool comment)
{
	char mark[32];
	int rc;

	if (comment)
		snprintf(mark, sizeof(mark), "c%u", o->comments++);
	else
		snprintf(mark, sizeof(mark), "%.*s",
			 (int)(o->citation.len < 20 ? o->citation.len : 20),
			 o->citation.data ? o->citation.data : "");
	rc = tr_buf_printf(&o->para, "[^%s]", mark);
	if (rc == 0)
		rc = tr_buf_printf(&o->notes, "[^%s]: %.*s%s%.*s\n", mark, (int)o->author.len,
				   o->author.data ? o->author.data : "", o->author.len ? ": " : "",
				   (int)o->note.len, o->note.data ? o->note.data : "");
	o->note.len = o->citation.len = o->author.len = 0;
	return rc;
}

static int load_list_style(struct odt *o, struct tr_office_xml *x, const char *style)
{
	const char *name = tr_office_xml_name(x);
	char *level = tr_office_xml_attr(x, "level");
	struct odf_list_level *grown = realloc(o->levels, (o->n_levels + 1) * sizeof(*grown));
	char *copy = strdup(style);

	if (!grown || !copy) {
		free(level);
		free(copy);
		if (grown)
			o->levels = grown;
		return -1;
	}
	o->levels = grown;
	o->levels[o->n_levels++] = (struct odf_list_level){
		.style = copy,
		.level = level ? atoi(level) : 1,
		.numbered = !strcmp(name, "list-level-style-number"),
	};
	free(level);
	return 0;
}

int tr_office_odf_space(struct tr_office_xml *x, struct tr_buf *out)
{
	const char *name = tr_office_xml_name(x);

	if (tr_office_xml_type(x) != XML_READER_TYPE_ELEMENT)
		return 0;
	if (!strcmp(name, "s")) {
		char *c = tr_office_xml_attr(x, "c");
		long n = c ? strtol(c, NULL, 10) : 1;
		int rc = 0;

		free(c);
		for (long i = 0; i < (n > 1000 ? 1000 : n) && rc == 0; i++)
			rc = tr_buf_append(out, " ", 1);
		return rc < 0 ? -1 : 1;
	}
	if (!strcmp(name, "tab"))
		return tr_buf_append(out, "\t", 1) < 0 ? -1 : 1;
	if (!strcmp(name, "line-break"))
		return tr_buf_append(out, "\n", 1) < 0 ? -1 : 1;
	return 0;
}

int tr_office_odf_table(struct tr_office_xml *x, int *depth, struct tr_office_table *table)
{
	const char *name = tr_office_xml_name(x);

	if (tr_office_xml_type(x) != XML_READER_TYPE_ELEMENT)
		return 0;
	if (!strcmp(name, "table")) {
		if (!tr_office_xml_empty(x) && ++*depth == 1)
			tr_office_table_free(table);
		return 1;
	}
	if (*depth == 1 && !strcmp(name, "table-row"))
		return tr_office_table_row(table) < 0 ? -1 : 1;
	if (*depth == 1 && (!strcmp(name, "table-cell") || !strcmp(name, "covered-table-cell")))
		return tr_office_table_cell(table) < 0 ? -1 : 1;
	return 0;
}

static int on_list_style(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	free(o->list_style_name);
	o->list_style_name = tr_office_xml_attr(x, "name");
	return 0;
}

static int on_list_level_style(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	return o->list_style_name ? load_list_style(o, x, o->list_style_name) : 0;
}

static int on_insertion(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	(void)x;
	o->ins++;
	return 0;
}

static int on_deletion(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	(void)x;
	o->del++;
	return 0;
}

/* The changed regions: what was deleted is kept here; count, never show. */
static int on_tracked_changes(void *ctx, struct tr_office_xml *x)
{
	static const struct tr_office_rule rules[] = {
		{"insertion", on_insertion, NULL},
		{"deletion", on_deletion, NULL},
	};
	const struct tr_office_walk walk = {rules, 2, NULL, ctx};

	return tr_office_walk(x, &walk, false);
}

static int on_odt_paragraph(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	if (o->note_body || o->annotation) {
		struct tr_buf *t = target(o);

		if (t->len)
			return tr_buf_append(t, " ", 1);
		return 0;
	}
	o->para.len = 0;
	if (!strcmp(tr_office_xml_name(x), "h")) {
		char *level = tr_office_xml_attr(x, "outline-level");

		o->heading = level ? atoi(level) : 1;
		if (o->heading < 1)
			o->heading = 1;
		free(level);
	}
	return tr_office_xml_empty(x) ? end_paragraph(o) : 0;
}

static int on_odt_paragraph_end(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	(void)x;
	return !o->note_body && !o->annotation ? end_paragraph(o) : 0;
}

static int on_list(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;
	char *style;

	if (tr_office_xml_empty(x))
		return 0;
	style = tr_office_xml_attr(x, "style-name");
	if (o->list_depth < MAX_LIST_DEPTH) {
		const char *borrowed = o->list_depth ? o->list_style[o->list_depth - 1] : NULL;

		for (size_t i = 0; style && i < o->n_levels; i++)
			if (!strcmp(o->levels[i].style, style))
				borrowed = o->levels[i].style;
		o->list_style[o->list_depth] = borrowed;
		o->counts[o->list_depth] = 0;
	}
	free(style);
	o->list_depth++;
	return 0;
}

static int on_list_end(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	(void)x;
	if (o->list_depth)
		o->list_depth--;
	return 0;
}

static int on_list_item(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	(void)x;
	o->item_first = true;
	return 0;
}

static int on_space(void *ctx, struct tr_office_xml *x)
{
	return tr_office_odf_space(x, target(ctx)) < 0 ? -1 : 0;
}

static int on_link(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	if (o->note_body || o->annotation)
		return 0;
	free(o->href);
	o->href = tr_office_xml_attr(x, "href");
	o->link_start = o->para.len;
	if (o->href && o->href[0] == '#') {
		/* A link inside the document (#1.Introduction|outline): its text only, as .docx
		 * shows w:hyperlink w:anchor. */
		free(o->href);
		o->href = NULL;
	}
	return 0;
}

static int on_link_end(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	(void)x;
	if (o->href && !o->note_body && !o->annotation)
		return tr_office_link_end(&o->para, o->link_start, &o->href);
	return 0;
}

/* The depth counter of an element that sends text elsewhere: note-citation, note-body,
 * annotation, creator (within an annotation). */
static int *odt_counter(struct odt *o, const char *name)
{
	if (!strcmp(name, "note-citation"))
		return &o->in_citation;
	if (!strcmp(name, "note-body"))
		return &o->note_body;
	if (!strcmp(name, "annotation"))
		return &o->annotation;
	return &o->creator;
}

static int on_counted(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;
	const char *name = tr_office_xml_name(x);

	if (!strcmp(name, "annotation") && tr_office_xml_empty(x))
		return 0;
	if (!strcmp(name, "creator") && !o->annotation)
		return 0;
	++*odt_counter(o, name);
	return 0;
}

static int on_counted_end(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;
	const char *name = tr_office_xml_name(x);
	int *counter = odt_counter(o, name);

	if (*counter && --*counter == 0 && !strcmp(name, "annotation"))
		return end_note(o, true);
	return 0;
}

static int on_note_end(void *ctx, struct tr_office_xml *x)
{
	(void)x;
	return end_note(ctx, false);
}

static int on_date(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	return o->annotation ? tr_office_on_skip(ctx, x) : 0;
}

static int on_image(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;
	char *href;
	int rc = 0;

	if (o->note_body || o->annotation)
		return 0;
	href = tr_office_xml_attr(x, "href");
	if (href && strncmp(href, "http", 4) != 0) {
		char *part = tr_office_resolve("content.xml", href);

		rc = part ? tr_office_rendering_picture(&o->r, part, &o->para) : 0;
		free(part);
	}
	free(href);
	return rc;
}

static int on_odt_table(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	return tr_office_odf_table(x, &o->tbl_depth, &o->table) < 0 ? -1 : 0;
}

static int on_odt_table_end(void *ctx, struct tr_office_xml *x)
{
	struct odt *o = ctx;

	(void)x;
	if (o->tbl_depth && --o->tbl_depth == 0)
		return tr_office_rendering_table(&o->r, &o->table);
	return 0;
}

static int on_odt_text(void *ctx, struct tr_office_xml *x, const char *text)
{
	if (tr_office_xml_type(x) == XML_READER_TYPE_WHITESPACE)
		return 0;
	return tr_buf_append(target(ctx), text, strlen(text));
}

/* The elements of content.xml of a text document. */
static const struct tr_office_rule odt_rules[] = {
	{"table", on_odt_table, on_odt_table_end},
	{"table-row", on_odt_table, NULL},
	{"table-cell", on_odt_table, NULL},
	{"covered-table-cell", on_odt_table, NULL},
	{"list-style", on_list_style, NULL},
	{"list-level-style-number", on_list_level_style, NULL},
	{"list-level-style-bullet", on_list_level_style, NULL},
	{"tracked-changes", on_tracked_changes, NULL},
	{"h", on_odt_paragraph, on_odt_paragraph_end},
	{"p", on_odt_paragraph, on_odt_paragraph_end},
	{"list", on_list, on_list_end},
	{"list-item", on_list_item, NULL},
	{"s", on_space, NULL},
	{"tab", on_space, NULL},
	{"line-break", on_space, NULL},
	{"a", on_link, on_link_end},
	{"note-citation", on_counted, on_counted_end},
	{"note-body", on_counted, on_counted_end},
	{"annotation", on_counted, on_counted_end},
	{"creator", on_counted, on_counted_end},
	{"note", NULL, on_note_end},
	{"date", on_date, NULL},
	{"image", on_image, NULL},
};

int tr_office_odt(const struct tr_office_doc *d, struct tr_result *res)
{
	struct odt o = {.d = d, .z = d->z};
	const struct tr_office_walk walk = {odt_rules, sizeof(odt_rules) / sizeof(odt_rules[0]),
					    on_odt_text, &o};
	int rc;

	res->type = TR_TYPE_DOCUMENT;
	rc = tr_office_walk_part(d->z, d->main_part, true, NULL, &walk);
	free(o.list_style_name);
	if (rc == 0 && o.notes.len)
		rc = tr_buf_printf(&o.r.out, "\n---\n%s", o.notes.data);
	if (rc == 0 && (o.para.oom || o.note.oom || o.notes.oom))
		rc = -1, d->z->oom = true;
	if (rc == 0)
		rc = tr_office_rendering_finish(d, &o.r, o.ins, o.del, res);
	tr_office_rendering_free(&o.r);
	for (size_t i = 0; i < o.n_levels; i++)
		free(o.levels[i].style);
	free(o.levels);
	tr_buf_free(&o.para);
	tr_buf_free(&o.notes);
	tr_buf_free(&o.note);
	tr_buf_free(&o.citation);
	tr_buf_free(&o.author);
	tr_office_table_free(&o.table);
	free(o.href);
	return rc < 0 ? -1 : 0;
}
