/* render.c - tr_render: one ToolResult into the bytes of its virtual file, in any format. */
#include "render.h"
#include "tr_doc.h"
#include "tr_read.h"

struct tr_doc *tr_render(const struct tr_result *res, enum tr_format fmt)
{
	struct tr_doc *doc = tr_doc_new();
	struct tr_json j;

	if (!doc)
		return NULL;
	tr_json_init(&j, doc);
	if (fmt == TR_FORMAT_TOOL)
		tr_render_tool_object(&j, res, true);
	else
		tr_render_provider(&j, res, fmt);
	tr_doc_append(doc, "\n", 1);
	if (tr_doc_failed(doc)) {
		tr_doc_unref(doc);
		return NULL;
	}
	tr_doc_seal(doc);
	return doc;
}
