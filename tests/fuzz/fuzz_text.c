/* SPDX-License-Identifier: MIT */
/* fuzz_text.c - libFuzzer target for the text decoder (charset detection, transcoding) and the
 * line machine: a parameter header (window, limits, piece sizes), then the file's bytes. The
 * bytes are decoded whole and in pieces, and the UTF-8 is scanned whole and in pieces: every
 * chunking must give the same text, the same lines and the same window, and the window must be
 * valid UTF-8 with as many lines as an independent count says. */
#include <iconv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "text.h"
#include "util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keeps glibc's gconv modules loaded: without a descriptor left open, every iconv_close
 * dlclose()s its module and the next iconv_open loads it again, which costs more than the rest
 * of an input. The descriptors are never used. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const unicode[] = {"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"};

	static iconv_t kept[128]; /* reachable: no leak */
	size_t n = 0;

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof(unicode) / sizeof(unicode[0]); i++)
		kept[n++] = iconv_open("UTF-8", unicode[i]);
	for (size_t i = 0; tr_legacy_charsets[i] && n < sizeof(kept) / sizeof(kept[0]); i++)
		kept[n++] = iconv_open("UTF-8", tr_legacy_charsets[i]);
	return 0;
}

/* Piece sizes drawn from a seed: 1..max bytes, changing at every piece. */
struct pieces {
	uint32_t state;
	size_t max;
};

static size_t next_piece(struct pieces *p)
{
	if (p->max == 0)
		return SIZE_MAX; /* whole */
	p->state = p->state * 1103515245u + 12345u;
	return 1 + (p->state >> 16) % p->max;
}

static int collect(void *ctx, const unsigned char *data, size_t len)
{
	return tr_buf_append(ctx, data, len);
}

/* Decodes data[0..len) in pieces (sample = the whole input, as text.c samples its first chunk). */
static void decode(const uint8_t *data, size_t len, struct pieces pieces, struct tr_buf *out,
		   const char **encoding)
{
	struct tr_decoder dec;

	if (tr_decoder_init(&dec, data, len) < 0)
		fuzz_fail("tr_decoder_init failed");
	*encoding = dec.encoding;
	for (size_t off = 0; off < len;) {
		size_t n = next_piece(&pieces);

		if (n > len - off)
			n = len - off;
		if (tr_decoder_feed(&dec, data + off, n, collect, out) < 0)
			fuzz_fail("tr_decoder_feed failed");
		off += n;
	}
	if (tr_decoder_finish(&dec, collect, out) < 0)
		fuzz_fail("tr_decoder_finish failed");
	tr_decoder_destroy(&dec);
	if (out->oom)
		fuzz_fail("out of memory");
}

struct scan_result {
	struct tr_buf content;
	uint64_t total, shown_last, cut_line, cut_column, first_chars;
	bool capped, column_past_end;
	const char *ending;
};

static void scan(const unsigned char *text, size_t len, const struct tr_line_window *win,
		 struct pieces pieces, struct scan_result *out)
{
	struct tr_line_scan ls;

