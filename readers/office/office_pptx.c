/* SPDX-License-Identifier: MIT */
/* office_pptx.c - PowerPoint presentations: per slide its title, body text with list levels,
 * tables, pictures (attached to images[] with their slide) and speaker notes; windowed by
 * slides. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"
#include "util.h"

struct pptx {
	const struct tr_office_doc *d;
	struct tr_office_zip *z;
	struct tr_result *res;
	char **slides; /* owned parts, in show order */
	bool *hidden;
	size_t n_slides;
};

/* What the walk of presentation.xml fills. */
struct slides_walk {
	struct pptx *p;
	struct tr_office_rels rels;
};

/* The r:id of the element the reader stands on (malloc'd), or NULL: sldId has an id attribute
 * of its own and r:id, told apart by the namespace. */
static char *relationship_id(struct tr_office_xml *xml)
{
	char *rid = NULL;

	if (xmlTextReaderMoveToFirstAttribute(xml->reader) != 1)
		return NULL;
	do {
		const xmlChar *ns = xmlTextReaderConstNamespaceUri(xml->reader);
		const xmlChar *local = xmlTextReaderConstLocalName(xml->reader);

		if (ns && local && !strcmp((const char *)local, "id")) {
			const xmlChar *v = xmlTextReaderConstValue(xml->reader);

			rid = strdup(v ? (const char *)v : "");
			break;
		}
	} while (xmlTextReaderMoveToNextAttribute(xml->reader) == 1);
	xmlTextReaderMoveToElement(xml->reader);
	return rid;
}

static int on_sld_id(void *ctx, struct tr_office_xml *xml)
{
	struct slides_walk *w = ctx;
	struct pptx *p = w->p;
	char *id = tr_office_xml_attr(xml, "id"), *rid = relationship_id(xml);
	/* the relationship is the one that resolves */
	const struct tr_office_rel *rel = tr_office_rels_find(&w->rels, rid ? rid : id);
	char **grown;

	free(rid);
	free(id);
	if (!rel || rel->external)
		return 0;
	grown = realloc(p->slides, (p->n_slides + 1) * sizeof(*grown));
	if (grown)
		p->slides = grown;
	if (!grown || !(p->slides[p->n_slides] = strdup(rel->target))) {
		p->z->oom = true;
		return -1;
	}
	p->n_slides++;
	return 0;
}

static int load_slides(struct pptx *p)
{
	static const struct tr_office_rule rules[] = {{"sldId", on_sld_id, NULL}};
	struct slides_walk w = {.p = p};
	const struct tr_office_walk walk = {rules, 1, NULL, &w};
	int rc = tr_office_walk_part(p->z, p->d->main_part, true, &w.rels, &walk);

	tr_office_rels_free(&w.rels);
	if (rc < 0)
		return -1;
	p->hidden = calloc(p->n_slides ? p->n_slides : 1, sizeof(*p->hidden));
	if (!p->hidden) {
		p->z->oom = true;
		return -1;
	}
	return 0;
}

/* What is being read of one slide (or notes) part. */
struct slide_text {
	struct tr_buf title, body, para;
	bool in_title, in_body_ph, in_t;
	int lvl;
	int tbl_depth;
	struct tr_office_table table;
	bool notes_only_body; /* notes: keep only the body placeholder's text */
	bool in_notes_body;
	bool hidden;
};

static void slide_text_free(struct slide_text *s)
{
	tr_buf_free(&s->title);
	tr_buf_free(&s->body);
	tr_buf_free(&s->para);
	tr_office_table_free(&s->table);
}

/* End of an a:p: into the table cell, the title, or the body as a line. */
static int end_paragraph(struct slide_text *s)
{
	int rc = 0;

	if (tr_office_blank(&s->para)) {
		/* nothing */
	} else if (s->tbl_depth || s->in_title) {
		rc = tr_office_paragraph_to(s->tbl_depth ? &s->table : NULL, &s->title, &s->para);
	} else if (!s->notes_only_body || s->in_notes_body) {
		int indent = s->lvl > 0 && s->lvl < 9 ? 2 * s->lvl : 0;

		rc = tr_buf_printf(&s->body, "%*s%s", indent, "",
				   s->in_body_ph && !s->notes_only_body ? "- " : "");
		if (rc == 0)
			rc = tr_buf_append(&s->body, s->para.data, s->para.len);
		if (rc == 0)
			rc = tr_buf_append(&s->body, "\n", 1);
	}
	s->para.len = 0;
	s->lvl = 0;
	return rc;
}

