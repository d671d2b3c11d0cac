/* SPDX-License-Identifier: MIT */
/* watch_queue.h - the watch thread's pending invalidations: one job per (directory, name,
 * inode), the events for one merged into it, so however many events arrive before the thread
 * runs the queue, it holds at most one job per entry and inode they name. */
#ifndef TFS_WATCH_QUEUE_H
#define TFS_WATCH_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tfs_inode;

/* One invalidation for the thread (watch.c runs it). */
struct tfs_job {
	struct tfs_inode *dir;   /* a reference */
	char *name;              /* the entry of dir to invalidate (owned), or NULL */
	struct tfs_inode *child; /* an inode to invalidate (a reference), or NULL */
	bool dir_attrs;          /* dir's own attributes changed too */
	bool moved;              /* child's moved mark waits for this job */
	bool name_gone;          /* name left dir (deleted or moved away) */
};

struct tfs_job_queue {
	struct tfs_job *jobs; /* in the order their first event came */
	size_t n, cap;
	uint32_t *slots; /* open addressing over jobs: index + 1, 0 empty; n_slots >= 2 * cap */
	size_t n_slots;
};

/* Queues job, or merges it into the queued job for the same (dir, name, child): its flags are
 * or-ed in, which invalidates what running both would, as the thread runs a job only after
 * every event queued with it was taken in. Returns true when job was queued (its references
 * and name are the queue's now); false when it was merged, or could not be queued (out of
 * memory: the kernel keeps the entry until its timeout), and the caller drops them. */
bool tfs_job_queue_add(struct tfs_job_queue *q, const struct tfs_job *job);

/* Takes every queued job, in queue order (*n of them; the caller frees the array, NULL when
 * none); the queue is empty after. */
struct tfs_job *tfs_job_queue_take(struct tfs_job_queue *q, size_t *n);

#endif
