/* SPDX-License-Identifier: MIT */
/* text.c - the text reader (docs/SPEC.md §3 "Text"): one streaming pass hashes, decodes to UTF-8, counts
 * lines and formats the selected window as cat -n does. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "text.h"
#include "tr_tokens.h"
#include "util.h"

/* The file is read in chunks of this size: large enough that syscalls do not count, small
 * enough to stay in the L2 cache between hashing and scanning. */
#define READ_CHUNK (256 * 1024)
/* docs/SPEC.md §2: sha256 is given for files up to 256 MiB. */
/* From this size on, SHA-256 (the costliest part of a read) runs in a thread of its own on the
 * same buffers while this one scans them: the read then takes about as long as hashing alone. */
#define PARALLEL_HASH_MIN (2ull * 1024 * 1024)
#define HASH_PIPE_SLOTS 16

static enum tr_probe text_probe(const struct tr_file *file)
{
	return tr_head_is_binary(file->head, file->head_len) ? TR_PROBE_NO : TR_PROBE_FALLBACK;
}

/* The lines to show for sel: docs/SPEC.md §4 selectors, never more than max_lines of them. */
static void window_for(const struct tr_selector *sel, const struct tr_options *opts,
		       struct tr_line_window *win)
{
	uint64_t max_lines = opts->max_lines ? opts->max_lines : 1;

	win->first = sel->present ? sel->start : 1;
	win->column = sel->present && sel->column ? sel->column : 1;
	win->last = win->first + (max_lines - 1);
	if (win->last < win->first)
		win->last = UINT64_MAX;
	if (sel->present && sel->end && sel->end < win->last)
		win->last = sel->end;
	win->max_line_chars = opts->max_line_chars ? opts->max_line_chars : 1;
	win->max_output = opts->max_output;
	win->max_tokens = opts->max_tokens;
}

static int scan_sink(void *ctx, const unsigned char *data, size_t len)
{
	return tr_line_scan_feed(ctx, data, len);
}

/* Past the window a hole of a sparse file, all NUL bytes and no line terminator, counts as
 * one NUL does. Returns the offset of the next data when off is in such a hole and the scan may
 * jump over it (a UTF-8 source past its first piece and its window), else off. */
static uint64_t hole_end(const struct tr_file *file, const struct tr_decoder *dec,
			 const struct tr_line_scan *ls, uint64_t off, uint64_t size)
{
	off_t data;

	if (off == 0 || off >= size || dec->cd || ls->in_line ||
	    !(ls->capped || ls->column_past_end || ls->terminators >= ls->win.last))
		return off;
	data = lseek(file->fd, (off_t)off, SEEK_DATA);
	if (data < 0)
		return errno == ENXIO ? size : off;
	return (uint64_t)data > size ? size : (uint64_t)data;
}

/* The pipe's consumer: SHA-256 of the file's pieces, beside the scan. */
static void hash_piece(void *sha, unsigned char *buf, size_t len)
{
	tr_sha256_update(sha, buf, len);
}

/* Streams the file once through the decoder and the line machine, and through SHA-256 when
 * small enough (inline, or beside the scan in a hash thread for larger files). Returns 0, -1
 * when out of memory, or a positive errno when reading failed. */
static int scan_file(const struct tr_file *file, struct tr_decoder *dec, struct tr_line_scan *ls,
		     struct tr_metadata *meta)
{
	uint64_t size = (uint64_t)file->st.st_size, off = 0;
	/* A small file gets a buffer of its own size: most source files are a few KiB, and a
	 * READ_CHUNK for each would churn the heap of a daemon serving many at once. */
	size_t chunk = size < READ_CHUNK ? (size_t)(size ? size : 1) : READ_CHUNK;
	struct tr_pipe *pipe = NULL;
	struct tr_sha256 *sha = NULL;
	unsigned char *own_buf = NULL;
	bool final = false;
	/* Another selector of this version was read: its digest is remembered. */
	bool known = size <= TR_SHA256_MAX_SIZE && tr_sha_memo_get(&file->st, meta->sha256);
	int rc = 0;

	if (known)
		meta->has_sha256 = true;
	else if (size <= TR_SHA256_MAX_SIZE)
		sha = tr_sha256_new(); /* NULL: the dispatcher hashes instead */
	if (sha && size >= PARALLEL_HASH_MIN)
		pipe = tr_pipe_new(HASH_PIPE_SLOTS, READ_CHUNK, hash_piece, sha);
	if (!pipe) {
		own_buf = malloc(chunk);
		if (!own_buf) {
			tr_sha256_free(sha);
			return -1;
		}
	}
	while (!final) {
		unsigned char *buf = pipe ? tr_pipe_acquire(pipe) : own_buf;
		size_t want;
		ssize_t n = 0;

		if (!pipe && !sha) {
			static const unsigned char nul;
			uint64_t next = hole_end(file, dec, ls, off, size);

			if (next > off) {
				if (tr_decoder_feed(dec, &nul, 1, scan_sink, ls) < 0) {
					rc = -1;
					goto out;
				}
				off = next;
			}
		}
		want = size - off < chunk ? (size_t)(size - off) : chunk;

		if (want) {
			n = tr_pread_full(file->fd, buf, want, (off_t)off);
			if (n < 0) {
				rc = errno ? errno : EIO;
				goto out;
			}
		}
		if (pipe)
			tr_pipe_submit(pipe, (size_t)n);
		else if (sha)
			tr_sha256_update(sha, buf, (size_t)n);
		/* A short read means the file shrank: the dispatcher sees the change and retries. */
		final = (size_t)n < want || off + (uint64_t)n >= size;
		if (off == 0 && tr_decoder_init(dec, buf, (size_t)n) < 0) {
			rc = -1;
			goto out;
		}
		off += (uint64_t)n;
		if (tr_decoder_feed(dec, buf, (size_t)n, scan_sink, ls) < 0) {
			rc = -1;
			goto out;
		}
	}
	if (tr_decoder_finish(dec, scan_sink, ls) < 0 || tr_line_scan_finish(ls) < 0) {
		rc = -1;
		goto out;
	}
	if (sha && off == size) {
		tr_pipe_finish(pipe); /* every piece is in sha */
		pipe = NULL;
		tr_sha256_finish(sha, meta->sha256);
		sha = NULL;
		meta->has_sha256 = true;
		tr_sha_memo_put(&file->st, meta->sha256);
	}
out:
	tr_pipe_finish(pipe); /* before sha, which its thread updates */
	tr_sha256_free(sha);
	free(own_buf);
	return rc;
}

