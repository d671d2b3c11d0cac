/* SPDX-License-Identifier: MIT */
/* test_hardening.c - unit tests of the bugs fuzzing found (tests/fuzz): each pins the fixed
 * behaviour; the crashing inputs themselves are replayed by tests/fuzz/run.sh. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "expect.h"
#include "image.h"
#include "notebook.h"
#include "render.h"
#include "tr_read.h"

/* The whole of doc as a NUL-terminated string (caller frees). */
static char *doc_text(const struct tr_doc *doc)
{
	uint64_t size = tr_doc_size(doc);
	char *text = malloc((size_t)size + 1);

	if (!text)
		return NULL;
	text[tr_doc_read(doc, 0, text, (size_t)size)] = '\0';
	return text;
}

/* "[<tr_json_fixed(v, decimals)>]" */
static char *fixed_json(double v, int decimals)
{
	struct tr_doc *doc = tr_doc_new();
	struct tr_json j;
	char *text;

	tr_json_init(&j, doc);
	tr_json_begin_array(&j);
	tr_json_fixed(&j, v, decimals);
	tr_json_end_array(&j);
	text = doc_text(doc);
	tr_doc_unref(doc);
	return text;
}

/* fuzz_render: a scale of 1e300 overran tr_json_fixed's 64-byte buffer (stack-buffer-overflow),
 * and NaN or infinity wrote "nan"/"inf", which no JSON parser takes. */
static void test_json_fixed(void)
{
	static const struct {
		double v;
		int decimals;
		const char *want;
	} cases[] = {
		{0.5, 3, "[0.500]"},
		{2.0, 3, "[2.000]"},
		{-1.25, 1, "[-1.2]"},
		{1e300, 3, "[1.000e+300]"},
		{-1e200, 3, "[-1.000e+200]"},
		{1e50, 3, "[100000000000000007629769841091887003294964970946560.000]"},
		{1e60, 3, "[1.000e+60]"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = fixed_json(cases[i].v, cases[i].decimals);
		cJSON *parsed = cJSON_Parse(text);

		EXPECT_STR(text, cases[i].want);
		EXPECT(parsed && cJSON_IsNumber(cJSON_GetArrayItem(parsed, 0)));
		cJSON_Delete(parsed);
		free(text);
	}
	char *text = fixed_json(NAN, 3);

	EXPECT_STR(text, "[0.000]");
	free(text);
	text = fixed_json(-INFINITY, 3);
	EXPECT_STR(text, "[0.000]");
	free(text);
}

/* metadata.modified of a result whose source mtime is sec. */
static void expect_modified(int64_t sec, const char *want)
{
	struct tr_result res;
	struct tr_doc *doc;
	char *text;
	cJSON *root;

	EXPECT_INT(tr_result_init(&res, "f.txt"), 0);
	res.success = true;
	res.meta.has_stat = true;
	res.meta.modified_sec = sec;
	doc = tr_render(&res, TR_FORMAT_TOOL);
	EXPECT(doc != NULL);
	text = doc ? doc_text(doc) : NULL;
	root = text ? cJSON_Parse(text) : NULL;
	EXPECT_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
			   cJSON_GetObjectItemCaseSensitive(root, "metadata"), "modified")),
		   want);
	cJSON_Delete(root);
	free(text);
	tr_doc_unref(doc);
	tr_result_destroy(&res);
}

/* fuzz_render: an mtime past year 9999 (tmpfs takes `touch -d @99999999999999`) gave
 * "3170843-11-07T09:46:39Z", against RFC 3339 and the schema, and one beyond gmtime's range
 * printed an uninitialised struct tm. Such times are clamped to years 0000-9999. The expected
 * strings are `date -u -d @SEC +%FT%TZ`. */
static void test_modified_clamped(void)
{
	expect_modified(0, "1970-01-01T00:00:00Z");
	expect_modified(-1, "1969-12-31T23:59:59Z");
	expect_modified(1700000000, "2023-11-14T22:13:20Z");
	expect_modified(253402300799, "9999-12-31T23:59:59Z");
	expect_modified(253402300800, "9999-12-31T23:59:59Z");
	expect_modified(99999999999999, "9999-12-31T23:59:59Z");
	expect_modified(INT64_MAX, "9999-12-31T23:59:59Z");
	expect_modified(-62167219200, "0000-01-01T00:00:00Z");
	expect_modified(-99999999999999, "0000-01-01T00:00:00Z");
	expect_modified(INT64_MIN, "0000-01-01T00:00:00Z");
}

