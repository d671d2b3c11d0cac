/* SPDX-License-Identifier: MIT */
/* test_core.c - unit tests of the core's plumbing: documents, base64, the JSON writer, selectors,
 * virtual names and options. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include <magic.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <zlib.h>

#include "core.h"
#include "expect.h"
#include "render.h"
#include "tr_args.h"
#include "tr_doc.h"
#include "tr_library.h"
#include "tr_options.h"
#include "tr_selector.h"
#include "tr_tokens.h"
#include "util.h"

/* Reads the whole document at every offset in pieces of every size up to 9 and compares. */
static void check_random_access(struct tr_doc *doc, const char *expected)
{
	size_t size = strlen(expected);
	char buf[16];

	EXPECT_INT(tr_doc_size(doc), size);
	for (size_t piece = 1; piece <= 9; piece++) {
		for (size_t off = 0; off <= size; off++) {
			size_t n = tr_doc_read(doc, off, buf, piece);
			size_t want = size - off < piece ? size - off : piece;

			EXPECT_INT(n, want);
			EXPECT(memcmp(buf, expected + off, n) == 0);
		}
	}
}

static void test_base64_segments(void)
{
	static const struct {
		const char *raw, *b64;
	} vectors[] = {
		{"f", "Zg=="},        {"fo", "Zm8="},        {"foo", "Zm9v"},
		{"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
	};

	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		struct tr_doc *doc = tr_doc_new();
		struct tr_blob *blob = tr_blob_copy(vectors[i].raw, strlen(vectors[i].raw));
		char expected[64];

		tr_doc_append(doc, "<\"", 2);
		tr_doc_append_base64(doc, blob);
		tr_doc_append(doc, "\">", 2);
		tr_blob_unref(blob);
		snprintf(expected, sizeof(expected), "<\"%s\">", vectors[i].b64);
		check_random_access(doc, expected);
		tr_doc_unref(doc);
	}
}

/* A sealed document reads the same bytes as before, at every offset, and takes no appends. */
static void test_sealed_doc(void)
{
	struct tr_doc *doc = tr_doc_new();
	struct tr_blob *blob = tr_blob_copy("foobar", 6);
	char expected[4096] = "";
	size_t len = 0;

	for (int i = 0; i < 300; i++) { /* literal runs that grow by doubling, twice over */
		len += (size_t)snprintf(expected + len, sizeof(expected) - len, "%d,", i);
		if (i == 150) {
			tr_doc_append(doc, expected, len);
			tr_doc_append_base64(doc, blob);
			len += (size_t)snprintf(expected + len, sizeof(expected) - len, "Zm9vYmFy");
		}
	}
	tr_doc_append(doc, strchr(expected, 'Z') + 8, strlen(strchr(expected, 'Z') + 8));
	tr_blob_unref(blob);
	check_random_access(doc, expected);
	tr_doc_seal(doc);
	check_random_access(doc, expected);
	EXPECT_INT(tr_doc_append(doc, "x", 1), -1);
	EXPECT_INT(tr_doc_size(doc), strlen(expected));
	tr_doc_seal(doc); /* twice is a no-op */
	check_random_access(doc, expected);
	/* Spans: literal bytes in one piece only. */
	size_t b64_at = (size_t)(strchr(expected, 'Z') - expected);
	const char *span = tr_doc_span(doc, 3, 10);

	EXPECT(span && memcmp(span, expected + 3, 10) == 0);
	span = tr_doc_span(doc, b64_at + 8, strlen(expected) - b64_at - 8);
	EXPECT(span && memcmp(span, expected + b64_at + 8, strlen(expected) - b64_at - 8) == 0);
	EXPECT(tr_doc_span(doc, b64_at - 2, 4) == NULL);           /* into the base64 */
	EXPECT(tr_doc_span(doc, b64_at, 4) == NULL);               /* base64 itself */
	EXPECT(tr_doc_span(doc, strlen(expected) - 1, 2) == NULL); /* past the end */
	EXPECT(tr_doc_span(doc, strlen(expected), 0) == NULL);
	tr_doc_unref(doc);
}

static void test_large_base64_matches_write(void)
{
	size_t raw_len = 100000 + 1; /* not a multiple of 3: padded */
	unsigned char *raw = malloc(raw_len);
	struct tr_doc *doc = tr_doc_new();
	int fds[2];

	for (size_t i = 0; i < raw_len; i++)
		raw[i] = (unsigned char)(i * 131 + 7);
	struct tr_blob *blob = tr_blob_adopt(raw, raw_len);

	tr_doc_append(doc, "x", 1);
	tr_doc_append_base64(doc, blob);
	EXPECT_INT(tr_doc_size(doc), 1 + 4 * ((raw_len + 2) / 3));

	/* The whole document through tr_doc_write_fd equals a piecewise tr_doc_read. */
	size_t size = tr_doc_size(doc);
	char *whole = malloc(size), *piecewise = malloc(size);
	FILE *tmp = tmpfile();

	EXPECT(pipe(fds) == 0);
	close(fds[0]);
	close(fds[1]);
	EXPECT(tr_doc_write_fd(doc, fileno(tmp)) == 0);
	rewind(tmp);
	EXPECT_INT(fread(whole, 1, size, tmp), size);
	for (size_t off = 0; off < size; off += 4093)
		tr_doc_read(doc, off, piecewise + off, size - off < 4093 ? size - off : 4093);
	EXPECT(memcmp(whole, piecewise, size) == 0);
	EXPECT(whole[size - 1] == '=');
	fclose(tmp);
	free(whole);
	free(piecewise);
	tr_blob_unref(blob);
	tr_doc_unref(doc);
}

/* Collects what tr_doc_write_to passes, in a buffer of cap bytes. */
struct collected {
	char *buf;
	size_t len, cap, calls;
};

static int collect(void *arg, const void *bytes, size_t len)
{
	struct collected *c = arg;

	c->calls++;
	if (c->len + len > c->cap)
		return -1;
	memcpy(c->buf + c->len, bytes, len);
	c->len += len;
	return 0;
}

static void test_write_to_passes_a_prefix_in_pieces(void)
{
	size_t raw_len = 5000;
	unsigned char *raw = malloc(raw_len);
	struct tr_doc *doc = tr_doc_new();

	for (size_t i = 0; i < raw_len; i++)
		raw[i] = (unsigned char)(i * 37 + 1);
	struct tr_blob *blob = tr_blob_adopt(raw, raw_len);

	tr_doc_append(doc, "{\"data\":\"", 9);
	tr_doc_append_base64(doc, blob);
	tr_doc_append(doc, "\"}\n", 3);
	size_t size = tr_doc_size(doc);
	char *want = malloc(size), *got = malloc(size);

	EXPECT_INT(tr_doc_read(doc, 0, want, size), size);
	/* every length: inside the head, the base64 and the tail, and the whole */
	for (size_t len = 0; len <= size; len += len < 20 || len + 1017 > size ? 1 : 997) {
		struct collected c = {got, 0, size, 0};

		EXPECT(tr_doc_write_to(doc, len, collect, &c) == 0);
		EXPECT_INT(c.len, len);
		EXPECT(memcmp(got, want, len) == 0);
	}
	/* a sink that stops stops the write */
	struct collected small = {got, 0, 20, 0};

	EXPECT(tr_doc_write_to(doc, size, collect, &small) == -1);
	EXPECT_INT(small.calls, 2);
	free(want);
	free(got);
	tr_blob_unref(blob);
	tr_doc_unref(doc);
}

static char *render_string(const char *s, size_t len)
{
	struct tr_doc *doc = tr_doc_new();
	struct tr_json j;
	size_t size;
	char *out;

	tr_json_init(&j, doc);
	tr_json_string(&j, s, len);
	size = tr_doc_size(doc);
	out = calloc(1, size + 1);
	tr_doc_read(doc, 0, out, size);
	tr_doc_unref(doc);
	return out;
}

