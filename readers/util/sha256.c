/* sha256.c - SHA-256 (OpenSSL EVP) as hex digits: one-shot over a buffer, or incremental. */
#include <pthread.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "util.h"

static pthread_once_t openssl_once = PTHREAD_ONCE_INIT;

/* SHA-256 needs no configuration: skipping openssl.cnf saves a short-lived toolfs-read a file
 * read and parse at start (about a millisecond). */
static void openssl_start(void)
{
	OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
}

static const EVP_MD *sha256_md(void)
{
	pthread_once(&openssl_once, openssl_start);
	return EVP_sha256();
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

	if (ctx && EVP_DigestInit_ex(ctx, sha256_md(), NULL) != 1) {
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

	EVP_Digest(data, len, digest, &dlen, sha256_md(), NULL);
	to_hex(digest, dlen, hex);
}

bool tr_sha256_raw(const void *data, size_t len, unsigned char digest[32])
{
	unsigned dlen = 0;

	return EVP_Digest(data, len, digest, &dlen, sha256_md(), NULL) == 1 && dlen == 32;
}
