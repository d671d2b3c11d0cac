/* magic.c - libmagic, one cookie pair per thread (magic_t is not thread-safe), loaded lazily
 * once and freed when the thread exits. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magic.h>

#include "file_io.h"

struct magic_cookies {
	magic_t description;
	magic_t mime;
};

static pthread_key_t cookies_key;
static pthread_once_t cookies_once = PTHREAD_ONCE_INIT;

static void free_cookies(void *arg)
{
	struct magic_cookies *cookies = arg;

	if (cookies->description)
		magic_close(cookies->description);
	if (cookies->mime)
		magic_close(cookies->mime);
	free(cookies);
}

static void make_key(void)
{
	pthread_key_create(&cookies_key, free_cookies);
}

static magic_t open_cookie(int flags)
{
	magic_t cookie = magic_open(flags | MAGIC_ERROR);

	if (cookie && magic_load(cookie, NULL) != 0) {
		magic_close(cookie);
		return NULL;
	}
	return cookie;
}

static magic_t thread_cookie(bool mime)
{
	struct magic_cookies *cookies;

	pthread_once(&cookies_once, make_key);
	cookies = pthread_getspecific(cookies_key);
	if (!cookies) {
		cookies = calloc(1, sizeof(*cookies));
		if (!cookies || pthread_setspecific(cookies_key, cookies) != 0) {
			free(cookies);
			return NULL;
		}
	}
	magic_t *slot = mime ? &cookies->mime : &cookies->description;

	if (!*slot)
		*slot = open_cookie(mime ? MAGIC_MIME_TYPE : MAGIC_NONE);
	return *slot;
}

static char *dup_result(const char *text)
{
	return text ? strdup(text) : NULL;
}

/* libmagic reads through the descriptor and may move its offset; give it its own. */
static char *describe_fd(int fd, bool mime)
{
	magic_t cookie = thread_cookie(mime);
	int copy;
	char *out;

	if (!cookie)
		return NULL;
	copy = dup(fd);
	if (copy < 0)
		return NULL;
	lseek(copy, 0, SEEK_SET);
	out = dup_result(magic_descriptor(cookie, copy));
	close(copy);
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
	magic_t cookie = thread_cookie(true);

	return cookie ? dup_result(magic_buffer(cookie, data, len)) : NULL;
}
