/* SPDX-License-Identifier: MIT */
/* htab.h - the intrusive chained hash table behind every index of the daemon. */
#ifndef TFS_HTAB_H
#define TFS_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The link an indexed struct embeds, one per index it is in. */
struct tfs_hnode {
	struct tfs_hnode *next;
};

/* The struct that embeds node as member. */
#define tfs_hnode_entry(node, type, member) \
	((type *)(void *)((char *)(node)-offsetof(type, member)))

/* A table of nodes chained by hash. It locks nothing: its owner's lock covers it. hash gives a
 * node's hash from its struct (for rehashing), equal to the hash its insert was given. */
struct tfs_htab {
	struct tfs_hnode **buckets;
	size_t n_buckets, count;
	uint64_t (*hash)(const struct tfs_hnode *node);
};

/* Initialises h with n_buckets buckets (a power of two is not needed). Returns 0, or -ENOMEM. */
int tfs_htab_init(struct tfs_htab *h, size_t n_buckets,
		  uint64_t (*hash)(const struct tfs_hnode *node));

/* Frees the bucket array; the nodes are the owner's to free (tfs_htab_next first). */
void tfs_htab_destroy(struct tfs_htab *h);

/* The bucket of hash. Its high bits are folded into the low ones first (half of murmur3's
 * finaliser): a multiplicative hash of an aligned address has its low bits all zero, which
 * alone would leave 15 buckets of 16 empty. */
static inline size_t tfs_htab_slot(size_t n_buckets, uint64_t hash)
{
	hash ^= hash >> 33;
	hash *= 0xff51afd7ed558ccdULL;
	hash ^= hash >> 33;
	return (size_t)(hash % n_buckets);
}

/* The first node of the chain that holds hash (follow ->next; a chain mixes hashes), or NULL. */
static inline struct tfs_hnode *tfs_htab_chain(const struct tfs_htab *h, uint64_t hash)
{
	return h->buckets[tfs_htab_slot(h->n_buckets, hash)];
}

/* Puts node (not in h) at the head of hash's chain; doubles the buckets when the nodes
 * outnumber them (a failed allocation keeps the old array: chains just get longer). */
void tfs_htab_insert(struct tfs_htab *h, struct tfs_hnode *node, uint64_t hash);

/* Takes node out of h when it is there (found in hash's chain); returns whether it was. */
bool tfs_htab_remove(struct tfs_htab *h, struct tfs_hnode *node, uint64_t hash);

/* Every node in turn: start with *bucket = 0 and node NULL; returns NULL at the end. The node
 * returned may be freed before the next call only when its successor was taken first. */
struct tfs_hnode *tfs_htab_next(const struct tfs_htab *h, size_t *bucket, struct tfs_hnode *node);

#endif
