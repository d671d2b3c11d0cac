/* SPDX-License-Identifier: MIT */
/* readahead.h - sibling read-ahead: while a reader looks up a directory's listed siblings one
 * after another in listing order (ls -l), the documents of the next ones are rendered on a thread
 * of the daemon's own, into the document cache. */
#ifndef TFS_READAHEAD_H
#define TFS_READAHEAD_H

#include <stdbool.h>

struct tfs_fs;
struct tfs_inode;
struct tfs_readahead;

/* The most siblings past the latest lookup that are read ahead. */
#define TFS_READAHEAD_WINDOW 32
/* The most entries of a directory read to find where a run of lookups starts. */
#define TFS_READAHEAD_SCAN 65536
/* A run with no lookup for this long ends, once its window is rendered: its directory and its
 * place in it are let go. */
#define TFS_READAHEAD_IDLE_MS 1000

/* Starts the read-ahead of fs (borrowed; it must outlive the read-ahead) on a thread at the
 * lowest priority (nice 19). Call after fuse_daemonize: threads do not survive its fork. Returns
 * it, or NULL when the thread cannot start (the daemon then runs without read-ahead). */
struct tfs_readahead *tfs_readahead_start(struct tfs_fs *fs);

/* Stops and joins the thread (after the render it is doing) and lets go of what it holds. Call
 * when no request handler runs any more. NULL is a no-op. */
void tfs_readahead_stop(struct tfs_readahead *ra);

/* Tells the read-ahead that a lookup is about to make the listed sibling (base.tool.json) of the
 * source base in directory dir (borrowed, live for the call): a run in dir moves on past base.
 * When the thread is rendering this very sibling now, waits until it is done, or until the
 * thread is seen to get less than half a CPU (it runs at the lowest priority), so that the
 * lookup finds the document in the cache instead of rendering it a second time. Never waits
 * otherwise. Returns whether the lookup belongs to the run. NULL is a no-op (false). */
bool tfs_readahead_lookup(struct tfs_readahead *ra, struct tfs_inode *dir, const char *base);

/* Tells the read-ahead that a lookup that does not belong to its run (tfs_readahead_lookup
 * returned false) made the listed sibling of base in dir by rendering it (its document was not
 * cached). Two such lookups in one directory, outside a run, begin a run
 * there, which the thread confirms in the directory's own order; a run renders the siblings
 * that follow the latest lookup, at most TFS_READAHEAD_WINDOW past it and never the very next
 * one (the lookup that wants it renders it, so two renders go at once). Lookups of cached
 * siblings begin nothing, and a run whose thread finds a whole window cached ends: a walk over
 * cached siblings costs the thread nothing. NULL is a no-op. */
void tfs_readahead_rendered(struct tfs_readahead *ra, struct tfs_inode *dir, const char *base);

#endif
