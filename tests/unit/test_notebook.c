/* SPDX-License-Identifier: MIT */
/* test_notebook.c - unit tests of the notebook reader: rendering (v4, v3), escapes, caps, images,
 * parse error positions, selectors, and the reader's probe and size limit. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expect.h"
#include "image.h"
#include "notebook.h"
#include "reader.h"
#include "util.h"

/* A 3x2 PNG (signature, IHDR) and a 32x16 JPEG (SOI, APP0, SOF0, EOI), base64. */
#define PNG_B64 "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFN"
#define JPEG_B64 "/9j/4AAQSkZJRgABAQAAAQABAAD/wAARCAAQACADASIAAhEBAxEBAP/Z"

static struct tr_options options(uint64_t max_output)
{
	struct tr_options opts;

	tr_options_init(&opts);
	if (max_output)
		opts.max_output = max_output;
	return opts;
}

/* Reads json as "nb.ipynb" with selector sel_text (NULL: default view). */
static void read_nb(const char *json, const char *sel_text, const struct tr_options *opts,
		    struct tr_result *res)
{
	struct tr_selector sel = {0};

	if (sel_text)
		EXPECT_INT(tr_selector_parse(sel_text, strlen(sel_text), &sel), 0);
	EXPECT_INT(tr_result_init(res, "dir/nb.ipynb"), 0);
	EXPECT_INT(tr_notebook_read_buffer(json, strlen(json), "nb.ipynb", &sel, opts, 0, res), 0);
}

static const char *content(const struct tr_result *res)
{
	return res->content.data ? res->content.data : "";
}

static void test_v4_rendering(void)
{
	static const char json[] =
		"{\"nbformat\": 4, \"nbformat_minor\": 2,"
		" \"metadata\": {\"language_info\": {\"name\": \"python\"}},"
		" \"cells\": ["
		"  {\"cell_type\": \"markdown\", \"metadata\": {},"
		"   \"source\": [\"# Title\\n\", \"Some *text*\"]},"
		"  {\"cell_type\": \"code\", \"execution_count\": 7, \"metadata\": {},"
		"   \"source\": \"print('hi')\\n1/0\","
		"   \"outputs\": ["
		"    {\"output_type\": \"stream\", \"name\": \"stdout\", \"text\": [\"hi\\n\"]},"
		"    {\"output_type\": \"execute_result\", \"execution_count\": 7, \"metadata\": "
		"{},"
		"     \"data\": {\"text/html\": [\"<b>\", \"x</b>\"], \"text/plain\": [\"42\"]}},"
		"    {\"output_type\": \"error\", \"ename\": \"ZeroDivisionError\","
		"     \"evalue\": \"division by zero\","
		"     \"traceback\": [\"\\u001b[0;31mZeroDivisionError\\u001b[0m: boom\", \"\"]}]},"
		"  {\"cell_type\": \"code\", \"execution_count\": null, \"metadata\": {},"
		"   \"source\": [], \"outputs\": []},"
		"  {\"cell_type\": \"raw\", \"metadata\": {}, \"source\": \"raw text\\n\"}]}";
	static const char expected[] =
		"Jupyter notebook: python, 4 cells, nbformat 4.2\n"
		"\n--- Cell 1 [markdown] ---\n# Title\nSome *text*\n"
		"\n--- Cell 2 [code] In [7] ---\nprint('hi')\n1/0\n"
		"--- Output 1 (stream stdout) ---\nhi\n"
		"--- Output 2 (execute_result) Out [7] ---\n42\n[text/html output omitted; 8 "
		"chars]\n"
		"--- Output 3 (error) ---\nZeroDivisionError: division by zero\n"
		"ZeroDivisionError: boom\n\n"
		"\n--- Cell 3 [code] In [ ] ---\n"
		"\n--- Cell 4 [raw] ---\nraw text\n";
	struct tr_options opts = options(0);
	struct tr_result res;

	read_nb(json, NULL, &opts, &res);
	EXPECT(res.success);
	EXPECT_INT(res.type, TR_TYPE_NOTEBOOK);
	EXPECT_STR(res.mime_type, "application/x-ipynb+json");
	EXPECT_STR(content(&res), expected);
	EXPECT_STR(res.short_result, "Read notebook: 4 cells (1-4 of 4)");
	EXPECT_INT(res.range_unit, TR_UNIT_CELL);
	EXPECT_INT(res.range_start, 1);
	EXPECT_INT(res.range_end, 4);
	EXPECT_INT(res.range_total, 4);
	EXPECT(!res.truncated);
	EXPECT(res.next == NULL);
	EXPECT_INT(res.meta.cell_count, 4);
	EXPECT_STR(res.meta.language, "python");
	EXPECT_STR(res.meta.nbformat, "4.2");
	EXPECT_INT(res.n_images, 0);
	tr_result_destroy(&res);
}

