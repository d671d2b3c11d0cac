/* SPDX-License-Identifier: MIT */
/* render_txt.c - the txt format of docs/SPEC.md §6: the text a model reads, then footer lines saying
 * where to continue and what images or documents the text cannot carry. Never base64. */
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "tr_read.h"
#include "util.h"

static void append_str(struct tr_doc *doc, const char *s)
{
	tr_doc_append(doc, s, strlen(s));
}

void tr_render_txt(struct tr_doc *doc, const struct tr_result *res,
		   const struct tr_render_style *style)
{
	const char *text = res->content.data ? res->content.data : "";
	size_t len = res->content.len;
	const char *base = tr_path_base_name(res->path ? res->path : "");
	char more[1024], line[1536], size[32], name[1024];

	if (!res->success && res->error_text)
		text = tr_render_failure_text(res, &len);
	tr_doc_append(doc, text, len);
	if (len && text[len - 1] != '\n')
		tr_doc_append(doc, "\n", 1);
	if (style->sel && style->sel->present) {
		char sel[96];

		tr_selector_format_after(base, strlen(base), style->sel, sel, sizeof(sel));
		snprintf(name, sizeof(name), "%s:%s", base, sel);
	} else {
		snprintf(name, sizeof(name), "%s", base);
	}
	tr_render_continuation(res, TR_FORMAT_TXT, style, more, sizeof(more));
	if (!*more && !res->n_images && !res->n_documents && !res->n_audio)
		return;
	tr_doc_append(doc, "\n", 1);
	if (*more) {
		snprintf(line, sizeof(line), "[truncated: %s next]\n", more);
		append_str(doc, line);
	}
	for (size_t i = 0; i < res->n_images; i++) {
		const struct tr_image *img = &res->images[i];
		char where[32] = "";

		if (img->page)
			snprintf(where, sizeof(where), ", page %u", (unsigned)img->page);
		else if (img->cell)
			snprintf(where, sizeof(where), ", cell %u", (unsigned)img->cell);
		else if (img->slide)
			snprintf(where, sizeof(where), ", slide %u", (unsigned)img->slide);
		snprintf(line, sizeof(line),
			 "[image %zu: %s %ux%u%s, in %s.tool.json or the MCP read tool]\n", i + 1,
			 img->media_type, (unsigned)img->width, (unsigned)img->height, where, name);
		append_str(doc, line);
	}
	for (size_t i = 0; i < res->n_documents; i++) {
		const struct tr_document *d = &res->documents[i];

		tr_format_size(d->data ? d->data->len : 0, size, sizeof(size));
		snprintf(line, sizeof(line), "[document %zu: %s %s, in %s.tool.json]\n", i + 1,
			 d->media_type, size, name);
		append_str(doc, line);
	}
	for (size_t i = 0; i < res->n_audio; i++) {
		const struct tr_audio *a = &res->audio[i];

		tr_format_size(a->data ? a->data->len : 0, size, sizeof(size));
		snprintf(line, sizeof(line),
			 "[audio %zu: %s %.3f-%.3f s %s, in %s.tool.json or the MCP read tool]\n",
			 i + 1, a->media_type, a->start, a->end, size, name);
		append_str(doc, line);
	}
}
