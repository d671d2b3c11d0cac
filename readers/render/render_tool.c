/* SPDX-License-Identifier: MIT */
/* render_tool.c - the canonical .tool.json object of a ToolResult (docs/SPEC.md §2). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "render.h"
#include "tr_tokens.h"

static void write_size_object(struct tr_json *j, const char *key, uint32_t w, uint32_t h)
{
	tr_json_key(j, key);
	tr_json_begin_object(j);
	tr_json_key(j, "width");
	tr_json_uint(j, w);
	tr_json_key(j, "height");
	tr_json_uint(j, h);
	tr_json_end_object(j);
}

/* metadata.region: {x, y, width, height} of the source shown. */
static void write_region(struct tr_json *j, const struct tr_region *r)
{
	static const char *const keys[] = {"x", "y", "width", "height"};
	const uint32_t values[] = {r->x, r->y, r->width, r->height};

	tr_json_key(j, "region");
	tr_json_begin_object(j);
	for (size_t i = 0; i < 4; i++) {
		tr_json_key(j, keys[i]);
		tr_json_uint(j, values[i]);
	}
	tr_json_end_object(j);
}

/* RFC 3339 takes four-digit years: mtimes outside years 0000-9999 (`touch -d @1e15` works on
 * tmpfs) are clamped to them, which also keeps gmtime_r within its range. */
#define RFC3339_MIN_SEC (-62167219200LL) /* 0000-01-01T00:00:00Z */
#define RFC3339_MAX_SEC 253402300799LL   /* 9999-12-31T23:59:59Z */

/* metadata.tokens: what content and each image cost a model (include/tr_tokens.h). */
static void write_tokens(struct tr_json *j, const struct tr_result *res)
{
	tr_json_key(j, "tokens");
	tr_json_begin_object(j);
	tr_json_key(j, "tokenizer");
	tr_json_cstring(j, TR_TOKENIZER);
	tr_json_key(j, "content");
	tr_json_uint(j, res->meta.has_content_tokens
				? res->meta.content_tokens
				: tr_tokens_estimate(res->content.data, res->content.len));
	if (res->n_images) {
		tr_json_key(j, "images");
		tr_json_begin_array(j);
		for (size_t i = 0; i < res->n_images; i++) {
			const struct tr_image *im = &res->images[i];

			tr_json_begin_object(j);
			tr_json_key(j, "anthropic");
			tr_json_uint(j, tr_tokens_image_anthropic(im->width, im->height));
			tr_json_key(j, "openai");
			tr_json_uint(j, tr_tokens_image_openai(im->width, im->height));
			tr_json_end_object(j);
		}
		tr_json_end_array(j);
	}
	tr_json_end_object(j);
}

/* metadata.ocr: {"language", "pages": [{"page", "confidence"}]}, or for an image {"language",
 * "confidence"} (docs/SPEC.md §2). */
static void write_ocr(struct tr_json *j, const struct tr_metadata *m)
{
	tr_json_key(j, "ocr");
	tr_json_begin_object(j);
	tr_json_key(j, "language");
	tr_json_cstring(j, m->ocr_language);
	if (m->n_ocr == 1 && m->ocr[0].page == 0) {
		tr_json_key(j, "confidence");
		tr_json_int(j, m->ocr[0].confidence);
	} else {
		tr_json_key(j, "pages");
		tr_json_begin_array(j);
		for (size_t i = 0; i < m->n_ocr; i++) {
			tr_json_begin_object(j);
			tr_json_key(j, "page");
			tr_json_uint(j, m->ocr[i].page);
			tr_json_key(j, "confidence");
			tr_json_int(j, m->ocr[i].confidence);
			tr_json_end_object(j);
		}
		tr_json_end_array(j);
	}
	tr_json_end_object(j);
}

static void write_sheets(struct tr_json *j, const struct tr_metadata *m)
{
	tr_json_key(j, "sheets");
	tr_json_begin_array(j);
	for (size_t i = 0; i < m->n_sheets; i++) {
		tr_json_begin_object(j);
		tr_json_key(j, "name");
		tr_json_cstring(j, m->sheets[i].name ? m->sheets[i].name : "");
		if (m->sheets[i].range) {
			tr_json_key(j, "range");
			tr_json_cstring(j, m->sheets[i].range);
		}
		if (m->sheets[i].hidden) {
			tr_json_key(j, "hidden");
			tr_json_bool(j, true);
		}
		tr_json_end_object(j);
	}
	tr_json_end_array(j);
}