static void test_v3_rendering(void)
{
	static const char json[] =
		"{\"nbformat\": 3, \"nbformat_minor\": 0, \"metadata\": {\"name\": \"old\"},"
		" \"worksheets\": [{\"metadata\": {}, \"cells\": ["
		"  {\"cell_type\": \"heading\", \"level\": 2, \"metadata\": {}, \"source\": "
		"[\"Intro\"]},"
		"  {\"cell_type\": \"code\", \"collapsed\": false, \"input\": [\"x = 2\\n\", "
		"\"x\"],"
		"   \"language\": \"python\", \"metadata\": {}, \"prompt_number\": 5,"
		"   \"outputs\": ["
		"    {\"output_type\": \"stream\", \"stream\": \"stderr\", \"text\": "
		"[\"warn\\n\"]},"
		"    {\"output_type\": \"pyout\", \"prompt_number\": 5, \"metadata\": {},"
		"     \"text\": [\"2\"], \"html\": \"<i>2</i>\"},"
		"    {\"output_type\": \"display_data\", \"metadata\": {}, \"png\": \"" PNG_B64
		"\"},"
		"    {\"output_type\": \"pyerr\", \"ename\": \"NameError\","
		"     \"evalue\": \"name 'y' is not defined\","
		"     \"traceback\": [\"\\u001b[1;31mNameError\\u001b[0m\"]}"
		"   ]}]}, {\"cells\": [{\"cell_type\": \"markdown\", \"source\": \"second "
		"sheet\"}]}]}";
	static const char expected[] =
		"Jupyter notebook: python, 3 cells, nbformat 3.0\n"
		"\n--- Cell 1 [heading 2] ---\nIntro\n"
		"\n--- Cell 2 [code] In [5] ---\nx = 2\nx\n"
		"--- Output 1 (stream stderr) ---\nwarn\n"
		"--- Output 2 (pyout) Out [5] ---\n2\n[text/html output omitted; 8 chars]\n"
		"--- Output 3 (display_data) ---\n[image 1: image/png 3x2, attached]\n"
		"--- Output 4 (pyerr) ---\nNameError: name 'y' is not defined\nNameError\n"
		"\n--- Cell 3 [markdown] ---\nsecond sheet\n";
	struct tr_options opts = options(0);
	struct tr_result res;

	read_nb(json, NULL, &opts, &res);
	EXPECT(res.success);
	EXPECT_STR(content(&res), expected);
	EXPECT_STR(res.meta.nbformat, "3.0");
	EXPECT_STR(res.meta.language, "python");
	EXPECT_INT(res.meta.cell_count, 3);
	EXPECT_INT(res.n_images, 1);
	if (res.n_images == 1) {
		EXPECT_INT(res.images[0].cell, 2);
		EXPECT_INT(res.images[0].width, 3);
		EXPECT_INT(res.images[0].height, 2);
		EXPECT_INT(res.images[0].data->len, 33);
	}
	EXPECT_STR(res.short_result, "Read notebook: 3 cells (1-3 of 3), 1 image");
	tr_result_destroy(&res);
}

static void expect_clean(const char *in, bool overwrite, const char *out)
{
	struct tr_buf buf = {0};

	EXPECT_INT(tr_nb_append_clean(&buf, in, strlen(in), overwrite), 0);
	EXPECT_STR(buf.data ? buf.data : "", out);
	tr_buf_free(&buf);
}

