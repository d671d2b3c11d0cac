/* SPDX-License-Identifier: MIT */
/* test_text.c - unit tests of the text and binary readers: UTF-8 helpers, the line machine fed in
 * every chunking, decoders, and whole reads of in-memory files. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "expect.h"
#include "text.h"
#include "tr_read.h"
#include "util.h"

#define FFFD "\xEF\xBF\xBD"

/* What a scan produced, copied out of the machine. */
struct scan_out {
	char content[8192];
	uint64_t total, shown_last, cut_line, cut_column, first_chars;
	bool capped, column_past_end;
	const char *ending;
};

static struct tr_line_window window(uint64_t first, uint64_t last, uint64_t column,
				    uint64_t max_chars, uint64_t max_output)
{
	struct tr_line_window win = {first, last, column, max_chars, max_output, 0};

	return win;
}

/* Scans data[0..len) fed in pieces of chunk bytes. */
static void scan(const char *data, size_t len, const struct tr_line_window *win, size_t chunk,
		 struct scan_out *out)
{
	struct tr_line_scan ls;

	tr_line_scan_init(&ls, win);
	for (size_t off = 0; off < len; off += chunk)
		EXPECT_INT(
			tr_line_scan_feed(&ls, data + off, len - off < chunk ? len - off : chunk),
			0);
	EXPECT_INT(tr_line_scan_finish(&ls), 0);
	memset(out, 0, sizeof(*out));
	if (ls.content.len < sizeof(out->content))
		memcpy(out->content, ls.content.data ? ls.content.data : "", ls.content.len);
	out->total = tr_line_scan_total(&ls);
	out->shown_last = ls.shown_last;
	out->cut_line = ls.cut_line;
	out->cut_column = ls.cut_column;
	out->first_chars = ls.first_chars;
	out->capped = ls.capped;
	out->column_past_end = ls.column_past_end;
	out->ending = tr_line_scan_ending(&ls);
	tr_line_scan_destroy(&ls);
}

/* Scans data in every chunking from 1 byte to whole and checks they all agree with the whole. */
static void scan_all(const char *data, const struct tr_line_window *win, struct scan_out *out)
{
	size_t len = strlen(data);
	static struct scan_out other;
	size_t chunks[] = {1, 2, 3, 5, 7, 64};

	scan(data, len, win, len ? len : 1, out);
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		scan(data, len, win, chunks[i], &other);
		EXPECT_STR(other.content, out->content);
		EXPECT_INT(other.total, out->total);
		EXPECT_STR(other.ending, out->ending);
		EXPECT_INT(other.cut_line, out->cut_line);
		EXPECT_INT(other.cut_column, out->cut_column);
		EXPECT_INT(other.shown_last, out->shown_last);
	}
}

static void test_utf8(void)
{
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"a", 1), 1);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xC3\xA9", 2), 2);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xC3", 1), 0);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xC0\x80", 2), -1);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xE1\x80\x41", 3), -2);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xED\xA0\x80", 3), -1);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xF0\x80\x80\x80", 4), -1);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xF4\x90\x80\x80", 4), -1);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xF0\x9F\x98\x80", 4), 4);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xF0\x9F\x98", 3), 0);
	EXPECT_INT(tr_utf8_check_seq((const unsigned char *)"\xFF", 1), -1);

	const char *mixed = "abcdefghij\xC3\xA9klmnopqrstuvwxyz\xE2\x82\xAC\xF0\x9F\x98\x80!";
	EXPECT_INT(tr_utf8_valid_len((const unsigned char *)mixed, strlen(mixed)), strlen(mixed));
	EXPECT_INT(tr_utf8_count((const unsigned char *)mixed, strlen(mixed)), 30);
	EXPECT_INT(tr_utf8_valid_len((const unsigned char *)"abcdefghijk\xFFz", 13), 11);

	uint64_t passed;
	EXPECT_INT(tr_utf8_advance((const unsigned char *)mixed, strlen(mixed), 11, &passed), 12);
	EXPECT_INT(passed, 11);
	EXPECT_INT(tr_utf8_advance((const unsigned char *)"ab", 2, 5, &passed), 2);
	EXPECT_INT(passed, 2);

	char big[1000];
	memset(big, '\n', sizeof(big));
	big[500] = 'x';
	EXPECT_INT(tr_count_byte((const unsigned char *)big, sizeof(big), '\n'), 999);
}

