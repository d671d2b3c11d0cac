/* SPDX-License-Identifier: MIT */
/* holds.h - the cache entries sibling inodes pin for the opens that follow their lookups. */
#ifndef TFS_HOLDS_H
#define TFS_HOLDS_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "htab.h"
#include "tr_doc.h"

struct tfs_inode;
struct tfs_hold;

/* Pins on cache entries (cache.h: the cache is the one holder of a version's document) kept for
 * sibling inodes, in records of their own (struct tfs_inode carries none). Two kinds, per inode:
 * - pinned: the entry of its document when the cache could not keep it resident (larger than the
 *   whole cache: a pinned-only entry), so that the open after the lookup finds it; kept until
 *   the inode is forgotten, set once.
 * - held: the entry of its latest lookup, pinned until the opens that follow the lookups have
 *   taken it, the inode is forgotten, or newer holds push it out of a list bounded by budget
 *   bytes. The cache may evict a version at any time (a newer one supersedes it); an evicted
 *   entry this pins stays alive, out of the cache's reach, and is what lets the open after a
 *   lookup find the version that lookup made. So the documents are bounded by the cache's
 *   capacity plus budget, beside the pinned ones.
 * The owner is the inode table (struct tfs_inodes), whose lock covers all of it. */
struct tfs_holds {
	struct tfs_htab by_inode;
	struct tfs_hold *oldest, *newest; /* records holding a document (held), oldest first */
	uint64_t bytes;                   /* sum of tr_doc_size of the held documents */
	uint64_t budget;                  /* the most bytes may reach */
};

/* Initialises holds with budget. Returns 0, or -ENOMEM. */
int tfs_holds_init(struct tfs_holds *holds, uint64_t budget);

/* Lets go of every pin and frees the records. */
void tfs_holds_destroy(struct tfs_holds *holds);

/* Keeps entry (borrowed: the caller's pin; a pin of its own is taken) for the lookup of inode
 * just counted: pinned when cached is false (it is pinned only), else held for one more open
 * (renewing its place as the newest hold, then unpinning the oldest holds beyond the budget);
 * nothing when inode has a pinned entry already. With entry NULL, or out of memory, nothing is
 * kept (the open then asks the cache, or renders again). */
void tfs_holds_keep(struct tfs_holds *holds, const struct tfs_inode *inode,
		    struct tfs_cache_entry *entry, bool cached);

/* For an open of inode: a new reference to the document of the entry it keeps pinned, else of
 * the one it holds (one lookup's hold is then taken), or NULL. */
struct tr_doc *tfs_holds_take(struct tfs_holds *holds, const struct tfs_inode *inode);

/* Lets go of whatever inode pins (it is being forgotten). */
void tfs_holds_drop(struct tfs_holds *holds, const struct tfs_inode *inode);

/* The documents of what inode pins (borrowed): *pinned and the held one, NULL when none; for
 * tests. */
struct tr_doc *tfs_holds_peek(const struct tfs_holds *holds, const struct tfs_inode *inode,
			      struct tr_doc **pinned);

/* The inode whose hold is the oldest (first_oldest) or the newest, or NULL; for tests. */
const struct tfs_inode *tfs_holds_end(const struct tfs_holds *holds, bool oldest);

#endif