static void test_escapes(void)
{
	expect_clean("\x1b[0;31mred\x1b[0m plain", false, "red plain");
	expect_clean("\x1b[38;5;241m1\x1b[39m/0\x1b[?25h", false, "1/0");
	expect_clean("a\x1b]8;;http://x\x07link\x1b]8;;\x1b\\b", false, "alinkb");
	expect_clean("a\x1b(Bb\x1b", false, "a(Bb");
	expect_clean("unterminated \x1b[12", false, "unterminated ");
	expect_clean("a\rb", false, "a\rb");
	expect_clean("10%\r100%\ndone\r\n", true, "100%\ndone\n");
	expect_clean("abcdef\rXY", true, "XYcdef");
	expect_clean("abc\r\r\xc3\xa9\r", true,
		     "\xc3\xa9"
		     "bc");
	expect_clean("\x1b[32m 50%\x1b[0m\r\x1b[32m100%\x1b[0m", true, "100%");
	EXPECT_INT(tr_utf8_count((const unsigned char *)"a\xc3\xa9\xe2\x82\xac", 6), 3);
	EXPECT_INT(tr_utf8_prefix((const unsigned char *)"a\xc3\xa9\xe2\x82\xac", 6, 2, SIZE_MAX),
		   3);
	EXPECT_INT(tr_utf8_prefix((const unsigned char *)"a\xc3\xa9\xe2\x82\xac", 6, 9, 5), 3);
}

static void expect_limit(uint64_t limit, uint64_t actual, const char *limit_text,
			 const char *actual_text)
{
	char a[32], b[32];

	tr_format_limit(limit, actual, a, b, sizeof(a));
	EXPECT_STR(a, limit_text);
	EXPECT_STR(b, actual_text);
}

static void test_limits(void)
{
	expect_limit(64ull << 20, 73525002, "64MB", "70.12MB");
	expect_limit(3ull << 19, 2ull << 20, "1.50MB", "2.00MB");
	expect_limit(2048, 4332, "2KB", "4.23KB");
	expect_limit(10, 33, "10 bytes", "33 bytes");
}

/* A notebook of n cells; cell i is code with an output of chars 'a's and an image after it. */
static char *big_outputs_notebook(int n, size_t chars)
{
	size_t size = (size_t)n * (chars + 400) + 200;
	char *json = malloc(size), *p = json;

	p += sprintf(p, "{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": {}, \"cells\": [");
	for (int i = 1; i <= n; i++) {
		p += sprintf(
			p,
			"%s{\"cell_type\": \"code\", \"execution_count\": %d, \"source\": \"c%d\","
			" \"outputs\": [{\"output_type\": \"stream\", \"name\": \"stdout\", "
			"\"text\": \"",
			i > 1 ? ", " : "", i, i);
		memset(p, 'a', chars);
		p += chars;
		p += sprintf(p, "\"}, {\"output_type\": \"display_data\", \"data\": "
				"{\"image/png\": \"" PNG_B64 "\"}}]}");
	}
	strcpy(p, "]}");
	return json;
}