/* A slide or notes part being walked. */
struct slide_walk {
	struct pptx *p;
	struct slide_text *s;
	struct tr_office_rels rels; /* the part's */
	uint32_t slide;
	struct tr_buf *pictures; /* NULL: pictures are not read (notes) */
};

static int on_sld(void *ctx, struct tr_office_xml *xml)
{
	struct slide_walk *w = ctx;
	char *show = tr_office_xml_attr(xml, "show");

	w->s->hidden = show && (!strcmp(show, "0") || !strcmp(show, "false"));
	free(show);
	return 0;
}

static int on_shape(void *ctx, struct tr_office_xml *xml)
{
	struct slide_walk *w = ctx;

	(void)xml;
	w->s->in_title = w->s->in_body_ph = w->s->in_notes_body = false;
	return 0;
}

static int on_placeholder(void *ctx, struct tr_office_xml *xml)
{
	struct slide_text *s = ((struct slide_walk *)ctx)->s;
	char *t = tr_office_xml_attr(xml, "type");

	s->in_title = t && (!strcmp(t, "title") || !strcmp(t, "ctrTitle"));
	s->in_body_ph = !t || !strcmp(t, "body") || !strcmp(t, "obj");
	s->in_notes_body = t && !strcmp(t, "body");
	free(t);
	return 0;
}

static int on_slide_p(void *ctx, struct tr_office_xml *xml)
{
	struct slide_text *s = ((struct slide_walk *)ctx)->s;

	if (!tr_office_xml_empty(xml)) {
		s->para.len = 0;
		s->lvl = 0;
	}
	return 0;
}

static int on_slide_p_end(void *ctx, struct tr_office_xml *xml)
{
	(void)xml;
	return end_paragraph(((struct slide_walk *)ctx)->s);
}

static int on_p_pr(void *ctx, struct tr_office_xml *xml)
{
	struct slide_text *s = ((struct slide_walk *)ctx)->s;
	char *lvl = tr_office_xml_attr(xml, "lvl");

	s->lvl = lvl ? atoi(lvl) : 0;
	free(lvl);
	return 0;
}

static int on_slide_t(void *ctx, struct tr_office_xml *xml)
{
	struct slide_text *s = ((struct slide_walk *)ctx)->s;

	if (!tr_office_xml_empty(xml))
		s->in_t = true;
	return 0;
}

static int on_slide_t_end(void *ctx, struct tr_office_xml *xml)
{
	(void)xml;
	((struct slide_walk *)ctx)->s->in_t = false;
	return 0;
}

static int on_slide_br(void *ctx, struct tr_office_xml *xml)
{
	(void)xml;
	return tr_buf_append(&((struct slide_walk *)ctx)->s->para, "\n", 1);
}

static int on_slide_tbl(void *ctx, struct tr_office_xml *xml)
{
	struct slide_text *s = ((struct slide_walk *)ctx)->s;

	if (!tr_office_xml_empty(xml) && ++s->tbl_depth == 1)
		tr_office_table_free(&s->table);
	return 0;
}

static int on_slide_tbl_end(void *ctx, struct tr_office_xml *xml)
{
	struct slide_text *s = ((struct slide_walk *)ctx)->s;

	(void)xml;
	if (s->tbl_depth && --s->tbl_depth == 0)
		return tr_office_table_flush(&s->table, &s->body);
	return 0;
}

static int on_slide_tr(void *ctx, struct tr_office_xml *xml)
{
	struct slide_text *s = ((struct slide_walk *)ctx)->s;

	(void)xml;
	return s->tbl_depth == 1 ? tr_office_table_row(&s->table) : 0;
}

static int on_slide_tc(void *ctx, struct tr_office_xml *xml)
{
	struct slide_text *s = ((struct slide_walk *)ctx)->s;

	(void)xml;
	return s->tbl_depth == 1 ? tr_office_table_cell(&s->table) : 0;
}

