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

static int load_slides(struct pptx *p)
{
	struct tr_office_rels rels;
	struct tr_office_xml xml;
	int rc;

	if (tr_office_rels_load(p->z, p->d->main_part, &rels) < 0)
		return -1;
	rc = tr_office_xml_open(&xml, p->z, p->d->main_part);
	if (rc > 0)
		rc = tr_office_zip_fail(p->z, TR_E_CORRUPT, "the part %s is missing",
					p->d->main_part);
	while (rc == 0 && (rc = tr_office_xml_next(&xml)) == 1) {
		char *id;
		const struct tr_office_rel *rel;
		char **grown;

		rc = 0;
		if (!tr_office_xml_start(&xml, "sldId"))
			continue;
		id = tr_office_xml_attr(&xml, "id");
		rel = NULL;
		/* sldId has an id attribute of its own and r:id; the relationship is the one that
		 * resolves. */
		{
			char *rid = NULL;

			if (xmlTextReaderMoveToFirstAttribute(xml.reader) == 1) {
				do {
					const xmlChar *ns = xmlTextReaderConstNamespaceUri(
						xml.reader);
					const xmlChar *local = xmlTextReaderConstLocalName(
						xml.reader);

					if (ns && local && !strcmp((const char *)local, "id")) {
						const xmlChar *v = xmlTextReaderConstValue(
							xml.reader);

						rid = strdup(v ? (const char *)v : "");
						break;
					}
				} while (xmlTextReaderMoveToNextAttribute(xml.reader) == 1);
				xmlTextReaderMoveToElement(xml.reader);
			}
			rel = tr_office_rels_find(&rels, rid ? rid : id);
			free(rid);
		}
		free(id);
		if (!rel || rel->external)
			continue;
		grown = realloc(p->slides, (p->n_slides + 1) * sizeof(*grown));
		if (grown)
			p->slides = grown;
		if (!grown || !(p->slides[p->n_slides] = strdup(rel->target))) {
			p->z->oom = true;
			rc = -1;
			break;
		}
		p->n_slides++;
	}
	tr_office_xml_close(&xml);
	tr_office_rels_free(&rels);
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

/* Reads a slide or notes part into s; pictures are attached to res with slide number. */
static int read_slide_part(struct pptx *p, const char *part, uint32_t slide, struct slide_text *s,
			   struct tr_buf *pictures)
{
	struct tr_office_rels rels;
	struct tr_office_xml xml;
	int rc;

	if (tr_office_rels_load(p->z, part, &rels) < 0)
		return -1;
	rc = tr_office_xml_open(&xml, p->z, part);
	if (rc > 0)
		rc = tr_office_zip_fail(p->z, TR_E_CORRUPT, "the part %s is missing", part);
	while (rc == 0 && (rc = tr_office_xml_next(&xml)) == 1) {
		int type = tr_office_xml_type(&xml);
		const char *name = tr_office_xml_name(&xml);
		const char *text;

		rc = 0;
		if (type == XML_READER_TYPE_ELEMENT) {
			bool empty = tr_office_xml_empty(&xml);

			if (!strcmp(name, "sld")) {
				char *show = tr_office_xml_attr(&xml, "show");

				s->hidden = show && (!strcmp(show, "0") || !strcmp(show, "false"));
				free(show);
			} else if (!strcmp(name, "sp")) {
				s->in_title = s->in_body_ph = s->in_notes_body = false;
			} else if (!strcmp(name, "ph")) {
				char *t = tr_office_xml_attr(&xml, "type");

				s->in_title = t && (!strcmp(t, "title") || !strcmp(t, "ctrTitle"));
				s->in_body_ph = !t || !strcmp(t, "body") || !strcmp(t, "obj");
				s->in_notes_body = t && !strcmp(t, "body");
				free(t);
			} else if (!strcmp(name, "p") && !empty) {
				s->para.len = 0;
				s->lvl = 0;
			} else if (!strcmp(name, "pPr")) {
				char *lvl = tr_office_xml_attr(&xml, "lvl");

				s->lvl = lvl ? atoi(lvl) : 0;
				free(lvl);
			} else if (!strcmp(name, "t") && !empty) {
				s->in_t = true;
			} else if (!strcmp(name, "br")) {
				rc = tr_buf_append(&s->para, "\n", 1);
			} else if (!strcmp(name, "tbl") && !empty) {
				if (++s->tbl_depth == 1)
					tr_office_table_free(&s->table);
			} else if (s->tbl_depth == 1 && !strcmp(name, "tr")) {
				rc = tr_office_table_row(&s->table);
			} else if (s->tbl_depth == 1 && !strcmp(name, "tc")) {
				rc = tr_office_table_cell(&s->table);
			} else if (!strcmp(name, "blip") && pictures) {
				char *id = tr_office_xml_attr(&xml, "embed");
				const struct tr_office_rel *rel = tr_office_rels_find(&rels, id);

				free(id);
				if (rel && !rel->external) {
					rc = tr_office_picture(p->z, rel->target, slide, p->d->opts,
							       p->res, pictures);
					if (rc == 0)
						rc = tr_buf_append(pictures, "\n", 1);
				}
			} else if (!strcmp(name, "Fallback")) {
				rc = tr_office_xml_skip(&xml) < 0 ? -1 : 0;
			}
		} else if (type == XML_READER_TYPE_END_ELEMENT) {
			if (!strcmp(name, "p"))
				rc = end_paragraph(s);
			else if (!strcmp(name, "t"))
				s->in_t = false;
			else if (!strcmp(name, "sp"))
				s->in_title = s->in_body_ph = s->in_notes_body = false;
			else if (!strcmp(name, "tbl") && s->tbl_depth && --s->tbl_depth == 0)
				rc = tr_office_table_flush(&s->table, &s->body);
		} else if (s->in_t && (text = tr_office_xml_text(&xml))) {
			rc = tr_buf_append(&s->para, text, strlen(text));
		}
		if (rc < 0 && !p->z->error)
			p->z->oom = true;
	}
	tr_office_xml_close(&xml);
	tr_office_rels_free(&rels);
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
