/* magic.c - libmagic for the whole process: one cookie pair loaded on first use and shared under a
 * mutex (magic_t is not thread-safe). One pair, not one per thread: each loaded cookie maps the
 * whole compiled database (about 6 MB of resident pages), which a daemon with ten worker threads
 * would otherwise hold ten times over, and a new thread would pay the load again. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magic.h>

#include "util.h"

static pthread_mutex_t magic_lock = PTHREAD_MUTEX_INITIALIZER;
static magic_t description_cookie, mime_cookie;
static bool description_failed, mime_failed;

static magic_t open_cookie(int flags)
{
	magic_t cookie = magic_open(flags | MAGIC_ERROR);

	if (cookie && magic_load(cookie, NULL) != 0) {
		magic_close(cookie);
		return NULL;
	}
	return cookie;
}

/* Returns the cookie for mime or description output, loading it once; call with magic_lock held. */
static magic_t locked_cookie(bool mime)
{
	magic_t *slot = mime ? &mime_cookie : &description_cookie;
	bool *failed = mime ? &mime_failed : &description_failed;

	if (!*slot && !*failed) {
		*slot = open_cookie(mime ? MAGIC_MIME_TYPE : MAGIC_NONE);
		*failed = *slot == NULL;
	}
	return *slot;
}

static char *dup_result(const char *text)
{
	return text ? strdup(text) : NULL;
}

/* libmagic reads through the descriptor and moves its offset; the readers use pread only. */
static char *describe_fd(int fd, bool mime)
{
	char *out = NULL;
	magic_t cookie;

	pthread_mutex_lock(&magic_lock);
	cookie = locked_cookie(mime);
	if (cookie && lseek(fd, 0, SEEK_SET) == 0)
		out = dup_result(magic_descriptor(cookie, fd));
	pthread_mutex_unlock(&magic_lock);
	return out;
}

char *tr_magic_description_fd(int fd)
{
	return describe_fd(fd, false);
}

char *tr_magic_mime_fd(int fd)
{
	return describe_fd(fd, true);
}

char *tr_magic_mime_buffer(const void *data, size_t len)
{
	unsigned char key[TR_MIME_MEMO_KEY_LEN];
	bool keyed = tr_mime_memo_key(data, len, key);
	char *out;
	magic_t cookie;

	if (keyed && (out = tr_mime_memo_get(key)))
		return out;
	pthread_mutex_lock(&magic_lock);
	cookie = locked_cookie(true);
	out = cookie ? dup_result(magic_buffer(cookie, data, len)) : NULL;
	pthread_mutex_unlock(&magic_lock);
	if (keyed && out)
		tr_mime_memo_put(key, out);
	return out;
}