static void test_json_strings(void)
{
	char *out;

	out = render_string("a\"b\\c\n\t\x01", 8);
	EXPECT_STR(out, "\"a\\\"b\\\\c\\n\\t\\u0001\"");
	free(out);
	/* Valid UTF-8 passes through; invalid bytes each become U+FFFD. */
	out = render_string("\xc3\xa9\xff\xe2\x82", 5);
	EXPECT_STR(out, "\"\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\"");
	free(out);
	/* Overlong encoding and a surrogate are invalid. */
	out = render_string("\xc0\xaf", 2);
	EXPECT_STR(out, "\"\xef\xbf\xbd\xef\xbf\xbd\"");
	free(out);
	out = render_string("\xed\xa0\x80", 3);
	EXPECT_STR(out, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	free(out);
	out = render_string("\xf0\x9f\x98\x80", 4);
	EXPECT_STR(out, "\"\xf0\x9f\x98\x80\"");
	free(out);
}

static void test_json_structure(void)
{
	struct tr_doc *doc = tr_doc_new();
	struct tr_json j;
	char out[128] = {0};

	tr_json_init(&j, doc);
	tr_json_begin_object(&j);
	tr_json_key(&j, "a");
	tr_json_bool(&j, true);
	tr_json_key(&j, "b");
	tr_json_begin_array(&j);
	tr_json_uint(&j, 1);
	tr_json_int(&j, -2);
	tr_json_begin_object(&j);
	tr_json_end_object(&j);
	tr_json_end_array(&j);
	tr_json_key(&j, "c");
	tr_json_fixed(&j, 2.0, 3);
	tr_json_end_object(&j);
	tr_doc_read(doc, 0, out, sizeof(out) - 1);
	EXPECT_STR(out, "{\"a\":true,\"b\":[1,-2,{}],\"c\":2.000}");
	tr_doc_unref(doc);
}

static void expect_selector(const char *text, int rc, uint64_t start, uint64_t end, uint64_t col)
{
	struct tr_selector sel = {0};
	char back[64];

	EXPECT_INT(tr_selector_parse(text, strlen(text), &sel), rc);
	if (rc != 0)
		return;
	EXPECT_INT(sel.start, start);
	EXPECT_INT(sel.end, end);
	EXPECT_INT(sel.column, col);
	tr_selector_format(&sel, back, sizeof(back));
	EXPECT_STR(back, text);
}

static void test_selectors(void)
{
	expect_selector("5", 0, 5, 5, 0);
	expect_selector("5-", 0, 5, 0, 0);
	expect_selector("5-9", 0, 5, 9, 0);
	expect_selector("12.2001-", 0, 12, 0, 2001);
	expect_selector("9-5", -1, 0, 0, 0);
	expect_selector("5-x", -1, 0, 0, 0);
	expect_selector("+5", -1, 0, 0, 0);
	expect_selector("", -1, 0, 0, 0);
	expect_selector("99999999999999999999999", -1, 0, 0, 0);
	/* fuzz_names: the largest number that fits was refused (the check stopped 9 short). */
	expect_selector("18446744073709551615", 0, UINT64_MAX, UINT64_MAX, 0);
	expect_selector("18446744073709551616", -1, 0, 0, 0);
}

/* A region selector: parses to page, rectangle, and formats back to text. */
static void expect_region(const char *text, int rc, uint64_t page, uint32_t w, uint32_t h,
			  uint32_t x, uint32_t y)
{
	struct tr_selector sel = {0};
	char back[64];

	EXPECT_INT(tr_selector_parse(text, strlen(text), &sel), rc);
	if (rc != 0)
		return;
	EXPECT(sel.present && sel.has_region);
	EXPECT_INT(sel.start, page);
	EXPECT_INT(sel.end, page);
	EXPECT_INT(sel.region.width, w);
	EXPECT_INT(sel.region.height, h);
	EXPECT_INT(sel.region.x, x);
	EXPECT_INT(sel.region.y, y);
	tr_selector_format(&sel, back, sizeof(back));
	EXPECT_STR(back, text);
}

static void test_region_selectors(void)
{
	expect_region("800x600+1200+400", 0, 0, 800, 600, 1200, 400);
	expect_region("3@400x300+100+500", 0, 3, 400, 300, 100, 500);
	expect_region("1x1+0+0", 0, 0, 1, 1, 0, 0);
	expect_region("4294967295x4294967295+4294967295+4294967295", 0, 0, UINT32_MAX, UINT32_MAX,
		      UINT32_MAX, UINT32_MAX);
	expect_region("4294967296x1+0+0", -1, 0, 0, 0, 0, 0);
	expect_region("1x1+4294967296+0", -1, 0, 0, 0, 0, 0);
	expect_region("0x600+0+0", -1, 0, 0, 0, 0, 0);
	expect_region("800x0+0+0", -1, 0, 0, 0, 0, 0);
	expect_region("800x600+00+0", -1, 0, 0, 0, 0, 0);
	expect_region("800x600+01+0", -1, 0, 0, 0, 0, 0);
	expect_region("0800x600+1+0", -1, 0, 0, 0, 0, 0);
	expect_region("800x600+1", -1, 0, 0, 0, 0, 0);
	expect_region("800x600", -1, 0, 0, 0, 0, 0);
	expect_region("800x600+1+2+3", -1, 0, 0, 0, 0, 0);
	expect_region("800X600+1+2", -1, 0, 0, 0, 0, 0);
	expect_region("800x600-1+2", -1, 0, 0, 0, 0, 0);
	expect_region("0@8x6+1+2", -1, 0, 0, 0, 0, 0);
	expect_region("@8x6+1+2", -1, 0, 0, 0, 0, 0);
	expect_region("1@2@8x6+1+2", -1, 0, 0, 0, 0, 0);
	expect_region("1-2@8x6+1+2", -1, 0, 0, 0, 0, 0);
	expect_region("3@", -1, 0, 0, 0, 0, 0);
}

static void test_region_clip(void)
{
	struct tr_region out = {0};
	struct tr_region big = {UINT32_MAX - 1, 0, UINT32_MAX, UINT32_MAX};
	struct tr_selector a = {0}, b = {0};

	EXPECT_INT(tr_region_clip(&(struct tr_region){1900, 1500, 1000, 1000}, 2400, 1800, &out),
		   0);
	EXPECT(out.x == 1900 && out.y == 1500 && out.width == 500 && out.height == 300);
	EXPECT_INT(tr_region_clip(&(struct tr_region){0, 0, 5, 5}, 2400, 1800, &out), 0);
	EXPECT(out.width == 5 && out.height == 5);
	EXPECT_INT(tr_region_clip(&(struct tr_region){2400, 0, 5, 5}, 2400, 1800, &out), -1);
	EXPECT_INT(tr_region_clip(&(struct tr_region){0, 1800, 5, 5}, 2400, 1800, &out), -1);
	/* x + width past 2^32: clipped without wrapping */
	EXPECT_INT(tr_region_clip(&big, UINT32_MAX, UINT32_MAX, &out), 0);
	EXPECT(out.x == UINT32_MAX - 1 && out.width == 1 && out.height == UINT32_MAX);
	/* equal selectors: every field, the rectangle's included */
	EXPECT_INT(tr_selector_parse("8x6+1+2", 7, &a), 0);
	EXPECT_INT(tr_selector_parse("8x6+1+3", 7, &b), 0);
	EXPECT(!tr_selector_equal(&a, &b));
	EXPECT_INT(tr_selector_parse("8x6+1+2", 7, &b), 0);
	EXPECT(tr_selector_equal(&a, &b));
	EXPECT_INT(tr_selector_parse("1@8x6+1+2", 9, &b), 0);
	EXPECT(!tr_selector_equal(&a, &b));
	EXPECT_INT(tr_selector_parse("1", 1, &b), 0);
	EXPECT(!tr_selector_equal(&a, &b));
}

/* A time selector of audio and video (selector_time.c): t0, t1 and its canonical form. */
static void expect_time(const char *text, int rc, double t0, double t1, const char *canonical)
{
	struct tr_selector sel = {0};
	char back[64];

	EXPECT_INT(tr_selector_parse(text, strlen(text), &sel), rc);
	if (rc != 0)
		return;
	EXPECT(sel.time && sel.present && !sel.start && !sel.column);
	EXPECT(fabs(sel.t0 - t0) < 1e-9 && fabs(sel.t1 - t1) < 1e-9);
	tr_selector_format(&sel, back, sizeof(back));
	EXPECT_STR(back, canonical);
}

static void test_time_selectors(void)
{
	/* what A, A-B and A.C- refuse is a time: zero, leading zeros, decimals */
	expect_time("0", 0, 0, 0, "0");
	expect_time("05", 0, 5, 5, "5");
	expect_time("5.3", 0, 5.3, 5.3, "5.3");
	expect_time("0-600", 0, 0, 600, "0-600");
	expect_time("1:30-2:00", 0, 90, 120, "90-120");
	expect_time("01:02:03.5-", 0, 3723.5, -1, "3723.5-");
	expect_time("1.25-2.5", 0, 1.25, 2.5, "1.25-2.5");
	expect_time("1:60", -1, 0, 0, "");    /* seconds under 60 */
	expect_time("1:5", -1, 0, 0, "");     /* two digits */
	expect_time("1:2:3:4", -1, 0, 0, ""); /* three fields at most */
	expect_time("5.5-5.5", -1, 0, 0, ""); /* T2 after T1 */
	expect_time("3-1", -1, 0, 0, "");
	expect_time("1.", -1, 0, 0, "");
	expect_time(".5", -1, 0, 0, "");
	expect_time("1.5:00", -1, 0, 0, "");      /* decimals on the last field only */
	expect_time("999999999.5", -1, 0, 0, ""); /* past 100 days */
	/* read to the millisecond its canonical form writes (fuzz_names found "0-0.00042" gave
	 * "0-0", which does not parse) */
	expect_time("7.205052", 0, 7.205, 7.205, "7.205");
	expect_time("2.2025-3", 0, 2.203, 3, "2.203-3");
	expect_time("0-0.00042", -1, 0, 0, "");
	/* equal selectors (the mount's cache key): one time span however written, not another */
	struct tr_selector a = {0}, b = {0};

	EXPECT_INT(tr_selector_parse("1:30-2:00", 9, &a), 0);
	EXPECT_INT(tr_selector_parse("01:30-02:00.0", 13, &b), 0);
	EXPECT(tr_selector_equal(&a, &b));
	EXPECT_INT(tr_selector_parse("1:30-2:01", 9, &b), 0);
	EXPECT(!tr_selector_equal(&a, &b));
	EXPECT_INT(tr_selector_parse("1:30-", 5, &b), 0);
	EXPECT(!tr_selector_equal(&a, &b));
	EXPECT_INT(tr_selector_parse("90-120", 6, &b), 0); /* lines (seconds to the media reader) */
	EXPECT(!tr_selector_equal(&a, &b));
}

static void expect_name(const char *name, int rc, const char *base, const char *sel,
			enum tr_format fmt)
{
	size_t base_len;
	struct tr_selector s;
	enum tr_format f;
	char text[64] = "";

	EXPECT_INT(tr_virtual_name_parse(name, &base_len, &s, &f), rc);
	if (rc != 0)
		return;
	EXPECT_INT(base_len, strlen(base));
	EXPECT(strncmp(name, base, base_len) == 0);
	if (s.present)
		tr_selector_format(&s, text, sizeof(text));
	EXPECT_STR(text, sel);
	EXPECT_INT(f, fmt);
}

static void test_virtual_names(void)
{
	expect_name("main.c.tool.json", 0, "main.c", "", TR_FORMAT_TOOL);
	expect_name("main.c:2001-4000.tool.json", 0, "main.c", "2001-4000", TR_FORMAT_TOOL);
	expect_name("main.c:3.5-.tool.json", 0, "main.c", "3.5-", TR_FORMAT_TOOL);
	expect_name("a.png.tool.anthropic.json", 0, "a.png", "", TR_FORMAT_ANTHROPIC);
	expect_name("a.pdf:2-3.tool.mcp.json", 0, "a.pdf", "2-3", TR_FORMAT_MCP);
	expect_name("x:y:4.tool.json", 0, "x:y", "4", TR_FORMAT_TOOL);
	/* An unparseable selector leaves it in the name (which will not exist). */
	expect_name("a:x.tool.json", 0, "a:x", "", TR_FORMAT_TOOL);
	/* A time selector may hold colons: the longest tail that is one. */
	expect_name("clip.mp4:1:30-2:00.tool.json", 0, "clip.mp4", "90-120", TR_FORMAT_TOOL);
	expect_name("talk.mp3:0-600.tool.mcp.json", 0, "talk.mp3", "0-600", TR_FORMAT_MCP);
	expect_name("a:1:60.tool.json", 0, "a:1", "60", TR_FORMAT_TOOL);
	expect_name("a.tool.tool.json", 0, "a.tool", "", TR_FORMAT_TOOL);
	expect_name("a.tool.xml.json", -1, "", "", TR_FORMAT_TOOL);
	expect_name(".tool.json", -1, "", "", TR_FORMAT_TOOL);
	expect_name("a.json", -1, "", "", TR_FORMAT_TOOL);
	expect_name(":5.tool.json", 0, ":5", "", TR_FORMAT_TOOL);
	expect_name("main.c.tool.txt", 0, "main.c", "", TR_FORMAT_TXT);
	expect_name("main.c:2001-4000.tool.txt", 0, "main.c", "2001-4000", TR_FORMAT_TXT);
	expect_name("main.c.tool.txt.json", -1, "", "", TR_FORMAT_TOOL);
	expect_name("main.c.tool.TXT", -1, "", "", TR_FORMAT_TOOL);
	expect_name(".tool.txt", -1, "", "", TR_FORMAT_TOOL);
	expect_name("shot.png:800x600+1200+400.tool.json", 0, "shot.png", "800x600+1200+400",
		    TR_FORMAT_TOOL);
	expect_name("report.pdf:3@400x300+100+500.tool.txt", 0, "report.pdf", "3@400x300+100+500",
		    TR_FORMAT_TXT);
}

/* A selector written after its NAME: canonical, but for a single line after a NAME ending in
 * ":digits", which would read back as a time (the fuzzer's "0:;0\x1b:10:10-10.tool.txt"). */
static void test_selector_after_a_name(void)
{
	struct tr_selector line = {.present = true, .start = 10, .end = 10};
	struct tr_selector lines = {.present = true, .start = 10, .end = 20};
	char text[64];

	tr_selector_format_after("notes", 5, &line, text, sizeof(text));
	EXPECT_STR(text, "10");
	tr_selector_format_after("notes:10", 8, &line, text, sizeof(text));
	EXPECT_STR(text, "10-10");
	expect_name("notes:10:10-10.tool.json", 0, "notes:10", "10", TR_FORMAT_TOOL);
	expect_name("notes:10:10.tool.json", 0, "notes", "610", TR_FORMAT_TOOL);
	tr_selector_format_after("notes:10", 8, &lines, text, sizeof(text));
	EXPECT_STR(text, "10-20");
}

static void test_options(void)
{
	struct tr_options o;

	tr_options_init(&o);
	EXPECT_INT(o.max_lines, 2000);
	EXPECT_INT(o.max_output, 100 * 1024);
	EXPECT_INT(o.max_image_size, 20 * 1024 * 1024);
	EXPECT_INT(o.image_max_b64, 5 * 1024 * 1024);
	EXPECT_INT(o.max_pdf_size, 32 * 1024 * 1024);
	EXPECT_INT(o.max_pdf_pages, 20);
	EXPECT_INT(o.max_notebook_size, 64 * 1024 * 1024);
	EXPECT_INT(o.max_office_size, 64 * 1024 * 1024);
	EXPECT_INT(o.max_render_ms, 10000);
	EXPECT_INT(o.cache_size, 256 * 1024 * 1024);
	EXPECT_INT(tr_options_set(&o, "max-render-ms", "250"), 0);
	EXPECT_INT(o.max_render_ms, 250);
	EXPECT_INT(tr_options_set(&o, "max_render_ms", "1K"), -1);
	EXPECT_INT(o.max_read_memory, 256 * 1024 * 1024);
	EXPECT_INT(tr_options_set(&o, "max-read-memory", "1G"), 0);
	EXPECT_INT(o.max_read_memory, 1024 * 1024 * 1024);
	EXPECT_INT(tr_options_set(&o, "max-output", "10K"), 0);
	EXPECT_INT(o.max_output, 10240);
	EXPECT_INT(tr_options_set(&o, "max_image_size", "2M"), 0);
	EXPECT_INT(o.max_image_size, 2 * 1024 * 1024);
	EXPECT_INT(tr_options_set(&o, "max_lines", "10K"), -1);
	EXPECT_INT(tr_options_set(&o, "max_lines", "0"), -1);
	EXPECT_INT(tr_options_set(&o, "max_lines", "-3"), -1);
	EXPECT_INT(tr_options_set(&o, "no_such", "1"), 1);
	EXPECT_INT(tr_options_set(&o, "hide_siblings", NULL), 0);
	EXPECT(o.hide_siblings);
	EXPECT_INT(tr_options_set(&o, "symlinks", "none"), 0);
	EXPECT_INT(o.symlinks, TR_SYMLINKS_NONE);
	EXPECT_INT(tr_options_set(&o, "symlinks", "all"), -1);
	/* max_tokens: off by default, a count, or off again */
	char value[32];

	EXPECT_INT(o.max_tokens, 0);
	EXPECT_INT(tr_option_format(&o, "max_tokens", value, sizeof(value)), 0);
	EXPECT_STR(value, "off");
	EXPECT_INT(tr_options_set(&o, "max-tokens", "20000"), 0);
	EXPECT_INT(o.max_tokens, 20000);
	EXPECT_INT(tr_option_format(&o, "max_tokens", value, sizeof(value)), 0);
	EXPECT_STR(value, "20000");
	EXPECT_INT(tr_options_set(&o, "max_tokens", "20K"), -1);
	EXPECT_INT(tr_options_set(&o, "max_tokens", NULL), -1);
	EXPECT_INT(tr_options_set(&o, "max_tokens", "0"), 0);
	EXPECT_INT(o.max_tokens, 0);
	EXPECT_INT(tr_options_set(&o, "max_tokens", "7"), 0);
	EXPECT_INT(tr_options_set(&o, "max_tokens", "off"), 0);
	EXPECT_INT(o.max_tokens, 0);
	/* ocr: off|auto|on; ocr_lang: [A-Za-z0-9_] runs joined by + */
	EXPECT_INT(o.ocr, TR_OCR_AUTO);
	EXPECT_STR(o.ocr_lang.text, "eng");
	EXPECT_INT(o.max_ocr_pages, 10);
	EXPECT_INT(tr_options_set(&o, "ocr", "on"), 0);
	EXPECT_INT(o.ocr, TR_OCR_ON);
	EXPECT_INT(tr_option_format(&o, "ocr", value, sizeof(value)), 0);
	EXPECT_STR(value, "on");
	EXPECT_INT(tr_options_set(&o, "ocr", "yes"), -1);
	EXPECT_INT(tr_options_set(&o, "ocr", NULL), -1);
	EXPECT_INT(tr_options_set(&o, "ocr-lang", "eng+deu"), 0);
	EXPECT_STR(o.ocr_lang.text, "eng+deu");
	EXPECT_INT(tr_option_format(&o, "ocr_lang", value, sizeof(value)), 0);
	EXPECT_STR(value, "eng+deu");
	EXPECT_INT(tr_options_set(&o, "ocr_lang", "chi_sim"), 0);
	EXPECT_INT(tr_options_set(&o, "ocr_lang", "../eng"), -1);
	EXPECT_INT(tr_options_set(&o, "ocr_lang", "eng+"), -1);
	EXPECT_INT(tr_options_set(&o, "ocr_lang", "+eng"), -1);
	EXPECT_INT(tr_options_set(&o, "ocr_lang", "eng++deu"), -1);
	EXPECT_INT(tr_options_set(&o, "ocr_lang", ""), -1);
	EXPECT_INT(tr_options_set(&o, "ocr_lang", NULL), -1);
	EXPECT_STR(o.ocr_lang.text, "chi_sim");
	/* toolfs-mcp starts from the table's mcp column where it has one */
	tr_options_init_for(&o, TR_FRONT_MCP);
	EXPECT_INT(o.max_output, 100 * 1024);
	EXPECT_INT(o.max_tokens, 20000);
	EXPECT_INT(o.image_max_dim, 1568);
	EXPECT_INT(o.image_max_b64, 1024 * 1024);
	EXPECT_INT(o.max_pdf_pages, 5);
	EXPECT_INT(o.max_lines, 2000);
	EXPECT_INT(o.symlinks, TR_SYMLINKS_INSIDE);
}

/* What the command-line callbacks below saw. */
struct args_seen {
	const char *operands[4];
	int n_operands, shorts;
	char extra[64];
};

static int seen_operand(const struct tr_args *args, const char *arg)
{
	struct args_seen *seen = args->ctx;

	if (seen->n_operands == 4)
		return tr_args_error(args, "unexpected argument: %s", arg);
	seen->operands[seen->n_operands++] = arg;
	return 0;
}

static int seen_option(const struct tr_args *args, const char *name, const char *value)
{
	struct args_seen *seen = args->ctx;

	if (strcmp(name, "-f") == 0) {
		seen->shorts++;
		return TR_ARG_TAKEN;
	}
	if (strcmp(name, "own") == 0)
		return value && strcmp(value, "ok") == 0 ? TR_ARG_TAKEN : TR_ARG_INVALID;
	return TR_ARG_NOT_MINE;
}

static int seen_extra(const struct tr_args *args, const char *item)
{
	struct args_seen *seen = args->ctx;

	snprintf(seen->extra, sizeof(seen->extra), "%s", item);
	return 0;
}

static int parse_line(enum tr_front front, struct tr_options *opts, struct args_seen *seen,
		      char *line)
{
	char *argv[16] = {"prog"};
	int argc = 1;
	struct tr_args args = {
		.program = "prog",
		.front = front,
		.operand = seen_operand,
		.option = seen_option,
		.extra = front == TR_FRONT_MOUNT ? seen_extra : NULL,
		.ctx = seen,
	};
	FILE *saved = stderr, *quiet = fopen("/dev/null", "w");
	int rc;

	for (char *save = NULL, *word = strtok_r(line, " ", &save); word && argc < 15;
	     word = strtok_r(NULL, " ", &save))
		argv[argc++] = word;
	memset(seen, 0, sizeof(*seen));
	tr_options_init(opts);
	if (quiet)
		stderr = quiet; /* the usage errors asked for are not news */
	rc = tr_args_parse(&args, argc, argv, opts);
	stderr = saved;
	if (quiet)
		fclose(quiet);
	return rc;
}

/* The one command-line parser: --NAME VALUE, --NAME=VALUE, flags and operands for toolfs-read
 * and toolfs-mcp; -o lists, short options and FUSE's leftovers for the mount. */
static void test_args(void)
{
	struct tr_options o;
	struct args_seen seen;
	char line[128];
	snprintf(line, sizeof(line), "--max-lines 5 a --hide_siblings --max_output=2K -- -b");
	EXPECT_INT(parse_line(TR_FRONT_CLI, &o, &seen, line), -1);
	EXPECT_INT(o.max_lines, 5);
	EXPECT(o.hide_siblings);
	EXPECT_INT(o.max_output, 2048);
	EXPECT_INT(seen.n_operands, 2);
	EXPECT_STR(seen.operands[1], "-b");
	snprintf(line, sizeof(line), "--own ok --max-lines");
	EXPECT_INT(parse_line(TR_FRONT_CLI, &o, &seen, line), 2); /* needs a value */
	snprintf(line, sizeof(line), "--own bad");
	EXPECT_INT(parse_line(TR_FRONT_CLI, &o, &seen, line), 2);
	snprintf(line, sizeof(line), "--no-such 1");
	EXPECT_INT(parse_line(TR_FRONT_CLI, &o, &seen, line), 2);
	snprintf(line, sizeof(line), "-x a");
	EXPECT_INT(parse_line(TR_FRONT_CLI, &o, &seen, line), 2);
	snprintf(line, sizeof(line), "-f -o max_lines=7,own=ok,ro,symlinks=none src mnt");
	EXPECT_INT(parse_line(TR_FRONT_MOUNT, &o, &seen, line), -1);
	EXPECT_INT(seen.shorts, 1);
	EXPECT_INT(o.max_lines, 7);
	EXPECT_INT(o.symlinks, TR_SYMLINKS_NONE);
	EXPECT_STR(seen.extra, "ro");
	EXPECT_INT(seen.n_operands, 2);
	snprintf(line, sizeof(line), "-omax_lines=0 src mnt");
	EXPECT_INT(parse_line(TR_FRONT_MOUNT, &o, &seen, line), 2);
	snprintf(line, sizeof(line), "--max-lines=3 src mnt");
	EXPECT_INT(parse_line(TR_FRONT_MOUNT, &o, &seen, line), 2);
	snprintf(line, sizeof(line), "-o");
	EXPECT_INT(parse_line(TR_FRONT_MOUNT, &o, &seen, line), 2);
}

/* The window of a result: range as given, truncated when cut or not all of total, next named
 * after the file. */
static void test_result_window(void)
{
	struct tr_result res;

	EXPECT_INT(tr_result_init(&res, "a/b.txt"), 0);
	EXPECT_INT(tr_result_set_window(
			   &res, "b.txt",
			   &(struct tr_window){
				   .unit = TR_UNIT_LINE, .first = 1, .last = 10, .total = 10}),
		   0);
	EXPECT_INT(res.range_unit, TR_UNIT_LINE);
	EXPECT_INT(res.range_start, 1);
	EXPECT_INT(res.range_end, 10);
	EXPECT_INT(res.range_total, 10);
	EXPECT(!res.truncated);
	EXPECT(res.next == NULL);
	tr_result_set_window(
		&res, "b.txt",
		&(struct tr_window){.unit = TR_UNIT_SHEET,
				    .first = 2,
				    .last = 3,
				    .total = 3,
				    .next = {.present = true, .start = 3, .column = 41}});
	EXPECT(res.truncated);
	EXPECT_STR(res.next, "b.txt:3.41-.tool.json");
	tr_result_set_window(&res, "b.txt",
			     &(struct tr_window){.unit = TR_UNIT_CELL,
						 .first = 1,
						 .last = 4,
						 .total = 9,
						 .next = {.present = true, .start = 5}});
	EXPECT(res.truncated);
	EXPECT_STR(res.next, "b.txt:5-.tool.json");
	tr_result_set_window(
		&res, "b.txt",
		&(struct tr_window){
			.unit = TR_UNIT_PAGE, .first = 1, .last = 1, .total = 1, .cut = true});
	EXPECT(res.truncated);
	/* no pages: nothing shown, nothing cut */
	tr_result_set_window(&res, "b.txt", &(struct tr_window){.unit = TR_UNIT_PAGE});
	EXPECT(!res.truncated);
	tr_result_destroy(&res);
}

/* The token estimate: what the text reader relies on. Lines weighed one by one add up to the
 * whole (each starts as after a line break), the estimate is that sum rounded, never more
 * than the bytes nor 0 for a byte; the image prices are the providers' published examples
 * (Anthropic: 1000x1000 is about 1334 tokens; OpenAI: 1024x1024 high detail is 765, 2048x4096
 * is 1105). */
static void test_tokens(void)
{
	static const char *const lines[] = {
		"     1\tint main(void)\n",
		"     2\t{\n",
		"     3\t\treturn 0; /* \"ok\" */\n",
		"     4\t}\n",
		"     5\t\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xd1\x82\xd0\xb5\xd0\xba\n",
	};
	char whole[256] = "";
	uint64_t sum = 0;

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		sum += tr_tokens_weigh(lines[i], strlen(lines[i]));
		strcat(whole, lines[i]);
	}
	EXPECT_INT(tr_tokens_weigh(whole, strlen(whole)), sum);
	EXPECT_INT(tr_tokens_estimate(whole, strlen(whole)), tr_tokens_round(sum, strlen(whole)));
	EXPECT_INT(tr_tokens_estimate("", 0), 0);
	EXPECT_INT(tr_tokens_estimate("a", 1), 1);
	EXPECT_INT(tr_tokens_estimate("0", 1), 1);
	EXPECT(tr_tokens_estimate(whole, strlen(whole)) <= strlen(whole));
	EXPECT_INT(tr_tokens_image_anthropic(1000, 1000), 1334);
	EXPECT_INT(tr_tokens_image_anthropic(0, 1000), 0);
	EXPECT_INT(tr_tokens_image_openai(1024, 1024), 765);
	EXPECT_INT(tr_tokens_image_openai(2048, 4096), 1105);
	EXPECT_INT(tr_tokens_image_openai(100, 100), 255);
	EXPECT_INT(tr_tokens_image_openai(0, 5), 0);
}

