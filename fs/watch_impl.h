/* SPDX-License-Identifier: MIT */
/* watch_impl.h - the watch's state, shared by its intake of events (watch.c) and its
 * invalidations (invalidate.c); private to those two. */
#ifndef TFS_WATCH_IMPL_H
#define TFS_WATCH_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/inotify.h>

#include "htab.h"
#include "watch.h"
#include "watch_queue.h"

static const uint32_t NAME_CHANGES = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;

struct tfs_watch {
	struct tfs_inodes *tab;
	struct fuse_session *se;
	int ifd, wake_fd;
	/* Taking in events and the job queue: a request that takes in events waits for one being
	 * taken in by another thread, so it never answers before its marks are set. */
	pthread_mutex_t lock;
	/* The watch's map of directories (struct watched, by inode and by wd; the count of wds
	 * is the watches made) and warned. A leaf: taken alone, inside lock, or inside the
	 * table's lock, where a directory found by its wd gets its reference (map_ref), so that
	 * the table's on_free (watch_forget), which takes it too, cannot free the directory
	 * meanwhile. It replaces a recursive use of lock: taking in events drops references, which
	 * may free a directory and so call watch_forget, which takes this lock alone. */
	pthread_mutex_t map_lock;
	struct tfs_htab dirs, wds;
	long limit;
	bool files; /* files' entries and all attributes are cached too */
	bool warned;
	struct tfs_job_queue queue; /* under lock */
	pthread_t thread;
	bool started, stop; /* stop: atomic */
};

/* Queues one job (its references and name are the queue's from now on), merged into the queued
 * job for the same entry and inode if there is one (watch_queue.h); under w's lock, and under
 * the table's too when tab_locked. */
void tfs_watch_queue(struct tfs_watch *w, struct tfs_job job, bool tab_locked);

/* tfs_inodes_mark_all's callback after lost events: every entry is invalidated. */
void tfs_watch_queue_entry(void *arg, struct tfs_inode *parent, const char *name,
			   struct tfs_inode *inode);

/* Takes the queue (*n jobs, the caller frees the array); under w's lock. */
struct tfs_job *tfs_watch_take_jobs(struct tfs_watch *w, size_t *n);

/* Sends the kernel one job's invalidations and drops its references, outside every lock. */
void tfs_watch_run_job(struct tfs_watch *w, struct tfs_job *job);

/* Drops a job unsent: its name and references (tab_locked: see tfs_watch_queue). */
void tfs_watch_drop_job(struct tfs_watch *w, struct tfs_job *job, bool tab_locked);

#endif