static void test_lines_and_endings(void)
{
	struct tr_line_window win = window(1, 2000, 1, 2000, 100 * 1024);
	struct scan_out out;

	scan_all("", &win, &out);
	EXPECT_INT(out.total, 0);
	EXPECT_STR(out.ending, "none");
	EXPECT_STR(out.content, "");

	scan_all("one\ntwo\n", &win, &out);
	EXPECT_INT(out.total, 2);
	EXPECT_STR(out.ending, "lf");
	EXPECT_STR(out.content, "     1\tone\n     2\ttwo\n");

	scan_all("one\ntwo", &win, &out);
	EXPECT_INT(out.total, 2);
	EXPECT_STR(out.content, "     1\tone\n     2\ttwo\n");

	scan_all("no newline", &win, &out);
	EXPECT_INT(out.total, 1);
	EXPECT_STR(out.ending, "none");
	EXPECT_STR(out.content, "     1\tno newline\n");

	scan_all("a\r\nb\r\n\r\n", &win, &out);
	EXPECT_INT(out.total, 3);
	EXPECT_STR(out.ending, "crlf");
	EXPECT_STR(out.content, "     1\ta\n     2\tb\n     3\t\n");

	scan_all("a\rb\r", &win, &out);
	EXPECT_INT(out.total, 2);
	EXPECT_STR(out.ending, "cr");
	EXPECT_STR(out.content, "     1\ta\n     2\tb\n");

	scan_all("a\nb\r\nc\rd", &win, &out);
	EXPECT_INT(out.total, 4);
	EXPECT_STR(out.ending, "mixed");
	EXPECT_STR(out.content, "     1\ta\n     2\tb\n     3\tc\n     4\td\n");

	scan_all("\n\n", &win, &out);
	EXPECT_INT(out.total, 2);
	EXPECT_STR(out.content, "     1\t\n     2\t\n");

	scan_all("\r", &win, &out);
	EXPECT_INT(out.total, 1);
	EXPECT_STR(out.ending, "cr");

	scan_all("\r\r\n\n", &win, &out);
	EXPECT_INT(out.total, 3);
	EXPECT_STR(out.ending, "mixed");
	EXPECT_STR(out.content, "     1\t\n     2\t\n     3\t\n");

	/* Tabs and other bytes are shown as they are. */
	scan_all("\tx\f\x1b[1m", &win, &out);
	EXPECT_STR(out.content, "     1\t\tx\f\x1b[1m\n");
}

static void test_windows(void)
{
	const char *text = "l1\nl2\r\nl3\rl4\nl5\nl6\n";
	struct tr_line_window win;
	struct scan_out out;

	win = window(3, 4, 1, 2000, 100 * 1024);
	scan_all(text, &win, &out);
	EXPECT_STR(out.content, "     3\tl3\n     4\tl4\n");
	EXPECT_INT(out.shown_last, 4);
	EXPECT_INT(out.total, 6);
	EXPECT_STR(out.ending, "mixed");

	win = window(6, 100, 1, 2000, 100 * 1024);
	scan_all(text, &win, &out);
	EXPECT_STR(out.content, "     6\tl6\n");
	EXPECT_INT(out.shown_last, 6);

	win = window(7, 100, 1, 2000, 100 * 1024);
	scan_all(text, &win, &out);
	EXPECT_STR(out.content, "");
	EXPECT_INT(out.shown_last, 0);
	EXPECT_INT(out.total, 6);

	/* Line numbers widen past six digits as cat -n's do. */
	{
		size_t n = 1000001;
		char *many = malloc(n * 2 + 1);

		for (size_t i = 0; i < n; i++) {
			many[2 * i] = (char)('a' + i % 26);
			many[2 * i + 1] = '\n';
		}
		many[2 * n] = '\0';
		win = window(999999, 1000001, 1, 2000, 100 * 1024);
		scan(many, 2 * n, &win, 4096, &out);
		EXPECT_STR(out.content, "999999\tm\n1000000\tn\n1000001\to\n");
		EXPECT_INT(out.total, 1000001);
		free(many);
	}
}

