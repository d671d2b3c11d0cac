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
#include "tr_version.h"

/* Everything a sibling's bytes depend on (the mount's options aside, which are fixed). Two equal
 * keys give identical documents. */
struct tfs_doc_key {
	struct tr_version version; /* of the source, or a symlink's target */
	enum tr_error outcome;     /* TR_OK: the file was read; else the failure rendered instead */
	uint64_t unstable;         /* 0, or a serial number that makes the key unique: the file kept
				* changing while it was read, so no later lookup may reuse the
				* document, but the open that follows this lookup finds it */
	struct tr_selector sel;
	enum tr_format fmt;
	char *path; /* the path shown in the result, relative to the mount root */
};

/* Fills the state part of key (its version) from st. */
void tfs_doc_key_set_stat(struct tfs_doc_key *key, const struct stat *st);

uint64_t tfs_doc_key_hash(const struct tfs_doc_key *key);
bool tfs_doc_key_equal(const struct tfs_doc_key *a, const struct tfs_doc_key *b);

/* Copies src into dst with its own copy of path. Returns 0, or -ENOMEM. */
int tfs_doc_key_copy(struct tfs_doc_key *dst, const struct tfs_doc_key *src);

/* Frees the path dst owns. */
void tfs_doc_key_destroy(struct tfs_doc_key *key);

struct tfs_cache;

/* One version's document as the cache keeps it. The cache is the one holder of a version's
 * document; whoever else must keep one pins its entry (open handles take document references
 * of their own). An entry is resident (found by key, in the LRU list, counted against the
 * capacity) or not: evicted while pinned, or pinned only from the start (larger than the whole
 * capacity). An entry that is not resident is found by no key and freed at its last unpin. */
struct tfs_cache_entry;

/* Returns a cache holding documents up to capacity bytes in all (by tr_doc_size), or NULL when
 * out of memory. Thread-safe; the lock is a leaf (toolfs.h). Entries that are not resident do
 * not count: their bound is whoever pins them (holds.h). */
struct tfs_cache *tfs_cache_new(uint64_t capacity);

/* Frees the cache and drops its document references. Call it once every pin is let go. NULL is a
 * no-op. */
void tfs_cache_free(struct tfs_cache *cache);

/* Returns a new reference to the document cached under key (making it the most recent), or
 * NULL. */
struct tr_doc *tfs_cache_get(struct tfs_cache *cache, const struct tfs_doc_key *key);

/* As tfs_cache_get, and pins the entry: returns it and sets *doc to a new reference to its
 * document, or returns NULL and sets *doc to NULL. */
struct tfs_cache_entry *tfs_cache_get_pinned(struct tfs_cache *cache, const struct tfs_doc_key *key,
					     struct tr_doc **doc);

/* Caches doc under a copy of key, taking a reference of its own (the caller keeps its own),
 * replacing an entry with an equal key, making the other versions of the same name (path,
 * selector, format; another source state) the first to be evicted (those of 4 MiB and more are
 * evicted at once), and evicting the least recently used entries beyond the capacity (a pinned
 * one stays out of the cache until its last unpin). Returns the entry, pinned: resident and
 * *cached true, or, when doc is larger than the whole capacity, pinned only and *cached false.
 * Returns NULL (and *cached false) when out of memory. */
struct tfs_cache_entry *tfs_cache_put_pinned(struct tfs_cache *cache, const struct tfs_doc_key *key,
					     struct tr_doc *doc, bool *cached);

/* tfs_cache_put_pinned without the pin: returns *cached. */
bool tfs_cache_put(struct tfs_cache *cache, const struct tfs_doc_key *key, struct tr_doc *doc);

/* Pins entry once more (the caller holds a pin on it already). */
void tfs_cache_pin(struct tfs_cache_entry *entry);

/* Lets go of one pin of entry; an entry no longer resident goes at its last. NULL is a no-op. */
void tfs_cache_unpin(struct tfs_cache_entry *entry);

/* entry's document (borrowed: valid while the caller holds a pin). */
struct tr_doc *tfs_cache_entry_doc(const struct tfs_cache_entry *entry);

#endif