static void write_metadata(struct tr_json *j, const struct tr_result *res)
{
	const struct tr_metadata *m = &res->meta;
	char when[64]; /* room for any int year, though it is clamped to 0000-9999 */
	int64_t sec = m->modified_sec < RFC3339_MIN_SEC   ? RFC3339_MIN_SEC
		      : m->modified_sec > RFC3339_MAX_SEC ? RFC3339_MAX_SEC
							  : m->modified_sec;
	time_t t = (time_t)sec;
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	tr_json_key(j, "metadata");
	tr_json_begin_object(j);
	if (m->has_stat) {
		tr_json_key(j, "size");
		tr_json_uint(j, m->size);
		tr_json_key(j, "modified");
		tr_json_cstring(j, when);
	}
	if (m->has_sha256) {
		tr_json_key(j, "sha256");
		if (m->sha256_later)
			tr_json_digest(j, m->sha256_later);
		else
			tr_json_cstring(j, m->sha256);
	}
	if (m->description) {
		tr_json_key(j, "description");
		tr_json_cstring(j, m->description);
	}
	if (m->encoding) {
		tr_json_key(j, "encoding");
		tr_json_cstring(j, m->encoding);
	}
	if (m->line_ending) {
		tr_json_key(j, "lineEnding");
		tr_json_cstring(j, m->line_ending);
	}
	if (m->has_dimensions)
		write_size_object(j, "dimensions", m->width, m->height);
	if (m->page_count >= 0) {
		tr_json_key(j, "pageCount");
		tr_json_int(j, m->page_count);
	}
	if (m->cell_count >= 0) {
		tr_json_key(j, "cellCount");
		tr_json_int(j, m->cell_count);
	}
	if (m->language) {
		tr_json_key(j, "language");
		tr_json_cstring(j, m->language);
	}
	if (m->nbformat) {
		tr_json_key(j, "nbformat");
		tr_json_cstring(j, m->nbformat);
	}
	if (m->slide_count >= 0) {
		tr_json_key(j, "slideCount");
		tr_json_int(j, m->slide_count);
	}
	if (m->n_sheets)
		write_sheets(j, m);
	if (m->tracked_ins >= 0 && m->tracked_del >= 0) {
		tr_json_key(j, "trackedChanges");
		tr_json_begin_object(j);
		tr_json_key(j, "insertions");
		tr_json_int(j, m->tracked_ins);
		tr_json_key(j, "deletions");
		tr_json_int(j, m->tracked_del);
		tr_json_end_object(j);
	}
	if (m->has_resized) {
		tr_json_key(j, "resized");
		tr_json_begin_object(j);
		write_size_object(j, "from", m->from_width, m->from_height);
		write_size_object(j, "to", m->to_width, m->to_height);
		tr_json_key(j, "scale");
		tr_json_fixed(j, m->scale, 3);
		if (m->saving) {
			tr_json_key(j, "saving");
			tr_json_string(j, m->saving, strlen(m->saving));
		}
		tr_json_end_object(j);
	}
	if (m->has_region)
		write_region(j, &m->region);
	if (m->n_ocr)
		write_ocr(j, m);
	write_tokens(j, res);
	tr_json_end_object(j);
}

static void write_images(struct tr_json *j, const struct tr_result *res, bool with_payloads)
{
	tr_json_key(j, "images");
	tr_json_begin_array(j);
	for (size_t i = 0; i < res->n_images; i++) {
		const struct tr_image *img = &res->images[i];

		tr_json_begin_object(j);
		if (with_payloads) {
			tr_json_key(j, "data");
			tr_json_base64(j, img->data);
		}
		tr_json_key(j, "mediaType");
		tr_json_cstring(j, img->media_type);
		tr_json_key(j, "width");
		tr_json_uint(j, img->width);
		tr_json_key(j, "height");
		tr_json_uint(j, img->height);
		if (img->page) {
			tr_json_key(j, "page");
			tr_json_uint(j, img->page);
		}
		if (img->cell) {
			tr_json_key(j, "cell");
			tr_json_uint(j, img->cell);
		}
		if (img->slide) {
			tr_json_key(j, "slide");
			tr_json_uint(j, img->slide);
		}
		tr_json_end_object(j);
	}
	tr_json_end_array(j);
}

