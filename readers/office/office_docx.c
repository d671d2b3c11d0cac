/* SPDX-License-Identifier: MIT */
/* office_docx.c - Word documents rendered as Markdown-like text (headings, lists, pipe tables,
 * links, notes at the end; tracked insertions shown, deletions left out), then windowed by lines
 * exactly as text files are (readers/text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"

/* Enters a w:txbxContent: the paragraph being read is put aside, the box's paragraphs are read
 * as blocks of their own (so they come before the rest of the paragraph that anchors them). */
static void enter_box(struct docx *dx)
{
	struct docx_host *h = &dx->hosts[dx->box_depth++];

	*h = (struct docx_host){
		.para = dx->para,
		.style = dx->style,
		.link_url = dx->link_url,
		.link_start = dx->link_start,
		.num_id = dx->num_id,
		.lvl = dx->lvl,
		.outline = dx->outline,
		.run_depth = dx->run_depth,
		.text_depth = dx->text_depth,
		.has_num = dx->has_num,
	};
	memset(&dx->para, 0, sizeof(dx->para));
	dx->style = dx->link_url = NULL;
	dx->num_id = dx->lvl = dx->outline = dx->run_depth = dx->text_depth = 0;
	dx->has_num = false;
}

/* Leaves a text box: the paragraph around it continues. */
static void leave_box(struct docx *dx)
{
	struct docx_host *h = &dx->hosts[--dx->box_depth];

	tr_buf_free(&dx->para);
	free(dx->style);
	free(dx->link_url);
	dx->para = h->para;
	dx->style = h->style;
	dx->link_url = h->link_url;
	dx->link_start = h->link_start;
	dx->num_id = h->num_id;
	dx->lvl = h->lvl;
	dx->outline = h->outline;
	dx->run_depth = h->run_depth;
	dx->text_depth = h->text_depth;
	dx->has_num = h->has_num;
}

/* Writes the finished paragraph outside tables as a heading, a list item or a paragraph. */
static int emit_paragraph(struct docx *dx)
{
	const struct docx_style *style = tr_docx_find_style(dx, dx->style);
	int heading = dx->outline ? dx->outline : style ? style->heading : 0;
	int num_id = dx->has_num ? dx->num_id : style ? style->num_id : 0;
	int lvl = dx->has_num ? dx->lvl : style ? style->lvl : 0;
	bool list = num_id > 0 && !heading;
	char prefix[64] = "";

	if (tr_office_blank(&dx->para))
		return 0;
	if (lvl < 0 || lvl > 8)
		lvl = 0;
	if (list) {
		struct docx_num *num = tr_docx_find_num(dx, num_id);
		int indent = 2 * lvl;

		if (num && !tr_docx_level_is_bullet(dx, num->abstract_id, lvl)) {
			num->counts[lvl]++;
			for (int i = lvl + 1; i < 9; i++)
				num->counts[i] = 0;
			snprintf(prefix, sizeof(prefix), "%*s%u. ", indent, "", num->counts[lvl]);
		} else {
			snprintf(prefix, sizeof(prefix), "%*s- ", indent, "");
		}
	} else if (heading) {
		memset(prefix, '#', (size_t)heading);
		prefix[heading] = ' ';
		prefix[heading + 1] = '\0';
	}
	return tr_office_rendering_block(&dx->r, prefix, dx->para.data, dx->para.len, list);
}

/* End of a w:p: into the table cell being read, or out as a block. */
static int end_paragraph(struct docx *dx)
{
	int rc = 0;

	if (dx->tbl_depth > 0) {
		if (!tr_office_blank(&dx->para))
			rc = tr_office_cell_paragraph(&dx->table, &dx->para);
	} else {
		rc = emit_paragraph(dx);
	}
	dx->para.len = 0;
	if (dx->para.data)
		dx->para.data[0] = '\0';
	free(dx->style);
	dx->style = NULL;
	dx->has_num = false;
	dx->num_id = dx->lvl = dx->outline = 0;
	return rc;
}

