/* SPDX-License-Identifier: MIT */
/* office_odp.c - OpenDocument presentations (.odp): content.xml streamed once into its pages
 * (draw:page), each shown as a .pptx slide is: title, body text with list levels, tables,
 * pictures (attached to images[] with their slide) and speaker notes; windowed by slides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"

/* One draw:page as read. */
struct odp_page {
	struct tr_buf title, body, notes;
	char *name;      /* draw:name, the title when no title frame has text */
	char **pictures; /* owned entries, in order */
	size_t n_pictures;
	bool hidden;
};

struct odp {
	const struct tr_office_doc *d;
	struct tr_office_zip *z;
	struct tr_result *res;
	struct odp_page *pages;
	size_t n_pages;
	char **hidden_styles; /* drawing-page styles with presentation:visibility="hidden" */
	size_t n_hidden_styles;
	char *style; /* the name of the style:style being read */

	/* the reading state */
	struct tr_buf para;
	int page_depth;  /* the depth of the draw:page being read (0: outside pages) */
	int para_depth;  /* inside text:p / text:h */
	int title_depth; /* the depth of the title frame being read (0: none) */
	int notes_depth; /* the depth of presentation:notes being read (0: none) */
	int frame_depth; /* the depth of the frame whose first image was taken (0: none) */
	int list_depth;
	int tbl_depth;
	struct tr_office_table table;
};

static void page_free(struct odp_page *pg)
{
	tr_buf_free(&pg->title);
	tr_buf_free(&pg->body);
	tr_buf_free(&pg->notes);
	free(pg->name);
	for (size_t i = 0; i < pg->n_pictures; i++)
		free(pg->pictures[i]);
	free(pg->pictures);
}

static int add_string(char ***list, size_t *n, char *s)
{
	char **grown;

	if (!s)
		return -1;
	grown = realloc(*list, (*n + 1) * sizeof(*grown));
	if (!grown) {
		free(s);
		return -1;
	}
	*list = grown;
	grown[(*n)++] = s;
	return 0;
}

static bool hidden_style(const struct odp *o, const char *style)
{
	for (size_t i = 0; style && i < o->n_hidden_styles; i++)
		if (!strcmp(o->hidden_styles[i], style))
			return true;
	return false;
}

/* The page being read, or NULL outside pages. */
static struct odp_page *current(struct odp *o)
{
	return o->n_pages && o->page_depth ? &o->pages[o->n_pages - 1] : NULL;
}

/* A new draw:page (the reader stands on it). */
static int page_start(struct odp *o, struct tr_office_xml *x)
{
	struct odp_page *grown = realloc(o->pages, (o->n_pages + 1) * sizeof(*grown));
	struct odp_page *pg;
	char *vis, *style;

	if (!grown)
		return -1;
	o->pages = grown;
	pg = &o->pages[o->n_pages++];
	memset(pg, 0, sizeof(*pg));
	pg->name = tr_office_xml_attr(x, "name");
	vis = tr_office_xml_attr(x, "visibility");
	style = tr_office_xml_attr(x, "style-name");
	pg->hidden = (vis && !strcmp(vis, "hidden")) || hidden_style(o, style);
	free(vis);
	free(style);
	o->title_depth = o->notes_depth = o->frame_depth = o->list_depth = o->tbl_depth = 0;
	o->para_depth = 0;
	o->page_depth = tr_office_xml_depth(x);
	tr_office_table_free(&o->table);
	return 0;
}

/* End of a text:p or text:h: into the table cell, the title, the notes or the body. */
static int end_paragraph(struct odp *o)
{
	struct odp_page *pg = current(o);
	int rc = 0;

	if (!pg || tr_office_blank(&o->para)) {
		/* nothing */
	} else if (o->tbl_depth || (o->title_depth && !o->notes_depth)) {
		rc = tr_office_paragraph_to(o->tbl_depth ? &o->table : NULL, &pg->title, &o->para);
	} else {
		struct tr_buf *to = o->notes_depth ? &pg->notes : &pg->body;
		int level = o->list_depth > 9 ? 8 : o->list_depth - 1;

		if (o->list_depth && !o->notes_depth)
			rc = tr_buf_printf(to, "%*s- ", 2 * level, "");
		if (rc == 0)
			rc = tr_buf_append(to, o->para.data, o->para.len);
		if (rc == 0)
			rc = tr_buf_append(to, "\n", 1);
	}
	o->para.len = 0;
	return rc;
}

