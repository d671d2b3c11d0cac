/* render.c - tr_render: one ToolResult into the bytes of its virtual file, in any format. */
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "tr_doc.h"
#include "tr_read.h"

const char *tr_render_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

void tr_render_style_init(struct tr_render_style *style, const struct tr_options *opts)
{
	*style = (struct tr_render_style){
		.mcp_structured = opts && opts->mcp_structured,
		.mcp_documents = opts && opts->mcp_documents,
	};
}

/* The mount's and the CLI's continuation: the sibling in the format being read. */
static void sibling_continuation(const char *name, size_t name_len, const struct tr_selector *next,
				 enum tr_format fmt, char *buf, size_t size, void *arg)
{
	char sel[96];

	(void)arg;
	tr_selector_format(next, sel, sizeof(sel));
	snprintf(buf, size, "read %.*s:%s%s", (int)name_len, name, sel, tr_format_suffix(fmt));
}

void tr_render_continuation(const struct tr_result *res, enum tr_format fmt,
			    const struct tr_render_style *style, char *buf, size_t size)
{
	tr_continuation_fn fn = style->continuation ? style->continuation : sibling_continuation;
	struct tr_selector next;
	enum tr_format next_fmt;
	size_t base_len;

	buf[0] = '\0';
	if (!res->success || !res->truncated || !res->next)
		return;
	if (tr_virtual_name_parse(res->next, &base_len, &next, &next_fmt) < 0 || !next.present)
		snprintf(buf, size, "read %s", res->next); /* not a reader's name: shown as it is */
	else
		fn(res->next, base_len, &next, fmt, buf, size, style->continuation_arg);
}

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
