/* SPDX-License-Identifier: MIT */
/* test_pdf.c - unit tests of the PDF reader: probe, page windows, next names, page-text tidying,
 * and one read of a PDF built in memory (with or without poppler in the build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "expect.h"
#include "pdf.h"
#include "reader.h"
#include "tr_read.h"

extern const struct tr_reader tr_reader_pdf;

static enum tr_probe probe(const void *head, size_t len, const char *name)
{
	struct tr_source src = {.path = name, .name = name};
	struct tr_file file = {.fd = -1, .src = &src, .head = head, .head_len = len};

	return tr_reader_pdf.probe(&file);
}

static void test_probe(void)
{
	static const char pdf[] = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n";
	static const char script[] = "#!/usr/bin/env python3\nHEADER = b\"%PDF-1.4\\n\"\n";
	unsigned char wrapped[2048];

	EXPECT_INT(probe(pdf, sizeof(pdf) - 1, "report.pdf"), TR_PROBE_CONTENT);
	EXPECT_INT(probe(pdf, sizeof(pdf) - 1, "report"), TR_PROBE_CONTENT);
	EXPECT_INT(probe(pdf, sizeof(pdf) - 1, "photo.png"), TR_PROBE_CONTENT);
	EXPECT_INT(probe("hello\n", 6, "notes.PDF"), TR_PROBE_EXTENSION);
	EXPECT_INT(probe("", 0, "empty.pdf"), TR_PROBE_EXTENSION);
	EXPECT_INT(probe("", 0, "empty"), TR_PROBE_NO);
	EXPECT_INT(probe("%PDF", 4, "cut"), TR_PROBE_NO);
	EXPECT_INT(probe("%PDF", 4, "cut.pdf"), TR_PROBE_EXTENSION);
	EXPECT_INT(probe("report.pdf.txt", 14, "report.pdf.txt"), TR_PROBE_NO);
	/* A script that quotes the header near its top stays text... */
	EXPECT_INT(probe(script, sizeof(script) - 1, "gen.py"), TR_PROBE_NO);
	/* ...but the same bytes under a .pdf name are a PDF after junk, as poppler reads them. */
	EXPECT_INT(probe(script, sizeof(script) - 1, "gen.pdf"), TR_PROBE_CONTENT);
	/* Binary junk (a MacBinary-style wrapper) before the header, within 1024 bytes. */
	memset(wrapped, 0, sizeof(wrapped));
	memcpy(wrapped + 128, "%PDF-1.4\n", 9);
	EXPECT_INT(probe(wrapped, sizeof(wrapped), "wrapped"), TR_PROBE_CONTENT);
	memset(wrapped, 0, sizeof(wrapped));
	memcpy(wrapped + 1019, "%PDF-", 5); /* ends at byte 1024: still searched */
	EXPECT_INT(probe(wrapped, sizeof(wrapped), "wrapped"), TR_PROBE_CONTENT);
	memset(wrapped, 0, sizeof(wrapped));
	memcpy(wrapped + 1020, "%PDF-", 5); /* beyond poppler's 1024-byte search */
	EXPECT_INT(probe(wrapped, sizeof(wrapped), "wrapped"), TR_PROBE_NO);
	EXPECT_INT(probe(wrapped, sizeof(wrapped), "wrapped.pdf"), TR_PROBE_EXTENSION);
}

static struct tr_pdf_window window(const char *sel_text, uint64_t total, uint64_t max_pages,
				   int *rc)
{
	struct tr_selector sel = {0};
	struct tr_pdf_window win = {99, 99};

	if (sel_text)
		EXPECT_INT(tr_selector_parse(sel_text, strlen(sel_text), &sel), 0);
	*rc = tr_pdf_window(&sel, total, TR_PDF_DEFAULT_PAGES, max_pages, &win);
	return win;
}

#define EXPECT_WINDOW(sel, total, max, first_, last_)                    \
	do {                                                             \
		int rc_;                                                 \
		struct tr_pdf_window w_ = window(sel, total, max, &rc_); \
		EXPECT_INT(rc_, 0);                                      \
		EXPECT_INT(w_.first, first_);                            \
		EXPECT_INT(w_.last, last_);                              \
	} while (0)

