/* SPDX-License-Identifier: MIT */
/* magic.c - libmagic for the whole process: a few cookies loaded on first use and lent to one
 * thread at a time (a magic_t is not thread-safe). One description cookie, and up to
 * MIME_COOKIES mime cookies, the second loaded only when a thread finds the first one lent:
 * each cookie maps the whole compiled database (the file's pages, about 6 MB resident), which a
 * daemon with ten worker threads would otherwise map ten times over, and a new thread would pay
 * the load again. Two let two renders of text files (200-400 us of libmagic each, most of their
 * time) run at once, on a daemon's request thread and its sibling read-ahead. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magic.h>

#include "util.h"

enum { MIME_COOKIES = 2 };

/* The cookies of one kind of answer; under magic_lock. */
struct cookie_pool {
	int flags;
	unsigned max;    /* the most it loads; lowered when a load fails */
	unsigned loaded; /* cookies[0 .. loaded) are loaded */
	magic_t cookies[MIME_COOKIES];
	bool lent[MIME_COOKIES];
};

static pthread_mutex_t magic_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t magic_returned = PTHREAD_COND_INITIALIZER;
#define DESCRIPTION_POOL                      \
	{                                     \
		.flags = MAGIC_NONE, .max = 1 \
	}
#define MIME_POOL                                             \
	{                                                     \
		.flags = MAGIC_MIME_TYPE, .max = MIME_COOKIES \
	}
static struct cookie_pool description_pool = DESCRIPTION_POOL;
static struct cookie_pool mime_pool = MIME_POOL;

static magic_t open_cookie(int flags)
{
	magic_t cookie = magic_open(flags | MAGIC_ERROR);

	if (cookie && magic_load(cookie, NULL) != 0) {
		magic_close(cookie);
		return NULL;
	}
	return cookie;
}

/* Lends a cookie of pool to the caller: an idle one, else a new one while fewer than max are
 * loaded, else the next one returned. Returns its index, or -1 when none can be loaded. */
static int borrow(struct cookie_pool *pool)
{
	int got = -1;

	pthread_mutex_lock(&magic_lock);
	while (got < 0) {
		for (unsigned i = 0; i < pool->loaded && got < 0; i++) {
			if (!pool->lent[i])
				got = (int)i;
		}
		if (got >= 0)
			break;
		if (pool->loaded < pool->max) {
			/* Loaded under the lock: once per cookie for the life of the process. */
			magic_t cookie = open_cookie(pool->flags);

			if (cookie) {
				pool->cookies[pool->loaded] = cookie;
				got = (int)pool->loaded++;
				break;
			}
			pool->max = pool->loaded;
		}
		if (pool->loaded == 0)
			break;
		pthread_cond_wait(&magic_returned, &magic_lock);
	}
	if (got >= 0)
		pool->lent[got] = true;
	pthread_mutex_unlock(&magic_lock);
	return got;
}

static void give_back(struct cookie_pool *pool, int i)
{
	pthread_mutex_lock(&magic_lock);
	pool->lent[i] = false;
	pthread_cond_broadcast(&magic_returned);
	pthread_mutex_unlock(&magic_lock);
}

static char *dup_result(const char *text)
{
	return text ? strdup(text) : NULL;
}

/* libmagic reads through the descriptor and moves its offset; the readers use pread only. */
static char *describe_fd(int fd, struct cookie_pool *pool)
{
	int i = borrow(pool);
	char *out = NULL;

	if (i < 0)
		return NULL;
	if (lseek(fd, 0, SEEK_SET) == 0)
		out = dup_result(magic_descriptor(pool->cookies[i], fd));
	give_back(pool, i);
	return out;
}

char *tr_magic_description_fd(int fd)
{
	return describe_fd(fd, &description_pool);
}

char *tr_magic_mime_fd(int fd)
{
	return describe_fd(fd, &mime_pool);
}

char *tr_magic_mime_buffer(const void *data, size_t len)
{
	unsigned char key[TR_MIME_MEMO_KEY_LEN];
	bool keyed = tr_mime_memo_key(data, len, key);
	char *out;
	int i;

	if (keyed && (out = tr_mime_memo_get(key)))
		return out;
	if ((out = tr_magic_subset_mime(data, len))) {
		if (keyed)
			tr_mime_memo_put(key, out);
		return out;
	}
	i = borrow(&mime_pool);
	if (i < 0)
		return NULL;
	out = dup_result(magic_buffer(mime_pool.cookies[i], data, len));
	give_back(&mime_pool, i);
	if (keyed && out)
		tr_mime_memo_put(key, out);
	return out;
}

static void close_pool(struct cookie_pool *pool, struct cookie_pool fresh)
{
	for (unsigned i = 0; i < pool->loaded; i++)
		magic_close(pool->cookies[i]);
	*pool = fresh;
}

void tr_magic_close_all(void)
{
	pthread_mutex_lock(&magic_lock);
	close_pool(&description_pool, (struct cookie_pool)DESCRIPTION_POOL);
	close_pool(&mime_pool, (struct cookie_pool)MIME_POOL);
	pthread_mutex_unlock(&magic_lock);
	tr_magic_subset_close();
}
