/* hash_pipe.c - a ring of buffers between a reading thread and a SHA-256 thread. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "file_io.h"
#include "hash_pipe.h"

struct tr_hash_pipe {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct tr_sha256 *ctx;
	size_t n_slots;
	unsigned char **slots;
	size_t *lens;
	uint64_t acquired;  /* buffers handed to the caller */
	uint64_t submitted; /* buffers queued for hashing */
	uint64_t hashed;    /* buffers hashed */
	bool closing;       /* no more submits */
};

static void *hash_main(void *arg)
{
	struct tr_hash_pipe *pipe = arg;

	pthread_mutex_lock(&pipe->lock);
	for (;;) {
		while (pipe->hashed == pipe->submitted && !pipe->closing)
			pthread_cond_wait(&pipe->changed, &pipe->lock);
		if (pipe->hashed == pipe->submitted)
			break;
		size_t slot = (size_t)(pipe->hashed % pipe->n_slots);

		pthread_mutex_unlock(&pipe->lock);
		tr_sha256_update(pipe->ctx, pipe->slots[slot], pipe->lens[slot]);
		pthread_mutex_lock(&pipe->lock);
		pipe->hashed++;
		pthread_cond_broadcast(&pipe->changed);
	}
	pthread_mutex_unlock(&pipe->lock);
	return NULL;
}

static void free_pipe(struct tr_hash_pipe *pipe)
{
	if (pipe->slots)
		for (size_t i = 0; i < pipe->n_slots; i++)
			free(pipe->slots[i]);
	free(pipe->slots);
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
	pipe->slots = calloc(n_slots, sizeof(*pipe->slots));
	pipe->lens = calloc(n_slots, sizeof(*pipe->lens));
	pipe->ctx = tr_sha256_new();
	if (!pipe->slots || !pipe->lens || !pipe->ctx)
		goto fail;
	for (size_t i = 0; i < n_slots; i++)
		if (!(pipe->slots[i] = malloc(slot_size)))
			goto fail;
	if (pthread_mutex_init(&pipe->lock, NULL))
		goto fail;
	if (pthread_cond_init(&pipe->changed, NULL))
		goto fail_lock;
	if (pthread_create(&pipe->thread, NULL, hash_main, pipe))
		goto fail_cond;
	return pipe;
fail_cond:
	pthread_cond_destroy(&pipe->changed);
fail_lock:
	pthread_mutex_destroy(&pipe->lock);
fail:
	free_pipe(pipe);
	return NULL;
}

unsigned char *tr_hash_pipe_acquire(struct tr_hash_pipe *pipe)
{
	size_t slot = (size_t)(pipe->acquired % pipe->n_slots);

	pthread_mutex_lock(&pipe->lock);
	/* The slot last held buffer number acquired - n_slots: wait until it is hashed. */
	while (pipe->acquired >= pipe->n_slots && pipe->hashed + pipe->n_slots <= pipe->acquired)
		pthread_cond_wait(&pipe->changed, &pipe->lock);
	pthread_mutex_unlock(&pipe->lock);
	pipe->acquired++;
	return pipe->slots[slot];
}

void tr_hash_pipe_submit(struct tr_hash_pipe *pipe, size_t len)
{
	pthread_mutex_lock(&pipe->lock);
	pipe->lens[pipe->submitted % pipe->n_slots] = len;
	pipe->submitted++;
	pthread_cond_broadcast(&pipe->changed);
	pthread_mutex_unlock(&pipe->lock);
}

void tr_hash_pipe_finish(struct tr_hash_pipe *pipe, char *hex)
{
	if (!pipe)
		return;
	pthread_mutex_lock(&pipe->lock);
	pipe->closing = true;
	pthread_cond_broadcast(&pipe->changed);
	pthread_mutex_unlock(&pipe->lock);
	pthread_join(pipe->thread, NULL);
	pthread_cond_destroy(&pipe->changed);
	pthread_mutex_destroy(&pipe->lock);
	if (hex) {
		tr_sha256_finish(pipe->ctx, hex);
		pipe->ctx = NULL;
	}
	free_pipe(pipe);
}