/* The render budget's clock: no deadline never passes, one in the past has, one far ahead has
 * not, and a budget too long to represent is none. */
static void test_deadline(void)
{
	uint64_t soon = tr_deadline_after_ms(1), later = tr_deadline_after_ms(3600 * 1000);
	struct timespec pause = {0, 3 * 1000 * 1000};

	EXPECT(!tr_deadline_passed(0));
	EXPECT_INT(tr_deadline_after_ms(0), 0);
	EXPECT_INT(tr_deadline_after_ms(UINT64_MAX), 0);
	EXPECT(soon != 0 && later > soon);
	nanosleep(&pause, NULL);
	EXPECT(tr_deadline_passed(soon));
	EXPECT(!tr_deadline_passed(later));
}

/* A poll timeout until a deadline: the cap without one, 0 once it has come, the milliseconds
 * left (rounded up, at most the cap) before it. */
static void test_deadline_wait(void)
{
	uint64_t hour = tr_deadline_after_ms(3600 * 1000), past = tr_deadline_after_ms(1);
	struct timespec pause = {0, 3 * 1000 * 1000};

	nanosleep(&pause, NULL);
	EXPECT_INT(tr_deadline_wait_ms(0, 60000), 60000);
	EXPECT_INT(tr_deadline_wait_ms(0, -1), -1);
	EXPECT_INT(tr_deadline_wait_ms(past, 60000), 0);
	EXPECT_INT(tr_deadline_wait_ms(hour, 60000), 60000);
	EXPECT(tr_deadline_wait_ms(hour, -1) > 3500 * 1000 &&
	       tr_deadline_wait_ms(hour, -1) <= 3600 * 1000);
}

