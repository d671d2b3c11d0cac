/* SPDX-License-Identifier: MIT */
/* watch.h - change notification: inotify on SOURCE's directories keeps the plain entries that
 * the kernel caches correct, and marks the entries a change moved before any request sees them. */
#ifndef TFS_WATCH_H
#define TFS_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "inode.h"

struct fuse_session;
struct tfs_watch;

/* Whether fd is on a file system this kernel hosts (ext4, XFS, Btrfs, tmpfs, overlayfs, ...):
 * inotify sees every change made to it. Not so for network, FUSE and pseudo file systems, whose
 * directories are served uncached. */
bool tfs_local_fs(int fd);

/* Whether fd's file system keeps its attributes itself, so that statx's AT_STATX_DONT_SYNC
 * changes nothing there: a local one but overlayfs, whose layers may be a network's. */
bool tfs_attrs_own(int fd);

/* Starts watching for tab (borrowed; it must outlive the watch): at most limit directories
 * (-1: as many as fs.inotify.max_user_watches allows). With files, the kernel caches files'
 * entries and every attribute too, and all of them are invalidated; else only directories'
 * entries are (the rest is never cached, and invalidating it would only make the kernel forget
 * less: a deleted file's inode it never asks about again stays in its cache). Installs itself as
 * tab's on_free. Returns the watch, or NULL when inotify is unavailable (the caller serves every
 * entry uncached). */
struct tfs_watch *tfs_watch_new(struct tfs_inodes *tab, long limit, bool files);

/* Starts the thread that sends the kernel the invalidations the change events call for, on
 * session se (borrowed). Call after fuse_daemonize. Returns 0 or -errno. */
int tfs_watch_start(struct tfs_watch *w, struct fuse_session *se);

/* Stops the thread, drops the invalidations still queued and the watches. NULL is a no-op. */
void tfs_watch_free(struct tfs_watch *w);

/* Watches directory dir, a new inode opened as fd (O_PATH), once (the watch keeps what it knows
 * of each directory in a map of its own): from now on, or never when it cannot be watched (the
 * watch limit, fs.inotify.max_user_watches, or a file system whose changes inotify does not
 * see); the first such directory is named in one line on stderr. */
void tfs_watch_dir(struct tfs_watch *w, struct tfs_inode *dir, int fd);

/* Takes in every change event pending now: moved entries are marked at once (tfs_inodes_mark_
 * moved) and the invalidations queued for the thread. A change made by a write, rename or unlink
 * that has returned is queued by the kernel before it returned, so a request that calls this
 * first sees it. Returns the number of events taken in so far (for tfs_inodes_add_real). A NULL
 * watch takes nothing and returns UINT64_MAX. */
uint64_t tfs_watch_sync(struct tfs_watch *w);

/* A count that grows whenever an event taken in (tfs_watch_sync) may have changed dir's
 * listing: names created, deleted or moved in it, dir moved or no longer watched, events lost.
 * 0 for a NULL watch. */
uint64_t tfs_watch_listing_version(struct tfs_watch *w, const struct tfs_inode *dir);

/* Whether dir's entries are kept correct by a watch (else they must be served uncached). */
bool tfs_watch_covers(struct tfs_watch *w, const struct tfs_inode *dir);

#endif
