/* SPDX-License-Identifier: MIT */
/* office_docx.c - Word documents rendered as Markdown-like text (headings, lists, pipe tables,
 * links, notes at the end; tracked insertions shown, deletions left out), then windowed by lines
 * exactly as text files are (readers/text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"

struct docx_style {
	char *id;
	int heading;     /* 1-9, 0: not a heading */
	int num_id, lvl; /* the list the style puts paragraphs in (num_id 0: none) */
};

struct docx_level {
	int abstract_id, lvl;
	bool bullet; /* numFmt bullet (or none): "-", else numbered "N." */
};

struct docx_num {
	int num_id, abstract_id;
	unsigned counts[9];
};

/* Text boxes nest at most this deep (a deeper one is skipped). */
#define MAX_BOX_DEPTH 4

/* The paragraph a text box interrupts, put aside while the box's own paragraphs are read. */
struct docx_host {
	struct tr_buf para;
	char *style, *link_url; /* owned */
	size_t link_start;
	int num_id, lvl, outline, run_depth, text_depth;
	bool has_num;
};

struct docx {
	const struct tr_office_doc *d;
	struct tr_office_zip *z;
	struct tr_office_rels rels;
	struct docx_style *styles;
	size_t n_styles;
	struct docx_level *levels;
	size_t n_levels;
	struct docx_num *nums;
	size_t n_nums;
	struct tr_office_rendering r; /* the rendering and its pictures */
	struct tr_buf para;           /* the paragraph being read */
	char *style;                  /* its pStyle, owned */
	int num_id, lvl, outline;
	bool has_num;

	int run_depth, text_depth; /* inside w:r, inside w:t */
	int tbl_depth;
	struct tr_office_table table;
	char *link_url; /* the hyperlink being read, owned */
	size_t link_start;
	int64_t insertions, deletions;
	struct docx_host hosts[MAX_BOX_DEPTH]; /* the paragraphs around the open text boxes */
	int box_depth;
};

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

static int to_int(const char *s, int fallback)
{
	return s && *s ? atoi(s) : fallback;
}

static char *take_attr(struct tr_office_xml *x, const char *name)
{
	return tr_office_xml_attr(x, name);
}

static int attr_int(struct tr_office_xml *x, const char *name, int fallback)
{
	char *v = take_attr(x, name);
	int n = to_int(v, fallback);

	free(v);
	return n;
}

/* The heading level a style name gives: "heading 2" -> 2, "Title" -> 1, else 0. */
static int heading_from_name(const char *name)
{
	if (strncasecmp(name, "heading ", 8) == 0 && name[8] >= '1' && name[8] <= '9' && !name[9])
		return name[8] - '0';
	if (strcasecmp(name, "Title") == 0)
		return 1;
	return 0;
}

/* The nesting a list style's name gives: "List Bullet 2" -> 1 (0-based), else 0. */
static int list_level_from_name(const char *name)
{
	size_t len = strlen(name);

	if (strncasecmp(name, "List ", 5) == 0 && len > 7 && name[len - 2] == ' ' &&
	    name[len - 1] >= '2' && name[len - 1] <= '9')
		return name[len - 1] - '1';
	return 0;
}

/* What the walk of styles.xml fills. */
struct styles_walk {
	struct docx *dx;
	struct docx_style cur;
	bool in_style;
};

static int style_done(struct styles_walk *w)
{
	struct docx *dx = w->dx;
	struct docx_style *grown;

	if (!w->in_style)
		return 0;
	w->in_style = false;
	grown = realloc(dx->styles, (dx->n_styles + 1) * sizeof(*grown));
	if (!grown) {
		dx->z->oom = true;
		return -1;
	}
	dx->styles = grown;
	dx->styles[dx->n_styles++] = w->cur;
	memset(&w->cur, 0, sizeof(w->cur));
	return 0;
}