static void test_cell_output_cap(void)
{
	static const char head[] = "--- Output 1 (stream stdout) ---\n";
	static const char image[] = "--- Output 2 (display_data) ---\n"
				    "[image 2: image/png 3x2, attached]\n";
	char *json = big_outputs_notebook(2, 12000);
	struct tr_options opts = options(0);
	struct tr_result res;
	char note[200];
	const char *at;

	/* Two cells: each cell's outputs stop at 10,000 code points; the cut image is dropped. */
	read_nb(json, NULL, &opts, &res);
	EXPECT(res.success);
	snprintf(note, sizeof(note),
		 "\n[... output truncated: 10000 of %zu chars shown; read nb.ipynb:1.tool.json for "
		 "all of it]\n\n--- Cell 2 [code] In [2] ---\nc2\n",
		 strlen(head) + 12001 + strlen(image));
	at = strstr(content(&res), note);
	EXPECT(at != NULL);
	if (at) {
		EXPECT(at[-1] == 'a' && at[-(10000 - (long)strlen(head))] == 'a');
		EXPECT(at[-(10000 - (long)strlen(head)) - 1] == '\n');
	}
	EXPECT_INT(res.n_images, 0);
	EXPECT(res.truncated);
	EXPECT(res.next == NULL);
	EXPECT_INT(res.range_end, 2);
	tr_result_destroy(&res);

	/* One cell: the cap is max_output bytes, the image fits and keeps its number 1. */
	read_nb(json, "1", &opts, &res);
	EXPECT(res.success);
	EXPECT(strstr(content(&res), "truncated") == NULL);
	EXPECT(strstr(content(&res), "[image 1: image/png 3x2, attached]\n") != NULL);
	EXPECT_INT(res.n_images, 1);
	EXPECT_INT(res.n_images ? res.images[0].cell : 0, 1);
	EXPECT(res.truncated);
	EXPECT_STR(res.next, "nb.ipynb:2-.tool.json");
	EXPECT_STR(res.short_result, "Read notebook: 1 cell (1-1 of 2), 1 image");
	tr_result_destroy(&res);

	/* One cell with a small max_output: cut by bytes, content within max_output. */
	opts = options(5000);
	read_nb(json, "2-2", &opts, &res);
	EXPECT(res.success);
	EXPECT(res.content.len <= 5000);
	snprintf(note, sizeof(note), " chars shown; the rest is in the raw notebook]\n");
	EXPECT(res.content.len > strlen(note) &&
	       strcmp(content(&res) + res.content.len - strlen(note), note) == 0);
	EXPECT_INT(res.n_images, 0);
	EXPECT(res.next == NULL);
	EXPECT(res.truncated);
	tr_result_destroy(&res);
	free(json);
}

static void test_content_cap(void)
{
	char *json = big_outputs_notebook(5, 3000);
	struct tr_options opts = options(8000);
	struct tr_result res;

	read_nb(json, NULL, &opts, &res);
	EXPECT(res.success);
	EXPECT(res.content.len <= 8000);
	EXPECT_INT(res.range_start, 1);
	EXPECT_INT(res.range_end, 2);
	EXPECT(res.truncated);
	EXPECT_STR(res.next, "nb.ipynb:3-.tool.json");
	EXPECT_INT(res.n_images, 2);
	EXPECT_INT(res.n_images == 2 ? res.images[1].cell : 0, 2);
	EXPECT(strstr(content(&res), "--- Cell 3 ") == NULL);
	EXPECT_STR(res.short_result, "Read notebook: 2 cells (1-2 of 5), 2 images");
	tr_result_destroy(&res);

	/* A first cell larger than max_output is still shown, alone. */
	opts = options(1000);
	read_nb(json, "4-", &opts, &res);
	EXPECT(res.success);
	EXPECT_INT(res.range_start, 4);
	EXPECT_INT(res.range_end, 4);
	EXPECT_STR(res.next, "nb.ipynb:5-.tool.json");
	EXPECT(strstr(content(&res), "--- Cell 4 [code] In [4] ---\nc4\n") != NULL);
	tr_result_destroy(&res);
	free(json);
}

