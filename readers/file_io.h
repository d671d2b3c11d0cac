/* file_io.h - small I/O, hashing and naming helpers shared by the readers. */
#ifndef TR_FILE_IO_H
#define TR_FILE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tr_blob.h"
#include "tr_result.h"

/* Reads exactly len bytes at offset unless EOF comes first, retrying EINTR and short reads.
 * Returns the count read, or -1 with errno. */
ssize_t tr_pread_full(int fd, void *buf, size_t len, off_t offset);

/* Reads the whole file (size bytes as of fstat; a file that grew is read to size, one that
 * shrank is an EIO error) into a new blob and, when meta is non-NULL, records the SHA-256 of
 * those bytes in it (has_sha256; for files of 4 MiB and more as sha256_later, computed in a
 * thread while the caller goes on). Returns 0, or -1 with errno. */
int tr_load_file(int fd, uint64_t size, struct tr_blob **out, struct tr_metadata *meta);

/* Hex SHA-256 (65 bytes with NUL) of a buffer. */
void tr_sha256_hex(const void *data, size_t len, char *hex);

/* Incremental SHA-256 for streaming readers; ctx is opaque (an EVP_MD_CTX). */
struct tr_sha256;
struct tr_sha256 *tr_sha256_new(void);
void tr_sha256_update(struct tr_sha256 *ctx, const void *data, size_t len);
/* Writes the hex digest and frees ctx. NULL ctx is a no-op. */
void tr_sha256_finish(struct tr_sha256 *ctx, char *hex);
void tr_sha256_free(struct tr_sha256 *ctx);

/* Streams the whole file through SHA-256 (hex out). Returns 0, or -1 with errno. */
int tr_sha256_fd(int fd, uint64_t size, char *hex);

/* True when name ends in "." followed by ext, compared case-insensitively ("a.PNG", "png"). */
bool tr_has_extension(const char *name, const char *ext);

/* libmagic, one cookie per thread, loaded on first use. Return malloc'd strings or NULL. */
char *tr_magic_description_fd(int fd);
char *tr_magic_mime_fd(int fd);
char *tr_magic_mime_buffer(const void *data, size_t len);

#endif
