/* SPDX-License-Identifier: MIT */
/* read.c - the reader core's entry points: open checks, one consistent read, reader dispatch. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "reader.h"
#include "sandbox.h"
#include "util.h"

/* A file that keeps changing while it is read is given up on after this many tries (the one
 * retry layer: the daemon and the MCP server keep what this returns). From the fifth on, each
 * waits half a READ_BACKOFF_NS longer than the one before, so a writer mid-way through a rewrite can
 * finish: at most 18 ms of waiting in all. */
#define READ_ATTEMPTS 12
#define READ_QUICK_ATTEMPTS 4
#define READ_BACKOFF_NS 1000000L
/* The most read of a file whose size is not known in advance (st_size 0, as in /proc). */
#define PSEUDO_FILE_MAX (16 * 1024 * 1024)

static bool same_version(const struct stat *a, const struct stat *b)
{
	return a->st_size == b->st_size && a->st_ino == b->st_ino &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static const struct tr_reader *pick_reader(const struct tr_file *file)
{
	const struct tr_reader *best = NULL;
	enum tr_probe best_score = TR_PROBE_NO;

	for (size_t i = 0; tr_readers[i]; i++) {
		enum tr_probe score = tr_readers[i]->probe(file);

		if (score > best_score) {
			best = tr_readers[i];
			best_score = score;
		}
	}
	return best;
}

/* Copies a file that reports size 0 yet has content (/proc, /sys and some FUSE files) into a
 * memory file, up to PSEUDO_FILE_MAX bytes, so that readers see its true size. Returns the
 * memory file's descriptor, or -1 with errno. */
static int snapshot_pseudo_file(int fd)
{
	enum { CHUNK = 64 * 1024 };
	char *buf = malloc(CHUNK);
	int mem = memfd_create("toolfs-pseudo-file", MFD_CLOEXEC);
	off_t at = 0;

	if (!buf || mem < 0)
		goto fail;
	while (at < PSEUDO_FILE_MAX) {
		ssize_t n = tr_pread_full(fd, buf, CHUNK, at);

		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		if (write(mem, buf, (size_t)n) != n)
			goto fail;
		at += n;
	}
	free(buf);
	return mem;
fail:
	free(buf);
	if (mem >= 0) {
		int err = errno;

		close(mem);
		errno = err;
	}
	return -1;
}

/* One attempt: fills res from the file as it is now. Returns 0, or -1 when out of memory. */
static int read_once(int fd, const struct stat *st, const struct tr_source *src,
		     const struct tr_selector *sel, const struct tr_options *opts,
		     struct tr_result *res)
{
	static const struct tr_selector default_view;
	unsigned char head[TR_HEAD_SIZE];
	ssize_t head_len;
	struct tr_file file = {.fd = fd,
			       .st = *st,
			       .src = src,
			       .head = head,
			       .deadline = tr_deadline_after_ms(opts->max_render_ms)};
	const struct tr_reader *reader;
	struct tr_options bounded;
	uint64_t cost;
	int rc;

	tr_result_set_stat(res, st);
	head_len = tr_pread_full(fd, head, sizeof(head), 0);
	if (head_len < 0) {
		tr_result_fail_errno(res, errno);
		return 0;
	}
	file.head_len = (size_t)head_len;
	if (st->st_size == 0 && head_len > 0) {
		struct stat mem_st;
		int mem = snapshot_pseudo_file(fd);
		int rc;

		if (mem < 0 || fstat(mem, &mem_st) < 0) {
			if (mem >= 0)
				close(mem);
			tr_result_fail_errno(res, errno);
			return 0;
		}
		mem_st.st_mtim = st->st_mtim;
		rc = read_once(mem, &mem_st, src, sel, opts, res);
		close(mem);
		return rc;
	}
	reader = pick_reader(&file);
	if (!reader) {
		tr_result_fail(res, TR_E_IO, "No reader accepts %s", res->path);
		return 0;
	}
	if (sel && sel->has_region && !(reader->caps & TR_CAP_REGIONS)) {
		char text[96];

		tr_selector_format(sel, text, sizeof(text));
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Region selectors (%s) apply to PNG, JPEG, GIF and WebP images and "
			       "PDF pages only; this file is read by the %s reader",
			       text, reader->name);
		return 0;
	}
	if (sel && sel->time && !(reader->caps & TR_CAP_TIMES)) {
		tr_result_fail(
			res, TR_E_OUT_OF_RANGE,
			"A time selector (seconds with decimals, MM:SS) applies to audio and "
			"video only: %s",
			res->path);
		return 0;
	}
	/* A reader that does not weigh its lines in tokens cuts at max_output bytes, so max_tokens
	 * bounds it as 2 bytes a token, dense text's worst (docs/SPEC.md §4). */
	if (opts->max_tokens && !(reader->caps & TR_CAP_TOKENS) &&
	    opts->max_tokens < opts->max_output / 2) {
		bounded = *opts;
		bounded.max_output = opts->max_tokens * 2;
		opts = &bounded;
	}
	cost = reader->memory ? reader->memory(&file, opts) : 0;
	tr_budget_take(cost, opts->max_read_memory);
	if ((reader->caps & TR_CAP_UNTRUSTED) && !tr_sandbox_inside)
		rc = tr_sandbox_read(reader, &file, sel ? sel : &default_view, opts, res);
	else
		rc = reader->read(&file, sel ? sel : &default_view, opts, res);
	tr_budget_give(cost);
	if (rc < 0)
		return -1;
	if (!res->meta.has_sha256 && res->meta.size <= TR_SHA256_MAX_SIZE &&
	    res->error != TR_E_IO && res->error != TR_E_PERMISSION_DENIED) {
		if (tr_sha_memo_get(&file.st, res->meta.sha256)) {
			res->meta.has_sha256 = true;
		} else if (tr_sha256_fd(fd, res->meta.size, res->meta.sha256) == 0) {
			res->meta.has_sha256 = true;
			tr_sha_memo_put(&file.st, res->meta.sha256);
		}
	}
	return 0;
}

