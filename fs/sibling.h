/* SPDX-License-Identifier: MIT */
/* sibling.h - producing a virtual file's document and attributes from its source's state now. */
#ifndef TFS_SIBLING_H
#define TFS_SIBLING_H

#include <sys/stat.h>

#include "toolfs.h"

/* One version of a virtual file. */
struct tfs_sibling {
	struct tfs_doc_key key; /* owned: what the document depends on */
	struct stat attr;       /* the virtual file's attributes; st_size is the document's size */
	struct tr_doc *doc;     /* owned reference */
	struct tfs_cache_entry *entry; /* owned pin on doc's cache entry, or NULL (out of memory) */
	bool cached;                   /* entry is resident (else pinned only: the version's inode
					* keeps it, cache.h) */
	bool rendered;                 /* doc was made by this call, not found in the cache */
};

/* Resolves the entry base of directory dir now (O_PATH | O_NOFOLLOW, so an edit that renames a
 * new file over the old one is seen), applies the symlink policy and produces the sibling's
 * document: from the cache when the source's state is unchanged, else by reading it (regular
 * files are opened O_RDONLY | O_NONBLOCK through their O_PATH fd, nothing else is ever opened).
 * Reader failures, and symlinks that leave the tree, dangle or loop, are documents, not errors.
 * Returns 0 and fills out (destroy it with tfs_sibling_destroy), or -errno: -ENOENT when base
 * does not exist or gets no sibling, -ENOMEM, or -errno of resolving base. */
int tfs_sibling_make(struct tfs_fs *fs, struct tfs_inode *dir, const char *base,
		     const struct tr_selector *sel, enum tr_format fmt, struct tfs_sibling *out);

/* Frees what s owns. */
void tfs_sibling_destroy(struct tfs_sibling *s);

/* The stable inode number of the virtual file base[:sel].tool[.fmt].json in directory (dev,
 * ino): a hash of them with the top bit set, so it never meets a real inode number of SOURCE in
 * practice. */
ino_t tfs_sibling_ino(dev_t dir_dev, ino_t dir_ino, const char *base, const struct tr_selector *sel,
		      enum tr_format fmt);

#endif