#define EXPECT_PAST_END(sel, total, max)                                 \
	do {                                                             \
		int rc_;                                                 \
		struct tr_pdf_window w_ = window(sel, total, max, &rc_); \
		EXPECT_INT(rc_, -1);                                     \
		EXPECT_INT(w_.first, 0);                                 \
		EXPECT_INT(w_.last, 0);                                  \
	} while (0)

static void test_window(void)
{
	/* The default view: pages 1-10, fewer in a short document, none in an empty one. */
	EXPECT_WINDOW(NULL, 150, 20, 1, 10);
	EXPECT_WINDOW(NULL, 11, 20, 1, 10);
	EXPECT_WINDOW(NULL, 4, 20, 1, 4);
	EXPECT_WINDOW(NULL, 0, 20, 0, 0);
	EXPECT_WINDOW(NULL, 150, 3, 1, 10); /* max_pdf_pages limits renders, not the text view */
	/* A: just A. */
	EXPECT_WINDOW("3", 12, 20, 3, 3);
	EXPECT_WINDOW("12", 12, 20, 12, 12);
	/* A-B, clamped to the document and to max_pages. */
	EXPECT_WINDOW("3-7", 12, 20, 3, 7);
	EXPECT_WINDOW("3-40", 12, 20, 3, 12);
	EXPECT_WINDOW("1-50", 150, 20, 1, 20);
	EXPECT_WINDOW("5-9", 150, 3, 5, 7);
	/* A-: A..A+max_pages-1. */
	EXPECT_WINDOW("12-", 150, 20, 12, 31);
	EXPECT_WINDOW("140-", 150, 20, 140, 150);
	EXPECT_WINDOW("2-", 11, 3, 2, 4);
	EXPECT_WINDOW("2-", 11, 0, 2, 2); /* max_pages 0 counts as 1 */
	{
		/* A- at the top of the range must not overflow. */
		struct tr_selector top = {.present = true, .start = UINT64_MAX - 1};
		struct tr_pdf_window win;

		EXPECT_INT(tr_pdf_window(&top, UINT64_MAX, 10, 20, &win), 0);
		EXPECT(win.first == UINT64_MAX - 1 && win.last == UINT64_MAX);
	}
	/* Past the end. */
	EXPECT_PAST_END("40", 12, 20);
	EXPECT_PAST_END("13-", 12, 20);
	EXPECT_PAST_END("13-14", 12, 20);
	EXPECT_PAST_END("1", 0, 20);
}

static void test_next_selector(void)
{
	char buf[48];

	EXPECT_INT(tr_pdf_next_selector(10, 150, 10, buf, sizeof(buf)), 5);
	EXPECT_STR(buf, "11-20");
	EXPECT_INT(tr_pdf_next_selector(31, 150, 20, buf, sizeof(buf)), 5);
	EXPECT_STR(buf, "32-51");
	EXPECT_INT(tr_pdf_next_selector(10, 11, 10, buf, sizeof(buf)), 2);
	EXPECT_STR(buf, "11");
	EXPECT_INT(tr_pdf_next_selector(3, 11, 10, buf, sizeof(buf)), 4);
	EXPECT_STR(buf, "4-11");
	EXPECT_INT(tr_pdf_next_selector(0, 4, 10, buf, sizeof(buf)), 3);
	EXPECT_STR(buf, "1-4");
	EXPECT_INT(tr_pdf_next_selector(4, 11, 0, buf, sizeof(buf)), 1);
	EXPECT_STR(buf, "5");
	strcpy(buf, "untouched");
	EXPECT_INT(tr_pdf_next_selector(150, 150, 20, buf, sizeof(buf)), -1);
	EXPECT_INT(tr_pdf_next_selector(0, 0, 10, buf, sizeof(buf)), -1);
	EXPECT_STR(buf, "untouched");
	EXPECT_INT(tr_pdf_next_selector(10, 150, 10, buf, 5), -1); /* "11-20" needs 6 bytes */
}

/* Runs tr_pdf_text_append on text and compares with expected. */
static void check_tidy(const char *text, const char *expected)
{
	struct tr_buf out = {0};

	EXPECT_INT(tr_pdf_text_append(&out, text, strlen(text)), 0);
	EXPECT_STR(out.len ? out.data : "", expected);
	tr_buf_free(&out);
}