static int on_style(void *ctx, struct tr_office_xml *x)
{
	struct styles_walk *w = ctx;

	if (tr_office_xml_empty(x))
		return style_done(w); /* <w:style/> ends the style being read */
	memset(&w->cur, 0, sizeof(w->cur));
	w->cur.id = take_attr(x, "styleId");
	w->in_style = w->cur.id != NULL;
	return 0;
}

static int on_style_end(void *ctx, struct tr_office_xml *x)
{
	(void)x;
	return style_done(ctx);
}

static int on_style_name(void *ctx, struct tr_office_xml *x)
{
	struct styles_walk *w = ctx;
	char *name;

	if (!w->in_style)
		return 0;
	name = take_attr(x, "val");
	if (name && !w->cur.heading)
		w->cur.heading = heading_from_name(name);
	if (name && !w->cur.lvl)
		w->cur.lvl = list_level_from_name(name);
	free(name);
	return 0;
}

static int on_style_outline(void *ctx, struct tr_office_xml *x)
{
	struct styles_walk *w = ctx;
	int lvl;

	if (!w->in_style)
		return 0;
	lvl = attr_int(x, "val", 9);
	if (lvl >= 0 && lvl < 9)
		w->cur.heading = lvl + 1;
	return 0;
}

static int on_style_num_id(void *ctx, struct tr_office_xml *x)
{
	struct styles_walk *w = ctx;

	if (w->in_style)
		w->cur.num_id = attr_int(x, "val", 0);
	return 0;
}

static int on_style_ilvl(void *ctx, struct tr_office_xml *x)
{
	struct styles_walk *w = ctx;

	if (w->in_style)
		w->cur.lvl = attr_int(x, "val", 0);
	return 0;
}

/* styles.xml: paragraph styles' heading levels and list numbering. */
static int load_styles(struct docx *dx, const char *part)
{
	static const struct tr_office_rule rules[] = {
		{"style", on_style, on_style_end},      {"name", on_style_name, NULL},
		{"outlineLvl", on_style_outline, NULL}, {"numId", on_style_num_id, NULL},
		{"ilvl", on_style_ilvl, NULL},
	};
	struct styles_walk w = {.dx = dx};
	const struct tr_office_walk walk = {rules, 5, NULL, &w};
	int rc = tr_office_walk_part(dx->z, part, false, NULL, &walk);

	free(w.cur.id);
	if (rc)
		return rc > 0 ? 0 : -1;
	return dx->z->oom ? -1 : 0;
}

/* What the walk of numbering.xml is in. */
struct numbering_walk {
	struct docx *dx;
	int abstract_id, lvl, num_id;
};

static int on_abstract_num(void *ctx, struct tr_office_xml *x)
{
	struct numbering_walk *w = ctx;

	w->abstract_id = attr_int(x, "abstractNumId", -1);
	return 0;
}

static int on_abstract_num_end(void *ctx, struct tr_office_xml *x)
{
	struct numbering_walk *w = ctx;

	(void)x;
	w->abstract_id = -1;
	return 0;
}

static int on_lvl(void *ctx, struct tr_office_xml *x)
{
	struct numbering_walk *w = ctx;

	if (w->abstract_id >= 0)
		w->lvl = attr_int(x, "ilvl", -1);
	return 0;
}

static int on_num_fmt(void *ctx, struct tr_office_xml *x)
{
	struct numbering_walk *w = ctx;
	struct docx *dx = w->dx;
	struct docx_level *grown;
	char *fmt;

	if (w->abstract_id < 0 || w->lvl < 0)
		return 0;
	fmt = take_attr(x, "val");
	grown = realloc(dx->levels, (dx->n_levels + 1) * sizeof(*grown));
	if (!grown) {
		free(fmt);
		dx->z->oom = true;
		return -1;
	}
	dx->levels = grown;
	dx->levels[dx->n_levels++] = (struct docx_level){
		.abstract_id = w->abstract_id,
		.lvl = w->lvl,
		.bullet = !fmt || strcmp(fmt, "bullet") == 0 || strcmp(fmt, "none") == 0,
	};
	free(fmt);
	w->lvl = -1;
	return 0;
}

