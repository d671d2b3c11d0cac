/* SPDX-License-Identifier: MIT */
/* office_docx_styles.c - what a Word document's paragraphs refer to: the heading level and list
 * of each paragraph style (styles.xml) and the bullet or number of each list level
 * (numbering.xml). */
#include <stdlib.h>
#include <string.h>

#include "office.h"

static int to_int(const char *s, int fallback)
{
	return s && *s ? atoi(s) : fallback;
}

char *tr_docx_take_attr(struct tr_office_xml *x, const char *name)
{
	return tr_office_xml_attr(x, name);
}

int tr_docx_attr_int(struct tr_office_xml *x, const char *name, int fallback)
{
	char *v = tr_docx_take_attr(x, name);
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
	w->cur.id = tr_docx_take_attr(x, "styleId");
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
	name = tr_docx_take_attr(x, "val");
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
	lvl = tr_docx_attr_int(x, "val", 9);
	if (lvl >= 0 && lvl < 9)
		w->cur.heading = lvl + 1;
	return 0;
}

static int on_style_num_id(void *ctx, struct tr_office_xml *x)
{
	struct styles_walk *w = ctx;

	if (w->in_style)
		w->cur.num_id = tr_docx_attr_int(x, "val", 0);
	return 0;
}

static int on_style_ilvl(void *ctx, struct tr_office_xml *x)
{
	struct styles_walk *w = ctx;

	if (w->in_style)
		w->cur.lvl = tr_docx_attr_int(x, "val", 0);
	return 0;
}

/* styles.xml: paragraph styles' heading levels and list numbering. */
int tr_docx_load_styles(struct docx *dx, const char *part)
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

	w->abstract_id = tr_docx_attr_int(x, "abstractNumId", -1);
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
		w->lvl = tr_docx_attr_int(x, "ilvl", -1);
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
	fmt = tr_docx_take_attr(x, "val");
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

	w->num_id = tr_docx_attr_int(x, "numId", -1);
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
		.abstract_id = tr_docx_attr_int(x, "val", -1),
	};
	w->num_id = -1;
	return 0;
}

/* numbering.xml: which lists are bulleted, per level; which abstract list each list uses. */
int tr_docx_load_numbering(struct docx *dx, const char *part)
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

const struct docx_style *tr_docx_find_style(const struct docx *dx, const char *id)
{
	for (size_t i = 0; id && i < dx->n_styles; i++)
		if (strcmp(dx->styles[i].id, id) == 0)
			return &dx->styles[i];
	return NULL;
}

struct docx_num *tr_docx_find_num(struct docx *dx, int num_id)
{
	for (size_t i = 0; i < dx->n_nums; i++)
		if (dx->nums[i].num_id == num_id)
			return &dx->nums[i];
	return NULL;
}

bool tr_docx_level_is_bullet(const struct docx *dx, int abstract_id, int lvl)
{
	for (size_t i = 0; i < dx->n_levels; i++)
		if (dx->levels[i].abstract_id == abstract_id && dx->levels[i].lvl == lvl)
			return dx->levels[i].bullet;
	return true;
}
