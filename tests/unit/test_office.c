/* SPDX-License-Identifier: MIT */
/* test_office.c - unit tests of the Office reader's parts: number formats and dates, relationship
 * targets, pipe-table cells, and the zip limits on archives built in memory. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "expect.h"
#include "office.h"

/* Formats value with code and compares. */
static void expect_format(double value, const char *code, bool date1904, const char *want)
{
	struct tr_buf out = {0};

	EXPECT_INT(tr_numfmt_format(&out, value, code, date1904), 0);
	if (strcmp(out.data ? out.data : "", want) != 0)
		fprintf(stderr, "  format %.17g with \"%s\"\n", value, code ? code : "(General)");
	EXPECT_STR(out.data ? out.data : "", want);
	tr_buf_free(&out);
}

static void test_number_formats(void)
{
	expect_format(0, NULL, false, "0");
	expect_format(42, NULL, false, "42");
	expect_format(0.1 + 0.2, NULL, false, "0.3");
	expect_format(1e20, "General", false, "1E+20");
	expect_format(-3.5, NULL, false, "-3.5");
	expect_format(2.5, "0", false, "3"); /* half away from zero, as Excel */
	expect_format(-2.5, "0", false, "-3");
	expect_format(0.125, "0.00", false, "0.13");
	expect_format(1234.567, "0.00", false, "1234.57");
	expect_format(1234567.891, "#,##0.00", false, "1,234,567.89");
	expect_format(-1234.5, "#,##0.00", false, "-1,234.50");
	expect_format(-1234.5, "#,##0.00;(#,##0.00)", false, "(1,234.50)");
	expect_format(0, "0.00;-0.00;\"zero\"", false, "zero");
	expect_format(0.256, "0%", false, "26%");
	expect_format(0.125, "0.0%", false, "12.5%");
	expect_format(12345.678, "0.00E+00", false, "1.23E+04");
	expect_format(0.5, "#.##", false, ".5");
	expect_format(7, "000", false, "007");
	expect_format(1.5, "#.##", false, "1.5");
	expect_format(1234, "\"$\"#,##0", false, "$1,234");
	expect_format(1234, "[$€-407] #,##0", false, "€ 1,234");
	expect_format(1500000, "#,##0,\"K\"", false, "1,500K");
	/* \X, _X and *X take the whole (multibyte) character X. */
	expect_format(1234, "#,##0\\ _₽", false, "1,234  ");
	expect_format(5, "#,##0_€", false, "5 ");
	expect_format(-5, "#,##0_€;\\−#,##0_€", false, "−5 ");
	expect_format(7, "0\\ ₽", false, "7 ₽");
	expect_format(9, "0*€", false, "9");
	expect_format(45352, "yyyy-mm-dd_€", false, "2024-03-01");
}

static void test_dates(void)
{
	expect_format(45352, "yyyy-mm-dd", false, "2024-03-01");
	expect_format(45352, tr_numfmt_builtin(14), false, "2024-03-01");
	expect_format(45352.5729, tr_numfmt_builtin(22), false, "2024-03-01 13:44");
	expect_format(0.75, tr_numfmt_builtin(21), false, "18:00:00");
	expect_format(0.75, tr_numfmt_builtin(20), false, "18:00");
	expect_format(1.5, tr_numfmt_builtin(46), false, "36:00:00");
	expect_format(59, "d-mmm-yy", false, "1900-02-28");
	expect_format(60, "d-mmm-yy", false, "1900-02-29");
	expect_format(61, "d-mmm-yy", false, "1900-03-01");
	expect_format(1, "dd/mm/yyyy", false, "1900-01-01");
	expect_format(0, "dd/mm/yyyy", true, "1904-01-01");
	expect_format(43890, "dd/mm/yyyy hh:mm:ss", true, "2024-03-01 00:00:00");
	expect_format(45352.99999999, "yyyy-mm-dd hh:mm", false, "2024-03-02 00:00");
	expect_format(-1, "yyyy-mm-dd", false, "-1");
	expect_format(1e300, "yyyy-mm-dd", false, "1E+300");
	EXPECT(tr_numfmt_builtin(0) == NULL);
	EXPECT(tr_numfmt_builtin(999) == NULL);
}

static void expect_resolve(const char *source, const char *target, const char *want)
{
	char *got = tr_office_resolve(source, target);

	if (want)
		EXPECT_STR(got, want);
	else
		EXPECT(got == NULL);
	free(got);
}

static void test_resolve(void)
{
	expect_resolve("word/document.xml", "media/image1.png", "word/media/image1.png");
	expect_resolve("xl/workbook.xml", "/xl/worksheets/sheet1.xml", "xl/worksheets/sheet1.xml");
	expect_resolve("ppt/slides/slide1.xml", "../media/a.png", "ppt/media/a.png");
	expect_resolve("ppt/slides/slide1.xml", "./x/../y.xml", "ppt/slides/y.xml");
	expect_resolve("a.xml", "../../etc/passwd", NULL);
	expect_resolve("word/document.xml", "../../x", NULL);
}