static void test_images(void)
{
	static const char json[] =
		"{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": {}, \"cells\": ["
		" {\"cell_type\": \"markdown\", \"source\": \"![a](attachment:a.png)\","
		"  \"attachments\": {\"a.png\": {\"image/png\": \"" PNG_B64 "\"}}},"
		" {\"cell_type\": \"code\", \"execution_count\": 1, \"source\": \"\", \"outputs\": "
		"["
		"  {\"output_type\": \"display_data\","
		"   \"data\": {\"image/png\": [\"/9j/4AAQSkZJRgABAQAAAQABAAD/\\n\","
		"   \"wAARCAAQACADASIAAhEBAxEBAP/Z\\n\"]}},"
		"  {\"output_type\": \"display_data\", \"data\": {\"image/jpeg\": \"@@@@\"}},"
		"  {\"output_type\": \"display_data\", \"data\": {\"image/png\": \"aGVsbG8=\"}},"
		"  {\"output_type\": \"display_data\", \"data\": {\"image/png\": "
		"\"iVBORw0KGgo=\"}},"
		"  {\"output_type\": \"display_data\","
		"   \"data\": {\"image/svg+xml\": \"<svg/>\", \"application/json\": {\"a\": 1}}},"
		"  {\"output_type\": \"clear_output\"}]}]}";
	static const char expected[] =
		"Jupyter notebook: 2 cells, nbformat 4.5\n"
		"\n--- Cell 1 [markdown] ---\n![a](attachment:a.png)\n"
		"[attachment a.png: image 1: image/png 3x2, attached]\n"
		"\n--- Cell 2 [code] In [1] ---\n"
		"--- Output 1 (display_data) ---\n[image 2: image/jpeg 32x16, attached]\n"
		"--- Output 2 (display_data) ---\n[image output could not be decoded: invalid "
		"base64 data]\n"
		"--- Output 3 (display_data) ---\n"
		"[image output could not be decoded: the data is not a PNG or JPEG image]\n"
		"--- Output 4 (display_data) ---\n[image output could not be decoded: PNG has no "
		"IHDR chunk]\n"
		"--- Output 5 (display_data) ---\n[image/svg+xml output omitted; 6 chars]\n"
		"[application/json output omitted; 7 chars]\n"
		"--- Output 6 (clear_output) ---\n[output of type clear_output omitted]\n";
	static const unsigned char jpeg[] = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10};
	struct tr_options opts = options(0);
	struct tr_result res;

	read_nb(json, NULL, &opts, &res);
	EXPECT(res.success);
	EXPECT_STR(content(&res), expected);
	EXPECT(res.meta.language == NULL);
	EXPECT_INT(res.n_images, 2);
	if (res.n_images == 2) {
		EXPECT_INT(res.images[0].cell, 1);
		EXPECT_STR(res.images[1].media_type, "image/jpeg");
		EXPECT_INT(res.images[1].cell, 2);
		EXPECT_INT(res.images[1].width, 32);
		EXPECT_INT(res.images[1].height, 16);
		EXPECT_INT(res.images[1].data->len, 42);
		EXPECT(memcmp(res.images[1].data->data, jpeg, sizeof(jpeg)) == 0);
	}
	tr_result_destroy(&res);

	/* Images over max_image_size are named, not attached. */
	opts.max_image_size = 10;
	read_nb(json, "1", &opts, &res);
	EXPECT(strstr(content(&res), "[attachment a.png: image omitted: image/png 3x2, 33 bytes "
				     "exceeds the 10 bytes image limit]\n") != NULL);
	EXPECT_INT(res.n_images, 0);
	tr_result_destroy(&res);
}

/* Images over the limits whose fit would start past the read's deadline are notes in the text
 * (docs/SPEC.md §3 "Render time"): no fit ran, so no hint names a cell to read alone. */
static void test_deadline_passed(void)
{
	static const char json[] =
		"{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": {}, \"cells\": ["
		" {\"cell_type\": \"markdown\", \"source\": \"![a](attachment:a.png)\","
		"  \"attachments\": {\"a.png\": {\"image/png\": \"" PNG_B64 "\"}}},"
		" {\"cell_type\": \"code\", \"source\": \"plot()\", \"outputs\": ["
		"  {\"output_type\": \"display_data\", \"data\": {\"image/png\": \"" PNG_B64
		"\"}}]}]}";
	static const char expected[] =
		"\n--- Cell 1 [markdown] ---\n![a](attachment:a.png)\n"
		"[attachment a.png: image omitted: image/png 3x2, timeout: not fitted within "
		"max_render_ms (10000 ms), not started, the time went to earlier work]\n"
		"\n--- Cell 2 [code] In [ ] ---\nplot()\n--- Output 1 (display_data) ---\n"
		"[image output omitted: image/png 3x2, timeout: not fitted within max_render_ms "
		"(10000 ms), not started, the time went to earlier work]\n";
	struct tr_options opts = options(0);
	struct tr_selector sel = {0};
	struct tr_result res;

	if (!tr_fit_has_loader("pngload_buffer"))
		return; /* built without libvips: images over the limits are attached as they are */
	opts.image_max_dim = 2;
	EXPECT_INT(tr_result_init(&res, "dir/nb.ipynb"), 0);
	/* 1 ns after the clock's start: long passed */
	EXPECT_INT(tr_notebook_read_buffer(json, strlen(json), "nb.ipynb", &sel, &opts, 1, &res),
		   0);
	EXPECT(res.success);
	EXPECT(strstr(content(&res), expected) != NULL);
	EXPECT_INT(res.n_images, 0);
	EXPECT_STR(res.short_result, "Read notebook: 2 cells (1-2 of 2), 2 images not fitted "
				     "(timeout)");
	tr_result_destroy(&res);
}

