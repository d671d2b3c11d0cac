/* SPDX-License-Identifier: MIT */
/* tr_blob.h - reference-counted immutable byte buffers shared by results and output documents. */
#ifndef TR_BLOB_H
#define TR_BLOB_H

#include <stddef.h>

struct tr_blob {
	unsigned char *data; /* owned; immutable once the blob is shared */
	size_t len;
	size_t map_len; /* 0: data is malloc'd; else data is an anonymous mapping of this length */
	int refs;       /* atomic */
};

/* Returns a new blob owning a copy of data[0..len), refcount 1; NULL when out of memory. */
struct tr_blob *tr_blob_copy(const void *data, size_t len);

/* Returns a new blob that takes ownership of the malloc'd data; refcount 1. On failure frees data
 * and returns NULL. */
struct tr_blob *tr_blob_adopt(void *data, size_t len);

/* Returns a new blob of len bytes whose data the caller fills before sharing it; refcount 1.
 * Large buffers are anonymous mappings backed by huge pages where the kernel allows and faulted
 * in with one call, so filling them costs no page fault per 4 KiB. NULL when out of memory. */
struct tr_blob *tr_blob_new_writable(size_t len);

/* Adds a reference; returns blob. NULL-safe. */
struct tr_blob *tr_blob_ref(struct tr_blob *blob);

/* Drops a reference, freeing the blob with the last one. NULL is a no-op. */
void tr_blob_unref(struct tr_blob *blob);

#endif
