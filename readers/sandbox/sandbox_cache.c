/* SPDX-License-Identifier: MIT */
/* sandbox_cache.c - the reading process's LRU of sandboxed replies (docs/SPEC.md §8 "Reply
 * cache"): the wire bytes a worker answered, kept under everything the result depends on, so
 * that a second read of the same file version (an OCR'd page above all) needs no worker. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox.h"
#include "tr_version.h"
#include "util.h"

#define BUCKETS 256

/* What a reply depends on: the file's version, the reader, the selector, the options the worker
 * read under, and the path and name it was given (a result names them: next, short result). */
struct reply_key {
	struct tr_version version;
	uint32_t reader;
	struct tr_selector sel;
	struct tr_options opts;
	const char *path; /* borrowed in a lookup, owned in an entry */
	const char *name; /* as path; NULL when the worker was given none */
};

struct reply {
	struct reply_key key;
	uint64_t hash, size;
	unsigned char *data; /* owned: the encoded result (sandbox_wire.c) */
	size_t len;
	uint64_t readers;            /* lookups decoding it now, under replies_lock */
	bool dropped;                /* out of the cache: the last reader frees it */
	struct reply *chain;         /* the bucket's next */
	struct reply *newer, *older; /* the LRU list */
};

/* One lock, a leaf: nothing else is taken under it. */
static pthread_mutex_t replies_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reply *buckets[BUCKETS];
static struct reply *newest, *oldest;
static uint64_t capacity, used;

static void key_of(struct reply_key *key, uint32_t reader, const struct tr_file *file,
		   const struct tr_selector *sel, const struct tr_options *opts)
{
	tr_version_of(&key->version, &file->st);
	key->reader = reader;
	key->sel = *sel;
	key->opts = *opts;
	key->path = file->src && file->src->path ? file->src->path : "";
	key->name = file->src ? file->src->name : NULL;
}

static uint64_t key_hash(const struct reply_key *key)
{
	uint64_t h = tr_version_hash(TR_HASH_BASIS, &key->version);

	h = tr_hash_bytes(h, &key->reader, sizeof(key->reader));
	h = tr_selector_hash(h, &key->sel);
	h = tr_hash_bytes(h, key->path, strlen(key->path));
	return key->name ? tr_hash_bytes(h, key->name, strlen(key->name)) : h;
}

static bool key_equal(const struct reply_key *a, const struct reply_key *b)
{
	return tr_version_equal(&a->version, &b->version) && a->reader == b->reader &&
	       tr_selector_equal(&a->sel, &b->sel) && strcmp(a->path, b->path) == 0 &&
	       (a->name && b->name ? strcmp(a->name, b->name) == 0 : a->name == b->name) &&
	       tr_options_equal(&a->opts, &b->opts);
}

static void lru_unlink(struct reply *r)
{
	if (r->newer)
		r->newer->older = r->older;
	else
		newest = r->older;
	if (r->older)
		r->older->newer = r->newer;
	else
		oldest = r->newer;
	r->newer = r->older = NULL;
}

static void lru_push(struct reply *r)
{
	r->older = newest;
	r->newer = NULL;
	if (newest)
		newest->newer = r;
	newest = r;
	if (!oldest)
		oldest = r;
}

static void reply_free(struct reply *r)
{
	free((char *)r->key.path);
	free((char *)r->key.name);
	free(r->data);
	free(r);
}

/* Takes r out of the cache and frees it, or leaves that to the last lookup decoding it. Under
 * replies_lock. */
static void reply_drop(struct reply *r)
{
	struct reply **at = &buckets[r->hash % BUCKETS];

	while (*at != r)
		at = &(*at)->chain;
	*at = r->chain;
	lru_unlink(r);
	used -= r->size;
	r->dropped = true;
	if (!r->readers)
		reply_free(r);
}

/* Evicts the least recently used replies until used + room fits. Under replies_lock. */
static void make_room(uint64_t room)
{
	while (oldest && used + room > capacity)
		reply_drop(oldest);
}

