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

/* styles.xml: paragraph styles' heading levels and list numbering. */
static int load_styles(struct docx *dx, const char *part)
{
	struct tr_office_xml x;
	struct docx_style cur = {0};
	bool in_style = false;
	int rc = tr_office_xml_open(&x, dx->z, part);

	if (rc)
		return rc > 0 ? 0 : -1;
	while ((rc = tr_office_xml_next(&x)) == 1) {
		if (tr_office_xml_start(&x, "style") && !tr_office_xml_empty(&x)) {
			memset(&cur, 0, sizeof(cur));
			cur.id = take_attr(&x, "styleId");
			in_style = cur.id != NULL;
		} else if (in_style && tr_office_xml_start(&x, "name")) {
			char *name = take_attr(&x, "val");

			if (name && !cur.heading)
				cur.heading = heading_from_name(name);
			if (name && !cur.lvl)
				cur.lvl = list_level_from_name(name);
			free(name);
		} else if (in_style && tr_office_xml_start(&x, "outlineLvl")) {
			int lvl = attr_int(&x, "val", 9);

			if (lvl >= 0 && lvl < 9)
				cur.heading = lvl + 1;
		} else if (in_style && tr_office_xml_start(&x, "numId")) {
			cur.num_id = attr_int(&x, "val", 0);
		} else if (in_style && tr_office_xml_start(&x, "ilvl")) {
			cur.lvl = attr_int(&x, "val", 0);
		} else if (in_style && tr_office_xml_end(&x, "style")) {
			struct docx_style *grown = realloc(dx->styles,
							   (dx->n_styles + 1) * sizeof(*grown));

			in_style = false;
			if (!grown) {
				dx->z->oom = true;
				break;
			}
			dx->styles = grown;
			dx->styles[dx->n_styles++] = cur;
			memset(&cur, 0, sizeof(cur));
		}
	}
	free(cur.id);
	tr_office_xml_close(&x);
	return rc < 0 || dx->z->oom ? -1 : 0;
}