/* A stream read before a deadline: all of it (0), the stream's end first (-1), the deadline
 * first (1, with the data short). */
static void test_read_full_before(void)
{
	char buf[8];
	int p[2];

	EXPECT_INT(pipe(p), 0);
	EXPECT_INT(write(p[1], "abcdefgh", 8), 8);
	EXPECT_INT(tr_read_full_before(p[0], buf, 8, tr_deadline_after_ms(1000)), 0);
	EXPECT(memcmp(buf, "abcdefgh", 8) == 0);
	EXPECT_INT(write(p[1], "abc", 3), 3);
	EXPECT_INT(tr_read_full_before(p[0], buf, 8, tr_deadline_after_ms(30)), 1);
	EXPECT_INT(write(p[1], "xy", 2), 2);
	close(p[1]);
	EXPECT_INT(tr_read_full_before(p[0], buf, 8, 0), -1);
	close(p[0]);
}

/* The content types of --help and the MCP description: the schema's order, unknown last. */
static void test_content_types_list(void)
{
	char buf[160], small[12];

	tr_content_types_list(buf, sizeof(buf));
	EXPECT_STR(buf, "text, image, pdf, notebook, document, spreadsheet, presentation, audio, "
			"video, binary, unknown");
	tr_content_types_list(small, sizeof(small));
	EXPECT_STR(small, "text, image");
}

