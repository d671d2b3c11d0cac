/* blob.c - reference-counted immutable byte buffers. */
#include <stdlib.h>
#include <string.h>

#include "tr_blob.h"

struct tr_blob *tr_blob_adopt(void *data, size_t len)
{
	struct tr_blob *blob = malloc(sizeof(*blob));

	if (!blob) {
		free(data);
		return NULL;
	}
	blob->data = data;
	blob->len = len;
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
		free(blob->data);
		free(blob);
	}
}