static void test_long_lines(void)
{
	struct tr_line_window win;
	struct scan_out out;

	/* max_line_chars 4: code points, never split inside a sequence. */
	win = window(1, 10, 1, 4, 100 * 1024);
	scan_all("ab\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z\nshort\nabcd\n", &win, &out);
	EXPECT_STR(out.content,
		   "     1\tab\xC3\xA9\xE2\x82\xAC [... line truncated: 4 of 6 chars shown]\n"
		   "     2\tshor [... line truncated: 4 of 5 chars shown]\n"
		   "     3\tabcd\n");
	EXPECT_INT(out.cut_line, 1);
	EXPECT_INT(out.cut_column, 5);

	/* A.C-: line 2 from column 3; the marker counts from there. */
	win = window(2, 10, 3, 4, 100 * 1024);
	scan_all("first\n0123456789\nx\n", &win, &out);
	EXPECT_STR(out.content,
		   "     2\t2345 [... line truncated: 4 of 8 chars shown]\n     3\tx\n");
	EXPECT_INT(out.cut_line, 2);
	EXPECT_INT(out.cut_column, 7);
	EXPECT_INT(out.first_chars, 10);

	win = window(2, 10, 10, 4, 100 * 1024);
	scan_all("first\n0123456789\r\nx\n", &win, &out);
	EXPECT_STR(out.content, "     2\t9\n     3\tx\n");
	EXPECT_INT(out.cut_line, 0);

	win = window(2, 10, 11, 4, 100 * 1024);
	scan_all("first\n0123456789\nx\n", &win, &out);
	EXPECT(out.column_past_end);
	EXPECT_INT(out.first_chars, 10);
	EXPECT_STR(out.content, "");
	EXPECT_INT(out.total, 3);

	/* Column 1 of an empty line is not past its end. */
	win = window(1, 10, 1, 4, 100 * 1024);
	scan_all("\nx", &win, &out);
	EXPECT(!out.column_past_end);
	EXPECT_STR(out.content, "     1\t\n     2\tx\n");
}

static void test_byte_cap(void)
{
	struct tr_line_window win;
	struct scan_out out;

	/* Each line is 6+1+3+1 = 11 bytes: 25 bytes hold two. */
	win = window(1, 100, 1, 2000, 25);
	scan_all("aaa\nbbb\nccc\nddd\n", &win, &out);
	EXPECT_STR(out.content, "     1\taaa\n     2\tbbb\n");
	EXPECT(out.capped);
	EXPECT_INT(out.shown_last, 2);
	EXPECT_INT(out.total, 4);

	win = window(1, 100, 1, 2000, 22);
	scan_all("aaa\nbbb\nccc\nddd\n", &win, &out);
	EXPECT_STR(out.content, "     1\taaa\n     2\tbbb\n");

	/* The first line always fits. */
	win = window(2, 100, 1, 2000, 3);
	scan_all("aaa\nbbb\nccc\n", &win, &out);
	EXPECT_STR(out.content, "     2\tbbb\n");
	EXPECT(out.capped);
}

static void test_invalid_utf8(void)
{
	struct tr_line_window win = window(1, 10, 1, 2000, 100 * 1024);
	struct scan_out out;

	scan_all("a\xFF"
		 "b\n\xE2\x82\nc\xE2\x82\xAC\xE2\n\xF0\x9F\x98"
		 "x\xC3",
		 &win, &out);
	EXPECT_STR(out.content, "     1\ta" FFFD "b\n"
				"     2\t" FFFD "\n"
				"     3\tc\xE2\x82\xAC" FFFD "\n"
				"     4\t" FFFD "x" FFFD "\n");

	/* A U+FFFD is one code point of the line. */
	win = window(1, 10, 1, 2, 100 * 1024);
	scan_all("\xFF\xFE\xFD\n", &win, &out);
	EXPECT_STR(out.content, "     1\t" FFFD FFFD " [... line truncated: 2 of 3 chars shown]\n");
}

static int collect_sink(void *ctx, const unsigned char *data, size_t len)
{
	struct tr_buf *buf = ctx;

	return tr_buf_append(buf, data, len);
}

/* Decodes data fed in pieces of chunk bytes. */
static void decode(const char *data, size_t len, size_t chunk, struct tr_buf *out,
		   const char **encoding)
{
	struct tr_decoder dec;

	EXPECT_INT(tr_decoder_init(&dec, (const unsigned char *)data, len), 0);
	*encoding = dec.encoding;
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		EXPECT_INT(tr_decoder_feed(&dec, (const unsigned char *)data + off, n, collect_sink,
					   out),
			   0);
	}
	EXPECT_INT(tr_decoder_finish(&dec, collect_sink, out), 0);
	tr_decoder_destroy(&dec);
}

