/* SPDX-License-Identifier: MIT */
/* cache.h - the LRU of rendered sibling documents, keyed on source state, selector and format. */
#ifndef TFS_CACHE_H
#define TFS_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "tr_doc.h"
#include "tr_result.h"
#include "tr_selector.h"

/* Everything a sibling's bytes depend on (the mount's options aside, which are fixed). Two equal
 * keys give identical documents. */
struct tfs_doc_key {
	dev_t dev; /* of the file whose state this is: the source, or a symlink's target */
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	enum tr_error outcome; /* TR_OK: the file was read; else the failure rendered instead */
	uint64_t unstable;     /* 0, or a serial number that makes the key unique: the file kept
				* changing while it was read, so no later lookup may reuse the
				* document, but the open that follows this lookup finds it */
	struct tr_selector sel;
	enum tr_format fmt;
	char *path; /* the path shown in the result, relative to the mount root */
};

/* Fills the state part of key (dev ... ctime) from st. */
void tfs_doc_key_set_stat(struct tfs_doc_key *key, const struct stat *st);

uint64_t tfs_doc_key_hash(const struct tfs_doc_key *key);
bool tfs_doc_key_equal(const struct tfs_doc_key *a, const struct tfs_doc_key *b);

/* Copies src into dst with its own copy of path. Returns 0, or -ENOMEM. */
int tfs_doc_key_copy(struct tfs_doc_key *dst, const struct tfs_doc_key *src);

/* Frees the path dst owns. */
void tfs_doc_key_destroy(struct tfs_doc_key *key);

struct tfs_cache;

/* Returns a cache holding documents up to capacity bytes in all (by tr_doc_size), or NULL when
 * out of memory. Thread-safe. */
struct tfs_cache *tfs_cache_new(uint64_t capacity);

/* Frees the cache and drops its document references. NULL is a no-op. */
void tfs_cache_free(struct tfs_cache *cache);

/* Returns a new reference to the document cached under key (making it the most recent), or
 * NULL. */
struct tr_doc *tfs_cache_get(struct tfs_cache *cache, const struct tfs_doc_key *key);

/* Caches doc under a copy of key, taking a reference of its own (the caller keeps its own),
 * replacing an entry with an equal key, making the other versions of the same name (path,
 * selector, format; another source state) the first to be evicted (those of 4 MiB and more are
 * evicted at once), and evicting the least
 * recently used entries beyond the capacity. Returns true when doc was kept: not when it is larger than the whole capacity, or
 * out of memory. */
bool tfs_cache_put(struct tfs_cache *cache, const struct tfs_doc_key *key, struct tr_doc *doc);

#endif