static const char *const base64_path_names[TR_BASE64_PATHS] = {"scalar", "avx2", "avx512vbmi"};

/* Every encoder this CPU can run agrees with OpenSSL's EVP_EncodeBlock on every length from 0 to
 * 1000 groups (every alignment of the SIMD steps and their tails) and on every byte value. The
 * input ends where an unreadable page begins and the output where an unwritable one does, so a
 * read or a write past the groups faults; the byte before the output must stay as it was. */
static void test_base64_paths_agree(void)
{
	enum { MAX_GROUPS = 1000 };
	long page = sysconf(_SC_PAGESIZE);
	size_t span = ((4 * MAX_GROUPS + 1 + (size_t)page - 1) / (size_t)page) * (size_t)page;
	unsigned char *area = mmap(NULL, 4 * span, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char oracle[4 * MAX_GROUPS + 1];
	unsigned seed = 12345;

	EXPECT(area != MAP_FAILED);
	if (area == MAP_FAILED)
		return;
	/* [input span][guard][output span][guard] */
	EXPECT_INT(mprotect(area + span, span, PROT_NONE), 0);
	EXPECT_INT(mprotect(area + 3 * span, span, PROT_NONE), 0);
	unsigned char *in_end = area + span, *out_end = area + 3 * span;

	for (int p = 0; p < TR_BASE64_PATHS; p++) {
		printf("base64 path %s: %s\n", base64_path_names[p],
		       tr_base64_path_usable(p) ? "tested" : "not usable here");
	}
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < span; i++) {
			seed = seed * 1103515245u + 12345u;
			area[i] = round == 0 ? (unsigned char)i : (unsigned char)(seed >> 16);
		}
		for (size_t groups = 0; groups <= MAX_GROUPS; groups++) {
			const unsigned char *in = in_end - 3 * groups;
			unsigned char *out = out_end - 4 * groups;

			EXPECT_INT(EVP_EncodeBlock(oracle, in, (int)(3 * groups)), 4 * groups);
			for (int p = 0; p < TR_BASE64_PATHS; p++) {
				if (!tr_base64_path_usable(p))
					continue;
				memset(out - 1, 0xa5, 4 * groups + 1);
				tr_base64_groups_path(p, in, groups, out);
				EXPECT(memcmp(out, oracle, 4 * groups) == 0);
				EXPECT_INT(out[-1], 0xa5);
			}
			tr_base64_groups(in, groups, out);
			EXPECT(memcmp(out, oracle, 4 * groups) == 0);
		}
	}
	munmap(area, 4 * span);
}

