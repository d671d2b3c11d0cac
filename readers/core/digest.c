/* SPDX-License-Identifier: MIT */
/* digest.c - SHA-256 of a blob in a detached thread, so output can start before it is known. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "tr_digest.h"
#include "util.h"

struct tr_digest {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;
	char hex[65];
	struct tr_blob *blob;  /* the thread's, dropped when it is done */
	struct tr_sha256 *ctx; /* the thread's */
	bool remember;         /* put the digest in the memo for version */
	struct stat version;
	int refs; /* atomic: the owners and the thread */
	/* Bytes of blob written so far (tr_digest_advance), all of it unless it is filling; under
	 * lock, as are the two below. */
	uint64_t ready;
	bool abandoned;      /* the writer gave up: no digest */
	bool hasher_waiting; /* the thread waits on more for ready to grow */
	pthread_cond_t more;
};

static void digest_free(struct tr_digest *digest)
{
	tr_sha256_free(digest->ctx);
	pthread_cond_destroy(&digest->more);
	pthread_cond_destroy(&digest->done_cond);
	pthread_mutex_destroy(&digest->lock);
	free(digest);
}

/* Hashes the blob as its bytes become ready, each piece right after it was written. */
static void *digest_main(void *arg)
{
	struct tr_digest *digest = arg;
	uint64_t hashed = 0, ready;
	bool abandoned = false;
	char hex[65] = "";

	while (hashed < digest->blob->len && !abandoned) {
		pthread_mutex_lock(&digest->lock);
		while (digest->ready == hashed && !digest->abandoned) {
			digest->hasher_waiting = true;
			pthread_cond_wait(&digest->more, &digest->lock);
		}
		digest->hasher_waiting = false;
		ready = digest->ready;
		abandoned = digest->abandoned;
		pthread_mutex_unlock(&digest->lock);
		tr_sha256_update(digest->ctx, digest->blob->data + hashed, ready - hashed);
		hashed = ready;
	}
	if (!abandoned) {
		tr_sha256_finish(digest->ctx, hex);
		digest->ctx = NULL;
		if (digest->remember)
			tr_sha_memo_put(&digest->version, hex);
	}
	tr_blob_unref(digest->blob);
	pthread_mutex_lock(&digest->lock);
	digest->blob = NULL;
	memcpy(digest->hex, hex, sizeof(hex));
	digest->done = true;
	pthread_cond_broadcast(&digest->done_cond);
	pthread_mutex_unlock(&digest->lock);
	tr_digest_unref(digest);
	return NULL;
}

struct tr_digest *tr_digest_start(struct tr_blob *blob)
{
	return tr_digest_start_for(blob, NULL);
}

struct tr_digest *tr_digest_start_for(struct tr_blob *blob, const struct stat *st)
{
	return tr_digest_start_filling(blob, blob->len, st);
}

struct tr_digest *tr_digest_start_filling(struct tr_blob *blob, uint64_t ready,
					  const struct stat *st)
{
	struct tr_digest *digest = calloc(1, sizeof(*digest));
	pthread_attr_t attr;
	pthread_t thread;
	int rc;

	if (!digest)
		return NULL;
	if (pthread_mutex_init(&digest->lock, NULL)) {
		free(digest);
		return NULL;
	}
	if (pthread_cond_init(&digest->done_cond, NULL)) {
		pthread_mutex_destroy(&digest->lock);
		free(digest);
		return NULL;
	}
	if (pthread_cond_init(&digest->more, NULL)) {
		pthread_cond_destroy(&digest->done_cond);
		pthread_mutex_destroy(&digest->lock);
		free(digest);
		return NULL;
	}
	digest->ctx = tr_sha256_new();
	digest->blob = tr_blob_ref(blob);
	digest->ready = ready;
	digest->refs = 2;
	if (st) {
		digest->remember = true;
		digest->version = *st;
	}
	if (!digest->ctx || pthread_attr_init(&attr)) {
		tr_blob_unref(blob);
		digest_free(digest);
		return NULL;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thread, &attr, digest_main, digest);
	pthread_attr_destroy(&attr);
	if (rc) {
		tr_blob_unref(blob);
		digest_free(digest);
		return NULL;
	}
	return digest;
}

void tr_digest_advance(struct tr_digest *digest, uint64_t ready)
{
	if (!digest)
		return;
	pthread_mutex_lock(&digest->lock);
	digest->ready = ready;
	if (digest->hasher_waiting)
		pthread_cond_signal(&digest->more);
	pthread_mutex_unlock(&digest->lock);
}

void tr_digest_abandon(struct tr_digest *digest)
{
	if (!digest)
		return;
	pthread_mutex_lock(&digest->lock);
	digest->abandoned = true;
	pthread_cond_signal(&digest->more);
	pthread_mutex_unlock(&digest->lock);
	tr_digest_unref(digest);
}

const char *tr_digest_hex(struct tr_digest *digest)
{
	pthread_mutex_lock(&digest->lock);
	while (!digest->done)
		pthread_cond_wait(&digest->done_cond, &digest->lock);
	pthread_mutex_unlock(&digest->lock);
	return digest->hex;
}

struct tr_digest *tr_digest_ref(struct tr_digest *digest)
{
	if (digest)
		__atomic_add_fetch(&digest->refs, 1, __ATOMIC_RELAXED);
	return digest;
}

void tr_digest_unref(struct tr_digest *digest)
{
	if (digest && __atomic_sub_fetch(&digest->refs, 1, __ATOMIC_ACQ_REL) == 0)
		digest_free(digest);
}
