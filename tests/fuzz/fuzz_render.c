/* SPDX-License-Identifier: MIT */
/* fuzz_render.c - libFuzzer target for the JSON writer and the renderers (tr_render in every
 * format): a ToolResult built from the input, with arbitrary bytes in its path, content and other
 * strings, arbitrary numbers and payloads. Every rendering must be valid UTF-8 and parse as JSON
 * with cJSON, and strings that are valid UTF-8 must come back unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "tr_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Takes the next NUL-terminated piece of the payload as a malloc'd string; NULL once the payload
 * is used up. */
static char *take_string(struct fuzz_input *in)
{
	const uint8_t *nul;
	size_t len;
	char *s;

	if (in->len == 0)
		return NULL;
	nul = memchr(in->data, '\0', in->len);
	len = nul ? (size_t)(nul - in->data) : in->len;
	s = malloc(len + 1);
	if (!s)
		fuzz_fail("out of memory");
	memcpy(s, in->data, len);
	s[len] = '\0';
	in->data += nul ? len + 1 : len;
	in->len -= nul ? len + 1 : len;
	return s;
}

static uint64_t take_u64(struct fuzz_input *in)
{
	uint64_t lo = fuzz_u32(in);

	return lo | (uint64_t)fuzz_u32(in) << 32;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const media[] = {"image/png", "image/jpeg", "image/gif", "image/webp",
					    "application/pdf"};
	static const char *const encodings[] = {NULL, "utf-8", "utf-16le", "windows-1252"};
	static const char *const endings[] = {NULL, "lf", "crlf", "mixed"};
	struct fuzz_input in = {data, size};
	struct tr_result res;
	uint8_t flags, kinds, counts;
	char *path;
	double scale;

	flags = fuzz_byte(&in);
	kinds = fuzz_byte(&in);
	counts = fuzz_byte(&in);
	if (tr_result_init(&res, "") < 0)
		fuzz_fail("tr_result_init failed");
	res.success = flags & 1;
	res.truncated = flags & 2;
	res.meta.has_stat = flags & 4;
	res.meta.has_sha256 = flags & 8;
	res.meta.has_dimensions = flags & 16;
	res.meta.has_resized = flags & 32;
	res.type = (enum tr_content_type)(kinds % (TR_TYPE_BINARY + 1));
	res.range_unit = (enum tr_range_unit)(((kinds >> 3) & 7) % (TR_UNIT_SLIDE + 1));
	res.error = res.success ? TR_OK : (enum tr_error)(1 + (kinds >> 5) % 11);
	res.meta.encoding = encodings[(counts >> 4) & 3];
	res.meta.line_ending = endings[(counts >> 6) & 3];
	res.meta.size = take_u64(&in);
	res.meta.modified_sec = (int64_t)take_u64(&in);
	res.range_start = take_u64(&in);
	res.range_end = take_u64(&in);
	res.range_total = take_u64(&in);
	res.line_count = (int64_t)take_u64(&in);
	res.meta.page_count = (flags & 64) ? (int64_t)fuzz_u32(&in) : -1;
	res.meta.cell_count = (flags & 128) ? (int64_t)fuzz_u32(&in) : -1;
	res.meta.width = fuzz_u32(&in);
	res.meta.height = fuzz_u32(&in);
	res.meta.from_width = fuzz_u32(&in);
	res.meta.to_width = fuzz_u32(&in);
	uint64_t bits = take_u64(&in);

	memcpy(&scale, &bits, sizeof(scale));
	res.meta.scale = scale;
	for (int i = 0; i < 64; i++)
		res.meta.sha256[i] = "0123456789abcdef"[(bits >> (i % 60)) & 15];
	res.meta.sha256[64] = '\0';

	path = take_string(&in);
	free(res.path);
	res.path = path ? path : strdup("");
	res.abs_path = take_string(&in);
	res.mime_type = take_string(&in);
	res.short_result = take_string(&in);
	res.next = take_string(&in);
	res.meta.description = take_string(&in);
	res.meta.language = take_string(&in);
	res.meta.nbformat = take_string(&in);
	if (!res.success)
		res.error_text = take_string(&in);
	/* Office metadata, by type: a sheet named by the next string, slides, tracked changes. */
	if (res.type == TR_TYPE_SPREADSHEET) {
		res.meta.sheets = calloc(1, sizeof(*res.meta.sheets));
		if (!res.meta.sheets)
			fuzz_fail("out of memory");
		res.meta.n_sheets = 1;
		res.meta.sheets[0].name = take_string(&in);
		res.meta.sheets[0].range = take_string(&in);
		res.meta.sheets[0].hidden = flags & 2;
	} else if (res.type == TR_TYPE_PRESENTATION) {
		res.meta.slide_count = (int64_t)(res.range_total & 0xffff);
	} else if (res.type == TR_TYPE_DOCUMENT) {
		res.meta.tracked_ins = (int64_t)(bits & 0xff);
		res.meta.tracked_del = (int64_t)((bits >> 8) & 0xff);
	}
	/* The rest, NUL bytes and all, is the content and the images' and documents' bytes. */
	if (tr_buf_append(&res.content, in.data, in.len) < 0)
		fuzz_fail("out of memory");
	for (unsigned i = 0; i < (counts & 3); i++) {
		size_t n = in.len > i * 7 ? in.len - i * 7 : 0;
		struct tr_blob *blob = tr_blob_copy(in.data, n);

		if (!blob ||
		    tr_result_add_image(&res, blob, media[i % 4], i + 1, i + 2, i & 1, i >> 1) < 0)
			fuzz_fail("out of memory");
		res.images[res.n_images - 1].slide = res.type == TR_TYPE_PRESENTATION ? i + 1 : 0;
	}
	for (unsigned i = 0; i < ((counts >> 2) & 3); i++) {
		struct tr_blob *blob = tr_blob_copy(in.data, in.len / (i + 1));

		if (!blob || tr_result_add_document(&res, blob, media[4]) < 0)
			fuzz_fail("out of memory");
	}
	fuzz_check_result(&res);
	tr_result_destroy(&res);
	return 0;
}
