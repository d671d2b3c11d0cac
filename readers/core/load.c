/* SPDX-License-Identifier: MIT */
/* load.c - whole-file loads into blobs, hashed as they are read (inline, or by a digest thread
 * that follows the reads for large files). */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include "core.h"
#include "tr_digest.h"
#include "util.h"

int tr_load_file(int fd, uint64_t size, struct tr_blob **out, struct tr_metadata *meta)
{
	enum {
		CHUNK = 1 << 20,      /* hashed while it is still in the CPU's cache */
		DEFER_FROM = 4 << 20, /* from here on, hashed in a thread beside the caller's work */
	};
	struct stat version;
	/* The version is the one before the bytes are read: a change during the read makes a
	 * newer version, which the memo never answers with these bytes' digest. */
	bool versioned = meta && fstat(fd, &version) == 0 && (uint64_t)version.st_size == size;
	bool known = versioned && tr_sha_memo_get(&version, meta->sha256);
	struct tr_digest *later = NULL;
	struct tr_sha256 *sha = NULL;
	struct tr_blob *blob;
	uint64_t at = 0;

	if (size > SIZE_MAX - 1) {
		errno = EFBIG;
		return -1;
	}
	blob = tr_blob_new_writable((size_t)size);
	/* A large file is hashed by a thread that follows the reads chunk by chunk, on the other
	 * core, and goes on once this returns; a small one inline. */
	if (blob && meta && !known && size >= DEFER_FROM)
		later = tr_digest_start_filling(blob, 0, versioned ? &version : NULL);
	if (!blob || (meta && !known && !later && !(sha = tr_sha256_new()))) {
		tr_blob_unref(blob);
		errno = ENOMEM;
		return -1;
	}
	while (at < size) {
		size_t want = size - at < CHUNK ? (size_t)(size - at) : CHUNK;
		ssize_t n = tr_pread_full(fd, blob->data + at, want, (off_t)at);

		if (n < 0 || (size_t)n != want) {
			int err = n < 0 ? errno : EIO; /* EIO: the file shrank while it was read */

			tr_digest_abandon(later);
			tr_sha256_free(sha);
			tr_blob_unref(blob);
			errno = err;
			return -1;
		}
		tr_sha256_update(sha, blob->data + at, want);
		at += want;
		tr_digest_advance(later, at);
	}
	if (meta) {
		tr_digest_unref(meta->sha256_later);
		meta->sha256_later = later;
		if (sha)
			tr_sha256_finish(sha, meta->sha256);
		if (versioned && !known && !later)
			tr_sha_memo_put(&version, meta->sha256);
		meta->has_sha256 = true;
	}
	*out = blob;
	return 0;
}
