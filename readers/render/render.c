/* SPDX-License-Identifier: MIT */
/* render.c - tr_render: one ToolResult into the bytes of its virtual file, in any format. */
#include "render.h"
#include "tr_doc.h"
#include "tr_read.h"

struct tr_doc *tr_render_ex(const struct tr_result *res, enum tr_format fmt,
			    const struct tr_render_style *style)
{
	struct tr_render_style defaults;
	struct tr_doc *doc = tr_doc_new();
	struct tr_json j;

	if (!doc)
		return NULL;
	if (!style) {
		tr_render_style_init(&defaults, NULL);
		style = &defaults;
	}
	tr_json_init(&j, doc);
	if (fmt == TR_FORMAT_TOOL) {
		tr_render_tool_object(&j, res, TR_OBJECT_PAYLOADS | TR_OBJECT_CONTENT);
		tr_doc_append(doc, "\n", 1);
	} else if (fmt == TR_FORMAT_TXT) {
		tr_render_txt(doc, res, style);
	} else {
		tr_render_provider(&j, res, fmt, style);
		tr_doc_append(doc, "\n", 1);
	}
	if (tr_doc_failed(doc)) {
		tr_doc_unref(doc);
		return NULL;
	}
	tr_doc_seal(doc);
	return doc;
}

struct tr_doc *tr_render(const struct tr_result *res, enum tr_format fmt)
{
	return tr_render_ex(res, fmt, NULL);
}
