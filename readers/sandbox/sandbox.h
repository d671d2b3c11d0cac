/* SPDX-License-Identifier: MIT */
/* sandbox.h - the isolation layer (docs/SPEC.md §8): a reader marked TR_CAP_UNTRUSTED runs in a
 * fresh sandboxed worker process per read, which sees only the file's descriptor. */
#ifndef TR_SANDBOX_H
#define TR_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "tr_result.h"

/* The worker program, found where the modules are (tr_module_find). */
#define SANDBOX_WORKER_FILE "toolfs-reader-worker"

/* True in toolfs-reader-worker: its readers run in place (set by its main before any read). */
extern bool tr_sandbox_inside;

/* Runs reader->read(file, sel, opts, res) in a worker forked for this read alone, and rebuilds
 * its result into res (which holds path and stat; replaced whole). A worker that crashes, runs
 * past file->deadline, runs out of max_worker_memory or answers something invalid leaves res a
 * failure (corrupt naming the signal, timeout, too_large, corrupt) and no process behind; a
 * reader stuck in a call it left to the worker's watchdog (struct tr_watch) answers what it
 * has instead, within the grace.
 * Returns 0, or -1 when out of memory. Thread-safe. */
int tr_sandbox_read(const struct tr_reader *reader, const struct tr_file *file,
		    const struct tr_selector *sel, const struct tr_options *opts,
		    struct tr_result *res);

/* Ends the fork server (tr_library_shutdown: no read may be in flight). */
void tr_sandbox_shutdown(void);

/* --- sandbox_cache.c: the replies kept (docs/SPEC.md §8 "Reply cache"); thread-safe --- */

/* Bounds the replies kept to bytes in all (entries, keys and wire bytes), evicting the least
 * recently used beyond it; 0 keeps none (the mount: its result cache holds the documents). */
void tr_sandbox_cache_limit(uint64_t bytes);

/* Looks up the reply of the reader of index reader to file's version (file->st), sel and opts,
 * with file's path and name. Returns 1 with res (initialised, holding path) rebuilt from it, 0
 * when none is kept, or -1 when out of memory (res then safe to destroy). */
int tr_sandbox_cache_get(uint32_t reader, const struct tr_file *file, const struct tr_selector *sel,
			 const struct tr_options *opts, struct tr_result *res);

/* Keeps the wire bytes data[0..len) (owned: taken in every case) a worker answered, whose
 * decoding is res, under the key tr_sandbox_cache_get looks up; unless res failed, ran past
 * file->deadline or notes a timeout (the next read may finish), the version is racy
 * (tr_version_racy) or has no link, or it is larger than the whole bound. */
void tr_sandbox_cache_put(uint32_t reader, const struct tr_file *file,
			  const struct tr_selector *sel, const struct tr_options *opts,
			  const struct tr_result *res, unsigned char *data, size_t len);

/* Drops every reply kept (tr_sandbox_shutdown). */
void tr_sandbox_cache_free(void);

/* --- sandbox_wire.c: a tr_result as bytes, for the reply --- */

/* Appends res (its path and abs_path excepted; a sha256 still being computed is waited for) to
 * out. Returns 0, or -1 when out of memory. */
int tr_sandbox_encode(struct tr_result *res, struct tr_buf *out);

/* Rebuilds into res (initialised, holding path; its other fields are replaced) the result
 * data[0..len) encodes. Every count and length is checked against the bytes left before
 * anything is allocated. Returns 0, 1 when the bytes are not a valid encoding (res is then
 * left holding a partial result, safe to destroy), or -1 when out of memory. */
int tr_sandbox_decode(const unsigned char *data, size_t len, struct tr_result *res);

#endif
