/* SPDX-License-Identifier: MIT */
/* test_sandbox.c - unit tests of the reader worker's reply (readers/sandbox/sandbox_wire.c): a
 * result with every kind of field survives the round trip byte for byte, and every cut or
 * altered encoding is refused (1) without a crash or a leak, never taken for a result. */
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "sandbox.h"

/* A result with content, next, a range, an image, a document, a sound, sheets, OCR pages and
 * an error-free metadata of every kind. */
static void filled(struct tr_result *res)
{
	tr_result_init(res, "dir/a.xlsx");
	res->success = true;
	res->type = TR_TYPE_SPREADSHEET;
	res->mime_type = strdup("application/zip");
	tr_buf_printf(&res->content, "cell A1\nsecond line \xe2\x82\xac\n");
	tr_result_set_short(res, "Read 2 sheets");
	tr_result_set_next(res, "a.xlsx", "2");
	res->truncated = true;
	res->range_unit = TR_UNIT_SHEET;
	res->range_start = 1;
	res->range_end = 1;
	res->range_total = 2;
	tr_result_add_image(res, tr_blob_copy("\x89PNG....", 8), "image/png", 3, 4, 1, 0);
	tr_result_add_document(res, tr_blob_copy("%PDF-1.4", 8), "application/pdf");
	tr_result_add_audio(res, tr_blob_copy("RIFF", 4), "audio/wav", 0.5, 2.25);
	res->meta.has_sha256 = true;
	memset(res->meta.sha256, 'a', 64);
	res->meta.description = strdup("Microsoft Excel 2007+");
	res->meta.encoding = "utf-8";
	res->meta.page_count = 7;
	res->meta.sheets = calloc(2, sizeof(*res->meta.sheets));
	res->meta.n_sheets = 2;
	res->meta.sheets[0].name = strdup("One");
	res->meta.sheets[0].range = strdup("A1:B2");
	res->meta.sheets[1].name = strdup("Two");
	res->meta.sheets[1].hidden = true;
	res->meta.ocr = calloc(1, sizeof(*res->meta.ocr));
	res->meta.n_ocr = 1;
	res->meta.ocr[0] = (struct tr_ocr_meta){.page = 3, .confidence = 91};
	strcpy(res->meta.ocr_language, "eng");
	res->meta.has_region = true;
	res->meta.region = (struct tr_region){1, 2, 30, 40};
	res->meta.scale = 1.5;
}

static void test_round_trip(void)
{
	struct tr_result a, b;
	struct tr_buf one = {0}, two = {0};

	filled(&a);
	EXPECT_INT(tr_sandbox_encode(&a, &one), 0);
	tr_result_init(&b, "dir/a.xlsx");
	EXPECT_INT(tr_sandbox_decode((unsigned char *)one.data, one.len, &b), 0);
	EXPECT_INT(tr_sandbox_encode(&b, &two), 0);
	EXPECT(one.len == two.len && memcmp(one.data, two.data, one.len) == 0);
	EXPECT_STR(b.content.data, a.content.data);
	EXPECT_STR(b.next, a.next);
	EXPECT_INT(b.n_images, 1);
	EXPECT_STR(b.images[0].media_type, "image/png");
	EXPECT(b.images[0].data->len == 8 && memcmp(b.images[0].data->data, "\x89PNG", 4) == 0);
	EXPECT_STR(b.meta.sheets[1].name, "Two");
	EXPECT(b.meta.sheets[1].hidden && b.meta.sheets[1].range == NULL);
	EXPECT_INT(b.meta.ocr[0].confidence, 91);
	EXPECT(b.meta.scale == 1.5 && b.audio[0].end == 2.25);
	tr_result_destroy(&a);
	tr_result_destroy(&b);
	tr_buf_free(&two);
	/* every cut is refused */
	for (size_t len = 0; len < one.len; len++) {
		tr_result_init(&b, "x");
		EXPECT_INT(tr_sandbox_decode((unsigned char *)one.data, len, &b), 1);
		tr_result_destroy(&b);
	}
	/* a byte changed anywhere: refused or another valid result, never a crash (ASan) */
	for (size_t at = 0; at < one.len; at++) {
		one.data[at] ^= 0x80;
		tr_result_init(&b, "x");
		EXPECT(tr_sandbox_decode((unsigned char *)one.data, one.len, &b) >= 0);
		tr_result_destroy(&b);
		one.data[at] ^= 0x80;
	}
	tr_buf_free(&one);
}

/* Counts and lengths that the bytes left cannot hold are refused before any allocation. */
static void test_lies(void)
{
	/* version, success, type, no mime, empty content, no short, not truncated, no next, 0,
	 * range, line_count, then 2^61 images */
	uint64_t words[] = {1, 1, 0, UINT64_MAX, 0, UINT64_MAX, 0,         UINT64_MAX,
			    0, 0, 0, 0,          0, UINT64_MAX, 1ull << 61};
	struct tr_result res;

	tr_result_init(&res, "x");
	EXPECT_INT(tr_sandbox_decode((unsigned char *)words, sizeof(words), &res), 1);
	EXPECT(res.images == NULL);
	tr_result_destroy(&res);
	words[14] = 1; /* one image whose blob claims more bytes than follow */
	tr_result_init(&res, "x");
	EXPECT_INT(tr_sandbox_decode((unsigned char *)words, sizeof(words), &res), 1);
	tr_result_destroy(&res);
	words[0] = 2; /* another version */
	tr_result_init(&res, "x");
	EXPECT_INT(tr_sandbox_decode((unsigned char *)words, sizeof(words), &res), 1);
	tr_result_destroy(&res);
}

int main(void)
{
	test_round_trip();
	test_lies();
	return EXPECT_DONE();
}
