/* SPDX-License-Identifier: MIT */
/* tr_version.h - a file's version (device, inode, size, mtime, ctime to the nanosecond): the one
 * rule by which the caches of results (the mount's, fs/cache.c; the reply cache of sandboxed
 * reads, readers/sandbox/sandbox_cache.c) and the SHA-256 memo tell a file's versions apart. */
#ifndef TR_VERSION_H
#define TR_VERSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "tr_selector.h"

/* A file rewritten in place keeps device, inode and perhaps size, never both stamps: a write
 * sets mtime and ctime (chmod, rename and link set ctime). */
struct tr_version {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

/* The seed of the FNV-1a hashes below. */
#define TR_HASH_BASIS 0xcbf29ce484222325ULL

/* Fills v from st. */
void tr_version_of(struct tr_version *v, const struct stat *st);

bool tr_version_equal(const struct tr_version *a, const struct tr_version *b);

/* Folds v into the FNV-1a hash h (TR_HASH_BASIS to start), field by field. */
uint64_t tr_version_hash(uint64_t h, const struct tr_version *v);

/* Folds sel into h as tr_version_hash does; selectors tr_selector_equal calls equal hash alike. */
uint64_t tr_selector_hash(uint64_t h, const struct tr_selector *sel);

/* Folds the len bytes at data into h (FNV-1a). */
uint64_t tr_hash_bytes(uint64_t h, const void *data, size_t len);

/* True when st's stamps are too recent (within 2 s, or in the future) to tell its version from
 * the next: Linux stamps from a coarse clock, so a write right after a read can leave them
 * unchanged (git's "racily clean" files). Such a version is never remembered. */
bool tr_version_racy(const struct stat *st);

#endif
