/* SPDX-License-Identifier: MIT */
/* cache.c - a thread-safe LRU of rendered sibling documents bounded by their total size, the one
 * holder of a version's document: whoever else keeps one (a lookup's hold until its open, a
 * version larger than the whole cache) pins its entry. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "htab.h"

/* Superseded versions of this size and more are dropped at once (see tfs_cache_put). */
#define SUPERSEDED_DROP_FROM (4u << 20)

struct tfs_cache_entry {
	struct tfs_doc_key key; /* owned copy */
	uint64_t hash;
	struct tr_doc *doc; /* owned reference */
	uint64_t size;
	struct tfs_cache *cache;
	uint64_t pins;                         /* under cache->lock */
	bool resident;                         /* in the index and the LRU list, counted in used */
	struct tfs_hnode link;                 /* the key index, while resident */
	struct tfs_cache_entry *newer, *older; /* the LRU list, while resident */
};

struct tfs_cache {
	pthread_mutex_t lock;
	uint64_t capacity, used;
	struct tfs_htab index; /* entries by name_hash of their key */
	struct tfs_cache_entry *newest, *oldest;
};

void tfs_doc_key_set_stat(struct tfs_doc_key *key, const struct stat *st)
{
	tr_version_of(&key->version, st);
}

/* Folds the name a document answers (selector, format, path) into h. */
static uint64_t fold_name(uint64_t h, const struct tfs_doc_key *key)
{
	int64_t fmt = key->fmt;

	h = tr_selector_hash(h, &key->sel);
	h = tr_hash_bytes(h, &fmt, sizeof(fmt));
	return tr_hash_bytes(h, key->path, strlen(key->path));
}

uint64_t tfs_doc_key_hash(const struct tfs_doc_key *key)
{
	int64_t num[] = {key->outcome, (int64_t)key->unstable};
	uint64_t h = tr_version_hash(TR_HASH_BASIS, &key->version);

	h = tr_hash_bytes(h, num, sizeof(num));
	return fold_name(h, key);
}

/* Hash of the name a document answers (path, selector, format), not of the source state, so
 * every cached version of one name shares a bucket chain and a new version finds the old ones. */
static uint64_t name_hash(const struct tfs_doc_key *key)
{
	return fold_name(TR_HASH_BASIS, key);
}

static bool same_name(const struct tfs_doc_key *a, const struct tfs_doc_key *b)
{
	return tr_selector_equal(&a->sel, &b->sel) && a->fmt == b->fmt &&
	       strcmp(a->path, b->path) == 0;
}

bool tfs_doc_key_equal(const struct tfs_doc_key *a, const struct tfs_doc_key *b)
{
	return tr_version_equal(&a->version, &b->version) && a->outcome == b->outcome &&
	       a->unstable == b->unstable && tr_selector_equal(&a->sel, &b->sel) &&
	       a->fmt == b->fmt && strcmp(a->path, b->path) == 0;
}

int tfs_doc_key_copy(struct tfs_doc_key *dst, const struct tfs_doc_key *src)
{
	char *path = strdup(src->path);

	if (!path)
		return -ENOMEM;
	*dst = *src;
	dst->path = path;
	return 0;
}

void tfs_doc_key_destroy(struct tfs_doc_key *key)
{
	free(key->path);
	key->path = NULL;
}

static uint64_t entry_hash(const struct tfs_hnode *node)
{
	return tfs_hnode_entry(node, const struct tfs_cache_entry, link)->hash;
}

struct tfs_cache *tfs_cache_new(uint64_t capacity)
{
	struct tfs_cache *cache = calloc(1, sizeof(*cache));

	if (!cache)
		return NULL;
	if (tfs_htab_init(&cache->index, 1024, entry_hash) < 0) {
		free(cache);
		return NULL;
	}
	cache->capacity = capacity;
	pthread_mutex_init(&cache->lock, NULL);
	return cache;
}

static void entry_free(struct tfs_cache_entry *entry)
{
	tr_doc_unref(entry->doc);
	tfs_doc_key_destroy(&entry->key);
	free(entry);
}

void tfs_cache_free(struct tfs_cache *cache)
{
	if (!cache)
		return;
	for (struct tfs_cache_entry *e = cache->newest, *next; e; e = next) {
		next = e->older;
		entry_free(e);
	}
	tfs_htab_destroy(&cache->index);
	pthread_mutex_destroy(&cache->lock);
	free(cache);
}