/* A picture reference in the paragraph, attached later if its line is in the window. */
static int add_picture(struct docx *dx, const char *rel_id)
{
	const struct tr_office_rel *rel = tr_office_rels_find(&dx->rels, rel_id);

	if (!rel || rel->external)
		return 0;
	return tr_office_rendering_picture(&dx->r, rel->target, &dx->para);
}

static int on_deleted(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	dx->deletions++;
	return tr_office_on_skip(ctx, x);
}

/* A text box opens its paragraphs (one nested too deep is skipped). */
static int on_box(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	if (dx->box_depth == MAX_BOX_DEPTH)
		return tr_office_on_skip(ctx, x);
	if (!tr_office_xml_empty(x))
		enter_box(dx);
	return 0;
}

static int on_box_end(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	(void)x;
	if (dx->box_depth)
		leave_box(dx);
	return 0;
}

static int on_inserted(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	if (!tr_office_xml_empty(x))
		dx->insertions++;
	return 0;
}

static int on_paragraph(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	dx->para.len = 0;
	return tr_office_xml_empty(x) ? end_paragraph(dx) : 0;
}

static int on_paragraph_end(void *ctx, struct tr_office_xml *x)
{
	(void)x;
	return end_paragraph(ctx);
}

static int on_p_style(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	free(dx->style);
	dx->style = tr_docx_take_attr(x, "val");
	return 0;
}

static int on_num_id(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	dx->num_id = tr_docx_attr_int(x, "val", 0);
	dx->has_num = true;
	return 0;
}

static int on_ilvl(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	dx->lvl = tr_docx_attr_int(x, "val", 0);
	return 0;
}

static int on_outline(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;
	int lvl = tr_docx_attr_int(x, "val", 9);

	dx->outline = lvl >= 0 && lvl < 9 ? lvl + 1 : 0;
	return 0;
}

static int on_run(void *ctx, struct tr_office_xml *x)
{
	return tr_office_count(&((struct docx *)ctx)->run_depth, x);
}

static int on_text_run(void *ctx, struct tr_office_xml *x)
{
	return tr_office_count(&((struct docx *)ctx)->text_depth, x);
}

static int on_tab(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	(void)x;
	return dx->run_depth ? tr_buf_append(&dx->para, "\t", 1) : 0;
}

static int on_break(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	(void)x;
	return dx->run_depth ? tr_buf_append(&dx->para, "\n", 1) : 0;
}

static int on_hyperlink(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;
	char *id = tr_docx_take_attr(x, "id");
	const struct tr_office_rel *rel = tr_office_rels_find(&dx->rels, id);

	free(id);
	free(dx->link_url);
	dx->link_url = rel && rel->external ? strdup(rel->target) : NULL;
	dx->link_start = dx->para.len;
	return 0;
}

static int on_hyperlink_end(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	(void)x;
	return dx->link_url ? tr_office_link_end(&dx->para, dx->link_start, &dx->link_url) : 0;
}

/* A footnote, endnote or comment reference: "[^1]", "[^e1]", "[^c1]". */
static int on_note_reference(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;
	const char *name = tr_office_xml_name(x);
	char *id = tr_docx_take_attr(x, "id");
	int rc = tr_buf_printf(&dx->para, "[^%s%s]",
			       name[0] == 'f'   ? ""
			       : name[0] == 'e' ? "e"
						: "c",
			       id ? id : "?");

	free(id);
	return rc;
}

static int on_picture(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;
	char *id = tr_docx_take_attr(x, !strcmp(tr_office_xml_name(x), "blip") ? "embed" : "id");
	int rc = id ? add_picture(dx, id) : 0;

	free(id);
	return rc;
}

static int on_table(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	if (!tr_office_xml_empty(x) && ++dx->tbl_depth == 1)
		tr_office_table_free(&dx->table);
	return 0;
}

static int on_table_end(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	(void)x;
	if (dx->tbl_depth && --dx->tbl_depth == 0)
		return tr_office_rendering_table(&dx->r, &dx->table);
	return 0;
}

