/* SPDX-License-Identifier: MIT */
/* heap.c - the daemon's heap policy: malloc arenas capped at the CPU count, large blocks mapped
 * on their own, and a thread that returns the heap's free pages to the kernel once per interval
 * while documents are dropped. */
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "heap.h"
#include "tr_worker.h"

struct tfs_trimmer {
	struct tr_worker worker;
	unsigned interval_ms;
	uint64_t notes; /* atomic */
};

void tfs_heap_set_policy(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	mallopt(M_ARENA_MAX, cpus > 0 ? (int)cpus : 1);
	/* Setting it also stops glibc from raising it each time such a block is freed. */
	mallopt(M_MMAP_THRESHOLD, TFS_HEAP_MMAP_THRESHOLD);
}

static void *trim_loop(void *arg)
{
	struct tfs_trimmer *trimmer = arg;
	uint64_t seen = 0;

	pthread_setname_np(pthread_self(), "toolfs-trim"); /* its name in top -H, ps -L */
	pthread_mutex_lock(&trimmer->worker.lock);
	while (!trimmer->worker.stop) {
		if (tr_worker_wait_ms(&trimmer->worker, trimmer->interval_ms) == 0)
			continue; /* woken by stop (or spuriously): look again */
		uint64_t notes = __atomic_load_n(&trimmer->notes, __ATOMIC_RELAXED);

		if (notes == seen)
			continue; /* idle: nothing was freed, an idle daemon never wakes the heap */
		seen = notes;
		pthread_mutex_unlock(&trimmer->worker.lock);
		malloc_trim(0);
		pthread_mutex_lock(&trimmer->worker.lock);
	}
	pthread_mutex_unlock(&trimmer->worker.lock);
	return NULL;
}

struct tfs_trimmer *tfs_trimmer_start(unsigned interval_ms)
{
	struct tfs_trimmer *trimmer = calloc(1, sizeof(*trimmer));

	if (!trimmer)
		return NULL;
	trimmer->interval_ms = interval_ms;
	if (tr_worker_start(&trimmer->worker, trim_loop, trimmer) < 0) {
		free(trimmer);
		return NULL;
	}
	return trimmer;
}

void tfs_trimmer_note(struct tfs_trimmer *trimmer)
{
	if (trimmer)
		__atomic_add_fetch(&trimmer->notes, 1, __ATOMIC_RELAXED);
}

void tfs_trimmer_stop(struct tfs_trimmer *trimmer)
{
	if (!trimmer)
		return;
	tr_worker_stop(&trimmer->worker);
	free(trimmer);
}
