/* SPDX-License-Identifier: MIT */
/* blob.c - reference-counted immutable byte buffers. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core.h"
#include "tr_blob.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

enum {
	HUGE_PAGE = 2 << 20,
	MAPPED_FROM = 4 << 20, /* smaller buffers come from malloc */
};

struct tr_blob *tr_blob_adopt(void *data, size_t len)
{
	struct tr_blob *blob = malloc(sizeof(*blob));

	if (!blob) {
		free(data);
		return NULL;
	}
	blob->data = data;
	blob->len = len;
	blob->map_len = 0;
	__atomic_store_n(&blob->refs, 1, __ATOMIC_RELAXED);
	return blob;
}

struct tr_blob *tr_blob_copy(const void *data, size_t len)
{
	void *copy = malloc(len ? len : 1);

	if (!copy)
		return NULL;
	if (len)
		memcpy(copy, data, len);
	return tr_blob_adopt(copy, len);
}

/* Maps len bytes (rounded up to whole huge pages) aligned to a huge page; NULL on failure. */
static unsigned char *map_aligned(size_t len, size_t *map_len)
{
	size_t rounded = (len + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	unsigned char *raw = mmap(NULL, rounded + HUGE_PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (raw == MAP_FAILED)
		return NULL;
	uintptr_t start = ((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	size_t head = start - (uintptr_t)raw;

	if (head)
		munmap(raw, head);
	if (HUGE_PAGE - head)
		munmap((unsigned char *)start + rounded, HUGE_PAGE - head);
	*map_len = rounded;
	return (unsigned char *)start;
}

/* Mappings of freed blobs are kept for the next large blob instead of being unmapped: the
 * kernel zeroes every page of a new mapping, and re-reading a changed image would pay that for
 * its whole size each time. At most SPARE_MAPS of them, spare_bytes in all (tr_library_init sizes
 * it from max_read_memory; SPARE_BYTES until then). */
enum { SPARE_MAPS = 2, SPARE_BYTES = 48 << 20 };

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct spare_map {
	unsigned char *data;
	size_t map_len;
} spares[SPARE_MAPS];
static size_t spare_bytes = SPARE_BYTES;

/* Takes a spare mapping of at least map_len bytes and at most a quarter more; NULL if none. */
static unsigned char *spare_take(size_t map_len, size_t *got)
{
	unsigned char *data = NULL;

	pthread_mutex_lock(&spare_lock);
	for (size_t i = 0; i < SPARE_MAPS && !data; i++) {
		if (spares[i].data && spares[i].map_len >= map_len &&
		    spares[i].map_len - map_len <= map_len / 4) {
			data = spares[i].data;
			*got = spares[i].map_len;
			spares[i].data = NULL;
		}
	}
	pthread_mutex_unlock(&spare_lock);
	return data;
}

/* Keeps data as a spare, or unmaps it when the spares are full. */
static void spare_give(unsigned char *data, size_t map_len)
{
	size_t kept = 0, free_slot = SPARE_MAPS;

	pthread_mutex_lock(&spare_lock);
	for (size_t i = 0; i < SPARE_MAPS; i++) {
		if (spares[i].data)
			kept += spares[i].map_len;
		else
			free_slot = i;
	}
	if (free_slot < SPARE_MAPS && kept + map_len <= spare_bytes) {
		spares[free_slot].data = data;
		spares[free_slot].map_len = map_len;
		data = NULL;
	}
	pthread_mutex_unlock(&spare_lock);
	if (data)
		munmap(data, map_len);
}

/* Unmaps the spares that no longer fit under spare_bytes (the first ones kept stay); under
 * spare_lock. */
static void spares_trim(void)
{
	size_t kept = 0;

	for (size_t i = 0; i < SPARE_MAPS; i++) {
		if (!spares[i].data)
			continue;
		if (kept + spares[i].map_len <= spare_bytes) {
			kept += spares[i].map_len;
			continue;
		}
		munmap(spares[i].data, spares[i].map_len);
		spares[i].data = NULL;
	}
}

void tr_blob_spares_limit(uint64_t bytes)
{
	pthread_mutex_lock(&spare_lock);
	spare_bytes = bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes;
	spares_trim();
	pthread_mutex_unlock(&spare_lock);
}

void tr_blob_spares_free(void)
{
	pthread_mutex_lock(&spare_lock);
	for (size_t i = 0; i < SPARE_MAPS; i++) {
		if (spares[i].data)
			munmap(spares[i].data, spares[i].map_len);
		spares[i].data = NULL;
	}
	pthread_mutex_unlock(&spare_lock);
}

struct tr_blob *tr_blob_new_writable(size_t len)
{
	if (len < MAPPED_FROM || len > SIZE_MAX - 2 * (size_t)HUGE_PAGE) {
		void *data = malloc(len ? len : 1);

		return data ? tr_blob_adopt(data, len) : NULL;
	}
	struct tr_blob *blob = malloc(sizeof(*blob));
	size_t map_len = 0;
	unsigned char *data = NULL;

	if (!blob)
		return NULL;
	data = spare_take((len + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1), &map_len);
	if (!data) {
		data = map_aligned(len, &map_len);
		if (!data) {
			free(blob);
			return NULL;
		}
		/* Both are hints: without them the buffer still works, page by page. */
		madvise(data, map_len, MADV_HUGEPAGE);
		madvise(data, map_len, MADV_POPULATE_WRITE);
	}
	blob->data = data;
	blob->len = len;
	blob->map_len = map_len;
	__atomic_store_n(&blob->refs, 1, __ATOMIC_RELAXED);
	return blob;
}

struct tr_blob *tr_blob_ref(struct tr_blob *blob)
{
	if (blob)
		__atomic_add_fetch(&blob->refs, 1, __ATOMIC_RELAXED);
	return blob;
}

void tr_blob_unref(struct tr_blob *blob)
{
	if (!blob)
		return;
	if (__atomic_sub_fetch(&blob->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		if (blob->map_len)
			spare_give(blob->data, blob->map_len);
		else
			free(blob->data);
		free(blob);
	}
}