static int on_table_row(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	(void)x;
	return dx->tbl_depth == 1 ? tr_office_table_row(&dx->table) : 0;
}

static int on_table_cell(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	(void)x;
	return dx->tbl_depth == 1 ? tr_office_table_cell(&dx->table) : 0;
}

static int on_body_text(void *ctx, struct tr_office_xml *x, const char *text)
{
	struct docx *dx = ctx;

	(void)x;
	return dx->text_depth ? tr_buf_append(&dx->para, text, strlen(text)) : 0;
}

/* The elements of a document body. mc:Fallback repeats the mc:Choice before it (a text box as
 * VML after DrawingML). */
static const struct tr_office_rule body_rules[] = {
	{"del", on_deleted, NULL},
	{"moveFrom", on_deleted, NULL},
	{"delText", tr_office_on_skip, NULL},
	{"instrText", tr_office_on_skip, NULL},
	{"Fallback", tr_office_on_skip, NULL},
	{"rPr", tr_office_on_skip, NULL},
	{"sectPr", tr_office_on_skip, NULL},
	{"txbxContent", on_box, on_box_end},
	{"ins", on_inserted, NULL},
	{"moveTo", on_inserted, NULL},
	{"p", on_paragraph, on_paragraph_end},
	{"pStyle", on_p_style, NULL},
	{"numId", on_num_id, NULL},
	{"ilvl", on_ilvl, NULL},
	{"outlineLvl", on_outline, NULL},
	{"r", on_run, on_run},
	{"t", on_text_run, on_text_run},
	{"tab", on_tab, NULL},
	{"br", on_break, NULL},
	{"cr", on_break, NULL},
	{"hyperlink", on_hyperlink, on_hyperlink_end},
	{"footnoteReference", on_note_reference, NULL},
	{"endnoteReference", on_note_reference, NULL},
	{"commentReference", on_note_reference, NULL},
	{"blip", on_picture, NULL},
	{"imagedata", on_picture, NULL},
	{"tbl", on_table, on_table_end},
	{"tr", on_table_row, NULL},
	{"tc", on_table_cell, NULL},
};

static int render_body(struct docx *dx)
{
	const struct tr_office_walk walk = {body_rules, sizeof(body_rules) / sizeof(body_rules[0]),
					    on_body_text, dx};
	int rc = tr_office_walk_part(dx->z, dx->d->main_part, true, NULL, &walk);

	return rc < 0 || dx->para.oom || dx->r.out.oom ? -1 : 0;
}

/* A notes part being walked: footnotes, endnotes or comments. */
struct notes_walk {
	struct docx *dx;
	const char *mark; /* "", "e", "c" */
	bool *heading_done;
	struct tr_buf note;
	bool in_note, in_text, any_para;
};

static int on_note(void *ctx, struct tr_office_xml *x)
{
	struct notes_walk *w = ctx;
	char *id = tr_docx_take_attr(x, "id"), *kind = tr_docx_take_attr(x, "type"),
	     *author = tr_docx_take_attr(x, "author");
	int rc = 0;

	w->note.len = 0;
	w->in_note = !kind || !strcmp(kind, "normal");
	w->any_para = false;
	if (w->in_note && !*w->heading_done) {
		*w->heading_done = true;
		rc = tr_buf_append(&w->dx->r.out, "\n---\n", 5);
	}
	if (w->in_note)
		rc |= tr_buf_printf(&w->note, "[^%s%s]: %s%s", w->mark, id ? id : "?",
				    author ? author : "", author ? ": " : "");
	free(id);
	free(kind);
	free(author);
	return rc < 0 ? -1 : 0;
}

static int on_note_end(void *ctx, struct tr_office_xml *x)
{
	struct notes_walk *w = ctx;
	int rc;

	(void)x;
	if (!w->in_note)
		return 0;
	w->in_note = false;
	rc = tr_buf_append(&w->dx->r.out, w->note.data ? w->note.data : "", w->note.len);
	rc |= tr_buf_append(&w->dx->r.out, "\n", 1);
	return rc < 0 ? -1 : 0;
}

