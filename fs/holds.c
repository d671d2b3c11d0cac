/* SPDX-License-Identifier: MIT */
/* holds.c - the cache entries sibling inodes pin for the opens that follow their lookups. */
#include <stdlib.h>

#include "holds.h"

struct tfs_hold {
	struct tfs_hnode link; /* holds.by_inode */
	const struct tfs_inode *inode;
	struct tfs_cache_entry *pinned; /* owned pin, or NULL */
	struct tfs_cache_entry *held;   /* owned pin, or NULL */
	uint64_t opens;                 /* lookups not yet followed by an open */
	struct tfs_hold *older, *newer; /* the list of holds, while held */
};

static uint64_t inode_hash(const struct tfs_inode *inode)
{
	return (uintptr_t)inode * 0x9e3779b97f4a7c15ULL;
}

static uint64_t hold_hash(const struct tfs_hnode *node)
{
	return inode_hash(tfs_hnode_entry(node, const struct tfs_hold, link)->inode);
}

int tfs_holds_init(struct tfs_holds *holds, uint64_t budget)
{
	holds->oldest = holds->newest = NULL;
	holds->bytes = 0;
	holds->budget = budget;
	return tfs_htab_init(&holds->by_inode, 1024, hold_hash);
}

static uint64_t entry_size(const struct tfs_cache_entry *entry)
{
	return tr_doc_size(tfs_cache_entry_doc(entry));
}

static void hold_free(struct tfs_hold *hold)
{
	tfs_cache_unpin(hold->pinned);
	tfs_cache_unpin(hold->held);
	free(hold);
}

void tfs_holds_destroy(struct tfs_holds *holds)
{
	size_t bucket = 0;
	struct tfs_hnode *node = tfs_htab_next(&holds->by_inode, &bucket, NULL), *next;

	for (; node; node = next) {
		next = tfs_htab_next(&holds->by_inode, &bucket, node);
		hold_free(tfs_hnode_entry(node, struct tfs_hold, link));
	}
	tfs_htab_destroy(&holds->by_inode);
}

static struct tfs_hold *find(const struct tfs_holds *holds, const struct tfs_inode *inode)
{
	struct tfs_hnode *node = tfs_htab_chain(&holds->by_inode, inode_hash(inode));

	for (; node; node = node->next) {
		struct tfs_hold *hold = tfs_hnode_entry(node, struct tfs_hold, link);

		if (hold->inode == inode)
			return hold;
	}
	return NULL;
}

/* Frees hold once it keeps nothing. */
static void release_if_empty(struct tfs_holds *holds, struct tfs_hold *hold)
{
	if (hold->pinned || hold->held)
		return;
	tfs_htab_remove(&holds->by_inode, &hold->link, inode_hash(hold->inode));
	free(hold);
}

/* Takes hold off the list of holds and returns its held entry (the caller's pin now), or NULL. */
static struct tfs_cache_entry *unhold(struct tfs_holds *holds, struct tfs_hold *hold)
{
	struct tfs_cache_entry *entry = hold->held;

	if (!entry)
		return NULL;
	*(hold->older ? &hold->older->newer : &holds->oldest) = hold->newer;
	*(hold->newer ? &hold->newer->older : &holds->newest) = hold->older;
	holds->bytes -= entry_size(entry);
	hold->held = NULL;
	hold->older = hold->newer = NULL;
	hold->opens = 0;
	return entry;
}

/* Makes hold pin entry for one more open (renewing its place as the newest hold), then unpins
 * the oldest holds beyond the budget. An unpinned entry is almost always still resident in the
 * cache, so letting it go frees nothing. */
static void hold_for_open(struct tfs_holds *holds, struct tfs_hold *hold,
			  struct tfs_cache_entry *entry)
{
	uint64_t size = entry_size(entry), opens = hold->opens;
	struct tfs_cache_entry *had = unhold(holds, hold);

	if (size > holds->budget) {
		tfs_cache_unpin(had);
		release_if_empty(holds, hold);
		return;
	}
	if (!had)
		tfs_cache_pin(entry);
	hold->held = had ? had : entry;
	hold->opens = opens + 1;
	hold->older = holds->newest;
	*(holds->newest ? &holds->newest->newer : &holds->oldest) = hold;
	holds->newest = hold;
	holds->bytes += size;
	while (holds->bytes > holds->budget) {
		struct tfs_hold *oldest = holds->oldest;

		tfs_cache_unpin(unhold(holds, oldest));
		release_if_empty(holds, oldest);
	}
}

void tfs_holds_keep(struct tfs_holds *holds, const struct tfs_inode *inode,
		    struct tfs_cache_entry *entry, bool cached)
{
	struct tfs_hold *hold = find(holds, inode);

	if (!entry || (hold && hold->pinned))
		return; /* a pinned document serves every open already */
	if (!hold) {
		hold = calloc(1, sizeof(*hold));
		if (!hold)
			return;
		hold->inode = inode;
		tfs_htab_insert(&holds->by_inode, &hold->link, inode_hash(inode));
	}
	if (cached) {
		hold_for_open(holds, hold, entry);
	} else {
		tfs_cache_pin(entry);
		hold->pinned = entry;
	}
}

/* A new reference to entry's document. */
static struct tr_doc *doc_of(const struct tfs_cache_entry *entry)
{
	return tr_doc_ref(tfs_cache_entry_doc(entry));
}

struct tr_doc *tfs_holds_take(struct tfs_holds *holds, const struct tfs_inode *inode)
{
	struct tfs_hold *hold = find(holds, inode);
	struct tfs_cache_entry *entry;
	struct tr_doc *doc;

	if (!hold)
		return NULL;
	if (hold->pinned)
		return doc_of(hold->pinned);
	if (!hold->held)
		return NULL;
	if (hold->opens > 1) {
		hold->opens--;
		return doc_of(hold->held);
	}
	entry = unhold(holds, hold);
	doc = doc_of(entry);
	tfs_cache_unpin(entry);
	release_if_empty(holds, hold);
	return doc;
}

void tfs_holds_drop(struct tfs_holds *holds, const struct tfs_inode *inode)
{
	struct tfs_hold *hold = find(holds, inode);

	if (!hold)
		return;
	tfs_cache_unpin(unhold(holds, hold));
	tfs_htab_remove(&holds->by_inode, &hold->link, inode_hash(inode));
	hold_free(hold);
}

struct tr_doc *tfs_holds_peek(const struct tfs_holds *holds, const struct tfs_inode *inode,
			      struct tr_doc **pinned)
{
	struct tfs_hold *hold = find(holds, inode);

	*pinned = hold && hold->pinned ? tfs_cache_entry_doc(hold->pinned) : NULL;
	return hold && hold->held ? tfs_cache_entry_doc(hold->held) : NULL;
}

const struct tfs_inode *tfs_holds_end(const struct tfs_holds *holds, bool oldest)
{
	const struct tfs_hold *hold = oldest ? holds->oldest : holds->newest;

	return hold ? hold->inode : NULL;
}
