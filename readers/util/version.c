/* SPDX-License-Identifier: MIT */
/* version.c - a file's version and the hashes the caches key on (include/tr_version.h). */
#include <string.h>

#include "tr_version.h"

/* A version whose newest stamp is this recent is racy (tr_version_racy). */
#define RACY_NS 2000000000LL

void tr_version_of(struct tr_version *v, const struct stat *st)
{
	v->dev = st->st_dev;
	v->ino = st->st_ino;
	v->size = st->st_size;
	v->mtime = st->st_mtim;
	v->ctime = st->st_ctim;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

bool tr_version_equal(const struct tr_version *a, const struct tr_version *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       same_time(&a->mtime, &b->mtime) && same_time(&a->ctime, &b->ctime);
}

uint64_t tr_hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t hash_numbers(uint64_t h, const int64_t *num, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = tr_hash_bytes(h, &num[i], sizeof(num[i]));
	return h;
}

uint64_t tr_version_hash(uint64_t h, const struct tr_version *v)
{
	int64_t num[] = {
		(int64_t)v->dev,  (int64_t)v->ino, v->size,          v->mtime.tv_sec,
		v->mtime.tv_nsec, v->ctime.tv_sec, v->ctime.tv_nsec,
	};

	return hash_numbers(h, num, sizeof(num) / sizeof(num[0]));
}

static int64_t double_bits(double d)
{
	int64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	return bits;
}

uint64_t tr_selector_hash(uint64_t h, const struct tr_selector *sel)
{
	int64_t num[] = {
		sel->present,
		(int64_t)sel->start,
		(int64_t)sel->end,
		(int64_t)sel->column,
		/* a region: its rectangle (all 0 otherwise) */
		sel->has_region,
		(int64_t)((uint64_t)sel->region.x << 32 | sel->region.y),
		(int64_t)((uint64_t)sel->region.width << 32 | sel->region.height),
		/* a time span: its seconds' bits (0 otherwise) */
		sel->time,
		double_bits(sel->t0),
		double_bits(sel->t1),
	};

	return hash_numbers(h, num, sizeof(num) / sizeof(num[0]));
}

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

bool tr_version_racy(const struct stat *st)
{
	int64_t newest = ns_of(&st->st_mtim) > ns_of(&st->st_ctim) ? ns_of(&st->st_mtim)
								   : ns_of(&st->st_ctim);
	struct timespec now;

	if (clock_gettime(CLOCK_REALTIME, &now) != 0)
		return true;
	return ns_of(&now) - newest < RACY_NS;
}
