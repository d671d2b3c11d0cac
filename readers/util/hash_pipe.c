/* hash_pipe.c - a ring of buffers between a reading thread and a SHA-256 thread. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "tr_worker.h"
#include "util.h"

/* Rings are kept for reuse instead of being freed: on a virtual machine, faulting in a fresh
 * 4 MiB ring page by page costs more than hashing a megabyte. At most this many are kept. */
#define SPARE_RINGS 2

struct tr_hash_pipe {
	struct tr_worker hasher; /* its wake is the hasher's cue; its stop: no more submits */
	pthread_cond_t to_reader;
	struct tr_sha256 *ctx;
	unsigned char *ring; /* n_slots * slot_size bytes */
	size_t n_slots, slot_size;
	size_t *lens;
	uint64_t acquired;     /* buffers handed to the caller */
	uint64_t submitted;    /* buffers queued for hashing */
	uint64_t hashed;       /* buffers hashed */
	uint64_t reader_until; /* the reader sleeps until hashed reaches this; 0: it is awake */
	bool hasher_asleep;
};

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct spare_ring {
	unsigned char *mem;
	size_t size;
} spares[SPARE_RINGS];

static unsigned char *ring_get(size_t size)
{
	unsigned char *mem = NULL;

	pthread_mutex_lock(&spare_lock);
	for (size_t i = 0; i < SPARE_RINGS && !mem; i++) {
		if (spares[i].mem && spares[i].size == size) {
			mem = spares[i].mem;
			spares[i].mem = NULL;
		}
	}
	pthread_mutex_unlock(&spare_lock);
	return mem ? mem : malloc(size);
}

static void ring_put(unsigned char *mem, size_t size)
{
	pthread_mutex_lock(&spare_lock);
	for (size_t i = 0; i < SPARE_RINGS && mem; i++) {
		if (!spares[i].mem) {
			spares[i].mem = mem;
			spares[i].size = size;
			mem = NULL;
		}
	}
	pthread_mutex_unlock(&spare_lock);
	free(mem);
}

static void *hash_main(void *arg)
{
	struct tr_hash_pipe *pipe = arg;

	pthread_mutex_lock(&pipe->hasher.lock);
	for (;;) {
		while (pipe->hashed == pipe->submitted && !pipe->hasher.stop) {
			pipe->hasher_asleep = true;
			pthread_cond_wait(&pipe->hasher.wake, &pipe->hasher.lock);
		}
		pipe->hasher_asleep = false;
		if (pipe->hashed == pipe->submitted)
			break;
		size_t slot = (size_t)(pipe->hashed % pipe->n_slots);
		size_t len = pipe->lens[slot];

		pthread_mutex_unlock(&pipe->hasher.lock);
		tr_sha256_update(pipe->ctx, pipe->ring + slot * pipe->slot_size, len);
		pthread_mutex_lock(&pipe->hasher.lock);
		pipe->hashed++;
		/* Wake the reader only once the part of the ring it waits for is free. */
		if (pipe->reader_until && pipe->hashed >= pipe->reader_until) {
			pipe->reader_until = 0;
			pthread_cond_signal(&pipe->to_reader);
		}
	}
	pthread_mutex_unlock(&pipe->hasher.lock);
	return NULL;
}

static void free_pipe(struct tr_hash_pipe *pipe)
{
	if (pipe->ring)
		ring_put(pipe->ring, pipe->n_slots * pipe->slot_size);
	free(pipe->lens);
	tr_sha256_free(pipe->ctx);
	free(pipe);
}

struct tr_hash_pipe *tr_hash_pipe_new(size_t n_slots, size_t slot_size)
{
	struct tr_hash_pipe *pipe = calloc(1, sizeof(*pipe));

	if (!pipe)
		return NULL;
	pipe->n_slots = n_slots;
	pipe->slot_size = slot_size;
	pipe->lens = calloc(n_slots, sizeof(*pipe->lens));
	pipe->ctx = tr_sha256_new();
	if (!pipe->lens || !pipe->ctx || n_slots == 0 || slot_size > SIZE_MAX / n_slots)
		goto fail;
	pipe->ring = ring_get(n_slots * slot_size);
	if (!pipe->ring)
		goto fail;
	if (pthread_cond_init(&pipe->to_reader, NULL))
		goto fail;
	if (tr_worker_start(&pipe->hasher, hash_main, pipe) < 0) {
		pthread_cond_destroy(&pipe->to_reader);
		goto fail;
	}
	return pipe;
fail:
	free_pipe(pipe);
	return NULL;
}

unsigned char *tr_hash_pipe_acquire(struct tr_hash_pipe *pipe)
{
	size_t slot = (size_t)(pipe->acquired % pipe->n_slots);

	pthread_mutex_lock(&pipe->hasher.lock);
	/* The slot last held buffer number acquired - n_slots. When it is not hashed yet, sleep
	 * until half the ring is free, so the two threads meet once per half ring. */
	if (pipe->acquired >= pipe->n_slots && pipe->hashed + pipe->n_slots <= pipe->acquired) {
		uint64_t until = pipe->acquired - pipe->n_slots + (pipe->n_slots + 1) / 2;

		while (pipe->hashed < until) {
			pipe->reader_until = until;
			pthread_cond_wait(&pipe->to_reader, &pipe->hasher.lock);
		}
		pipe->reader_until = 0;
	}
	pthread_mutex_unlock(&pipe->hasher.lock);
	pipe->acquired++;
	return pipe->ring + slot * pipe->slot_size;
}

void tr_hash_pipe_submit(struct tr_hash_pipe *pipe, size_t len)
{
	pthread_mutex_lock(&pipe->hasher.lock);
	pipe->lens[pipe->submitted % pipe->n_slots] = len;
	pipe->submitted++;
	if (pipe->hasher_asleep)
		pthread_cond_signal(&pipe->hasher.wake);
	pthread_mutex_unlock(&pipe->hasher.lock);
}

void tr_hash_pipe_finish(struct tr_hash_pipe *pipe, char *hex)
{
	if (!pipe)
		return;
	tr_worker_stop(&pipe->hasher);
	pthread_cond_destroy(&pipe->to_reader);
	if (hex) {
		tr_sha256_finish(pipe->ctx, hex);
		pipe->ctx = NULL;
	}
	free_pipe(pipe);
}
