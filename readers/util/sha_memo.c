/* SPDX-License-Identifier: MIT */
/* sha_memo.c - a file's SHA-256 remembered for its version (struct tr_version; never a racy
 * one), so that every selector of the same version (the default view, then a window, in the
 * daemon or the MCP server) hashes the file once. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tr_version.h"
#include "util.h"

/* Direct-mapped by (device, inode): a few hundred files read again and again. */
enum { MEMO_SLOTS = 512 };

struct memo_slot {
	bool used;
	struct tr_version version;
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

static bool same_version(const struct memo_slot *slot, const struct stat *st)
{
	struct tr_version v;

	tr_version_of(&v, st);
	return slot->used && tr_version_equal(&slot->version, &v);
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

	if (!S_ISREG(st->st_mode) || strlen(hex) != 64 || tr_version_racy(st))
		return;
	pthread_mutex_lock(&memo_lock);
	*slot = (struct memo_slot){.used = true};
	tr_version_of(&slot->version, st);
	memcpy(slot->hex, hex, 65);
	pthread_mutex_unlock(&memo_lock);
}

void tr_sha_memo_forget(void)
{
	pthread_mutex_lock(&memo_lock);
	memset(memo, 0, sizeof(memo));
	pthread_mutex_unlock(&memo_lock);
}