/* A note cut off with the outputs past the cell's cap is not counted in shortResult. */
static void test_deadline_note_cut(void)
{
	static char json[16384];
	char text[12001];
	struct tr_options opts = options(0);
	struct tr_selector sel = {0};
	struct tr_result res;

	if (!tr_fit_has_loader("pngload_buffer"))
		return;
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	snprintf(json, sizeof(json),
		 "{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": {}, \"cells\": ["
		 " {\"cell_type\": \"markdown\", \"source\": \"a\"},"
		 " {\"cell_type\": \"code\", \"source\": \"b\", \"outputs\": ["
		 "  {\"output_type\": \"display_data\", \"data\": {\"image/png\": \"" PNG_B64
		 "\"}},"
		 "  {\"output_type\": \"stream\", \"name\": \"stdout\", \"text\": \"%s\"},"
		 "  {\"output_type\": \"display_data\", \"data\": {\"image/png\": \"" PNG_B64
		 "\"}}]}]}",
		 text);
	opts.image_max_dim = 2;
	EXPECT_INT(tr_result_init(&res, "dir/nb.ipynb"), 0);
	EXPECT_INT(tr_notebook_read_buffer(json, strlen(json), "nb.ipynb", &sel, &opts, 1, &res),
		   0);
	EXPECT(res.success);
	EXPECT(strstr(content(&res), "[... output truncated: ") != NULL);
	EXPECT_STR(res.short_result, "Read notebook: 2 cells (1-2 of 2), 1 image not fitted "
				     "(timeout)");
	tr_result_destroy(&res);
}

static void expect_parse_error(const char *json, const char *error)
{
	struct tr_options opts = options(0);
	struct tr_result res;

	read_nb(json, NULL, &opts, &res);
	EXPECT(!res.success);
	EXPECT_INT(res.error, TR_E_CORRUPT);
	EXPECT_INT(res.type, TR_TYPE_NOTEBOOK);
	EXPECT_STR(res.error_text, error);
	tr_result_destroy(&res);
}

static void test_parse_errors(void)
{
	/* Positions as Python's json.JSONDecodeError gives them (lineno, colno). */
	expect_parse_error("{\n \"cells\": [\n  {} {}\n ]}",
			   "Failed to parse notebook: invalid JSON at line 3 column 6");
	expect_parse_error("{\"\xc3\xa9\": tru}",
			   "Failed to parse notebook: invalid JSON at line 1 column 7");
	expect_parse_error("{\"cells\": []} x",
			   "Failed to parse notebook: invalid JSON at line 1 column 15");
	expect_parse_error("", "Failed to parse notebook: invalid JSON at line 1 column 1");
	expect_parse_error("{\"a\": \"b\\qc\"}",
			   "Failed to parse notebook: invalid JSON at line 1 column 9");
	expect_parse_error("{\"a\": [1, 2,\n  \"unterminated",
			   "Failed to parse notebook: invalid JSON at line 2 column 3");
	expect_parse_error("[1, 2]", "Invalid notebook: the JSON is not an object");
	expect_parse_error("{\"cells\": []}", "Invalid notebook: no \"nbformat\" version number");
	expect_parse_error("{\"nbformat\": 4, \"nbformat_minor\": 5}",
			   "Invalid notebook: no \"cells\" list");
	expect_parse_error(
		"{\"nbformat\": 4, \"cells\": [{\"cell_type\": \"code\", \"source\": 5}]}",
		"Invalid notebook: cell 1: \"source\" is not a string or a list of strings");
	expect_parse_error("{\"nbformat\": 4, \"cells\": [{\"source\": \"x\"}]}",
			   "Invalid notebook: cell 1 has no \"cell_type\"");
	expect_parse_error(
		"{\"nbformat\": 4, \"cells\": [{\"cell_type\": \"code\", \"outputs\": [{}]}]}",
		"Invalid notebook: cell 1: output 1 has no \"output_type\"");
	expect_parse_error("{\"nbformat\": 3, \"cells\": []}",
			   "Invalid notebook: no \"worksheets\" list (nbformat 3)");

	struct tr_options opts = options(0);
	struct tr_result res;

	read_nb("{\"nbformat\": 2, \"worksheets\": []}", NULL, &opts, &res);
	EXPECT_INT(res.error, TR_E_UNSUPPORTED);
	EXPECT_STR(res.error_text,
		   "Unsupported notebook format: nbformat 2 (nbformat 3 and 4 are read)");
	tr_result_destroy(&res);
}