static void test_cells_and_tables(void)
{
	struct tr_buf out = {0};
	struct tr_office_table t = {0};

	EXPECT_INT(tr_office_cell_append(&out, "a|b\nc\td", 8), 0);
	EXPECT_STR(out.data, "a\\|b<br>c d");
	tr_buf_free(&out);
	EXPECT_INT(tr_office_cell_append_capped(&out, "h\xc3\xa9llo|x", 8, 3), 0);
	EXPECT_STR(out.data, "h\xc3\xa9l [... cell truncated: 3 of 7 chars shown]");
	tr_buf_free(&out);
	EXPECT_INT(tr_office_cell_append_capped(&out, "ab|", 3, 3), 0);
	EXPECT_STR(out.data, "ab\\|");
	tr_buf_free(&out);
	EXPECT_INT(tr_office_table_cell(&t), 0); /* a cell before any row starts one */
	EXPECT_INT(tr_buf_append(tr_office_table_current(&t), "H1", 2), 0);
	EXPECT_INT(tr_office_table_cell(&t), 0);
	EXPECT_INT(tr_buf_append(tr_office_table_current(&t), "H2", 2), 0);
	EXPECT_INT(tr_office_table_row(&t), 0);
	EXPECT_INT(tr_office_table_cell(&t), 0);
	EXPECT_INT(tr_buf_append(tr_office_table_current(&t), "x", 1), 0);
	EXPECT_INT(tr_office_table_flush(&t, &out), 0);
	EXPECT_STR(out.data, "| H1 | H2 |\n| --- | --- |\n| x |  |\n");
	EXPECT(t.n_cells == 0 && t.cells == NULL);
	tr_buf_free(&out);
}

/* Appends a stored zip entry (local header) and its central directory record. */
static void add_entry(struct tr_buf *zip, struct tr_buf *dir, const char *name, const char *data,
		      uint32_t claimed_size)
{
	uint32_t crc = (uint32_t)crc32(0, (const unsigned char *)data, (uInt)strlen(data));
	uint32_t offset = (uint32_t)zip->len, len = (uint32_t)strlen(data);
	uint16_t name_len = (uint16_t)strlen(name);
	unsigned char local[30] = {'P', 'K', 3, 4, 20}, central[46] = {'P', 'K', 1, 2, 20, 0, 20};

	memcpy(local + 14, &crc, 4);
	memcpy(local + 18, &len, 4);
	memcpy(local + 22, &claimed_size, 4);
	memcpy(local + 26, &name_len, 2);
	tr_buf_append(zip, local, sizeof(local));
	tr_buf_append(zip, name, name_len);
	tr_buf_append(zip, data, len);
	memcpy(central + 16, &crc, 4);
	memcpy(central + 20, &len, 4);
	memcpy(central + 24, &claimed_size, 4);
	memcpy(central + 28, &name_len, 2);
	memcpy(central + 42, &offset, 4);
	tr_buf_append(dir, central, sizeof(central));
	tr_buf_append(dir, name, name_len);
}

static void finish_zip(struct tr_buf *zip, struct tr_buf *dir, uint16_t n)
{
	unsigned char end[22] = {'P', 'K', 5, 6};
	uint32_t size = (uint32_t)dir->len, offset = (uint32_t)zip->len;

	memcpy(end + 8, &n, 2);
	memcpy(end + 10, &n, 2);
	memcpy(end + 12, &size, 4);
	memcpy(end + 16, &offset, 4);
	tr_buf_append(zip, dir->data, dir->len);
	tr_buf_append(zip, end, sizeof(end));
}

static void test_zip_limits(void)
{
	struct tr_buf zip = {0}, dir = {0}, part = {0};
	struct tr_office_zip z;
	struct tr_office_xml x;

	add_entry(&zip, &dir, "a.xml", "<a><b>text</b></a>", 18);
	add_entry(&zip, &dir, "doctype.xml", "<?xml version=\"1.0\"?><!DOCTYPE a><a/>", 37);
	finish_zip(&zip, &dir, 2);
	EXPECT_INT(tr_office_zip_open(&z, (const unsigned char *)zip.data, zip.len), 0);
	EXPECT(tr_office_zip_has(&z, "a.xml"));
	EXPECT(!tr_office_zip_has(&z, "b.xml"));
	EXPECT_INT(tr_office_zip_read(&z, "b.xml", 0, &part), 1);
	EXPECT_INT(tr_office_zip_read(&z, "a.xml", 0, &part), 0);
	EXPECT_STR(part.data, "<a><b>text</b></a>");
	tr_buf_free(&part);
	EXPECT_INT(tr_office_zip_read(&z, "a.xml", 10, &part), -1);
	EXPECT_INT(z.error, TR_E_TOO_LARGE);
	tr_buf_free(&part);
	z.error = TR_OK;
	EXPECT_INT(tr_office_xml_open(&x, &z, "a.xml"), 0);
	EXPECT_INT(tr_office_xml_next(&x), 1);
	EXPECT(tr_office_xml_start(&x, "a"));
	EXPECT_INT(tr_office_xml_next(&x), 1);
	EXPECT(tr_office_xml_start(&x, "b"));
	EXPECT_INT(tr_office_xml_skip(&x), 1);
	EXPECT(tr_office_xml_end(&x, "b"));
	EXPECT_INT(tr_office_xml_next(&x), 1);
	EXPECT(tr_office_xml_end(&x, "a"));
	EXPECT_INT(tr_office_xml_next(&x), 0);
	tr_office_xml_close(&x);
	EXPECT_INT(tr_office_xml_open(&x, &z, "doctype.xml"), 0);
	EXPECT_INT(tr_office_xml_next(&x), -1);
	EXPECT_INT(z.error, TR_E_CORRUPT);
	EXPECT(strstr(z.reason, "DOCTYPE") != NULL);
	tr_office_xml_close(&x);
	tr_office_zip_close(&z);
	tr_buf_free(&zip);
	tr_buf_free(&dir);
	EXPECT_INT(tr_office_zip_open(&z, (const unsigned char *)"PK\3\4 not really", 16), -1);
	EXPECT_INT(z.error, TR_E_CORRUPT);
	tr_office_zip_close(&z);
}

int main(void)
{
	test_number_formats();
	test_dates();
	test_resolve();
	test_cells_and_tables();
	test_zip_limits();
	return EXPECT_DONE();
}
