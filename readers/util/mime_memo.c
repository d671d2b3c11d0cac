/* SPDX-License-Identifier: MIT */
/* mime_memo.c - a direct-mapped table from the SHA-256 of a byte string to libmagic's mime type
 * for it. libmagic's answer depends only on the bytes (and the database loaded once), and costs
 * 0.3-0.7 ms per text file (its text rules are regexes run under one process-wide lock), while
 * hashing the 8 KiB it is given costs a few microseconds: a source re-read after a touch, or
 * after the cache let its sibling go, skips libmagic when its first 8 KiB did not change.
 *
 * Memory is fixed: a slot is a key (128 bits of the digest) and the index of an interned mime
 * string; libmagic names a few hundred types at most, each interned once for the life of the
 * process. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum { MAX_MIMES = 1024 };

struct memo_slot {
	unsigned char key[TR_MIME_MEMO_KEY_LEN];
	uint32_t mime; /* index + 1 into mimes; 0: empty */
};

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct memo_slot memo[TR_MIME_MEMO_SLOTS];
static char *mimes[MAX_MIMES]; /* interned; owned until tr_mime_memo_forget */
static uint32_t n_mimes;

bool tr_mime_memo_key(const void *data, size_t len, unsigned char key[TR_MIME_MEMO_KEY_LEN])
{
	unsigned char digest[32];

	if (!tr_sha256_raw(data, len, digest))
		return false;
	memcpy(key, digest, TR_MIME_MEMO_KEY_LEN);
	return true;
}

static struct memo_slot *slot_of(const unsigned char key[TR_MIME_MEMO_KEY_LEN])
{
	unsigned int index = ((unsigned int)key[0] << 8 | key[1]) % TR_MIME_MEMO_SLOTS;

	return &memo[index];
}

/* Returns the index + 1 of mime among the interned strings, interning it when new, or 0 when
 * the table is full or out of memory; under memo_lock. */
static uint32_t intern(const char *mime)
{
	for (uint32_t i = 0; i < n_mimes; i++) {
		if (strcmp(mimes[i], mime) == 0)
			return i + 1;
	}
	if (n_mimes == MAX_MIMES || !(mimes[n_mimes] = strdup(mime)))
		return 0;
	return ++n_mimes;
}

char *tr_mime_memo_get(const unsigned char key[TR_MIME_MEMO_KEY_LEN])
{
	struct memo_slot *slot = slot_of(key);
	const char *mime = NULL;

	pthread_mutex_lock(&memo_lock);
	if (slot->mime && memcmp(slot->key, key, TR_MIME_MEMO_KEY_LEN) == 0)
		mime = mimes[slot->mime - 1];
	pthread_mutex_unlock(&memo_lock); /* interned strings never move nor go */
	return mime ? strdup(mime) : NULL;
}

void tr_mime_memo_put(const unsigned char key[TR_MIME_MEMO_KEY_LEN], const char *mime)
{
	struct memo_slot *slot = slot_of(key);
	uint32_t index;

	pthread_mutex_lock(&memo_lock);
	index = intern(mime);
	if (index) {
		memcpy(slot->key, key, TR_MIME_MEMO_KEY_LEN);
		slot->mime = index;
	}
	pthread_mutex_unlock(&memo_lock);
}

void tr_mime_memo_forget(void)
{
	pthread_mutex_lock(&memo_lock);
	memset(memo, 0, sizeof(memo));
	for (uint32_t i = 0; i < n_mimes; i++) {
		free(mimes[i]);
		mimes[i] = NULL;
	}
	n_mimes = 0;
	pthread_mutex_unlock(&memo_lock);
}
