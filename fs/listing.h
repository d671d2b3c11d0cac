/* SPDX-License-Identifier: MIT */
/* listing.h - directory listings of the daemon: a snapshot of a directory's real entries then
 * its siblings, and the store that keeps snapshots between the requests of one listing when the
 * kernel opens directories without asking the daemon. */
#ifndef TFS_LISTING_H
#define TFS_LISTING_H

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tfs_fs;
struct tfs_inode;

struct tfs_listing_entry {
	char *name; /* owned */
	ino_t ino;
	mode_t type; /* S_IFMT bits; 0 when unknown */
	bool sibling;
};

/* The real entries in SOURCE's order, then the siblings of its regular files and symlinks. */
struct tfs_listing {
	struct tfs_listing_entry *entries; /* owned */
	size_t n, cap;
	uint64_t version; /* tfs_watch_listing_version of the directory before it was read */
};

/* Fills l (its entries replaced) from dp, the open directory of dir (rewound first). Returns 0,
 * or -errno with l left empty. */
int tfs_listing_build(struct tfs_fs *fs, struct tfs_inode *dir, DIR *dp, struct tfs_listing *l);

/* Frees l's contents; l is empty after. */
void tfs_listing_destroy(struct tfs_listing *l);

/* A listing kept between requests (tfs_listing_store): found again by (dir, gen), the
 * generation that every offset it gives carries. */
struct tfs_kept_listing {
	struct tfs_listing listing;
	uint64_t dir;     /* the directory's node id */
	uint32_t gen;     /* 31 bits */
	unsigned users;   /* requests serving it now */
	bool done;        /* served to its end: freed when its last user puts it */
	uint64_t used_ms; /* CLOCK_MONOTONIC of its last put */
	struct tfs_kept_listing *next;
};

/* Kept listings: dropped once served to their end; one that a reader left midway is dropped
 * when a later tfs_listing_keep finds it unused for TFS_LISTING_IDLE_MS, or is the oldest past
 * TFS_LISTING_KEPT unused ones. */
#define TFS_LISTING_IDLE_MS 1000
#define TFS_LISTING_KEPT 64
struct tfs_listing_store {
	pthread_mutex_t lock;
	struct tfs_kept_listing *head; /* newest first */
	size_t n;
	uint32_t next_gen;
};

void tfs_listing_store_init(struct tfs_listing_store *store);
/* Frees every kept listing. */
void tfs_listing_store_destroy(struct tfs_listing_store *store);

/* The listing of directory dir with generation gen, taken (users + 1) until tfs_listing_put;
 * NULL when it is not kept (dropped, or never made). */
struct tfs_kept_listing *tfs_listing_find(struct tfs_listing_store *store, uint64_t dir,
					  uint32_t gen);

/* Keeps listing (its contents taken; *listing is left empty) for directory dir under a new
 * generation, taken by the caller; drops the idle listings past their time or count. Returns
 * it, or NULL (out of memory; the contents freed). */
struct tfs_kept_listing *tfs_listing_keep(struct tfs_listing_store *store, uint64_t dir,
					  struct tfs_listing *listing);

/* Ends the caller's use of kept; done: the listing was served to its end (the kernel asks for
 * no more of it, unless another reader of the same pass is still on it). */
void tfs_listing_put(struct tfs_listing_store *store, struct tfs_kept_listing *kept, bool done);

#endif