/* numbering.xml: which lists are bulleted, per level; which abstract list each list uses. */
static int load_numbering(struct docx *dx, const char *part)
{
	struct tr_office_xml x;
	int abstract_id = -1, lvl = -1, num_id = -1;
	int rc = tr_office_xml_open(&x, dx->z, part);

	if (rc)
		return rc > 0 ? 0 : -1;
	while ((rc = tr_office_xml_next(&x)) == 1) {
		if (tr_office_xml_start(&x, "abstractNum")) {
			abstract_id = attr_int(&x, "abstractNumId", -1);
		} else if (tr_office_xml_start(&x, "lvl") && abstract_id >= 0) {
			lvl = attr_int(&x, "ilvl", -1);
		} else if (tr_office_xml_start(&x, "numFmt") && abstract_id >= 0 && lvl >= 0) {
			char *fmt = take_attr(&x, "val");
			struct docx_level *grown = realloc(dx->levels,
							   (dx->n_levels + 1) * sizeof(*grown));

			if (!grown) {
				free(fmt);
				dx->z->oom = true;
				break;
			}
			dx->levels = grown;
			dx->levels[dx->n_levels++] = (struct docx_level){
				.abstract_id = abstract_id,
				.lvl = lvl,
				.bullet = !fmt || strcmp(fmt, "bullet") == 0 ||
					  strcmp(fmt, "none") == 0,
			};
			free(fmt);
			lvl = -1;
		} else if (tr_office_xml_end(&x, "abstractNum")) {
			abstract_id = -1;
		} else if (tr_office_xml_start(&x, "num")) {
			num_id = attr_int(&x, "numId", -1);
		} else if (tr_office_xml_start(&x, "abstractNumId") && num_id >= 0) {
			struct docx_num *grown = realloc(dx->nums,
							 (dx->n_nums + 1) * sizeof(*grown));

			if (!grown) {
				dx->z->oom = true;
				break;
			}
			dx->nums = grown;
			dx->nums[dx->n_nums++] = (struct docx_num){
				.num_id = num_id,
				.abstract_id = attr_int(&x, "val", -1),
			};
			num_id = -1;
		}
	}
	tr_office_xml_close(&x);
	return rc < 0 || dx->z->oom ? -1 : 0;
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
		struct tr_buf *cell = tr_office_table_current(&dx->table);

		if (cell && !tr_office_blank(&dx->para)) {
			if (cell->len)
				rc = tr_buf_append(cell, "<br>", 4);
			if (rc == 0)
				rc = tr_office_cell_append(cell, dx->para.data, dx->para.len);
		}
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

static int start_element(struct docx *dx, struct tr_office_xml *x)
{
	const char *name = tr_office_xml_name(x);
	bool empty = tr_office_xml_empty(x);

	if (!strcmp(name, "del") || !strcmp(name, "moveFrom")) {
		dx->deletions++;
		return tr_office_xml_skip(x) < 0 ? -1 : 0;
	}
	/* mc:Fallback repeats the mc:Choice before it (a text box as VML after DrawingML). */
	if (!strcmp(name, "delText") || !strcmp(name, "instrText") || !strcmp(name, "Fallback") ||
	    !strcmp(name, "rPr") || !strcmp(name, "sectPr") ||
	    (!strcmp(name, "txbxContent") && dx->box_depth == MAX_BOX_DEPTH))
		return tr_office_xml_skip(x) < 0 ? -1 : 0;
	if (!strcmp(name, "txbxContent")) {
		if (!empty)
			enter_box(dx);
		return 0;
	}
	if (!strcmp(name, "ins") || !strcmp(name, "moveTo")) {
		if (!empty)
			dx->insertions++;
	} else if (!strcmp(name, "p")) {
		dx->para.len = 0;
		if (empty)
			return end_paragraph(dx);
	} else if (!strcmp(name, "pStyle")) {
		free(dx->style);
		dx->style = take_attr(x, "val");
	} else if (!strcmp(name, "numId")) {
		dx->num_id = attr_int(x, "val", 0);
		dx->has_num = true;
	} else if (!strcmp(name, "ilvl")) {
		dx->lvl = attr_int(x, "val", 0);
	} else if (!strcmp(name, "outlineLvl")) {
		int lvl = attr_int(x, "val", 9);

		dx->outline = lvl >= 0 && lvl < 9 ? lvl + 1 : 0;
	} else if (!strcmp(name, "r")) {
		if (!empty)
			dx->run_depth++;
	} else if (!strcmp(name, "t")) {
		if (!empty)
			dx->text_depth++;
	} else if (dx->run_depth && !strcmp(name, "tab")) {
		return tr_buf_append(&dx->para, "\t", 1);
	} else if (dx->run_depth && (!strcmp(name, "br") || !strcmp(name, "cr"))) {
		return tr_buf_append(&dx->para, "\n", 1);
	} else if (!strcmp(name, "hyperlink")) {
		char *id = take_attr(x, "id");
		const struct tr_office_rel *rel = tr_office_rels_find(&dx->rels, id);

		free(id);
		free(dx->link_url);
		dx->link_url = rel && rel->external ? strdup(rel->target) : NULL;
		dx->link_start = dx->para.len;
	} else if (!strcmp(name, "footnoteReference") || !strcmp(name, "endnoteReference") ||
		   !strcmp(name, "commentReference")) {
		char *id = take_attr(x, "id");
		int rc = tr_buf_printf(&dx->para, "[^%s%s]",
				       name[0] == 'f'   ? ""
				       : name[0] == 'e' ? "e"
							: "c",
				       id ? id : "?");

		free(id);
		return rc;
	} else if (!strcmp(name, "blip") || !strcmp(name, "imagedata")) {
		char *id = take_attr(x, !strcmp(name, "blip") ? "embed" : "id");
		int rc = id ? add_picture(dx, id) : 0;

		free(id);
		return rc;
	} else if (!strcmp(name, "tbl")) {
		if (!empty && ++dx->tbl_depth == 1)
			tr_office_table_free(&dx->table);
	} else if (dx->tbl_depth == 1 && !strcmp(name, "tr")) {
		return tr_office_table_row(&dx->table);
	} else if (dx->tbl_depth == 1 && !strcmp(name, "tc")) {
		return tr_office_table_cell(&dx->table);
	}
	return 0;
}

static int end_element(struct docx *dx, struct tr_office_xml *x)
{
	const char *name = tr_office_xml_name(x);

	if (!strcmp(name, "p"))
		return end_paragraph(dx);
	if (!strcmp(name, "txbxContent") && dx->box_depth)
		leave_box(dx);
	else if (!strcmp(name, "r") && dx->run_depth)
		dx->run_depth--;
	else if (!strcmp(name, "t") && dx->text_depth)
		dx->text_depth--;
	else if (!strcmp(name, "hyperlink") && dx->link_url)
		return tr_office_link_end(&dx->para, dx->link_start, &dx->link_url);
	else if (!strcmp(name, "tbl") && dx->tbl_depth && --dx->tbl_depth == 0)
		return tr_office_rendering_table(&dx->r, &dx->table);
	return 0;
}

static int render_body(struct docx *dx)
{
	struct tr_office_xml x;
	int rc = tr_office_xml_open(&x, dx->z, dx->d->main_part);

	if (rc > 0)
		return tr_office_zip_fail(dx->z, TR_E_CORRUPT, "the part %s is missing",
					  dx->d->main_part);
	if (rc < 0)
		return -1;
	while ((rc = tr_office_xml_next(&x)) == 1) {
		int type = tr_office_xml_type(&x);
		const char *text;

		if (type == XML_READER_TYPE_ELEMENT) {
			rc = start_element(dx, &x);
		} else if (type == XML_READER_TYPE_END_ELEMENT) {
			rc = end_element(dx, &x);
		} else if (dx->text_depth && (text = tr_office_xml_text(&x))) {
			rc = tr_buf_append(&dx->para, text, strlen(text));
		} else {
			rc = 0;
		}
		if (rc < 0) {
			if (!dx->z->error)
				dx->z->oom = true;
			break;
		}
	}
	tr_office_xml_close(&x);
	return rc < 0 || dx->para.oom || dx->r.out.oom ? -1 : 0;
}

/* Appends the notes of part (footnotes, endnotes or comments) as "[^<mark><id>]: text". */
static int render_notes(struct docx *dx, const char *type_suffix, const char *element,
			const char *mark, bool *heading_done)
{
	const struct tr_office_rel *rel = tr_office_rels_by_type(&dx->rels, type_suffix);
	struct tr_office_xml x;
	struct tr_buf note = {0};
	bool in_note = false, in_text = false, any_para = false;
	int rc;

	if (!rel || rel->external)
		return 0;
	rc = tr_office_xml_open(&x, dx->z, rel->target);
	if (rc)
		return rc > 0 ? 0 : -1;
	while ((rc = tr_office_xml_next(&x)) == 1) {
		int type = tr_office_xml_type(&x);
		const char *text;

		if (type == XML_READER_TYPE_ELEMENT) {
			const char *name = tr_office_xml_name(&x);

			if (!strcmp(name, element)) {
				char *id = take_attr(&x, "id"), *kind = take_attr(&x, "type"),
				     *author = take_attr(&x, "author");

				note.len = 0;
				in_note = !kind || !strcmp(kind, "normal");
				any_para = false;
				if (in_note && !*heading_done) {
					*heading_done = true;
					rc = tr_buf_append(&dx->r.out, "\n---\n", 5);
				}
				if (in_note)
					rc |= tr_buf_printf(&note, "[^%s%s]: %s%s", mark,
							    id ? id : "?", author ? author : "",
							    author ? ": " : "");
				free(id);
				free(kind);
				free(author);
			} else if (!strcmp(name, "del") || !strcmp(name, "delText") ||
				   !strcmp(name, "instrText")) {
				rc = tr_office_xml_skip(&x) < 0 ? -1 : 0;
			} else if (in_note && !strcmp(name, "p")) {
				if (any_para)
					rc = tr_buf_append(&note, " ", 1);
				any_para = true;
			} else if (!strcmp(name, "t") && !tr_office_xml_empty(&x)) {
				in_text = true;
			}
		} else if (type == XML_READER_TYPE_END_ELEMENT) {
			const char *name = tr_office_xml_name(&x);

			if (!strcmp(name, "t")) {
				in_text = false;
			} else if (in_note && !strcmp(name, element)) {
				in_note = false;
				rc = tr_buf_append(&dx->r.out, note.data ? note.data : "",
						   note.len);
				rc |= tr_buf_append(&dx->r.out, "\n", 1);
			}
		} else if (in_note && in_text && (text = tr_office_xml_text(&x))) {
			rc = tr_buf_append(&note, text, strlen(text));
		}
		if (rc < 0)
			break;
		rc = 1;
	}
	tr_office_xml_close(&x);
	tr_buf_free(&note);
	if (rc < 0 && dx->z->error == TR_OK)
		dx->z->oom = true;
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