static void expect_decoded(const char *data, size_t len, const char *encoding, const char *expected)
{
	size_t chunks[] = {1, 3, 4096};

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct tr_buf out = {0};
		const char *enc;

		decode(data, len, chunks[i], &out, &enc);
		EXPECT_STR(enc, encoding);
		EXPECT_STR(out.data ? out.data : "", expected);
		tr_buf_free(&out);
	}
}

static void test_decoders(void)
{
	expect_decoded("\xEF\xBB\xBFh\xC3\xA9\n", 7, "utf-8-bom", "h\xC3\xA9\n");
	expect_decoded("plain \xC3\xA9\n", 9, "utf-8", "plain \xC3\xA9\n");
	/* "hé€\n" */
	expect_decoded("\xFF\xFEh\0\xE9\0\xAC\x20\n\0", 10, "utf-16le", "h\xC3\xA9\xE2\x82\xAC\n");
	expect_decoded("\xFE\xFF\0h\0\xE9\x20\xAC\0\n", 10, "utf-16be", "h\xC3\xA9\xE2\x82\xAC\n");
	/* U+1F600 as a surrogate pair, then a lone high surrogate and an odd last byte. */
	expect_decoded("\xFF\xFE\x3D\xD8\x00\xDE\x3D\xD8x\0y", 11, "utf-16le",
		       "\xF0\x9F\x98\x80" FFFD "x" FFFD);
	expect_decoded("\xFF\xFE\0\0h\0\0\0\x00\xF6\x01\0", 12, "utf-32le", "h\xF0\x9F\x98\x80");
	expect_decoded("\0\0\xFE\xFF\0\0\0h", 8, "utf-32be", "h");

	/* Windows-1252 prose: uchardet names it, iconv decodes it. */
	const char *cp1252 = "Le c\xF4t\xE9 fran\xE7"
			     "ais, l'\xE9t\xE9 \xE0 No\xEBl: \x93quotes\x94 "
			     "\x96 co\xFBt 5\x80, na\xEFve caf\xE9 cr\xE8me br\xFBl\xE9"
			     "e.\n";
	struct tr_buf out = {0};
	const char *enc;

	decode(cp1252, strlen(cp1252), 7, &out, &enc);
	EXPECT_STR(enc, "windows-1252");
	EXPECT(out.data && strstr(out.data, "c\xC3\xB4t\xC3\xA9 fran\xC3\xA7"
					    "ais"));
	EXPECT(out.data && strstr(out.data, "\xE2\x80\x9Cquotes\xE2\x80\x9D"));
	EXPECT(out.data && strstr(out.data, "5\xE2\x82\xAC"));
	tr_buf_free(&out);
}

static void test_binary_sniff(void)
{
	unsigned char head[100];

	EXPECT(!tr_head_is_binary((const unsigned char *)"", 0));
	EXPECT(!tr_head_is_binary((const unsigned char *)"hello\n", 6));
	EXPECT(tr_head_is_binary((const unsigned char *)"hel\0lo", 6));
	EXPECT(!tr_head_is_binary((const unsigned char *)"\xFF\xFEh\0i\0", 6));
	EXPECT(!tr_head_is_binary((const unsigned char *)"\xFE\xFF\0h\0i", 6));
	EXPECT(tr_head_is_binary((const unsigned char *)"\xEF\xBB\xBFh\0", 5));
	memset(head, 'a', sizeof(head));
	memset(head, 0x01, 30);
	EXPECT(!tr_head_is_binary(head, sizeof(head)));
	head[30] = 0x7F;
	EXPECT(tr_head_is_binary(head, sizeof(head)));
	memset(head, '\t', 50);
	memset(head + 50, 0x1B, 50);
	EXPECT(!tr_head_is_binary(head, sizeof(head)));
	/* BOM-less UTF-16/32: text when every unit is and whitespace shows the byte order */
	EXPECT(!tr_head_is_binary((const unsigned char *)"h\0i\0 \0t\0o\0\n\0", 12));
	EXPECT(!tr_head_is_binary((const unsigned char *)"\0h\0i\0 \0t\0o\0\n", 12));
	EXPECT(!tr_head_is_binary((const unsigned char *)"h\0\0\0 \0\0\0", 8));
	EXPECT(tr_head_is_binary((const unsigned char *)"h\0i\0\x01\0t\0o\0\n\0", 12));
	EXPECT(tr_head_is_binary((const unsigned char *)"h\0i\0t\0o\0", 8));     /* no whitespace */
	EXPECT(tr_head_is_binary((const unsigned char *)"\xDC\0\0 \0\n\0a", 8)); /* lone low */
}