int tr_read_fd(int fd, const struct tr_source *src, const struct tr_selector *sel,
	       const struct tr_options *opts, struct tr_result *res, struct stat *shown)
{
	struct tr_options defaults;
	struct tr_source named;
	struct stat before, after;

	if (!src->name) {
		named = (struct tr_source){.path = src->path,
					   .name = tr_path_base_name(src->path),
					   .cancel = src->cancel};
		src = &named;
	}
	if (shown)
		memset(shown, 0, sizeof(*shown));
	if (!opts) {
		tr_options_init(&defaults);
		opts = &defaults;
	}
	for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
		if (attempt > 0) {
			tr_result_destroy(res);
			if (tr_result_init(res, src->path) < 0)
				return -1;
		}
		if (attempt >= READ_QUICK_ATTEMPTS) {
			long ns = READ_BACKOFF_NS * (attempt - READ_QUICK_ATTEMPTS + 1) / 2;
			struct timespec pause = {0, ns};

			nanosleep(&pause, NULL);
		}
		if (fstat(fd, &before) < 0) {
			tr_result_fail_errno(res, errno);
			return 1;
		}
		if (!S_ISREG(before.st_mode)) {
			if (shown)
				*shown = before;
			tr_result_not_regular(res, &before);
			return 0;
		}
		if (read_once(fd, &before, src, sel, opts, res) < 0)
			return -1;
		if (fstat(fd, &after) < 0) {
			tr_result_fail_errno(res, errno);
			return 1;
		}
		if (shown)
			*shown = after;
		if (same_version(&before, &after))
			return 0;
	}
	tr_result_fail(res, TR_E_IO,
		       "I/O error reading %s: the file kept changing while it was read", src->path);
	return 1;
}

int tr_read_path(int dirfd, const char *path, const struct tr_selector *sel,
		 const struct tr_options *opts, struct tr_result *res)
{
	struct tr_source src = {.path = path}; /* name: its last component */
	struct stat st;
	int fd, rc;

	if (fstatat(dirfd, path, &st, 0) < 0) {
		int err = errno;

		tr_result_fail_errno(res, err);
		if (err == ENOENT)
			tr_suggest_similar(res, dirfd, path);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		tr_result_not_regular(res, &st);
		return 0;
	}
	/* O_NONBLOCK: a file swapped for a FIFO between the stat and the open must not hang. */
	fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		tr_result_fail_errno(res, errno);
		return 0;
	}
	rc = tr_read_fd(fd, &src, sel, opts, res, NULL);
	close(fd);
	return rc;
}