static int on_slide_blip(void *ctx, struct tr_office_xml *xml)
{
	struct slide_walk *w = ctx;
	char *id;
	const struct tr_office_rel *rel;
	int rc = 0;

	if (!w->pictures)
		return 0;
	id = tr_office_xml_attr(xml, "embed");
	rel = tr_office_rels_find(&w->rels, id);
	free(id);
	if (rel && !rel->external) {
		rc = tr_office_picture(w->p->z, rel->target, w->slide, w->p->d->opts, w->p->res,
				       w->pictures);
		if (rc == 0)
			rc = tr_buf_append(w->pictures, "\n", 1);
	}
	return rc;
}

static int on_slide_text(void *ctx, struct tr_office_xml *xml, const char *text)
{
	struct slide_text *s = ((struct slide_walk *)ctx)->s;

	(void)xml;
	return s->in_t ? tr_buf_append(&s->para, text, strlen(text)) : 0;
}

/* The elements of a slide or notes part. */
static const struct tr_office_rule slide_rules[] = {
	{"sld", on_sld, NULL},         {"sp", on_shape, on_shape},
	{"ph", on_placeholder, NULL},  {"p", on_slide_p, on_slide_p_end},
	{"pPr", on_p_pr, NULL},        {"t", on_slide_t, on_slide_t_end},
	{"br", on_slide_br, NULL},     {"tbl", on_slide_tbl, on_slide_tbl_end},
	{"tr", on_slide_tr, NULL},     {"tc", on_slide_tc, NULL},
	{"blip", on_slide_blip, NULL}, {"Fallback", tr_office_on_skip, NULL},
};

/* Reads a slide or notes part into s; pictures are attached to res with slide number. */
static int read_slide_part(struct pptx *p, const char *part, uint32_t slide, struct slide_text *s,
			   struct tr_buf *pictures)
{
	struct slide_walk w = {.p = p, .s = s, .slide = slide, .pictures = pictures};
	const struct tr_office_walk walk = {
		slide_rules, sizeof(slide_rules) / sizeof(slide_rules[0]), on_slide_text, &w};
	int rc = tr_office_walk_part(p->z, part, true, &w.rels, &walk);

	tr_office_rels_free(&w.rels);
	if (s->title.oom || s->body.oom || s->para.oom)
		p->z->oom = true;
	return rc < 0 || p->z->oom ? -1 : 0;
}

/* Renders slide index (1-based) into out, its pictures attached to res. */
static int render_slide(void *ctx, size_t index, struct tr_buf *out)
{
	struct pptx *p = ctx;
	struct slide_text s = {0}, notes = {.notes_only_body = true};
	struct tr_buf pictures = {0};
	struct tr_office_rels rels = {0};
	const struct tr_office_rel *notes_rel;
	int rc = -1;

	if (read_slide_part(p, p->slides[index - 1], (uint32_t)index, &s, &pictures) < 0)
		goto out;
	if (tr_office_rels_load(p->z, p->slides[index - 1], &rels) < 0)
		goto out;
	notes_rel = tr_office_rels_by_type(&rels, "/notesSlide");
	if (notes_rel && !notes_rel->external &&
	    read_slide_part(p, notes_rel->target, (uint32_t)index, &notes, NULL) < 0)
		goto out;
	p->hidden[index - 1] = s.hidden;
	rc = tr_office_slide_compose(out, index, &s.title, s.hidden, &s.body, &pictures,
				     &notes.body);
	if (rc < 0) {
		p->z->oom = true;
		rc = -1;
	}
out:
	tr_office_rels_free(&rels);
	slide_text_free(&s);
	slide_text_free(&notes);
	tr_buf_free(&pictures);
	return rc;
}

int tr_office_pptx(const struct tr_office_doc *d, struct tr_result *res)
{
	struct pptx p = {.d = d, .z = d->z, .res = res};
	int rc = -1;

	res->type = TR_TYPE_PRESENTATION;
	if (load_slides(&p) == 0)
		rc = tr_office_slides(d, p.n_slides, render_slide, &p, res);
	for (size_t i = 0; i < p.n_slides; i++)
		free(p.slides[i]);
	free(p.slides);
	free(p.hidden);
	return rc;
}