static const char *plural_lines(uint64_t n)
{
	return n == 1 ? "line" : "lines";
}

/* Fills the success result from a finished scan: content, range, truncated, next. */
static void fill_window(const char *name, const struct tr_line_scan *ls,
			const struct tr_options *opts, uint64_t total, struct tr_result *res)
{
	uint64_t first = ls->win.first, last = ls->shown_last;
	uint64_t max_lines = opts->max_lines ? opts->max_lines : 1;
	struct tr_window w = {
		.unit = TR_UNIT_LINE,
		.first = first,
		.last = last,
		.total = total,
		.cut = ls->win.column > 1 || ls->cut_line || ls->capped,
		.next = {.present = true},
	};
	struct tr_selector *next = &w.next;

	res->success = true;
	res->line_count = (int64_t)(last - first + 1);
	if (last < total) {
		next->start = last + 1;
		next->end = next->start + (max_lines - 1);
		/* The next window ends at the last line, so the name says exactly what it holds. */
		if (next->end < next->start || next->end > total)
			next->end = total;
	} else if (ls->cut_line) {
		next->start = ls->cut_line;
		next->column = ls->cut_column;
	} else {
		next->present = false;
	}
	tr_result_set_window(res, name, &w);
	tr_result_set_short(res, "Read %" PRIu64 " %s (%" PRIu64 "-%" PRIu64 " of %" PRIu64 ")",
			    last - first + 1, plural_lines(last - first + 1), first, last, total);
}

/* Fills res from a finished scan of win as docs/SPEC.md §3 "Text" says: the window, File is empty, or
 * out_of_range. Takes the content from ls. Returns 0, or -1 when out of memory. */
static int result_from_scan(const char *name, struct tr_line_scan *ls,
			    const struct tr_line_window *win, const struct tr_selector *sel,
			    const struct tr_options *opts, struct tr_result *res)
{
	uint64_t total = tr_line_scan_total(ls);

	res->range_unit = TR_UNIT_LINE;
	res->range_total = total;
	res->line_count = 0;
	if (total == 0 && !sel->present) {
		res->success = true;
		tr_result_set_short(res, "File is empty");
	} else if (win->first > total) {
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Line %" PRIu64 " is past the end of the file (%" PRIu64 " %s)",
			       win->first, total, plural_lines(total));
	} else if (ls->column_past_end) {
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Column %" PRIu64 " is past the end of line %" PRIu64 " (%" PRIu64
			       " chars)",
			       win->column, win->first, ls->first_chars);
	} else {
		tr_buf_free(&res->content);
		res->content = ls->content;
		memset(&ls->content, 0, sizeof(ls->content));
		if (ls->win.max_tokens) { /* every line weighed: metadata.tokens need not again */
			res->meta.has_content_tokens = true;
			res->meta.content_tokens = tr_tokens_round(ls->milli_tokens,
								   res->content.len);
		}
		fill_window(name, ls, opts, total, res);
	}
	return res->short_result ? 0 : -1;
}

int tr_text_window_buffer(const char *text, size_t len, const char *name,
			  const struct tr_selector *sel, const struct tr_options *opts,
			  struct tr_result *res)
{
	struct tr_line_window win;
	struct tr_line_scan ls;
	int rc = -1;

	window_for(sel, opts, &win);
	tr_line_scan_init(&ls, &win);
	if (tr_line_scan_feed(&ls, text, len) == 0 && tr_line_scan_finish(&ls) == 0)
		rc = result_from_scan(name, &ls, &win, sel, opts, res);
	tr_line_scan_destroy(&ls);
	return rc;
}

static int text_read(const struct tr_file *file, const struct tr_selector *sel,
		     const struct tr_options *opts, struct tr_result *res)
{
	struct tr_line_window win;
	struct tr_line_scan ls;
	struct tr_decoder dec = {0};
	int rc;

	res->type = TR_TYPE_TEXT;
	free(res->mime_type);
	res->mime_type = tr_magic_mime_buffer(file->head, file->head_len);
	window_for(sel, opts, &win);
	tr_line_scan_init(&ls, &win);
	rc = scan_file(file, &dec, &ls, &res->meta);
	if (rc < 0)
		goto out;
	if (rc > 0) {
		tr_result_fail(res, tr_error_from_errno(rc), "I/O error reading %s: %s",
			       file->src->path, strerror(rc));
		rc = 0;
		goto out;
	}
	res->meta.encoding = dec.encoding;
	res->meta.line_ending = tr_line_scan_ending(&ls);
	rc = result_from_scan(file->src->name, &ls, &win, sel, opts, res);
out:
	tr_decoder_destroy(&dec);
	tr_line_scan_destroy(&ls);
	return rc;
}

const struct tr_reader tr_reader_text = {
	.name = "text",
	.probe = text_probe,
	.read = text_read,
	.caps = TR_CAP_TOKENS, /* each numbered line weighed (readers/core/tokens.c) */
};
