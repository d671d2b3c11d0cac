/* SPDX-License-Identifier: MIT */
/* mime_memo.c - a direct-mapped table from a keyed hash of a byte string to libmagic's mime type
 * for it. libmagic's answer depends only on the bytes (and the database loaded once), and costs
 * 0.1-1 ms per text head even through magic_subset.c, while hashing the 8 KiB it is given costs
 * a few microseconds: a source re-read after a touch, or after the cache let its sibling go,
 * skips libmagic when its first 8 KiB did not change. The hash is SipHash-2-4 with 128 bits of
 * output under a key drawn from getrandom once per process: collisions stay out of reach, by
 * chance at the memo's size and by design for bytes made to collide (no one outside knows the
 * key), at about a tenth of SHA-256's cost on CPUs without the SHA extensions (the 8 KiB head of
 * a source: 0.45 M instructions with SHA-256, most of the memo's price).
 *
 * Memory is fixed: a slot is a key (128 bits of the digest) and the index of an interned mime
 * string; libmagic names a few hundred types at most, each interned once for the life of the
 * process. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util.h"

enum { MAX_MIMES = 1024 };

struct memo_slot {
	unsigned char key[TR_MIME_MEMO_KEY_LEN];
	uint32_t mime; /* index + 1 into mimes; 0: empty */
};

enum { LOGGED_SLOTS = 64 };

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct memo_slot memo[TR_MIME_MEMO_SLOTS];
/* The first slots written, so that forgetting a few answers (a toolfs-read of one file) clears
 * those instead of writing the whole table's 640 KiB, pages never touched included. */
static uint32_t logged[LOGGED_SLOTS], n_written;
static char *mimes[MAX_MIMES]; /* interned; owned until tr_mime_memo_forget */
static uint32_t n_mimes;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static uint64_t hash_key[2];
static bool hash_keyed;

static void draw_key(void)
{
	hash_keyed = getrandom(hash_key, sizeof(hash_key), 0) == (ssize_t)sizeof(hash_key);
}

static uint64_t rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

static void sip_rounds(uint64_t v[4], int rounds)
{
	for (int i = 0; i < rounds; i++) {
		v[0] += v[1];
		v[1] = rotl(v[1], 13) ^ v[0];
		v[0] = rotl(v[0], 32);
		v[2] += v[3];
		v[3] = rotl(v[3], 16) ^ v[2];
		v[0] += v[3];
		v[3] = rotl(v[3], 21) ^ v[0];
		v[2] += v[1];
		v[1] = rotl(v[1], 17) ^ v[2];
		v[2] = rotl(v[2], 32);
	}
}

static uint64_t load_le64(const unsigned char *p)
{
	uint64_t m = 0;

	for (int i = 7; i >= 0; i--)
		m = m << 8 | p[i];
	return m;
}

void tr_siphash128(const void *data, size_t len, const uint64_t k[2], unsigned char out[16])
{
	const unsigned char *p = data;
	uint64_t v[4] = {0x736f6d6570736575ULL ^ k[0], 0x646f72616e646f6dULL ^ k[1] ^ 0xee,
			 0x6c7967656e657261ULL ^ k[0], 0x7465646279746573ULL ^ k[1]};
	uint64_t last = (uint64_t)len << 56, m;
	size_t whole = len - len % 8;

	for (size_t i = 0; i < whole; i += 8) {
		m = load_le64(p + i);
		v[3] ^= m;
		sip_rounds(v, 2);
		v[0] ^= m;
	}
	for (size_t i = whole; i < len; i++)
		last |= (uint64_t)p[i] << (8 * (i - whole));
	v[3] ^= last;
	sip_rounds(v, 2);
	v[0] ^= last;
	v[2] ^= 0xee;
	sip_rounds(v, 4);
	m = v[0] ^ v[1] ^ v[2] ^ v[3];
	for (int i = 0; i < 8; i++)
		out[i] = (unsigned char)(m >> (8 * i));
	v[1] ^= 0xdd;
	sip_rounds(v, 4);
	m = v[0] ^ v[1] ^ v[2] ^ v[3];
	for (int i = 0; i < 8; i++)
		out[8 + i] = (unsigned char)(m >> (8 * i));
}

bool tr_mime_memo_key(const void *data, size_t len, unsigned char key[TR_MIME_MEMO_KEY_LEN])
{
	pthread_once(&key_once, draw_key);
	if (!hash_keyed)
		return false;
	tr_siphash128(data, len, hash_key, key);
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
		if (n_written < LOGGED_SLOTS)
			logged[n_written] = (uint32_t)(slot - memo);
		n_written += n_written <= LOGGED_SLOTS;
	}
	pthread_mutex_unlock(&memo_lock);
}

void tr_mime_memo_forget(void)
{
	pthread_mutex_lock(&memo_lock);
	if (n_written > LOGGED_SLOTS)
		memset(memo, 0, sizeof(memo));
	for (uint32_t i = 0; i < n_written && i < LOGGED_SLOTS; i++)
		memset(&memo[logged[i]], 0, sizeof(memo[0]));
	n_written = 0;
	for (uint32_t i = 0; i < n_mimes; i++) {
		free(mimes[i]);
		mimes[i] = NULL;
	}
	n_mimes = 0;
	pthread_mutex_unlock(&memo_lock);
}
