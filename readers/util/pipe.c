/* SPDX-License-Identifier: MIT */
/* pipe.c - a ring of buffers between the caller, who fills them in turn, and a thread that
 * consumes them in order (SHA-256 of a file as it is scanned, a PNG's rows as they inflate). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "tr_worker.h"
#include "util.h"

/* Rings are kept for reuse instead of being freed: on a virtual machine, faulting in a fresh
 * 4 MiB ring page by page costs more than hashing a megabyte. At most this many are kept. */
#define SPARE_RINGS 2

struct tr_pipe {
	struct tr_worker consumer; /* the consumer; its wake is its cue, its stop: no more submits */
	pthread_cond_t to_reader;
	tr_pipe_consume_fn consume;
	void *ctx;
	unsigned char *ring; /* n_slots * slot_size bytes */
	size_t n_slots, slot_size;
	size_t *lens;
	uint64_t acquired;     /* buffers handed to the caller */
	uint64_t submitted;    /* buffers queued for hashing */
	uint64_t hashed;       /* buffers consumed */
	uint64_t reader_until; /* the reader sleeps until hashed reaches this; 0: it is awake */
	bool consumer_asleep;
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

void tr_pipe_spares_free(void)
{
	pthread_mutex_lock(&spare_lock);
	for (size_t i = 0; i < SPARE_RINGS; i++) {
		free(spares[i].mem);
		spares[i].mem = NULL;
	}
	pthread_mutex_unlock(&spare_lock);
}

static void *hash_main(void *arg)
{
	struct tr_pipe *pipe = arg;

	pthread_mutex_lock(&pipe->consumer.lock);
	for (;;) {
		while (pipe->hashed == pipe->submitted && !pipe->consumer.stop) {
			pipe->consumer_asleep = true;
			pthread_cond_wait(&pipe->consumer.wake, &pipe->consumer.lock);
		}
		pipe->consumer_asleep = false;
		if (pipe->hashed == pipe->submitted)
			break;
		size_t slot = (size_t)(pipe->hashed % pipe->n_slots);
		size_t len = pipe->lens[slot];

		pthread_mutex_unlock(&pipe->consumer.lock);
		pipe->consume(pipe->ctx, pipe->ring + slot * pipe->slot_size, len);
		pthread_mutex_lock(&pipe->consumer.lock);
		pipe->hashed++;
		/* Wake the reader only once the part of the ring it waits for is free. */
		if (pipe->reader_until && pipe->hashed >= pipe->reader_until) {
			pipe->reader_until = 0;
			pthread_cond_signal(&pipe->to_reader);
		}
	}
	pthread_mutex_unlock(&pipe->consumer.lock);
	return NULL;
}

static void free_pipe(struct tr_pipe *pipe)
{
	if (pipe->ring)
		ring_put(pipe->ring, pipe->n_slots * pipe->slot_size);
	free(pipe->lens);
	free(pipe);
}

struct tr_pipe *tr_pipe_new(size_t n_slots, size_t slot_size, tr_pipe_consume_fn consume, void *ctx)
{
	struct tr_pipe *pipe = calloc(1, sizeof(*pipe));

	if (!pipe)
		return NULL;
	pipe->n_slots = n_slots;
	pipe->slot_size = slot_size;
	pipe->consume = consume;
	pipe->ctx = ctx;
	pipe->lens = calloc(n_slots, sizeof(*pipe->lens));
	if (!pipe->lens || n_slots == 0 || slot_size > SIZE_MAX / n_slots)
		goto fail;
	pipe->ring = ring_get(n_slots * slot_size);
	if (!pipe->ring)
		goto fail;
	if (pthread_cond_init(&pipe->to_reader, NULL))
		goto fail;
	if (tr_worker_start(&pipe->consumer, hash_main, pipe) < 0) {
		pthread_cond_destroy(&pipe->to_reader);
		goto fail;
	}
	return pipe;
fail:
	free_pipe(pipe);
	return NULL;
}

unsigned char *tr_pipe_acquire(struct tr_pipe *pipe)
{
	size_t slot = (size_t)(pipe->acquired % pipe->n_slots);

	pthread_mutex_lock(&pipe->consumer.lock);
	/* The slot last held buffer number acquired - n_slots. When it is not consumed yet, sleep
	 * until half the ring is free, so the two threads meet once per half ring. */
	if (pipe->acquired >= pipe->n_slots && pipe->hashed + pipe->n_slots <= pipe->acquired) {
		uint64_t until = pipe->acquired - pipe->n_slots + (pipe->n_slots + 1) / 2;

		while (pipe->hashed < until) {
			pipe->reader_until = until;
			pthread_cond_wait(&pipe->to_reader, &pipe->consumer.lock);
		}
		pipe->reader_until = 0;
	}
	pthread_mutex_unlock(&pipe->consumer.lock);
	pipe->acquired++;
	return pipe->ring + slot * pipe->slot_size;
}

void tr_pipe_submit(struct tr_pipe *pipe, size_t len)
{
	pthread_mutex_lock(&pipe->consumer.lock);
	pipe->lens[pipe->submitted % pipe->n_slots] = len;
	pipe->submitted++;
	if (pipe->consumer_asleep)
		pthread_cond_signal(&pipe->consumer.wake);
	pthread_mutex_unlock(&pipe->consumer.lock);
}

void tr_pipe_finish(struct tr_pipe *pipe)
{
	if (!pipe)
		return;
	tr_worker_stop(&pipe->consumer);
	pthread_cond_destroy(&pipe->to_reader);
	free_pipe(pipe);
}
