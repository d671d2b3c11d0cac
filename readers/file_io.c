/* file_io.c - positional reads, whole-file loads, SHA-256 and name helpers for the readers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "file_io.h"

ssize_t tr_pread_full(int fd, void *buf, size_t len, off_t offset)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, offset + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static void to_hex(const unsigned char *digest, unsigned len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < len; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[2 * len] = '\0';
}

struct tr_sha256 *tr_sha256_new(void)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return NULL;
	}
	return (struct tr_sha256 *)ctx;
}

void tr_sha256_update(struct tr_sha256 *ctx, const void *data, size_t len)
{
	if (ctx && len)
		EVP_DigestUpdate((EVP_MD_CTX *)ctx, data, len);
}

void tr_sha256_finish(struct tr_sha256 *ctx, char *hex)
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned len = 0;

	if (!ctx)
		return;
	EVP_DigestFinal_ex((EVP_MD_CTX *)ctx, digest, &len);
	to_hex(digest, len, hex);
	EVP_MD_CTX_free((EVP_MD_CTX *)ctx);
}

void tr_sha256_free(struct tr_sha256 *ctx)
{
	EVP_MD_CTX_free((EVP_MD_CTX *)ctx);
}

void tr_sha256_hex(const void *data, size_t len, char *hex)
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned dlen = 0;

	EVP_Digest(data, len, digest, &dlen, EVP_sha256(), NULL);
	to_hex(digest, dlen, hex);
}

int tr_load_file(int fd, uint64_t size, struct tr_blob **out, char *sha256_hex)
{
	unsigned char *data;
	ssize_t n;

	if (size > SIZE_MAX - 1) {
		errno = EFBIG;
		return -1;
	}
	data = malloc(size ? size : 1);
	if (!data)
		return -1;
	n = tr_pread_full(fd, data, size, 0);
	if (n < 0 || (uint64_t)n != size) {
		int err = n < 0 ? errno : EIO;

		free(data);
		errno = err;
		return -1;
	}
	if (sha256_hex)
		tr_sha256_hex(data, size, sha256_hex);
	*out = tr_blob_adopt(data, size);
	if (!*out) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int tr_sha256_fd(int fd, uint64_t size, char *hex)
{
	enum { CHUNK = 1 << 20 };
	struct tr_sha256 *ctx = tr_sha256_new();
	unsigned char *buf = malloc(CHUNK);
	uint64_t at = 0;

	if (!ctx || !buf)
		goto fail;
	while (at < size) {
		size_t want = size - at < CHUNK ? (size_t)(size - at) : CHUNK;
		ssize_t n = tr_pread_full(fd, buf, want, (off_t)at);

		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		tr_sha256_update(ctx, buf, (size_t)n);
		at += (uint64_t)n;
	}
	free(buf);
	tr_sha256_finish(ctx, hex);
	return 0;
fail:
	free(buf);
	tr_sha256_free(ctx);
	return -1;
}

bool tr_has_extension(const char *name, const char *ext)
{
	size_t len = strlen(name), ext_len = strlen(ext);

	return len > ext_len + 1 && name[len - ext_len - 1] == '.' &&
	       strcasecmp(name + len - ext_len, ext) == 0;
}