#define RLE "\xE2\x80\xAB"
#define LRE "\xE2\x80\xAA"
#define PDF "\xE2\x80\xAC"

static void test_text_tidy(void)
{
	EXPECT(tr_pdf_text_is_blank(NULL));
	EXPECT(tr_pdf_text_is_blank(""));
	EXPECT(tr_pdf_text_is_blank(" \n\t\f\r\v"));
	EXPECT(tr_pdf_text_is_blank(RLE PDF " \n"));
	EXPECT(!tr_pdf_text_is_blank(" . "));
	EXPECT(!tr_pdf_text_is_blank(RLE "\xD8\xA7" PDF));
	EXPECT(!tr_pdf_text_is_blank("\xE2\x80")); /* a cut sequence is not a mark */

	check_tidy("Hello\nworld\n\n", "Hello\nworld");
	check_tidy("", "");
	check_tidy(" \n", "");
	/* Right-to-left words glued by poppler get their space back, once. */
	check_tidy(RLE "ab" PDF RLE "cd" PDF " " RLE "ef" PDF,
		   RLE "ab" PDF " " RLE "cd" PDF " " RLE "ef" PDF);
	check_tidy(RLE LRE "42" PDF PDF RLE LRE "end" PDF PDF,
		   RLE LRE "42" PDF PDF " " RLE LRE "end" PDF PDF);
	check_tidy("x" PDF, "x" PDF);
	check_tidy(PDF "\n" RLE, PDF "\n" RLE);
}

/* Runs tr_pdf_text_respace on text and boxes; expects rc and, when 0, expected. */
static void check_respace(const char *text, const struct tr_pdf_box *boxes, size_t n, int rc,
			  const char *expected)
{
	struct tr_buf out = {0};

	tr_buf_append(&out, "<", 1);
	EXPECT_INT(tr_pdf_text_respace(&out, text, strlen(text), boxes, n), rc);
	tr_buf_append(&out, "", 1);
	EXPECT_STR(out.data, expected);
	tr_buf_free(&out);
}

static void test_text_respace(void)
{
	/* poppler's right-to-left "A BC": the space one glyph late, glyphs right to left. */
	static const struct tr_pdf_box late[] = {
		{90, 0, 100, 10}, {70, 0, 80, 10}, {80, 0, 70, 10}, {60, 0, 70, 10}};
	/* "xyz", y and z the halves of one ligature glyph given left to right, 0.5 pt after x. */
	static const struct tr_pdf_box ligature[] = {
		{40.5, 0, 50, 10}, {30, 0, 35, 10}, {35, 0, 40, 10}, {0, 0, 0, 0}, {9, 20, 19, 30}};

	check_respace(RLE "A" PDF RLE "B" PDF " " RLE "C" PDF, late, 4, 0, "<A BC");
	check_respace("xyz\nw", ligature, 5, 0, "<xyz\nw");
	check_respace("xyz", ligature, 2, 1, "<"); /* boxes that do not match: untouched */
	check_respace("xy", ligature, 3, 1, "<");
	EXPECT_INT(tr_pdf_text_letters(RLE "a" PDF " b\n\xD7\xA9", 12), 3);
	EXPECT_INT(tr_pdf_text_letters("", 0), 0);
}

/* A one-page PDF (200 x 100 pt, "Hello unit test" in Helvetica) with a correct xref table. */
static size_t build_pdf(char *out, size_t size)
{
	static const char *const objects[] = {
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R "
		"/Resources << /Font << /F1 5 0 R >> >> >>",
		"<< /Length 44 >>\nstream\nBT /F1 12 Tf 10 50 Td (Hello unit test) Tj "
		"ET\nendstream",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	};
	size_t n = sizeof(objects) / sizeof(objects[0]), len, xref;
	size_t offsets[5];

	len = (size_t)snprintf(out, size, "%%PDF-1.4\n");
	for (size_t i = 0; i < n; i++) {
		offsets[i] = len;
		len += (size_t)snprintf(out + len, size - len, "%zu 0 obj\n%s\nendobj\n", i + 1,
					objects[i]);
	}
	xref = len;
	len += (size_t)snprintf(out + len, size - len, "xref\n0 %zu\n0000000000 65535 f \n", n + 1);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, size - len, "%010zu 00000 n \n", offsets[i]);
	len += (size_t)snprintf(out + len, size - len,
				"trailer\n<< /Size %zu /Root 1 0 R >>\nstartxref\n%zu\n%%%%EOF\n",
				n + 1, xref);
	return len;
}

