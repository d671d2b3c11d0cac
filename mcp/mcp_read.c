/* SPDX-License-Identifier: MIT */
/* mcp_read.c - the read tool of toolfs-mcp: arguments to a selector, a confined read, and the
 * .tool.mcp.json rendering whose continuation speaks in the tool's arguments. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp.h"
#include "mcp_args.h"
#include "tr_read.h"

/* A result with isError and one text block: arguments the tool cannot take. */
static struct tr_doc *argument_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static struct tr_doc *argument_error(const char *fmt, ...)
{
	char sentence[512];
	va_list ap;
	cJSON *result = cJSON_CreateObject(), *content, *block;
	char *text = NULL;
	struct tr_doc *doc = NULL;

	va_start(ap, fmt);
	vsnprintf(sentence, sizeof(sentence), fmt, ap);
	va_end(ap);
	if (!result)
		return NULL;
	content = cJSON_AddArrayToObject(result, "content");
	block = cJSON_CreateObject();
	if (content && block && cJSON_AddItemToArray(content, block) &&
	    cJSON_AddStringToObject(block, "type", "text") &&
	    cJSON_AddStringToObject(block, "text", sentence) &&
	    cJSON_AddBoolToObject(result, "isError", true))
		text = cJSON_PrintUnformatted(result);
	else
		cJSON_Delete(block);
	cJSON_Delete(result);
	if (text && (doc = tr_doc_new()) &&
	    (tr_doc_append(doc, text, strlen(text)) < 0 || tr_doc_append(doc, "\n", 1) < 0)) {
		tr_doc_unref(doc);
		doc = NULL;
	}
	free(text);
	return doc;
}

/* The continuation in the tool's own words: the arguments of the next call. */
static void call_continuation(const char *name, size_t name_len, const struct tr_selector *next,
			      enum tr_format fmt, char *buf, size_t size, void *arg)
{
	(void)name, (void)name_len, (void)fmt, (void)arg;
	if (next->time) {
		char span[80];

		tr_selector_format_time(next, span, sizeof(span));
		snprintf(buf, size, "call read with time \"%s\"", span);
	} else if (next->column)
		snprintf(buf, size,
			 "call read with offset %" PRIu64 " (line %" PRIu64
			 " is cut at character %" PRIu64
			 "; this tool shows lines from their start)",
			 next->start + 1, next->start, next->column);
	else if (next->end)
		snprintf(buf, size, "call read with offset %" PRIu64 ", limit %" PRIu64,
			 next->start, next->end - next->start + 1);
	else
		snprintf(buf, size, "call read with offset %" PRIu64, next->start);
}

/* Reads file_path with sel into a rendered mcp result; res is destroyed by the caller. */
static struct tr_doc *read_and_render(const struct mcp_roots *roots, const struct tr_options *opts,
				      const struct tr_render_style *style, const char *file_path,
				      const struct tr_selector *sel, const struct tr_cancel *cancel,
				      struct tr_result *res)
{
	char *shown = NULL, *real = NULL;
	struct stat st;
	int opath, fd;

	opath = mcp_open_confined(roots, file_path, opts->symlinks, &shown, &real, res);
	if (opath == -2)
		return NULL;
	if (opath >= 0) {
		struct tr_source src = {
			.path = shown,
			.cancel = cancel}; /* name: the core takes the last component */

		res->abs_path = real;
		real = NULL;
		if (fstat(opath, &st) < 0) {
			tr_result_fail_errno(res, errno);
		} else if (!S_ISREG(st.st_mode)) {
			tr_result_not_regular(res, &st);
		} else {
			/* The O_PATH fd is the checked inode; reopening it reads exactly that. */
			fd = tr_reopen(opath, O_RDONLY | O_NONBLOCK);
			if (fd < 0) {
				tr_result_fail_errno(res, -fd);
			} else {
				int rc = tr_read_fd(fd, &src, sel, opts, res, NULL);

				close(fd);
				if (rc < 0) {
					close(opath);
					free(shown);
					return NULL;
				}
			}
		}
		close(opath);
		free(shown);
	}
	return tr_render_ex(res, TR_FORMAT_MCP, style);
}