static int element_start(void *ctx, struct tr_office_xml *x)
{
	struct odp *o = ctx;
	const char *name = tr_office_xml_name(x);
	bool empty = tr_office_xml_empty(x);
	int depth = tr_office_xml_depth(x);
	struct odp_page *pg = current(o);
	int rc;

	if (!strcmp(name, "style")) {
		free(o->style);
		o->style = tr_office_xml_attr(x, "name");
		return 0;
	}
	if (!strcmp(name, "drawing-page-properties") && o->style) {
		char *vis = tr_office_xml_attr(x, "visibility");

		rc = 0;
		if (vis && !strcmp(vis, "hidden"))
			rc = add_string(&o->hidden_styles, &o->n_hidden_styles, strdup(o->style));
		free(vis);
		return rc;
	}
	if (!strcmp(name, "page")) {
		rc = page_start(o, x);
		if (empty)
			o->page_depth = 0; /* a page without shapes */
		return rc;
	}
	if (!pg)
		return 0;
	rc = tr_office_odf_space(x, &o->para);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (!strcmp(name, "notes") && !empty && !o->notes_depth) {
		o->notes_depth = depth;
	} else if (!strcmp(name, "frame") && !empty) {
		char *class = tr_office_xml_attr(x, "class");

		if (!o->title_depth && class && !strcmp(class, "title"))
			o->title_depth = depth;
		free(class);
		if (o->frame_depth <= 0)
			o->frame_depth = -depth; /* no image taken from it yet */
	} else if ((!strcmp(name, "p") || !strcmp(name, "h")) && !empty) {
		if (o->para_depth++ == 0)
			o->para.len = 0;
	} else if (!strcmp(name, "list") && !empty) {
		o->list_depth++;
	} else if ((rc = tr_office_odf_table(x, &o->tbl_depth, &o->table)) != 0) {
		return rc < 0 ? -1 : 0;
	} else if (!strcmp(name, "image") && !o->notes_depth && o->frame_depth <= 0) {
		/* The first image of a frame; the others are its alternatives. */
		char *href = tr_office_xml_attr(x, "href");
		char *part = href && strncmp(href, "http", 4) != 0
				     ? tr_office_resolve("content.xml", href)
				     : NULL;

		free(href);
		if (o->frame_depth < 0)
			o->frame_depth = -o->frame_depth;
		if (part)
			return add_string(&pg->pictures, &pg->n_pictures, part);
	}
	return 0;
}

static int element_end(void *ctx, struct tr_office_xml *x)
{
	struct odp *o = ctx;
	const char *name = tr_office_xml_name(x);
	int depth = tr_office_xml_depth(x);
	struct odp_page *pg = current(o);

	if (!pg)
		return 0;
	if (!strcmp(name, "page") && depth == o->page_depth) {
		o->page_depth = 0;
		return 0;
	}
	if ((!strcmp(name, "p") || !strcmp(name, "h")) && o->para_depth && --o->para_depth == 0)
		return end_paragraph(o);
	if (!strcmp(name, "list") && o->list_depth)
		o->list_depth--;
	else if (!strcmp(name, "notes") && o->notes_depth == depth)
		o->notes_depth = 0;
	else if (!strcmp(name, "frame")) {
		if (o->title_depth == depth)
			o->title_depth = 0;
		if (o->frame_depth == depth || o->frame_depth == -depth)
			o->frame_depth = 0;
	} else if (!strcmp(name, "table") && o->tbl_depth && --o->tbl_depth == 0)
		return tr_office_table_flush(&o->table, o->notes_depth ? &pg->notes : &pg->body);
	return 0;
}

static int on_page_text(void *ctx, struct tr_office_xml *x, const char *text)
{
	struct odp *o = ctx;

	(void)x;
	return o->para_depth && current(o) ? tr_buf_append(&o->para, text, strlen(text)) : 0;
}

/* Streams content.xml into o->pages: every element by the one row of its rules. */
static int read_pages(struct odp *o)
{
	static const struct tr_office_rule rules[] = {{NULL, element_start, element_end}};
	const struct tr_office_walk walk = {rules, 1, on_page_text, o};
	int rc = tr_office_walk_part(o->z, o->d->main_part, true, NULL, &walk);

	for (size_t i = 0; i < o->n_pages; i++)
		if (o->pages[i].title.oom || o->pages[i].body.oom || o->pages[i].notes.oom)
			o->z->oom = true;
	if (o->para.oom)
		o->z->oom = true;
	return rc < 0 || o->z->oom ? -1 : 0;
}

/* Renders page index (1-based) into out, its pictures attached to res. */
static int render_page(void *ctx, size_t index, struct tr_buf *out)
{
	struct odp *o = ctx;
	struct odp_page *pg = &o->pages[index - 1];
	struct tr_buf pictures = {0}, name = {0};
	const struct tr_buf *title = &pg->title;
	int rc = 0;

	if (!title->len && pg->name && pg->name[0]) {
		rc = tr_buf_append(&name, pg->name, strlen(pg->name));
		title = &name;
	}
	for (size_t i = 0; i < pg->n_pictures && rc == 0; i++) {
		rc = tr_office_picture(o->z, pg->pictures[i], (uint32_t)index, o->d->opts, o->res,
				       &pictures);
		if (rc == 0)
			rc = tr_buf_append(&pictures, "\n", 1);
	}
	if (rc == 0)
		rc = tr_office_slide_compose(out, index, title, pg->hidden, &pg->body, &pictures,
					     &pg->notes);
	if (rc < 0 && !o->z->error)
		o->z->oom = true;
	tr_buf_free(&pictures);
	tr_buf_free(&name);
	return rc < 0 ? -1 : 0;
}

int tr_office_odp(const struct tr_office_doc *d, struct tr_result *res)
{
	struct odp o = {.d = d, .z = d->z, .res = res};
	int rc = -1;

	res->type = TR_TYPE_PRESENTATION;
	if (read_pages(&o) == 0)
		rc = tr_office_slides(d, o.n_pages, render_page, &o, res);
	for (size_t i = 0; i < o.n_pages; i++)
		page_free(&o.pages[i]);
	free(o.pages);
	for (size_t i = 0; i < o.n_hidden_styles; i++)
		free(o.hidden_styles[i]);
	free(o.hidden_styles);
	free(o.style);
	tr_buf_free(&o.para);
	tr_office_table_free(&o.table);
	return rc;
}
