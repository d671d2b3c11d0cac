/* SPDX-License-Identifier: MIT */
/* render_style.c - what a front end decides in a rendering: the MCP options and the words of the
 * continuation hint (the sibling to read next, or the front end's own phrase); and the text a
 * failed result shows. */
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "tr_read.h"

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
	tr_selector_format_after(name, name_len, next, sel, sizeof(sel));
	snprintf(buf, size, "read %.*s:%s%s", (int)name_len, name, sel, tr_format_suffix(fmt));
}

/* Where next splits: after its NAME, where the reader joined them (res->next_name_len), not
 * where the grammar alone would: that reads "log:1:35-300" as 95-300 s of "log", not lines
 * 35-300 of "log:1". */
static void split_next(const struct tr_result *res, size_t *base_len, struct tr_selector *next,
		       enum tr_format next_fmt)
{
	size_t own = res->next_name_len;
	size_t stem = strlen(res->next) - strlen(tr_format_suffix(next_fmt));
	struct tr_selector sel;

	if (own == 0 || own == *base_len || stem <= own + 1 || res->next[own] != ':')
		return;
	if (tr_selector_parse(res->next + own + 1, stem - own - 1, &sel) == 0 ||
	    tr_selector_parse_time(res->next + own + 1, stem - own - 1, &sel) == 0) {
		*base_len = own;
		*next = sel;
	}
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
	else {
		split_next(res, &base_len, &next, next_fmt);
		/* audio and video read A-B as seconds: their continuation is a time */
		if (res->range_unit == TR_UNIT_SECOND && !next.time)
			next = (struct tr_selector){.present = true,
						    .time = true,
						    .t0 = (double)next.start,
						    .t1 = next.end ? (double)next.end : -1};
		fn(res->next, base_len, &next, fmt, buf, size, style->continuation_arg);
	}
}

const char *tr_render_failure_text(const struct tr_result *res, size_t *len)
{
	size_t error_len = strlen(res->error_text);

	if (res->content.data && res->content.len > error_len &&
	    memcmp(res->content.data, res->error_text, error_len) == 0) {
		*len = res->content.len;
		return res->content.data;
	}
	*len = error_len;
	return res->error_text;
}