/* Reads data as a file named "f.txt" through the whole core. */
static void read_mem(const void *data, size_t len, const char *sel_text,
		     const struct tr_options *opts, struct tr_result *res)
{
	struct tr_source src = {.path = "dir/f.txt", .name = "f.txt"};
	struct tr_selector sel = {0};
	int fd = memfd_create("text", MFD_CLOEXEC);

	EXPECT(fd >= 0);
	EXPECT_INT(write(fd, data, len), (long long)len);
	if (sel_text)
		EXPECT_INT(tr_selector_parse(sel_text, strlen(sel_text), &sel), 0);
	EXPECT_INT(tr_result_init(res, src.path), 0);
	EXPECT_INT(tr_read_fd(fd, &src, &sel, opts, res, NULL), 0);
	close(fd);
}

static void test_reader(void)
{
	struct tr_options opts;
	struct tr_result res;

	tr_options_init(&opts);

	read_mem("", 0, NULL, &opts, &res);
	EXPECT(res.success);
	EXPECT_INT(res.type, TR_TYPE_TEXT);
	EXPECT_STR(res.short_result, "File is empty");
	EXPECT_INT(res.content.len, 0);
	EXPECT_INT(res.range_unit, TR_UNIT_LINE);
	EXPECT_INT(res.range_start, 0);
	EXPECT_INT(res.range_total, 0);
	EXPECT_INT(res.line_count, 0);
	EXPECT_STR(res.meta.line_ending, "none");
	EXPECT(!res.truncated);
	EXPECT(res.meta.has_sha256);
	EXPECT_STR(res.meta.sha256,
		   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	tr_result_destroy(&res);

	read_mem("a\nb\nc\n", 6, NULL, &opts, &res);
	EXPECT(res.success);
	EXPECT_STR(res.content.data, "     1\ta\n     2\tb\n     3\tc\n");
	EXPECT_STR(res.short_result, "Read 3 lines (1-3 of 3)");
	EXPECT(!res.truncated);
	EXPECT(!res.next);
	EXPECT_INT(res.range_start, 1);
	EXPECT_INT(res.range_end, 3);
	EXPECT_INT(res.line_count, 3);
	EXPECT_STR(res.meta.encoding, "utf-8");
	EXPECT_STR(res.meta.line_ending, "lf");
	EXPECT(!res.meta.description);
	EXPECT_STR(res.mime_type, "text/plain");
	tr_result_destroy(&res);

	read_mem("a\nb\nc\n", 6, "2", &opts, &res);
	EXPECT_STR(res.content.data, "     2\tb\n");
	EXPECT_STR(res.short_result, "Read 1 line (2-2 of 3)");
	EXPECT(res.truncated);
	EXPECT_STR(res.next, "f.txt:3.tool.json");
	tr_result_destroy(&res);

	read_mem("a\nb\nc\n", 6, "3-", &opts, &res);
	EXPECT_STR(res.content.data, "     3\tc\n");
	EXPECT(res.truncated);
	EXPECT(!res.next);
	tr_result_destroy(&res);

	read_mem("a\nb\nc\n", 6, "4", &opts, &res);
	EXPECT(!res.success);
	EXPECT_INT(res.error, TR_E_OUT_OF_RANGE);
	EXPECT_STR(res.error_text, "Line 4 is past the end of the file (3 lines)");
	EXPECT_INT(res.range_total, 3);
	EXPECT_STR(res.meta.line_ending, "lf");
	tr_result_destroy(&res);

	read_mem("abc\n", 4, "1.5-", &opts, &res);
	EXPECT_INT(res.error, TR_E_OUT_OF_RANGE);
	EXPECT_STR(res.error_text, "Column 5 is past the end of line 1 (3 chars)");
	tr_result_destroy(&res);

	read_mem("abc\n", 4, "1.3-", &opts, &res);
	EXPECT(res.success);
	EXPECT_STR(res.content.data, "     1\tc\n");
	EXPECT_STR(res.short_result, "Read 1 line (1-1 of 1)");
	EXPECT(res.truncated);
	EXPECT(!res.next);
	tr_result_destroy(&res);

	/* Windows limited by max_lines, continued by next. */
	opts.max_lines = 2;
	read_mem("1\n2\n3\n4\n5\n", 10, NULL, &opts, &res);
	EXPECT_STR(res.content.data, "     1\t1\n     2\t2\n");
	EXPECT_STR(res.short_result, "Read 2 lines (1-2 of 5)");
	EXPECT_STR(res.next, "f.txt:3-4.tool.json");
	EXPECT(res.truncated);
	tr_result_destroy(&res);

	read_mem("1\n2\n3\n4\n5\n", 10, "2-5", &opts, &res);
	EXPECT_STR(res.content.data, "     2\t2\n     3\t3\n");
	EXPECT_STR(res.next, "f.txt:4-5.tool.json");
	tr_result_destroy(&res);

	/* A cut line with no lines after it continues at its first unshown column. */
	opts.max_line_chars = 3;
	read_mem("ab\nabcdefgh", 11, "2", &opts, &res);
	EXPECT_STR(res.content.data, "     2\tabc [... line truncated: 3 of 8 chars shown]\n");
	EXPECT_STR(res.next, "f.txt:2.4-.tool.json");
	tr_result_destroy(&res);

	read_mem("ab\nabcdefgh", 11, "2.4-", &opts, &res);
	EXPECT_STR(res.content.data, "     2\tdef [... line truncated: 3 of 5 chars shown]\n");
	EXPECT_STR(res.next, "f.txt:2.7-.tool.json");
	tr_result_destroy(&res);

	read_mem("ab\nabcdefgh", 11, "2.7-", &opts, &res);
	EXPECT_STR(res.content.data, "     2\tgh\n");
	EXPECT(!res.next);
	EXPECT(res.truncated);
	tr_result_destroy(&res);

	/* A cut line with lines after it: next goes on with the lines. */
	read_mem("abcdefgh\nx\ny\n", 13, NULL, &opts, &res);
	EXPECT_STR(res.next, "f.txt:3.tool.json");
	tr_result_destroy(&res);
	tr_options_init(&opts);

	/* The byte cap sets next to the first line it left out. */
	opts.max_output = 25;
	read_mem("aaa\nbbb\nccc\n", 12, NULL, &opts, &res);
	EXPECT_STR(res.content.data, "     1\taaa\n     2\tbbb\n");
	EXPECT_STR(res.next, "f.txt:3.tool.json");
	EXPECT(res.truncated);
	EXPECT_INT(res.line_count, 2);
	tr_result_destroy(&res);
	tr_options_init(&opts);

	/* UTF-16 with BOM and CRLF. */
	read_mem("\xFF\xFEh\0i\0\r\0\n\0\xE9\0\r\0\n\0", 16, NULL, &opts, &res);
	EXPECT(res.success);
	EXPECT_STR(res.content.data, "     1\thi\n     2\t\xC3\xA9\n");
	EXPECT_STR(res.meta.encoding, "utf-16le");
	EXPECT_STR(res.meta.line_ending, "crlf");
	EXPECT_INT(res.range_total, 2);
	tr_result_destroy(&res);

	/* UTF-8 BOM stripped; a file holding only a BOM is empty. */
	read_mem("\xEF\xBB\xBFx\n", 5, NULL, &opts, &res);
	EXPECT_STR(res.content.data, "     1\tx\n");
	EXPECT_STR(res.meta.encoding, "utf-8-bom");
	tr_result_destroy(&res);
	read_mem("\xEF\xBB\xBF", 3, NULL, &opts, &res);
	EXPECT_STR(res.short_result, "File is empty");
	tr_result_destroy(&res);

	/* Binary: NUL bytes. */
	read_mem("\x7F"
		 "ELF\0\0\0\0\0\0",
		 10, NULL, &opts, &res);
	EXPECT(!res.success);
	EXPECT_INT(res.type, TR_TYPE_BINARY);
	EXPECT_INT(res.error, TR_E_BINARY);
	EXPECT(res.meta.description != NULL);
	EXPECT(res.error_text &&
	       !strncmp(res.error_text, "Cannot display binary file: dir/f.txt (", 39));
	EXPECT(res.error_text && strstr(res.error_text, ", 10 bytes)"));
	EXPECT(res.meta.has_sha256);
	tr_result_destroy(&res);
}

int main(void)
{
	test_utf8();
	test_lines_and_endings();
	test_windows();
	test_long_lines();
	test_byte_cap();
	test_invalid_utf8();
	test_decoders();
	test_binary_sniff();
	test_reader();
	return EXPECT_DONE();
}
