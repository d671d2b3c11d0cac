/* SPDX-License-Identifier: MIT */
/* test_svg.c - unit tests of the SVG reader's detection (the prolog skipped, the root's name and
 * namespace) and of the bounded .svgz inflate, with zlib as the oracle that makes the streams. */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "expect.h"
#include "svg.h"

static bool detect(const char *text)
{
	return tr_svg_detect((const unsigned char *)text, strlen(text));
}

static void test_detect(void)
{
	EXPECT(detect("<svg xmlns=\"http://www.w3.org/2000/svg\"/>"));
	EXPECT(detect("\xef\xbb\xbf<?xml version=\"1.0\"?>\n<!-- c -->\n"
		      "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"x.dtd\" [\n"
		      "<!ENTITY a \"<svg>\"> <!-- ] > --> <!ENTITY b '>'>]>\n"
		      "<svg width='1' xmlns='http://www.w3.org/2000/svg'>"));
	EXPECT(detect("<s:svg xmlns=\"x\" xmlns:s=\"http://www.w3.org/2000/svg\">"));
	EXPECT(!detect("<s:svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:s=\"x\">"));
	EXPECT(!detect("<svg width=\"10\"><rect/></svg>"));                 /* no namespace */
	EXPECT(!detect("<svg xmlns=\"http://www.w3.org/1999/xhtml\">"));    /* another one */
	EXPECT(!detect("<html xmlns=\"http://www.w3.org/2000/svg\">"));     /* another root */
	EXPECT(!detect("<svgx xmlns=\"http://www.w3.org/2000/svg\">"));     /* a longer name */
	EXPECT(!detect("text <svg xmlns=\"http://www.w3.org/2000/svg\">")); /* text first */
	EXPECT(!detect("<!-- never closed <svg xmlns=\"http://www.w3.org/2000/svg\">"));
	EXPECT(!detect("<svg xmlns=\"http://www.w3.org/2000/sv")); /* cut in the head */
	EXPECT(!detect("<!DOCTYPE svg [ <!ENTITY a \"]>\"> "));    /* doctype cut */
	EXPECT(!detect(""));
	EXPECT(!detect("<svg xmlns"));
	EXPECT(!detect("<svg xmlns=http://www.w3.org/2000/svg>")); /* unquoted: not XML */
}

/* Gzips text with zlib. */
static unsigned char *gzip(const char *text, size_t len, size_t *out_len)
{
	z_stream z = {0};
	size_t cap = len + 1024;
	unsigned char *out = malloc(cap);

	deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)text;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	deflate(&z, Z_FINISH);
	*out_len = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

static void test_inflate(void)
{
	static const char doc[] = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n";
	size_t gz_len, len;
	unsigned char *gz = gzip(doc, strlen(doc), &gz_len);
	char *text, err[128];
	size_t big_len = 1 << 20;
	char *big = malloc(big_len);

	EXPECT(tr_svg_gzip_signature(gz, gz_len));
	EXPECT(!tr_svg_gzip_signature((const unsigned char *)doc, strlen(doc)));
	EXPECT_INT(tr_svg_inflate(gz, gz_len, 1 << 20, &text, &len, err, sizeof(err)), 0);
	EXPECT_INT(len, strlen(doc));
	EXPECT_STR(text, doc);
	free(text);
	/* cut: what inflated, and why */
	EXPECT_INT(tr_svg_inflate(gz, gz_len - 12, 1 << 20, &text, &len, err, sizeof(err)), 2);
	EXPECT(strstr(err, "ends early") != NULL);
	free(text);
	/* over the limit: the first limit bytes, and 1 */
	EXPECT_INT(tr_svg_inflate(gz, gz_len, 10, &text, &len, err, sizeof(err)), 1);
	EXPECT_INT(len, 10);
	EXPECT(memcmp(text, doc, 10) == 0);
	free(text);
	free(gz);
	/* a bomb: 1 MiB of zeros stops at the limit */
	memset(big, ' ', big_len);
	gz = gzip(big, big_len, &gz_len);
	EXPECT_INT(tr_svg_inflate(gz, gz_len, 4096, &text, &len, err, sizeof(err)), 1);
	EXPECT_INT(len, 4096);
	free(text);
	EXPECT_INT(tr_svg_inflate(gz, gz_len, big_len, &text, &len, err, sizeof(err)), 0);
	EXPECT_INT(len, big_len);
	free(text);
	/* not gzip at all */
	EXPECT_INT(tr_svg_inflate((const unsigned char *)"\x1f\x8b\x08garbage", 10, 100, &text,
				  &len, err, sizeof(err)),
		   2);
	free(text);
	free(gz);
	free(big);
}

int main(void)
{
	test_detect();
	test_inflate();
	return EXPECT_DONE();
}