/* The selector of the arguments region, pages, time or offset/limit (already checked >= 1, 0
 * when absent) into sel. Returns NULL, or the sentence saying why they cannot be taken (in buf
 * when a row of mcp_args.def words it). */
static const char *select_args(const cJSON *args, uint64_t offset, uint64_t limit,
			       struct tr_selector *sel, char *buf, size_t size)
{
	const cJSON *pages = cJSON_GetObjectItemCaseSensitive(args, "pages");
	const cJSON *region = cJSON_GetObjectItemCaseSensitive(args, "region");
	const cJSON *time = cJSON_GetObjectItemCaseSensitive(args, "time");

	if (region && !cJSON_IsNull(region)) {
		const char *text = cJSON_IsString(region) ? region->valuestring : NULL;

		if (!text || tr_selector_parse(text, strlen(text), sel) < 0 || !sel->has_region)
			return mcp_args_invalid(MCP_ARG_region, buf, size);
		if ((pages && !cJSON_IsNull(pages)) || (time && !cJSON_IsNull(time)) || offset ||
		    limit)
			return "Invalid arguments for read: give region alone, "
			       "not with pages, time or offset/limit.";
	} else if (pages && !cJSON_IsNull(pages)) {
		const char *text = cJSON_IsString(pages) ? pages->valuestring : NULL;

		if (!text || tr_selector_parse(text, strlen(text), sel) < 0 || sel->column ||
		    !sel->end)
			return mcp_args_invalid(MCP_ARG_pages, buf, size);
		if (offset || limit)
			return "Invalid arguments for read: give either pages or "
			       "offset/limit, not both.";
		if (time && !cJSON_IsNull(time))
			return "Invalid arguments for read: give either pages or "
			       "time, not both.";
	} else if (time && !cJSON_IsNull(time)) {
		const char *text = cJSON_IsString(time) ? time->valuestring : NULL;

		if (!text || tr_selector_parse_time(text, strlen(text), sel) < 0 || offset || limit)
			return mcp_args_invalid(MCP_ARG_time, buf, size);
	} else if (offset || limit) {
		sel->present = true;
		sel->start = offset ? offset : 1;
		/* A-B, or A- (from A, the default count), or 1-N */
		sel->end = limit ? sel->start + limit - 1 : 0;
		if (limit && sel->end < sel->start)
			sel->end = UINT64_MAX;
	}
	return NULL;
}

struct tr_doc *mcp_read_tool(const struct mcp_roots *roots, const struct tr_options *opts,
			     const cJSON *args, bool path_nul, const struct tr_cancel *cancel)
{
	struct tr_selector sel = {.present = false};
	struct mcp_arg_values vals;
	struct tr_options call_opts = *opts;
	struct tr_render_style style;
	struct tr_result res;
	struct tr_doc *doc;
	const char *why;
	char sentence[512];

	tr_render_style_init(&style, opts);
	style.continuation = call_continuation;
	if (mcp_args_check(args, path_nul, &vals, &call_opts, sentence, sizeof(sentence)) < 0)
		return argument_error("%s", sentence);
	opts = &call_opts;
	why = select_args(args, vals.count[MCP_ARG_offset], vals.count[MCP_ARG_limit], &sel,
			  sentence, sizeof(sentence));
	if (why)
		return argument_error("%s", why);
	doc = read_and_render(roots, opts, &style, vals.path, &sel, cancel, &res);
	if (doc && tr_doc_size(doc) > MCP_MAX_RESULT) {
		char size[32];
		uint64_t bytes = tr_doc_size(doc);
		char *shown = strdup(res.path ? res.path : vals.path);

		tr_doc_unref(doc);
		doc = NULL;
		tr_result_destroy(&res);
		if (shown && tr_result_init(&res, shown) == 0) {
			tr_format_size(bytes, size, sizeof(size));
			tr_result_fail(
				&res, TR_E_TOO_LARGE,
				"The result for %s is %s, over the 10 MB an MCP message may carry. "
				"Read fewer pages or cells at once (pages \"A-B\", or offset and "
				"limit).",
				shown, size);
			doc = tr_render_ex(&res, TR_FORMAT_MCP, &style);
		}
		free(shown);
	}
	tr_result_destroy(&res);
	return doc;
}
