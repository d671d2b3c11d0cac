/* inode.h - the daemon's inode table: real entries of SOURCE and immutable sibling versions. */
#ifndef TFS_INODE_H
#define TFS_INODE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cache.h"

/* One kernel inode. Its address is its FUSE node id (the root's is FUSE_ROOT_ID).
 *
 * A real inode stands for one (st_dev, st_ino) of SOURCE and holds an O_PATH fd of it.
 *
 * A sibling inode stands for one version of a virtual file: the document of key. It never
 * changes; when the source changes, the next lookup of the name returns a new sibling inode, so
 * the kernel keeps a separate page cache and attributes per version and an open handle (and its
 * fstat) stays a snapshot. */
struct tfs_inode {
	struct tfs_inode *bucket_next; /* table internals */
	uint64_t refs; /* kernel lookups + siblings naming this directory; under the table lock */
	bool is_sibling;

	/* Real inodes. */
	int fd; /* O_PATH | O_NOFOLLOW of the entry; owned */
	dev_t dev;
	ino_t ino;
	mode_t type; /* S_IFMT bits */
	char *path;  /* directories: path from the root ("" for it); owned; under the table lock */
	bool opened; /* regular files: opened_st is the state at the previous open */
	struct stat opened_st; /* its size, mtime and ctime count; under the table lock */

	/* Sibling inodes. */
	struct tfs_inode *dir;  /* the directory holding the source; a reference */
	struct tfs_doc_key key; /* owned */
	struct stat attr;       /* the virtual file's attributes; st_size = its document's size */
	struct tr_doc *pinned;  /* its document when the cache could not keep it (larger than the
				 * whole cache), so that the open after the lookup finds it; owned
				 * reference, set once under the table lock */
	/* The document of the latest lookup, held (owned reference) until the opens that follow
	 * the lookups have taken it, the inode is forgotten, or newer holds push it out of the
	 * table's bounded list. The cache may evict a version at any time (a newer one supersedes
	 * it); the hold is what lets the open after a lookup find the version that lookup made.
	 * All under the table lock. */
	struct tr_doc *held;
	uint64_t held_opens;                       /* lookups not yet followed by an open */
	struct tfs_inode *held_older, *held_newer; /* the table's list of holding inodes */
};

struct tfs_inodes {
	pthread_mutex_t lock;
	struct tfs_inode root;
	struct tfs_inode **real, **sibling; /* hash buckets */
	size_t n_real_buckets, n_sibling_buckets, n_real, n_sibling;
	struct tfs_inode *held_oldest, *held_newest; /* sibling inodes holding a document */
	uint64_t held_bytes,
		held_budget; /* sum of their tr_doc_size(held); the most it may reach */
};

/* Initialises the table with the root inode, which takes ownership of root_fd (O_PATH of SOURCE)
 * and is never forgotten. held_budget bounds the bytes of the documents that sibling inodes hold
 * from their lookup to their open (see tfs_inode.held). Returns 0, or -1 when out of memory
 * (root_fd is then not taken). */
int tfs_inodes_init(struct tfs_inodes *tab, int root_fd, const struct stat *root_st,
		    uint64_t held_budget);

/* Frees every inode left (the kernel forgets nothing at unmount) and closes their fds. */
void tfs_inodes_destroy(struct tfs_inodes *tab);

/* Maps a node id to its inode (borrowed; valid while the kernel holds the id). */
struct tfs_inode *tfs_inodes_get(struct tfs_inodes *tab, uint64_t nodeid);

/* The node id of inode. */
uint64_t tfs_inode_nodeid(const struct tfs_inodes *tab, const struct tfs_inode *inode);

/* Counts one kernel lookup of the real entry st, opened as fd (O_PATH | O_NOFOLLOW, owned by
 * the call: kept by a new inode, closed when the entry already has one). For a directory, path
 * (borrowed) becomes its path from the root. Returns the inode, or NULL when out of memory (fd
 * closed). */
struct tfs_inode *tfs_inodes_add_real(struct tfs_inodes *tab, int fd, const struct stat *st,
				      const char *path);

/* Counts one kernel lookup of the sibling version key (borrowed, copied) of a source in dir,
 * creating its inode with attributes attr when it is new. doc (borrowed) is the version's
 * document: the inode keeps a reference until it is forgotten when cached is false (the cache
 * could not keep it), else holds one for the open that follows this lookup (see held).
 * Returns the inode, or NULL when out of memory. */
struct tfs_inode *tfs_inodes_add_sibling(struct tfs_inodes *tab, struct tfs_inode *dir,
					 const struct tfs_doc_key *key, const struct stat *attr,
					 struct tr_doc *doc, bool cached);

/* For an open of a sibling inode: returns a new reference to the document it keeps (pinned) or
 * holds (the hold of one lookup is then taken), or NULL when it has neither. */
struct tr_doc *tfs_inodes_take_doc(struct tfs_inodes *tab, struct tfs_inode *inode);

/* Drops n lookups; an inode left with none is freed (a sibling then releases its directory). */
void tfs_inodes_forget(struct tfs_inodes *tab, struct tfs_inode *inode, uint64_t n);

/* Returns the path from the root of entry name in directory dir ("name" in the root), newly
 * allocated, or NULL when out of memory. */
char *tfs_inodes_child_path(struct tfs_inodes *tab, struct tfs_inode *dir, const char *name);

/* Records the state st of a real regular file being opened and returns true when it equals the
 * state at the previous open, so the kernel may keep the pages it cached then. */
bool tfs_inodes_reopen_unchanged(struct tfs_inodes *tab, struct tfs_inode *inode,
				 const struct stat *st);

#endif