static struct reply *find(const struct reply_key *key, uint64_t hash)
{
	for (struct reply *r = buckets[hash % BUCKETS]; r; r = r->chain)
		if (r->hash == hash && key_equal(&r->key, key))
			return r;
	return NULL;
}

void tr_sandbox_cache_limit(uint64_t bytes)
{
	pthread_mutex_lock(&replies_lock);
	capacity = bytes;
	make_room(0);
	pthread_mutex_unlock(&replies_lock);
}

int tr_sandbox_cache_get(uint32_t reader, const struct tr_file *file, const struct tr_selector *sel,
			 const struct tr_options *opts, struct tr_result *res)
{
	struct reply_key key;
	struct reply *r;
	uint64_t hash;
	int rc;

	key_of(&key, reader, file, sel, opts);
	hash = key_hash(&key);
	pthread_mutex_lock(&replies_lock);
	r = capacity ? find(&key, hash) : NULL;
	if (r) {
		lru_unlink(r);
		lru_push(r);
		r->readers++;
	}
	pthread_mutex_unlock(&replies_lock);
	if (!r)
		return 0;
	/* Decoded outside the lock (a page's image is megabytes): the other read threads' lookups
	 * do not wait for it. Bytes that decoded once decode again; only memory can fail. */
	rc = tr_sandbox_decode(r->data, r->len, res) == 0 ? 1 : -1;
	pthread_mutex_lock(&replies_lock);
	if (--r->readers == 0 && r->dropped)
		reply_free(r);
	pthread_mutex_unlock(&replies_lock);
	return rc;
}

/* Whether res says that time ran out for a part of it: a page, its OCR or its image listed as
 * timeout (docs/SPEC.md §3), which the next read may finish. */
static bool timed_out(const struct tr_result *res)
{
	static const char *const notes[] = {"timeout: not ", ": timeout (", "(timeout)"};

	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if ((res->content.data &&
		     memmem(res->content.data, res->content.len, notes[i], strlen(notes[i]))) ||
		    (res->short_result && strstr(res->short_result, notes[i])))
			return true;
	return false;
}

void tr_sandbox_cache_put(uint32_t reader, const struct tr_file *file,
			  const struct tr_selector *sel, const struct tr_options *opts,
			  const struct tr_result *res, unsigned char *data, size_t len)
{
	struct reply_key key;
	struct reply *r, *old;
	char *path = NULL, *name = NULL;
	uint64_t size;

	key_of(&key, reader, file, sel, opts);
	size = sizeof(*r) + len + strlen(key.path) + (key.name ? strlen(key.name) : 0) + 2;
	/* A memfd snapshot of a pseudo-file (no link) has no version that a later read could
	 * find; a racy version might be a different file's next tick. */
	if (res->error != TR_OK || timed_out(res) ||
	    (file->deadline && tr_deadline_passed(file->deadline)) || !S_ISREG(file->st.st_mode) ||
	    file->st.st_nlink == 0 || tr_version_racy(&file->st)) {
		free(data);
		return;
	}
	r = calloc(1, sizeof(*r));
	path = strdup(key.path);
	name = key.name ? strdup(key.name) : NULL;
	if (!r || !path || (key.name && !name)) {
		free(r);
		free(path);
		free(name);
		free(data);
		return;
	}
	r->key = key;
	r->key.path = path;
	r->key.name = name;
	r->hash = key_hash(&key);
	r->size = size;
	r->data = data;
	r->len = len;
	pthread_mutex_lock(&replies_lock);
	if (size > capacity) {
		pthread_mutex_unlock(&replies_lock);
		reply_free(r);
		return;
	}
	old = find(&r->key, r->hash);
	if (old)
		reply_drop(old);
	make_room(size);
	r->chain = buckets[r->hash % BUCKETS];
	buckets[r->hash % BUCKETS] = r;
	lru_push(r);
	used += size;
	pthread_mutex_unlock(&replies_lock);
}

void tr_sandbox_cache_free(void)
{
	pthread_mutex_lock(&replies_lock);
	while (oldest)
		reply_drop(oldest);
	pthread_mutex_unlock(&replies_lock);
}
