/* SPDX-License-Identifier: MIT */
/* toolfs.h - the daemon's shared state: options, the mounted source, inode table and cache.
 *
 * Each piece of state has one owner, which creates, locks and frees it: the inode table
 * (inode.c, with its descriptor pool fdpool.c, holds holds.c and moved marks marks.c), the
 * watch (watch.c: its map of watched directories and the intake of events; invalidate.c: the
 * invalidations they call for), the cache (cache.c: the one holder of a version's document,
 * which the holds and a lookup in progress pin; open handles take references), the kept
 * listings (listing.c), the open sibling handles (handles.c), the readahead (readahead.c).
 *
 * Lock order. A thread holding one of these locks takes only those below it:
 *   tfs_readahead's worker lock (readahead.c)
 *     tfs_watch.lock      (watch.c: taking in events, the job queue)
 *       tfs_inodes.lock   (inode.c: indexes, references, entries, the descriptor pool, the
 *                          holds, the moved marks)
 *         tfs_watch.map_lock (watch.c: what it knows of each directory, by inode and by
 *                          wd; the table's hooks take it under the table's lock)
 *         tfs_cache.lock, tfs_listing_store.lock, tfs_handles.lock
 * The last four are leaves. No lock is held across a reply to the kernel or a notification to
 * it (invalidate.c sends the watch's invalidations with none held), and none is taken twice: the
 * table's on_free (watch_forget) runs after the table's lock is let go and takes the map lock
 * alone.
 */
#ifndef TFS_TOOLFS_H
#define TFS_TOOLFS_H

#include <stdbool.h>

#include "cache.h"
#include "handles.h"
#include "heap.h"
#include "inode.h"
#include "listing.h"
#include "readahead.h"
#include "tr_confine.h"
#include "tr_options.h"
#include "watch.h"

struct tfs_fs {
	struct tr_options opts;
	struct tr_root root; /* SOURCE, which every path is confined to (tr_confine.h); owned */
	dev_t own_dev;       /* the daemon's own mount, never entered (beneath.h); 0 before it */
	/* The permission bits of SOURCE's root shown to the kernel: with allow_other, those its
	 * ancestors let through (tfs_ancestors_mask), else 0777 */
	mode_t root_mask;
	/* SOURCE's device, and whether its file system keeps its attributes itself
	 * (tfs_attrs_own): then its entries' attributes are read in one statx (tfs_stat_entry) */
	dev_t source_dev;
	bool source_local;
	struct tfs_inodes inodes;
	struct tfs_cache *cache;    /* owned */
	struct tfs_handles handles; /* open sibling handles */
	struct tfs_watch *watch; /* owned; NULL: every plain entry served uncached (cache=strict) */
	bool cache_attrs; /* cache=relaxed: plain attributes cached too, fresh within the delay */
	/* The kernel opens directories without the daemon and keeps every listing (cache=relaxed
	 * on a kernel that allows it, set by init): readdir serves listings kept in listings. */
	bool no_opendir;
	bool posix_acl; /* the kernel applies SOURCE's POSIX ACLs (FUSE_CAP_POSIX_ACL; ops.c) */
	struct tfs_listing_store listings;
	struct fuse_session *se; /* borrowed; set before the session runs */
	struct tfs_trimmer
		*trimmer; /* owned; NULL before the session runs or when it could not start */
	struct tfs_readahead *readahead; /* owned; NULL before the session runs, with
					  * hide_siblings, or when it could not start */
};

/* The caching modes of -o cache= (README): strict caches nothing and watches nothing. */
enum tfs_cache_mode { TFS_CACHE_STRICT, TFS_CACHE_WATCH, TFS_CACHE_RELAXED };

/* What tfs_fs_init builds the state from, besides fs->opts and fs->root. */
struct tfs_fs_setup {
	int root_fd; /* SOURCE's descriptor for the root inode (tfs_inodes_init); always taken */
	const struct stat *root_st; /* its fstat */
	uint64_t held_budget;       /* bytes siblings may pin from lookup to open (holds.h) */
	uint64_t nofile;            /* the descriptor limit the pool is sized from */
	bool no_handles;            /* -o inode_handles=no: inodes are reopened by name only */
	enum tfs_cache_mode mode;
	long watch_limit; /* -o watch_limit=N; -1: none */
};

/* Builds the daemon's state in fs, whose opts and root (open, tr_confine.h) the caller filled
 * and keeps: the kept listings, the open handles, the cache, the inode table, the root's kernel
 * path (beneath.h) and, unless the mode is strict, the watch with the root watched (NULL when
 * inotify is unavailable). Nothing of FUSE: se, trimmer and readahead stay NULL, and the
 * watch's thread is not started (tfs_watch_start). Returns 0, or -errno (-ENOMEM when out of
 * memory; else reading the root's kernel path failed), with nothing left to destroy. */
int tfs_fs_init(struct tfs_fs *fs, const struct tfs_fs_setup *setup);

/* Frees what tfs_fs_init built, the watch first (its thread stopped), the opts and root
 * aside. The readahead and trimmer must have stopped. */
void tfs_fs_destroy(struct tfs_fs *fs);

#endif