static int memfd_with(const void *data, size_t len)
{
	int fd = memfd_create("test_pdf", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, data, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void read_fd(int fd, const char *sel_text, struct tr_result *res)
{
	struct tr_source src = {.path = "docs/unit.pdf", .name = "unit.pdf"};
	struct tr_selector sel = {0};
	struct tr_options opts;

	tr_options_init(&opts);
	if (sel_text)
		tr_selector_parse(sel_text, strlen(sel_text), &sel);
	EXPECT_INT(tr_result_init(res, src.path), 0);
	EXPECT_INT(tr_read_fd(fd, &src, sel_text ? &sel : NULL, &opts, res, NULL), 0);
}

static void test_read_in_memory_pdf(void)
{
	static const unsigned char png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	char pdf[2048];
	size_t len = build_pdf(pdf, sizeof(pdf));
	int fd = memfd_with(pdf, len);
	struct tr_result res;

	EXPECT(fd >= 0);
	if (fd < 0)
		return;
	read_fd(fd, NULL, &res);
	EXPECT_INT(res.type, TR_TYPE_PDF);
	EXPECT_STR(res.mime_type, "application/pdf");
	EXPECT(res.success);
	EXPECT_INT(res.n_documents, 1);
	if (res.n_documents == 1) {
		EXPECT_INT(res.documents[0].data->len, len);
		EXPECT(memcmp(res.documents[0].data->data, pdf, len) == 0);
		EXPECT_STR(res.documents[0].media_type, "application/pdf");
	}
	if (res.meta.page_count < 0) {
		/* Built without poppler: the bare document and a sentence saying why. */
		EXPECT(strstr(res.content.data, "PDF text needs poppler") != NULL);
		tr_result_destroy(&res);
		close(fd);
		return;
	}
	EXPECT_INT(res.meta.page_count, 1);
	EXPECT_STR(res.content.data, "--- Page 1 ---\nHello unit test\n");
	EXPECT(!res.truncated);
	EXPECT(res.next == NULL);
	EXPECT_INT(res.range_unit, TR_UNIT_PAGE);
	EXPECT_INT(res.range_start, 1);
	EXPECT_INT(res.range_end, 1);
	EXPECT_INT(res.range_total, 1);
	EXPECT_INT(res.n_images, 0);
	tr_result_destroy(&res);

	read_fd(fd, "1", &res);
	EXPECT(res.success);
	EXPECT_STR(res.content.data, "--- Page 1 ---\nHello unit test\n");
	EXPECT_INT(res.n_documents, 0);
	EXPECT_INT(res.n_images, 1);
	if (res.n_images == 1) {
		EXPECT_INT(res.images[0].page, 1);
		EXPECT_INT(res.images[0].width, 1568);
		EXPECT_INT(res.images[0].height, 784);
		EXPECT_STR(res.images[0].media_type, "image/png");
		EXPECT(res.images[0].data->len > 8 &&
		       memcmp(res.images[0].data->data, png_signature, 8) == 0);
	}
	tr_result_destroy(&res);

	read_fd(fd, "2", &res);
	EXPECT(!res.success);
	EXPECT_INT(res.error, TR_E_OUT_OF_RANGE);
	EXPECT_STR(res.error_text, "Page 2 is past the end of the document (1 page)");
	EXPECT_INT(res.meta.page_count, 1);
	tr_result_destroy(&res);

	read_fd(fd, "1.5-", &res);
	EXPECT_INT(res.error, TR_E_OUT_OF_RANGE);
	EXPECT(res.error_text && strstr(res.error_text, "apply to text files only"));
	tr_result_destroy(&res);
	close(fd);
}

int main(void)
{
	test_probe();
	test_window();
	test_next_selector();
	test_text_tidy();
	test_text_respace();
	test_read_in_memory_pdf();
	return EXPECT_DONE();
}