	tr_line_scan_init(&ls, win);
	for (size_t off = 0; off < len;) {
		size_t n = next_piece(&pieces);

		if (n > len - off)
			n = len - off;
		if (tr_line_scan_feed(&ls, text + off, n) < 0)
			fuzz_fail("tr_line_scan_feed failed");
		off += n;
	}
	if (tr_line_scan_finish(&ls) < 0)
		fuzz_fail("tr_line_scan_finish failed");
	out->content = ls.content;
	memset(&ls.content, 0, sizeof(ls.content));
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

static void same_scan(const struct scan_result *a, const struct scan_result *b)
{
	if (a->content.len != b->content.len ||
	    (a->content.len && memcmp(a->content.data, b->content.data, a->content.len)))
		fuzz_fail("window content depends on the chunking");
	if (a->total != b->total || a->shown_last != b->shown_last || a->cut_line != b->cut_line ||
	    a->cut_column != b->cut_column || a->capped != b->capped ||
	    a->column_past_end != b->column_past_end || strcmp(a->ending, b->ending) ||
	    a->first_chars != b->first_chars)
		fuzz_fail("scan state depends on the chunking");
}

/* Lines of text by universal newlines, counted the simple way. */
static uint64_t count_lines(const unsigned char *s, size_t len)
{
	uint64_t lines = 0;
	size_t i = 0;

	while (i < len) {
		if (s[i] == '\r') {
			lines++;
			i += i + 1 < len && s[i + 1] == '\n' ? 2 : 1;
		} else if (s[i] == '\n') {
			lines++;
			i++;
		} else {
			size_t j = i;

			while (j < len && s[j] != '\r' && s[j] != '\n')
				j++;
			if (j == len)
				lines++;
			i = j;
		}
	}
	return lines;
}

static uint64_t small(uint8_t b, uint64_t big)
{
	return b == 0xff ? big : 1 + (b & 31);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input params, payload;
	struct tr_line_window win;
	struct tr_buf whole = {0}, split = {0};
	struct scan_result a, b;
	const char *enc_whole, *enc_split;
	struct pieces decode_pieces, scan_pieces;

	fuzz_split(data, size, &params, &payload);
	win.first = small(fuzz_byte(&params), UINT64_MAX);
	win.last = win.first + small(fuzz_byte(&params), UINT64_MAX) - 1;
	if (win.last < win.first)
		win.last = UINT64_MAX;
	win.column = small(fuzz_byte(&params), UINT64_MAX);
	win.max_line_chars = small(fuzz_byte(&params), UINT64_MAX);
	win.max_output = fuzz_byte(&params) * 8u;
	if (win.max_output == 0)
		win.max_output = UINT64_MAX;
	decode_pieces.max = fuzz_byte(&params) & 15;
	decode_pieces.state = fuzz_byte(&params);
	scan_pieces.max = fuzz_byte(&params) & 15;
	scan_pieces.state = fuzz_byte(&params);

	decode(payload.data, payload.len, (struct pieces){0, 0}, &whole, &enc_whole);
	decode(payload.data, payload.len, decode_pieces, &split, &enc_split);
	if (strcmp(enc_whole, enc_split))
		fuzz_fail("encoding depends on the chunking");
	if (whole.len != split.len || (whole.len && memcmp(whole.data, split.data, whole.len)))
		fuzz_fail("decoded %s text depends on the chunking (%zu vs %zu bytes)", enc_whole,
			  whole.len, split.len);

	const unsigned char *text = (const unsigned char *)(whole.data ? whole.data : "");

	scan(text, whole.len, &win, (struct pieces){0, 0}, &a);
	scan(text, whole.len, &win, scan_pieces, &b);
	same_scan(&a, &b);
	if (a.total != count_lines(text, whole.len))
		fuzz_fail("line machine counts %llu lines, simple count %llu",
			  (unsigned long long)a.total,
			  (unsigned long long)count_lines(text, whole.len));
	fuzz_check_utf8("window", (const unsigned char *)a.content.data, a.content.len);
	if (a.shown_last && (a.shown_last < win.first || a.shown_last > win.last))
		fuzz_fail("shown_last %llu outside the window", (unsigned long long)a.shown_last);
	if (a.shown_last > a.total)
		fuzz_fail("shown_last past the end");
	uint64_t newlines = 0;

	for (size_t i = 0; i < a.content.len; i++)
		newlines += a.content.data[i] == '\n';
	if (newlines != (a.shown_last ? a.shown_last - win.first + 1 : 0))
		fuzz_fail("window holds %llu lines, shown_last %llu from %llu",
			  (unsigned long long)newlines, (unsigned long long)a.shown_last,
			  (unsigned long long)win.first);
	tr_buf_free(&a.content);
	tr_buf_free(&b.content);
	tr_buf_free(&whole);
	tr_buf_free(&split);
	return 0;
}