static void lru_unlink(struct tfs_cache *cache, struct tfs_cache_entry *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		cache->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		cache->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void lru_push_newest(struct tfs_cache *cache, struct tfs_cache_entry *e)
{
	e->older = cache->newest;
	e->newer = NULL;
	if (cache->newest)
		cache->newest->newer = e;
	cache->newest = e;
	if (!cache->oldest)
		cache->oldest = e;
}

static void lru_push_oldest(struct tfs_cache *cache, struct tfs_cache_entry *e)
{
	e->newer = cache->oldest;
	e->older = NULL;
	if (cache->oldest)
		cache->oldest->older = e;
	cache->oldest = e;
	if (!cache->newest)
		cache->newest = e;
}

static struct tfs_cache_entry *entry_of(struct tfs_hnode *node)
{
	return node ? tfs_hnode_entry(node, struct tfs_cache_entry, link) : NULL;
}

static struct tfs_cache_entry *find(struct tfs_cache *cache, const struct tfs_doc_key *key,
				    uint64_t hash)
{
	struct tfs_cache_entry *e = entry_of(tfs_htab_chain(&cache->index, hash));

	while (e && !(e->hash == hash && tfs_doc_key_equal(&e->key, key)))
		e = entry_of(e->link.next);
	return e;
}

/* Unlinks e from the index and the LRU list, and frees it unless it is pinned: a pinned entry
 * lives on, out of the cache's reach, until its last unpin. */
static void evict(struct tfs_cache *cache, struct tfs_cache_entry *e)
{
	tfs_htab_remove(&cache->index, &e->link, e->hash);
	lru_unlink(cache, e);
	cache->used -= e->size;
	e->resident = false;
	if (!e->pins)
		entry_free(e);
}

/* The entry cached under key, made the most recent and pinned when pin, or NULL. */
static struct tfs_cache_entry *get(struct tfs_cache *cache, const struct tfs_doc_key *key,
				   struct tr_doc **doc, bool pin)
{
	uint64_t hash = name_hash(key);
	struct tfs_cache_entry *e;

	pthread_mutex_lock(&cache->lock);
	e = find(cache, key, hash);
	if (e) {
		lru_unlink(cache, e);
		lru_push_newest(cache, e);
		e->pins += pin;
		*doc = tr_doc_ref(e->doc);
	}
	pthread_mutex_unlock(&cache->lock);
	return e;
}

struct tr_doc *tfs_cache_get(struct tfs_cache *cache, const struct tfs_doc_key *key)
{
	struct tr_doc *doc = NULL;

	get(cache, key, &doc, false);
	return doc;
}

struct tfs_cache_entry *tfs_cache_get_pinned(struct tfs_cache *cache, const struct tfs_doc_key *key,
					     struct tr_doc **doc)
{
	*doc = NULL;
	return get(cache, key, doc, true);
}

bool tfs_cache_put(struct tfs_cache *cache, const struct tfs_doc_key *key, struct tr_doc *doc)
{
	bool cached = false;

	tfs_cache_unpin(tfs_cache_put_pinned(cache, key, doc, &cached));
	return cached;
}

struct tfs_cache_entry *tfs_cache_put_pinned(struct tfs_cache *cache, const struct tfs_doc_key *key,
					     struct tr_doc *doc, bool *cached)
{
	uint64_t size = tr_doc_size(doc);
	uint64_t hash = name_hash(key);
	struct tfs_cache_entry *e = calloc(1, sizeof(*e)), *other, *next;

	*cached = false;
	if (!e || tfs_doc_key_copy(&e->key, key) < 0) {
		free(e);
		return NULL;
	}
	e->hash = hash;
	e->doc = tr_doc_ref(doc);
	e->size = size;
	e->cache = cache;
	e->pins = 1;
	if (size > cache->capacity)
		return e; /* pinned only, never resident */

	pthread_mutex_lock(&cache->lock);
	/* An equal key is replaced. Other versions of this name are superseded: the next lookup
	 * stats the source first and asks for this state, so they become the first to go when
	 * room is needed. The open that follows a lookup of an older version finds it through
	 * the pin of the inode's hold (holds.h); small ones are kept here too, for a second open of that
	 * version. Large ones (an image's base64) are dropped at once, so that rewriting one image
	 * does not fill the cache with its old versions. */
	for (other = entry_of(tfs_htab_chain(&cache->index, hash)); other; other = next) {
		next = entry_of(other->link.next);
		if (other->hash == hash &&
		    (tfs_doc_key_equal(&other->key, key) ||
		     (other->size >= SUPERSEDED_DROP_FROM && same_name(&other->key, key)))) {
			evict(cache, other);
			continue;
		}
		if (other->hash == hash && same_name(&other->key, key)) {
			lru_unlink(cache, other);
			lru_push_oldest(cache, other);
		}
	}
	while (cache->oldest && cache->used + size > cache->capacity)
		evict(cache, cache->oldest);
	lru_push_newest(cache, e);
	cache->used += size;
	tfs_htab_insert(&cache->index, &e->link, hash);
	e->resident = true;
	pthread_mutex_unlock(&cache->lock);
	*cached = true;
	return e;
}

void tfs_cache_pin(struct tfs_cache_entry *e)
{
	pthread_mutex_lock(&e->cache->lock);
	e->pins++;
	pthread_mutex_unlock(&e->cache->lock);
}

void tfs_cache_unpin(struct tfs_cache_entry *e)
{
	bool gone;

	if (!e)
		return;
	pthread_mutex_lock(&e->cache->lock);
	gone = --e->pins == 0 && !e->resident;
	pthread_mutex_unlock(&e->cache->lock);
	if (gone)
		entry_free(e);
}

struct tr_doc *tfs_cache_entry_doc(const struct tfs_cache_entry *entry)
{
	return entry->doc;
}