/* Random buffers of random lengths at every alignment of input and output within 64 bytes:
 * every encoder gives the scalar one's characters and writes nothing around them. */
static void test_base64_paths_alignments(void)
{
	enum { MAX_GROUPS = 700, PAD = 64 };
	static unsigned char in[3 * MAX_GROUPS + 2 * PAD], out[4 * MAX_GROUPS + 2 * PAD],
		want[4 * MAX_GROUPS + 2 * PAD];
	unsigned seed = 777;

	for (size_t in_at = 0; in_at < PAD; in_at++) {
		for (size_t out_at = 0; out_at < PAD; out_at++) {
			size_t groups;

			for (size_t i = 0; i < sizeof(in); i++) {
				seed = seed * 1103515245u + 12345u;
				in[i] = (unsigned char)(seed >> 16);
			}
			seed = seed * 1103515245u + 12345u;
			groups = (seed >> 8) % (MAX_GROUPS + 1);
			memset(want, 0x5a, sizeof(want));
			tr_base64_groups_path(TR_BASE64_SCALAR, in + in_at, groups, want + out_at);
			for (int p = 0; p < TR_BASE64_PATHS; p++) {
				if (!tr_base64_path_usable(p))
					continue;
				memset(out, 0x5a, sizeof(out));
				tr_base64_groups_path(p, in + in_at, groups, out + out_at);
				EXPECT(memcmp(out, want, sizeof(out)) == 0);
			}
		}
	}
}

/* Fills buf with len pseudo-random bytes from seed; NULL when buf is (a failed malloc). */
static unsigned char *fill_random(unsigned char *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; buf && i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (unsigned char)(seed >> 16);
	}
	EXPECT(buf != NULL);
	return buf;
}

/* tr_crc32 agrees with zlib's crc32 on every length from 0 to 300 at every alignment up to 16,
 * on a few MiB, on the standard check value, and when continued from any split point. */
static void test_crc32_matches_zlib(void)
{
	enum { BIG = 3 << 20 };
	unsigned char *buf = fill_random(malloc(BIG), BIG, 777);

	if (!buf)
		return;
	EXPECT_INT(tr_crc32(0, "123456789", 9), 0xcbf43926u);
	for (size_t align = 0; align < 16; align++) {
		for (size_t len = 0; len <= 300; len++)
			EXPECT_INT(tr_crc32(0, buf + align, len), crc32(0, buf + align, (uInt)len));
	}
	for (size_t split = 0; split <= 300; split++)
		EXPECT_INT(tr_crc32(tr_crc32(0, buf, split), buf + split, 300 - split),
			   crc32(0, buf, 300));
	EXPECT_INT(tr_crc32(0, buf + 1, BIG - 1), crc32(0, buf + 1, BIG - 1));
	free(buf);
}

/* toolfs's SHA-256 gives OpenSSL's digest of the buffer at every length to 300 (each padding
 * case) and around the 16 KiB prefetch steps, one-shot and fed in uneven pieces, on the SHA-NI
 * path (when the CPU has it) and on the portable one. */
static void sha256_against_openssl(const unsigned char *buf, size_t len)
{
	unsigned char digest[32], raw[32];
	char want[65], got[65], pieces[65];
	struct tr_sha256 *ctx = tr_sha256_new();
	unsigned dlen = 0;

	EXPECT(EVP_Digest(buf, len, digest, &dlen, EVP_sha256(), NULL) == 1);
	for (unsigned b = 0; b < 32; b++)
		snprintf(want + 2 * b, 3, "%02x", digest[b]);
	tr_sha256_hex(buf, len, got);
	EXPECT_STR(got, want);
	EXPECT(tr_sha256_raw(buf, len, raw) && memcmp(raw, digest, 32) == 0);
	for (size_t at = 0, step = 1; at < len; at += step, step = step * 3 + 1)
		tr_sha256_update(ctx, buf + at, len - at < step ? len - at : step);
	tr_sha256_finish(ctx, pieces);
	EXPECT_STR(pieces, want);
}

static void test_sha256(void)
{
	static const size_t lens[] = {16383, 16384, 16385, 32768, 49153, 1 << 20, (1 << 20) + 7};
	size_t max = (1 << 20) + 7;
	unsigned char *buf = fill_random(malloc(max), max, 4242);

	if (!buf)
		return;
	for (int portable = 0; portable < 2; portable++) {
		tr_sha256_use_portable(portable);
		for (size_t len = 0; len <= 300; len++)
			sha256_against_openssl(buf, len);
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
			sha256_against_openssl(buf, lens[i]);
	}
	tr_sha256_use_portable(false);
	free(buf);
}