static int on_num(void *ctx, struct tr_office_xml *x)
{
	struct numbering_walk *w = ctx;

	w->num_id = attr_int(x, "numId", -1);
	return 0;
}

static int on_abstract_num_id(void *ctx, struct tr_office_xml *x)
{
	struct numbering_walk *w = ctx;
	struct docx *dx = w->dx;
	struct docx_num *grown;

	if (w->num_id < 0)
		return 0;
	grown = realloc(dx->nums, (dx->n_nums + 1) * sizeof(*grown));
	if (!grown) {
		dx->z->oom = true;
		return -1;
	}
	dx->nums = grown;
	dx->nums[dx->n_nums++] = (struct docx_num){
		.num_id = w->num_id,
		.abstract_id = attr_int(x, "val", -1),
	};
	w->num_id = -1;
	return 0;
}

/* numbering.xml: which lists are bulleted, per level; which abstract list each list uses. */
static int load_numbering(struct docx *dx, const char *part)
{
	static const struct tr_office_rule rules[] = {
		{"abstractNum", on_abstract_num, on_abstract_num_end},
		{"lvl", on_lvl, NULL},
		{"numFmt", on_num_fmt, NULL},
		{"num", on_num, NULL},
		{"abstractNumId", on_abstract_num_id, NULL},
	};
	struct numbering_walk w = {.dx = dx, .abstract_id = -1, .lvl = -1, .num_id = -1};
	const struct tr_office_walk walk = {rules, 5, NULL, &w};
	int rc = tr_office_walk_part(dx->z, part, false, NULL, &walk);

	if (rc)
		return rc > 0 ? 0 : -1;
	return dx->z->oom ? -1 : 0;
}

static const struct docx_style *find_style(const struct docx *dx, const char *id)
{
	for (size_t i = 0; id && i < dx->n_styles; i++)
		if (strcmp(dx->styles[i].id, id) == 0)
			return &dx->styles[i];
	return NULL;
}

static struct docx_num *find_num(struct docx *dx, int num_id)
{
	for (size_t i = 0; i < dx->n_nums; i++)
		if (dx->nums[i].num_id == num_id)
			return &dx->nums[i];
	return NULL;
}

static bool level_is_bullet(const struct docx *dx, int abstract_id, int lvl)
{
	for (size_t i = 0; i < dx->n_levels; i++)
		if (dx->levels[i].abstract_id == abstract_id && dx->levels[i].lvl == lvl)
			return dx->levels[i].bullet;
	return true;
}

/* Writes the finished paragraph outside tables as a heading, a list item or a paragraph. */
static int emit_paragraph(struct docx *dx)
{
	const struct docx_style *style = find_style(dx, dx->style);
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
		struct docx_num *num = find_num(dx, num_id);
		int indent = 2 * lvl;

		if (num && !level_is_bullet(dx, num->abstract_id, lvl)) {
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
	dx->style = take_attr(x, "val");
	return 0;
}

static int on_num_id(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	dx->num_id = attr_int(x, "val", 0);
	dx->has_num = true;
	return 0;
}

static int on_ilvl(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;

	dx->lvl = attr_int(x, "val", 0);
	return 0;
}

static int on_outline(void *ctx, struct tr_office_xml *x)
{
	struct docx *dx = ctx;
	int lvl = attr_int(x, "val", 9);

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
	char *id = take_attr(x, "id");
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
	char *id = take_attr(x, "id");
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
	char *id = take_attr(x, !strcmp(tr_office_xml_name(x), "blip") ? "embed" : "id");
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
	char *id = take_attr(x, "id"), *kind = take_attr(x, "type"),
	     *author = take_attr(x, "author");
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
	if (rel && !rel->external && load_styles(&dx, rel->target) < 0)
		goto out;
	rel = tr_office_rels_by_type(&dx.rels, "/numbering");
	if (rel && !rel->external && load_numbering(&dx, rel->target) < 0)
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
