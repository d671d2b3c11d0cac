/* SPDX-License-Identifier: MIT */
/* htab.c - the intrusive chained hash table behind every index of the daemon. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "htab.h"

int tfs_htab_init(struct tfs_htab *h, size_t n_buckets,
		  uint64_t (*hash)(const struct tfs_hnode *node))
{
	h->buckets = calloc(n_buckets, sizeof(*h->buckets));
	if (!h->buckets)
		return -ENOMEM;
	h->n_buckets = n_buckets;
	h->count = 0;
	h->hash = hash;
	return 0;
}

void tfs_htab_destroy(struct tfs_htab *h)
{
	free(h->buckets);
	h->buckets = NULL;
	h->n_buckets = h->count = 0;
}

static void grow(struct tfs_htab *h)
{
	size_t n = h->n_buckets * 2;
	struct tfs_hnode **grown = calloc(n, sizeof(*grown));

	if (!grown)
		return;
	for (size_t i = 0; i < h->n_buckets; i++) {
		for (struct tfs_hnode *p = h->buckets[i], *next; p; p = next) {
			size_t slot = tfs_htab_slot(n, h->hash(p));

			next = p->next;
			p->next = grown[slot];
			grown[slot] = p;
		}
	}
	free(h->buckets);
	h->buckets = grown;
	h->n_buckets = n;
}

void tfs_htab_insert(struct tfs_htab *h, struct tfs_hnode *node, uint64_t hash)
{
	struct tfs_hnode **slot = &h->buckets[tfs_htab_slot(h->n_buckets, hash)];

	node->next = *slot;
	*slot = node;
	if (++h->count > h->n_buckets)
		grow(h);
}

bool tfs_htab_remove(struct tfs_htab *h, struct tfs_hnode *node, uint64_t hash)
{
	struct tfs_hnode **slot = &h->buckets[tfs_htab_slot(h->n_buckets, hash)];

	while (*slot && *slot != node)
		slot = &(*slot)->next;
	if (!*slot)
		return false;
	*slot = node->next;
	node->next = NULL;
	h->count--;
	return true;
}

struct tfs_hnode *tfs_htab_next(const struct tfs_htab *h, size_t *bucket, struct tfs_hnode *node)
{
	if (node && node->next)
		return node->next;
	if (node)
		++*bucket;
	for (; *bucket < h->n_buckets; ++*bucket) {
		if (h->buckets[*bucket])
			return h->buckets[*bucket];
	}
	return NULL;
}