/* A digest still being computed: the document's size is known at once, and a read that reaches
 * it gets the hex of the bytes, the same as hashing inline. */
/* The digest memo answers for the exact version it was given, and not for a fresh one. */
/* tr_siphash128 (the mime memo's key) is OpenSSL's SipHash-2-4 with a 16-byte output, at every
 * length to 300 under the reference key 00..0f and under another, and the reference's first
 * vector. */
static void test_siphash(void)
{
	static const unsigned char first[16] = {0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6,
						0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93};
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	unsigned char key[16], buf[300], want[16], got[16];
	size_t size = 16, out_len = 0;
	OSSL_PARAM params[] = {OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
			       OSSL_PARAM_construct_end()};
	uint64_t k[2] = {0, 0};

	for (int i = 0; i < 16; i++) {
		key[i] = (unsigned char)i;
		k[i / 8] |= (uint64_t)i << (8 * (i % 8));
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	tr_siphash128("", 0, k, got);
	EXPECT(memcmp(got, first, 16) == 0);
	EXPECT(mac != NULL);
	for (int round = 0; mac && round < 2; round++) {
		for (size_t len = 0; len <= sizeof(buf); len++) {
			EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);

			EXPECT(ctx && EVP_MAC_init(ctx, key, 16, params) == 1 &&
			       EVP_MAC_update(ctx, buf, len) == 1 &&
			       EVP_MAC_final(ctx, want, &out_len, sizeof(want)) == 1 &&
			       out_len == 16);
			tr_siphash128(buf, len, k, got);
			EXPECT(memcmp(got, want, 16) == 0);
			EVP_MAC_CTX_free(ctx);
		}
		for (int i = 0; i < 16; i++)
			key[i] = (unsigned char)(0xf0 ^ i * 37);
		k[0] = k[1] = 0;
		for (int i = 0; i < 16; i++)
			k[i / 8] |= (uint64_t)key[i] << (8 * (i % 8));
	}
	EVP_MAC_free(mac);
}

static void test_sha_memo(void)
{
	static const char hex_a[] =
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	struct stat old = {0}, other, fresh;
	char got[65] = "";

	old.st_mode = S_IFREG | 0644;
	old.st_dev = 42;
	old.st_ino = 4242;
	old.st_size = 1000;
	old.st_mtim.tv_sec = 1700000000;
	old.st_ctim.tv_sec = 1700000001;
	old.st_ctim.tv_nsec = 5;
	EXPECT(!tr_sha_memo_get(&old, got));
	tr_sha_memo_put(&old, hex_a);
	EXPECT(tr_sha_memo_get(&old, got));
	EXPECT_STR(got, hex_a);
	/* Each part of the version counts. */
	other = old;
	other.st_ctim.tv_nsec = 6;
	EXPECT(!tr_sha_memo_get(&other, got));
	other = old;
	other.st_size = 1001;
	EXPECT(!tr_sha_memo_get(&other, got));
	other = old;
	other.st_mtim.tv_sec++;
	EXPECT(!tr_sha_memo_get(&other, got));
	other = old;
	other.st_ino++;
	EXPECT(!tr_sha_memo_get(&other, got));
	/* A version stamped just now is never remembered (coarse kernel timestamps). */
	fresh = old;
	fresh.st_ino = 77;
	clock_gettime(CLOCK_REALTIME, &fresh.st_ctim);
	tr_sha_memo_put(&fresh, hex_a);
	EXPECT(!tr_sha_memo_get(&fresh, got));
	/* Nor is anything but a regular file. */
	other = old;
	other.st_ino = 78;
	other.st_mode = S_IFIFO | 0644;
	tr_sha_memo_put(&other, hex_a);
	EXPECT(!tr_sha_memo_get(&other, got));
}

/* Whether a large blob of len bytes reuses the mapping of the one freed before it: a spare keeps
 * its bytes, a fresh mapping comes zeroed. */
static bool blob_reuses_spare(size_t len)
{
	struct tr_blob *blob = tr_blob_new_writable(len);
	bool reused;

	EXPECT(blob != NULL && blob->map_len >= len);
	memset(blob->data, 0xab, len);
	tr_blob_unref(blob);
	blob = tr_blob_new_writable(len);
	EXPECT(blob != NULL);
	reused = blob->data[0] == 0xab && blob->data[len - 1] == 0xab;
	tr_blob_unref(blob);
	return reused;
}

/* tr_library_init sizes the spare mappings from max_read_memory (3/16 of it); shutdown gives the
 * spares back and forgets the digest memo; both may run again. */
static void test_library_state(void)
{
	static const char hex[] =
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	struct tr_options opts;
	struct stat st = {.st_mode = S_IFREG | 0644, .st_dev = 43, .st_ino = 4343, .st_size = 9};
	char got[65];
	size_t len = 4u << 20;

	tr_library_shutdown(); /* no spares left by the tests before */
	tr_options_init(&opts);
	tr_library_init(&opts);
	EXPECT(blob_reuses_spare(len));   /* 48 MiB of spares at the default 256 MiB */
	opts.max_read_memory = 16u << 20; /* 3 MiB of spares: a 4 MiB mapping is not kept */
	tr_library_init(&opts);
	EXPECT(!blob_reuses_spare(len));
	opts.max_read_memory = 32u << 20; /* 6 MiB */
	tr_library_init(&opts);
	EXPECT(blob_reuses_spare(len));

	st.st_mtim.tv_sec = st.st_ctim.tv_sec = 1700000000;
	tr_sha_memo_put(&st, hex);
	EXPECT(tr_sha_memo_get(&st, got));
	tr_library_shutdown();
	EXPECT(!tr_sha_memo_get(&st, got));
	tr_library_shutdown();          /* twice, and with nothing kept: harmless */
	EXPECT(blob_reuses_spare(len)); /* back to the defaults */
	tr_library_shutdown();
}

static void test_deferred_digest(void)
{
	size_t len = (5u << 20) + 7;
	struct tr_blob *blob = tr_blob_new_writable(len);
	char inline_hex[65], got[80];

	EXPECT(blob != NULL);
	for (size_t i = 0; i < len; i++)
		blob->data[i] = (unsigned char)(i * 7 + (i >> 12));
	tr_sha256_hex(blob->data, blob->len, inline_hex);

	struct tr_digest *digest = tr_digest_start(blob);
	struct tr_doc *doc = tr_doc_new();

	EXPECT(digest != NULL);
	tr_blob_unref(blob); /* the digest's thread keeps its own reference */
	tr_doc_append(doc, "<", 1);
	tr_doc_append_digest(doc, digest);
	tr_doc_append(doc, ">", 1);
	tr_digest_unref(digest); /* and so does the document */
	EXPECT_INT(tr_doc_size(doc), 66);
	EXPECT_INT(tr_doc_read(doc, 0, got, sizeof(got)), 66);
	EXPECT(got[0] == '<' && got[65] == '>');
	EXPECT(memcmp(got + 1, inline_hex, 64) == 0);
	EXPECT_INT(tr_doc_read(doc, 10, got, 3), 3); /* from the middle of the digest */
	EXPECT(memcmp(got, inline_hex + 9, 3) == 0);
	tr_doc_unref(doc);

	/* tr_load_file: small files are hashed inline, large ones in a thread; the same hex. */
	FILE *tmp = tmpfile();
	unsigned char *bytes = malloc(len);
	struct tr_metadata small = {0}, large = {0};
	struct tr_blob *loaded;
	char small_hex[65];

	for (size_t i = 0; i < len; i++)
		bytes[i] = (unsigned char)(i * 7 + (i >> 12));
	EXPECT_INT(fwrite(bytes, 1, len, tmp), len);
	fflush(tmp);
	EXPECT(tr_load_file(fileno(tmp), 1000, &loaded, &small) == 0);
	tr_sha256_hex(bytes, 1000, small_hex);
	EXPECT(small.has_sha256 && !small.sha256_later);
	EXPECT_STR(tr_metadata_sha256(&small), small_hex);
	tr_blob_unref(loaded);
	EXPECT(tr_load_file(fileno(tmp), len, &loaded, &large) == 0);
	EXPECT(large.has_sha256 && large.sha256_later);
	EXPECT(memcmp(loaded->data, bytes, len) == 0);
	tr_blob_unref(loaded);
	EXPECT_STR(tr_metadata_sha256(&large), inline_hex);
	EXPECT(!large.sha256_later);
	EXPECT(tr_load_file(fileno(tmp), len + 1, &loaded, &large) == -1); /* shrank: EIO */
	fclose(tmp);

	/* A blob hashed while it is written, in uneven pieces, has the same digest; an abandoned
	 * one stops its thread. */
	struct tr_blob *filling = tr_blob_new_writable(len), *dropped = tr_blob_new_writable(len);
	struct tr_digest *follow = tr_digest_start_filling(filling, 0, NULL);
	struct tr_digest *gone = tr_digest_start_filling(dropped, 0, NULL);

	EXPECT(follow && gone);
	for (size_t at = 0, step = 1; at < len; at += step, step = step * 5 + 3) {
		size_t n = len - at < step ? len - at : step;

		memcpy(filling->data + at, bytes + at, n);
		tr_digest_advance(follow, at + n);
	}
	tr_digest_advance(gone, 4096);
	tr_digest_abandon(gone);
	EXPECT_STR(tr_digest_hex(follow), inline_hex);
	tr_digest_unref(follow);
	tr_blob_unref(filling);
	tr_blob_unref(dropped);
	free(bytes);
}

