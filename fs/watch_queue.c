/* SPDX-License-Identifier: MIT */
/* watch_queue.c - the watch thread's pending invalidations, merged by (directory, name, inode). */
#include <stdlib.h>
#include <string.h>

#include "watch_queue.h"

static uint64_t job_hash(const struct tfs_job *job)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	h = (h ^ (uintptr_t)job->dir) * 0x100000001b3ULL;
	h = (h ^ (uintptr_t)job->child) * 0x100000001b3ULL;
	for (const char *p = job->name; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static bool same_target(const struct tfs_job *a, const struct tfs_job *b)
{
	if (a->dir != b->dir || a->child != b->child)
		return false;
	if (!a->name || !b->name)
		return !a->name && !b->name;
	return strcmp(a->name, b->name) == 0;
}

/* The slot that holds job's twin, or the empty slot where it would go. */
static uint32_t *find_slot(const struct tfs_job_queue *q, const struct tfs_job *job)
{
	size_t mask = q->n_slots - 1;

	for (size_t i = job_hash(job) & mask;; i = (i + 1) & mask) {
		uint32_t *slot = &q->slots[i];

		if (!*slot || same_target(&q->jobs[*slot - 1], job))
			return slot;
	}
}

/* Room for one more job, its slot table at least twice the jobs' capacity. */
static bool reserve(struct tfs_job_queue *q)
{
	size_t cap, n_slots;
	struct tfs_job *jobs;
	uint32_t *slots;

	if (q->n < q->cap)
		return true;
	cap = q->cap ? q->cap * 2 : 64;
	n_slots = cap * 2;
	if (n_slots > UINT32_MAX)
		return false;
	jobs = realloc(q->jobs, cap * sizeof(*jobs));
	if (!jobs)
		return false;
	q->jobs = jobs;
	slots = calloc(n_slots, sizeof(*slots));
	if (!slots)
		return false; /* the jobs array grew but cap did not: tried again next time */
	free(q->slots);
	q->slots = slots;
	q->n_slots = n_slots;
	q->cap = cap;
	for (size_t i = 0; i < q->n; i++)
		*find_slot(q, &q->jobs[i]) = (uint32_t)(i + 1);
	return true;
}

bool tfs_job_queue_add(struct tfs_job_queue *q, const struct tfs_job *job)
{
	uint32_t *slot;

	if (q->n_slots) {
		slot = find_slot(q, job);
		if (*slot) {
			struct tfs_job *twin = &q->jobs[*slot - 1];

			twin->dir_attrs |= job->dir_attrs;
			twin->moved |= job->moved;
			twin->name_gone |= job->name_gone;
			return false;
		}
	}
	if (!reserve(q))
		return false;
	q->jobs[q->n] = *job;
	*find_slot(q, job) = (uint32_t)(++q->n);
	return true;
}

struct tfs_job *tfs_job_queue_take(struct tfs_job_queue *q, size_t *n)
{
	struct tfs_job *jobs = q->jobs;

	*n = q->n;
	free(q->slots);
	*q = (struct tfs_job_queue){0};
	return jobs;
}