static void test_json_positions(void)
{
	static const char text[] = "{\"a\": [1, 2.5e, -]}";
	size_t offset = 0;
	uint64_t line, column;

	/* "2.5e" is the number 2.5 followed by 'e' where a ',' is expected. */
	EXPECT_INT(tr_json_find_error(text, strlen(text), &offset), 1);
	EXPECT_INT(offset, 13);
	EXPECT_INT(tr_json_find_error("[NaN, -Infinity, 1e5, \"\\ud83d\\ude00\"]", 37, &offset), 0);
	tr_json_line_column("ab\n\xc3\xa9x", 6, &line, &column);
	EXPECT_INT(line, 2);
	EXPECT_INT(column, 3);
}

static void test_selectors(void)
{
	static const char json[] = "{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": "
				   "{\"kernelspec\": {\"language\": \"R\"}},"
				   " \"cells\": [{\"cell_type\": \"markdown\", \"source\": \"c1\"},"
				   " {\"cell_type\": \"markdown\", \"source\": \"c2\"},"
				   " {\"cell_type\": \"markdown\", \"source\": \"c3\"},"
				   " {\"cell_type\": \"markdown\", \"source\": \"c4\"},"
				   " {\"cell_type\": \"markdown\", \"source\": \"c5\"}]}";
	static const struct {
		const char *sel;
		uint64_t start, end;
		const char *next;
		bool truncated;
	} cases[] = {
		{NULL, 1, 5, NULL, false},
		{"2", 2, 2, "nb.ipynb:3-.tool.json", true},
		{"2-3", 2, 3, "nb.ipynb:4-.tool.json", true},
		{"4-", 4, 5, NULL, true},
		{"3-99", 3, 5, NULL, true},
		{"1-5", 1, 5, NULL, false},
		{"5", 5, 5, NULL, true},
	};
	struct tr_options opts = options(0);
	struct tr_result res;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		read_nb(json, cases[i].sel, &opts, &res);
		EXPECT(res.success);
		EXPECT_INT(res.range_start, cases[i].start);
		EXPECT_INT(res.range_end, cases[i].end);
		EXPECT_INT(res.range_total, 5);
		EXPECT_INT(res.truncated, cases[i].truncated);
		if (cases[i].next)
			EXPECT_STR(res.next, cases[i].next);
		else
			EXPECT(res.next == NULL);
		EXPECT_INT(
			strncmp(content(&res), "Jupyter notebook: R, 5 cells, nbformat 4.5\n", 43),
			0);
		for (uint64_t c = 1; c <= 5; c++) {
			char header[32];
			bool shown = c >= cases[i].start && c <= cases[i].end;

			snprintf(header, sizeof(header), "--- Cell %d [markdown] ---\nc%d\n",
				 (int)c, (int)c);
			EXPECT_INT(strstr(content(&res), header) != NULL, shown);
		}
		tr_result_destroy(&res);
	}
	read_nb(json, "6", &opts, &res);
	EXPECT(!res.success);
	EXPECT_INT(res.error, TR_E_OUT_OF_RANGE);
	EXPECT_STR(res.error_text, "Cell 6 is past the end of the notebook (5 cells)");
	EXPECT_INT(res.meta.cell_count, 5);
	tr_result_destroy(&res);
}