/* Large writable blobs reuse the mappings of freed ones; each is still a whole writable buffer. */
static void test_writable_blobs(void)
{
	for (int i = 0; i < 6; i++) {
		size_t len = (size_t)(4 + i % 3) << 20;
		struct tr_blob *a = tr_blob_new_writable(len), *b = tr_blob_new_writable(len + 1);

		EXPECT(a && b && a->data != b->data);
		memset(a->data, 0xa5, len);
		memset(b->data, 0x5a, len + 1);
		EXPECT(a->data[len - 1] == 0xa5 && b->data[len] == 0x5a);
		tr_blob_unref(a);
		tr_blob_unref(b);
	}
	struct tr_blob *small = tr_blob_new_writable(10);

	EXPECT(small && small->map_len == 0);
	tr_blob_unref(small);
}

/* libmagic's own answer for data, from a cookie of the test's own (the oracle). */
static char *libmagic_mime(const void *data, size_t len)
{
	magic_t cookie = magic_open(MAGIC_MIME_TYPE);
	char *out = NULL;

	if (cookie && magic_load(cookie, NULL) == 0)
		out = strdup(magic_buffer(cookie, data, len));
	magic_close(cookie);
	return out;
}

/* The subset path answers plain text with libmagic's answer, and leaves to the full database
 * the heads whose bytes libmagic's text pass would not see unchanged. */
static void test_magic_subset(void)
{
	static const char *const plain[] = {
		"#include <stdio.h>\nint main(void)\n{\n\treturn 0;\n}\n",
		"#!/usr/bin/env python3\nimport sys\nprint(sys.argv)\n",
		"<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
		"{\"a\": [1, 2]}\n",
		"Gr\xc3\xbc\xc3\x9f"
		"e, plain UTF-8\n",
		"x",
	};
	static const char *const not_plain[] = {
		"\xef\xbb\xbf"
		"a UTF-8 BOM\n",
		"caf\xe9, Latin-1\n",
		"a \x01 control\n",
		"cut \xc3",
	};

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		char *want = libmagic_mime(plain[i], strlen(plain[i]));
		char *got = tr_magic_subset_mime(plain[i], strlen(plain[i]));

		EXPECT_STR(got, want);
		free(got);
		free(want);
	}
	for (size_t i = 0; i < sizeof(not_plain) / sizeof(not_plain[0]); i++)
		EXPECT(tr_magic_subset_mime(not_plain[i], strlen(not_plain[i])) == NULL);
	EXPECT(tr_magic_subset_mime("", 0) == NULL);
	tr_magic_subset_close();
}

static void test_mime_memo(void)
{
	static const char c_source[] = "#include <stdio.h>\nint main(void)\n{\n\treturn 0;\n}\n";
	static const char py_source[] = "#!/usr/bin/env python3\nimport sys\nprint(sys.argv)\n";
	unsigned char key[TR_MIME_MEMO_KEY_LEN], other[TR_MIME_MEMO_KEY_LEN];
	char *want = libmagic_mime(c_source, strlen(c_source)), *got;

	/* Remembered answers are libmagic's, the first time and every time after. */
	for (int round = 0; round < 3; round++) {
		got = tr_magic_mime_buffer(c_source, strlen(c_source));
		EXPECT_STR(got, want);
		free(got);
	}
	EXPECT(tr_mime_memo_key(c_source, strlen(c_source), key));
	got = tr_mime_memo_get(key);
	EXPECT_STR(got, want);
	free(got);
	free(want);
	/* One byte more is another key, with libmagic's answer for those bytes. */
	EXPECT(tr_mime_memo_key(c_source, strlen(c_source) + 1, other));
	EXPECT(memcmp(key, other, sizeof(key)) != 0);
	EXPECT(tr_mime_memo_get(other) == NULL);
	want = libmagic_mime(py_source, strlen(py_source));
	got = tr_magic_mime_buffer(py_source, strlen(py_source));
	EXPECT_STR(got, want);
	free(got);
	free(want);
	/* A key sharing a slot replaces the one there: the table stays bounded. */
	memcpy(other, key, sizeof(key));
	other[15] ^= 1;
	tr_mime_memo_put(other, "text/x-test");
	EXPECT(tr_mime_memo_get(key) == NULL);
	got = tr_mime_memo_get(other);
	EXPECT_STR(got, "text/x-test");
	free(got);
}

static void *take_and_give(void *arg)
{
	uint64_t *cost = arg;

	tr_budget_take(*cost, 100);
	tr_budget_give(*cost);
	return NULL;
}

/* The read memory budget: a read alone proceeds even over the limit; a second waits while the
 * two would pass it, and proceeds once the first gives its share back. */
static void test_read_budget(void)
{
	uint64_t big = 80, over = 500;
	pthread_t thread;

	tr_budget_take(over, 100); /* alone: never waits */
	EXPECT_INT(tr_budget_in_use(), 500);
	tr_budget_give(over);
	tr_budget_take(big, 100);
	EXPECT_INT(pthread_create(&thread, NULL, take_and_give, &big), 0);
	usleep(100 * 1000);
	EXPECT_INT(tr_budget_in_use(), 80); /* the thread waits: 160 > 100 */
	tr_budget_give(big);
	EXPECT_INT(pthread_join(thread, NULL), 0);
	EXPECT_INT(tr_budget_in_use(), 0);
	tr_budget_take(0, 0); /* cost 0: nothing taken, never waits */
	EXPECT_INT(tr_budget_in_use(), 0);
}

int main(void)
{
	test_read_budget();
	test_siphash();
	test_magic_subset();
	test_mime_memo();
	test_sealed_doc();
	test_base64_segments();
	test_large_base64_matches_write();
	test_write_to_passes_a_prefix_in_pieces();
	test_base64_paths_agree();
	test_base64_paths_alignments();
	test_crc32_matches_zlib();
	test_sha256();
	test_deferred_digest();
	test_sha_memo();
	test_library_state();
	test_writable_blobs();
	test_json_strings();
	test_json_structure();
	test_selectors();
	test_time_selectors();
	test_region_selectors();
	test_region_clip();
	test_virtual_names();
	test_selector_after_a_name();
	test_options();
	test_result_window();
	test_args();
	test_tokens();
	test_deadline();
	test_deadline_wait();
	test_read_full_before();
	test_content_types_list();
	return EXPECT_DONE();
}
