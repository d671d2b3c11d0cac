/* SPDX-License-Identifier: MIT */
/* core.h - the reader core's private parts: the read memory budget, "Did you mean ...?" for a
 * path that does not exist, digests remembered by version, and whole-file loads. */
#ifndef TR_CORE_PRIVATE_H
#define TR_CORE_PRIVATE_H

#include <stdint.h>
#include <sys/stat.h>

#include "tr_blob.h"
#include "tr_digest.h"
#include "tr_result.h"

/* Gives the front end's log (tr_library_set_log) one notice, printf-style, at most 511 bytes;
 * nothing without a log. */
void tr_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- budget --- */
/* the process's read memory budget (max_read_memory): reads that may hold much memory take a
 * share of it first, so N threads never hold N big documents at once. */

/* Waits until cost more bytes fit within limit beside the reads in flight, then takes them. A
 * read alone proceeds whatever its cost (never a deadlock); cost 0 returns at once. Every take
 * must be followed by tr_budget_give(cost) on the same cost. */
void tr_budget_take(uint64_t cost, uint64_t limit);

/* Gives back what tr_budget_take(cost) took and wakes the reads waiting for it. */
void tr_budget_give(uint64_t cost);

/* Bytes taken by the reads in flight (for tests). */
uint64_t tr_budget_in_use(void);

/* --- blob spares --- */
/* the mappings of freed large blobs kept for the next one (core/blob.c; tr_library.h). */

/* Keeps at most bytes of spare mappings from now on, unmapping those past it. Thread-safe. */
void tr_blob_spares_limit(uint64_t bytes);

/* Unmaps every spare mapping. Thread-safe. */
void tr_blob_spares_free(void);

/* --- suggest --- */
/* "Did you mean ...?" for a path that does not exist. */

/* Lists the folder of path (relative to dirfd) and, when up to three names are close to the
 * missing one, rewrites res's not_found error as "File not found: P. Did you mean A, B or C?"
 * with each name shown in path's folder. Leaves res unchanged when none is close. */
void tr_suggest_similar(struct tr_result *res, int dirfd, const char *path);

/* --- digest --- */
/* digests of blobs (include/tr_digest.h) kept in util/sha_memo.c's memo by file version. */

/* tr_digest_start (include/tr_digest.h) that also remembers the digest for st's version
 * (tr_sha_memo_put) when it is done; st is copied, NULL remembers nothing. */
struct tr_digest *tr_digest_start_for(struct tr_blob *blob, const struct stat *st);

/* tr_digest_start_for a blob still being written, of which the first ready bytes are: the thread
 * hashes each piece as tr_digest_advance publishes it, while it is still in the cache, instead
 * of reading the whole blob back from memory once it is written. Returns as tr_digest_start. */
struct tr_digest *tr_digest_start_filling(struct tr_blob *blob, uint64_t ready,
					  const struct stat *st);

/* Publishes that the first ready bytes of the blob (up to its len) are written; the writer
 * must not change them afterwards. NULL is a no-op. */
void tr_digest_advance(struct tr_digest *digest, uint64_t ready);

/* The writer gave up before the blob was whole: the thread stops without a digest (nothing is
 * remembered) and the caller's reference is dropped. Its hex must never be asked for. NULL is
 * a no-op. */
void tr_digest_abandon(struct tr_digest *digest);

/* --- load --- */
/* whole files into blobs, hashed as they are read. */

/* Reads the whole file (size bytes as of fstat; a file that grew is read to size, one that
 * shrank is an EIO error) into a new blob and, when meta is non-NULL, records the SHA-256 of
 * those bytes in it (has_sha256; for files of 4 MiB and more as sha256_later, computed by
 * tr_digest_start in a thread while the caller goes on), taken from the memo when this
 * version's is remembered and remembered otherwise. Returns 0, or -1 with errno. */
int tr_load_file(int fd, uint64_t size, struct tr_blob **out, struct tr_metadata *meta);

#endif
