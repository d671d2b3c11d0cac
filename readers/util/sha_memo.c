/* SPDX-License-Identifier: MIT */
/* sha_memo.c - a file's SHA-256 remembered for its version (device, inode, size, mtime,
 * ctime), so that every selector of the same version (the default view, then a window, in the
 * daemon or the MCP server) hashes the file once. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "util.h"

/* Direct-mapped by (device, inode): a few hundred files read again and again. */
enum { MEMO_SLOTS = 512 };

/* Linux stamps mtime and ctime from a coarse clock (one tick, 1-10 ms), so a write right after
 * a hash can leave the version unchanged (git's "racily clean" files). A version whose stamps
 * are this recent is hashed every time, never remembered. */
#define RACY_NS 2000000000LL

struct memo_slot {
	bool used;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	char hex[65];
};

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct memo_slot memo[MEMO_SLOTS];

static struct memo_slot *slot_of(const struct stat *st)
{
	uint64_t h = ((uint64_t)st->st_dev * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)st->st_ino;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return &memo[h % MEMO_SLOTS];
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool same_version(const struct memo_slot *slot, const struct stat *st)
{
	return slot->used && slot->dev == st->st_dev && slot->ino == st->st_ino &&
	       slot->size == st->st_size && same_time(&slot->mtime, &st->st_mtim) &&
	       same_time(&slot->ctime, &st->st_ctim);
}

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* True when the version's stamps are too recent (or in the future) to trust. */
static bool racy(const struct stat *st)
{
	struct timespec now;
	int64_t newest = ns_of(&st->st_mtim) > ns_of(&st->st_ctim) ? ns_of(&st->st_mtim)
								   : ns_of(&st->st_ctim);

	if (clock_gettime(CLOCK_REALTIME, &now) != 0)
		return true;
	return ns_of(&now) - newest < RACY_NS;
}

bool tr_sha_memo_get(const struct stat *st, char hex[65])
{
	struct memo_slot *slot = slot_of(st);
	bool hit;

	pthread_mutex_lock(&memo_lock);
	hit = same_version(slot, st);
	if (hit)
		memcpy(hex, slot->hex, 65);
	pthread_mutex_unlock(&memo_lock);
	return hit;
}

void tr_sha_memo_put(const struct stat *st, const char *hex)
{
	struct memo_slot *slot = slot_of(st);

	if (!S_ISREG(st->st_mode) || strlen(hex) != 64 || racy(st))
		return;
	pthread_mutex_lock(&memo_lock);
	*slot = (struct memo_slot){
		.used = true,
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = st->st_size,
		.mtime = st->st_mtim,
		.ctime = st->st_ctim,
	};
	memcpy(slot->hex, hex, 65);
	pthread_mutex_unlock(&memo_lock);
}

void tr_sha_memo_forget(void)
{
	pthread_mutex_lock(&memo_lock);
	memset(memo, 0, sizeof(memo));
	pthread_mutex_unlock(&memo_lock);
}