static void test_empty(void)
{
	static const char json[] =
		"{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": {}, \"cells\": []}";
	struct tr_options opts = options(0);
	struct tr_result res;

	read_nb(json, NULL, &opts, &res);
	EXPECT(res.success);
	EXPECT_STR(content(&res),
		   "Jupyter notebook: 0 cells, nbformat 4.5\n\nNotebook has no cells\n");
	EXPECT_STR(res.short_result, "Notebook has no cells");
	EXPECT_INT(res.range_unit, TR_UNIT_CELL);
	EXPECT_INT(res.range_total, 0);
	EXPECT_INT(res.meta.cell_count, 0);
	EXPECT(!res.truncated);
	tr_result_destroy(&res);
	read_nb(json, "1", &opts, &res);
	EXPECT_INT(res.error, TR_E_OUT_OF_RANGE);
	EXPECT_STR(res.error_text, "Cell 1 is past the end of the notebook (0 cells)");
	tr_result_destroy(&res);
}

/* The reader itself: probe by extension, size limit, sha256, via a real file. */
static void test_reader(void)
{
	static const char json[] =
		"{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": {},"
		" \"cells\": [{\"cell_type\": \"markdown\", \"source\": \"hi\"}]}";
	char path[] = "/tmp/test_notebook_XXXXXX";
	int fd = mkstemp(path);
	struct tr_source src = {.path = "sub/Book.IPYNB", .name = "Book.IPYNB"};
	struct tr_file file = {.fd = fd, .src = &src};
	struct tr_options opts = options(0);
	struct tr_selector sel = {0};
	struct tr_result res;
	char sha[65];

	EXPECT(fd >= 0);
	if (fd < 0)
		return;
	EXPECT_INT(write(fd, json, strlen(json)), (long long)strlen(json));
	fstat(fd, &file.st);
	EXPECT_INT(tr_reader_notebook.probe(&file), TR_PROBE_EXTENSION);
	src.name = "book.json";
	EXPECT_INT(tr_reader_notebook.probe(&file), TR_PROBE_NO);
	src.name = "Book.IPYNB";

	EXPECT_INT(tr_result_init(&res, src.path), 0);
	EXPECT_INT(tr_reader_notebook.read(&file, &sel, &opts, &res), 0);
	EXPECT(res.success);
	tr_sha256_hex(json, strlen(json), sha);
	EXPECT(res.meta.has_sha256);
	EXPECT_STR(res.meta.sha256, sha);
	EXPECT_STR(content(&res),
		   "Jupyter notebook: 1 cell, nbformat 4.5\n\n--- Cell 1 [markdown] ---\nhi\n");
	tr_result_destroy(&res);

	EXPECT_INT(ftruncate(fd, 3 * 1024 * 1024 / 2), 0);
	fstat(fd, &file.st);
	opts.max_notebook_size = 1024 * 1024;
	EXPECT_INT(tr_result_init(&res, src.path), 0);
	EXPECT_INT(tr_reader_notebook.read(&file, &sel, &opts, &res), 0);
	EXPECT_INT(res.error, TR_E_TOO_LARGE);
	EXPECT_INT(res.type, TR_TYPE_NOTEBOOK);
	EXPECT_STR(res.error_text, "Notebook file exceeds 1MB limit (actual: 1.50MB)");
	tr_result_destroy(&res);
	close(fd);
	unlink(path);
}

int main(void)
{
	test_v4_rendering();
	test_v3_rendering();
	test_escapes();
	test_limits();
	test_cell_output_cap();
	test_content_cap();
	test_images();
	test_deadline_passed();
	test_deadline_note_cut();
	test_parse_errors();
	test_json_positions();
	test_selectors();
	test_empty();
	test_reader();
	return EXPECT_DONE();
}