/* A GIF89a with a logical screen sw x sh and one image iw x ih (no colour tables). */
static size_t small_gif(unsigned char *out, unsigned sw, unsigned sh, unsigned iw, unsigned ih)
{
	const unsigned char gif[] =
		{
			'G',  'I',  'F',  '8', '9', 'a', sw & 255, sw >> 8, sh & 255, sh >> 8, 0, 0,
			0,    0x2c, 0,    0,   0,   0,   iw & 255, iw >> 8, ih & 255, ih >> 8, 0, 2,
			2,    0x4c, 0x01, 0, /* LZW minimum code size 2, one sub-block, terminator */
			0x3b,
		};

	memcpy(out, gif, sizeof(gif));
	return sizeof(gif);
}

/* fuzz_gif: a GIF whose logical screen and first image both had a zero side was valid, and its
 * "1030x0" image was attached for vision models. Now corrupt, like JPEG and WebP. */
static void test_gif_zero_size(void)
{
	unsigned char gif[64];
	struct tr_image_info info;
	char err[128];
	size_t len;

	len = small_gif(gif, 6, 0, 1030, 0);
	EXPECT_INT(tr_gif_validate(gif, len, &info, err, sizeof(err)), -1);
	EXPECT_STR(err, "GIF image at offset 13 has zero size (1030x0)");
	len = small_gif(gif, 0, 0, 0, 5);
	EXPECT_INT(tr_gif_validate(gif, len, &info, err, sizeof(err)), -1);
	EXPECT_STR(err, "GIF image at offset 13 has zero size (0x5)");
	/* A 0x0 logical screen still takes the first image's size. */
	len = small_gif(gif, 0, 0, 4, 3);
	EXPECT_INT(tr_gif_validate(gif, len, &info, err, sizeof(err)), 0);
	EXPECT_INT(info.width, 4);
	EXPECT_INT(info.height, 3);
	/* A zero-sized frame inside a real screen is the screen's size. */
	len = small_gif(gif, 7, 2, 0, 0);
	EXPECT_INT(tr_gif_validate(gif, len, &info, err, sizeof(err)), 0);
	EXPECT_INT(info.width, 7);
	EXPECT_INT(info.height, 2);
}

/* fuzz_png: an IHDR of length 0 with a valid CRC made check_ihdr read width and height past
 * the end of the file before it checked the length (heap-buffer-overflow under ASan). The
 * input sits in a buffer of its exact size so the ASan run of this test sees any overread. */
static void test_png_ihdr_length_zero(void)
{
	static const unsigned char input[] = {
		0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0,    0,   0,
		0,    'I', 'H', 'D', 'R',  0xa8, 0xa1, 0xae, 0x0a, 'c',
	};
	unsigned char *png = malloc(sizeof(input));
	struct tr_image_info info;
	char err[128];

	memcpy(png, input, sizeof(input));
	EXPECT_INT(tr_png_validate(png, sizeof(input), &info, err, sizeof(err)), -1);
	EXPECT_STR(err, "PNG IHDR chunk at offset 8 has length 0, expected 13");
	free(png);
}

/* The content of the one-cell notebook whose cell has output (JSON text). */
static void expect_output(const char *output, const char *want_tail)
{
	struct tr_selector sel = {0};
	struct tr_options opts;
	struct tr_result res;
	char json[512];

	snprintf(json, sizeof(json),
		 "{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": {}, \"cells\": "
		 "[{\"cell_type\": \"code\", \"metadata\": {}, \"source\": \"x\", "
		 "\"execution_count\": 1, \"outputs\": [%s]}]}",
		 output);
	tr_options_init(&opts);
	EXPECT_INT(tr_result_init(&res, "nb.ipynb"), 0);
	EXPECT_INT(tr_notebook_read_buffer(json, strlen(json), "nb.ipynb", &sel, &opts, 0, &res),
		   0);
	EXPECT(res.success);
	EXPECT(res.content.len >= strlen(want_tail));
	if (res.content.len >= strlen(want_tail))
		EXPECT_STR(res.content.data + res.content.len - strlen(want_tail), want_tail);
	tr_result_destroy(&res);
}

/* fuzz_notebook: stream text with a carriage return did arithmetic on a NULL buffer (the line
 * overwritten so far, still empty), and a stream without "text" did so on a NULL string: both
 * undefined behaviour (clang's UBSan reports them; they rendered right by luck). */
static void test_notebook_stream_edges(void)
{
	expect_output("{\"output_type\": \"stream\", \"name\": \"stdout\", \"text\": \"1\\r2\\n\"}",
		      "--- Output 1 (stream stdout) ---\n2\n");
	expect_output(
		"{\"output_type\": \"stream\", \"name\": \"stdout\", \"text\": \"abc\\rX\\n\"}",
		"--- Output 1 (stream stdout) ---\nXbc\n");
	expect_output("{\"output_type\": \"stream\", \"name\": \"stdout\"}",
		      "--- Output 1 (stream stdout) ---\n");
}

int main(void)
{
	test_png_ihdr_length_zero();
	test_json_fixed();
	test_modified_clamped();
	test_gif_zero_size();
	test_notebook_stream_edges();
	return EXPECT_DONE();
}