static void write_documents(struct tr_json *j, const struct tr_result *res, bool with_payloads)
{
	tr_json_key(j, "documents");
	tr_json_begin_array(j);
	for (size_t i = 0; i < res->n_documents; i++) {
		tr_json_begin_object(j);
		if (with_payloads) {
			tr_json_key(j, "data");
			tr_json_base64(j, res->documents[i].data);
		}
		tr_json_key(j, "mediaType");
		tr_json_cstring(j, res->documents[i].media_type);
		tr_json_end_object(j);
	}
	tr_json_end_array(j);
}

/* "audio": [{"data":BASE64,"mediaType":...,"start":S,"end":E}] (seconds, 3 decimals) */
static void write_audio(struct tr_json *j, const struct tr_result *res, bool with_payloads)
{
	tr_json_key(j, "audio");
	tr_json_begin_array(j);
	for (size_t i = 0; i < res->n_audio; i++) {
		tr_json_begin_object(j);
		if (with_payloads) {
			tr_json_key(j, "data");
			tr_json_base64(j, res->audio[i].data);
		}
		tr_json_key(j, "mediaType");
		tr_json_cstring(j, res->audio[i].media_type);
		tr_json_key(j, "start");
		tr_json_fixed(j, res->audio[i].start, 3);
		tr_json_key(j, "end");
		tr_json_fixed(j, res->audio[i].end, 3);
		tr_json_end_object(j);
	}
	tr_json_end_array(j);
}

void tr_render_tool_object(struct tr_json *j, const struct tr_result *res, unsigned flags)
{
	const char *short_result = res->short_result ? res->short_result : "";

	tr_json_begin_object(j);
	tr_json_key(j, "success");
	tr_json_bool(j, res->success);
	tr_json_key(j, "contentType");
	tr_json_cstring(j, tr_content_type_name(res->type));
	tr_json_key(j, "path");
	tr_json_cstring(j, res->path ? res->path : "");
	if (res->mime_type) {
		tr_json_key(j, "mimeType");
		tr_json_cstring(j, res->mime_type);
	}
	if (flags & TR_OBJECT_CONTENT) {
		tr_json_key(j, "content");
		tr_json_string(j, res->content.data ? res->content.data : "", res->content.len);
	}
	tr_json_key(j, "shortResult");
	tr_json_cstring(j, short_result);
	tr_json_key(j, "truncated");
	tr_json_bool(j, res->truncated);
	if (res->truncated && res->next) {
		tr_json_key(j, "next");
		tr_json_cstring(j, res->next);
	}
	if (res->range_unit != TR_UNIT_NONE) {
		tr_json_key(j, "range");
		tr_json_begin_object(j);
		tr_json_key(j, "unit");
		tr_json_cstring(j, tr_range_unit_name(res->range_unit));
		tr_json_key(j, "start");
		tr_json_uint(j, res->range_start);
		tr_json_key(j, "end");
		tr_json_uint(j, res->range_end);
		tr_json_key(j, "total");
		tr_json_uint(j, res->range_total);
		tr_json_end_object(j);
	}
	if (res->line_count >= 0) {
		tr_json_key(j, "lineCount");
		tr_json_int(j, res->line_count);
	}
	if (res->n_images)
		write_images(j, res, flags & TR_OBJECT_PAYLOADS);
	if (res->n_documents)
		write_documents(j, res, flags & TR_OBJECT_PAYLOADS);
	if (res->n_audio)
		write_audio(j, res, flags & TR_OBJECT_PAYLOADS);
	write_metadata(j, res);
	if (!res->success) {
		tr_json_key(j, "error");
		tr_json_cstring(j, res->error_text ? res->error_text : "Unknown error");
		tr_json_key(j, "errorCode");
		tr_json_cstring(j, tr_error_name(res->error == TR_OK ? TR_E_IO : res->error));
	}
	tr_json_end_object(j);
}