static int on_note_paragraph(void *ctx, struct tr_office_xml *x)
{
	struct notes_walk *w = ctx;
	int rc = 0;

	(void)x;
	if (!w->in_note)
		return 0;
	if (w->any_para)
		rc = tr_buf_append(&w->note, " ", 1);
	w->any_para = true;
	return rc;
}

static int on_note_t(void *ctx, struct tr_office_xml *x)
{
	struct notes_walk *w = ctx;

	if (!tr_office_xml_empty(x))
		w->in_text = true;
	return 0;
}

static int on_note_t_end(void *ctx, struct tr_office_xml *x)
{
	struct notes_walk *w = ctx;

	(void)x;
	w->in_text = false;
	return 0;
}

static int on_note_text(void *ctx, struct tr_office_xml *x, const char *text)
{
	struct notes_walk *w = ctx;

	(void)x;
	return w->in_note && w->in_text ? tr_buf_append(&w->note, text, strlen(text)) : 0;
}

/* Appends the notes of part (footnotes, endnotes or comments) as "[^<mark><id>]: text". */
static int render_notes(struct docx *dx, const char *type_suffix, const char *element,
			const char *mark, bool *heading_done)
{
	const struct tr_office_rule rules[] = {
		{element, on_note, on_note_end},      {"del", tr_office_on_skip, NULL},
		{"delText", tr_office_on_skip, NULL}, {"instrText", tr_office_on_skip, NULL},
		{"p", on_note_paragraph, NULL},       {"t", on_note_t, on_note_t_end},
	};
	const struct tr_office_rel *rel = tr_office_rels_by_type(&dx->rels, type_suffix);
	struct notes_walk w = {.dx = dx, .mark = mark, .heading_done = heading_done};
	const struct tr_office_walk walk = {rules, 6, on_note_text, &w};
	int rc;

	if (!rel || rel->external)
		return 0;
	rc = tr_office_walk_part(dx->z, rel->target, false, NULL, &walk);
	tr_buf_free(&w.note);
	return rc < 0 ? -1 : 0;
}

static void docx_free(struct docx *dx)
{
	tr_office_rels_free(&dx->rels);
	for (size_t i = 0; i < dx->n_styles; i++)
		free(dx->styles[i].id);
	free(dx->styles);
	free(dx->levels);
	free(dx->nums);
	tr_office_rendering_free(&dx->r);
	while (dx->box_depth) /* a part that ended inside a text box */
		leave_box(dx);
	tr_buf_free(&dx->para);
	free(dx->style);
	free(dx->link_url);
	tr_office_table_free(&dx->table);
}

int tr_office_docx(const struct tr_office_doc *d, struct tr_result *res)
{
	struct docx dx = {.d = d, .z = d->z};
	const struct tr_office_rel *rel;
	bool notes_heading = false;
	int rc = -1;

	res->type = TR_TYPE_DOCUMENT;
	if (tr_office_rels_load(d->z, d->main_part, &dx.rels) < 0)
		goto out;
	rel = tr_office_rels_by_type(&dx.rels, "/styles");
	if (rel && !rel->external && tr_docx_load_styles(&dx, rel->target) < 0)
		goto out;
	rel = tr_office_rels_by_type(&dx.rels, "/numbering");
	if (rel && !rel->external && tr_docx_load_numbering(&dx, rel->target) < 0)
		goto out;
	if (render_body(&dx) < 0 ||
	    render_notes(&dx, "/footnotes", "footnote", "", &notes_heading) < 0 ||
	    render_notes(&dx, "/endnotes", "endnote", "e", &notes_heading) < 0 ||
	    render_notes(&dx, "/comments", "comment", "c", &notes_heading) < 0)
		goto out;
	if (tr_office_rendering_finish(d, &dx.r, dx.insertions, dx.deletions, res) < 0)
		goto out;
	rc = 0;
out:
	docx_free(&dx);
	return rc;
}
