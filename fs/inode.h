/* SPDX-License-Identifier: MIT */
/* inode.h - the daemon's inode table: real entries of SOURCE and immutable sibling versions. */
#ifndef TFS_INODE_H
#define TFS_INODE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cache.h"
#include "holds.h"
#include "htab.h"

/* One kernel inode. Its address is its FUSE node id (the root's is FUSE_ROOT_ID).
 *
 * A real inode stands for one (st_dev, st_ino) of SOURCE. It keeps its identity without an open
 * descriptor: a file handle (name_to_handle_at) when the daemon may reopen those, else the
 * directory and name of its latest lookup, re-resolved and checked against (st_dev, st_ino).
 * An O_PATH descriptor is open only while it is in the table's bounded pool (tfs_inode_fd), so
 * the number of inodes the kernel remembers is not bounded by RLIMIT_NOFILE.
 *
 * A sibling inode stands for one version of a virtual file: the document of key. It never
 * changes; when the source changes, the next lookup of the name returns a new sibling inode, so
 * the kernel keeps a separate page cache and attributes per version and an open handle (and its
 * fstat) stays a snapshot. */
struct tfs_inode {
	struct tfs_hnode link; /* the table's index of its kind: (st_dev, st_ino) or (dir, key) */
	/* Kernel lookups + siblings and entries naming this directory + queued invalidations;
	 * under the table lock. */
	uint64_t refs;
	bool is_sibling;
	bool dead;   /* out of the table, about to be freed; under the table lock */
	mode_t type; /* real inodes: S_IFMT bits; siblings: 0 */
	/* Real inodes: the descriptor pool's O_PATH | O_NOFOLLOW descriptor (owned) or -1;
	 * siblings: -1. */
	int fd;

	/* The rest is one kind's: is_sibling says which member of the union is in use (a table of
	 * 100,000 files holds 200,000 inodes, and each kind would otherwise carry the other's
	 * fields). */
	union {
		struct { /* Real inodes. */
			dev_t dev;
			ino_t ino;
			char *path; /* directories: path from the root ("" for it); owned; under
				     * the table lock */
			struct file_handle *handle; /* owned; NULL when it cannot be reopened by
						     * handle */
			struct tfs_inode *parent;   /* directory of its latest lookup (a
						   * reference); NULL: root */
			char *name;                 /* its name there; owned; both under the lock */
			struct tfs_hnode name_link; /* the table's (parent, name) index */
			/* The descriptor pool: fd_users counts the requests using fd; unused open
			 * descriptors are on the table's LRU list. fd_unpooled: the file left the
			 * name the kernel knows it by (tfs_inode_fd_drop), so its unused
			 * descriptor is on the retire list instead, closed TFS_FD_RETIRE_MS after
			 * its last use, until a lookup finds it by a name again. Under the lock. */
			unsigned fd_users;
			bool fd_unpooled;
			uint64_t fd_retire_ms; /* on the retire list: when its descriptor closes
						* (CLOCK_MONOTONIC) */
			struct tfs_inode *fd_older, *fd_newer;
			/* Directories: set when a change event said the entry (parent, name) no
			 * longer names this directory: until a lookup finds it again (the kernel
			 * has one entry for a directory, which that lookup moves) or a second
			 * after its kernel entry was invalidated, requests that reach it or
			 * anything under it get ESTALE (see tfs_inodes_reachable). UINT64_MAX
			 * until the invalidation is done, then a CLOCK_MONOTONIC deadline in ns.
			 * Under the lock. Files need none: their kernel entries are never cached
			 * past a change (ops.c). */
			uint64_t moved_until;
			uint64_t moved_seq; /* the change event that set the mark (tfs_inodes.events) */
			/* Directories: tfs_inodes.marks + 1 when it was last found inside SOURCE
			 * (beneath.h), 0 never. Under the lock. */
			uint64_t beneath_marks;
			/* Regular files: opened says the state at the previous open is known:
			 * its size, mtime and ctime; under the table lock. */
			bool opened;
			/* Regular files: a reply gave the kernel attributes with a timeout since
			 * the watch last invalidated them (tfs_inodes_gave_attrs). Under the
			 * lock. */
			bool long_attrs;
			/* Regular files: when a change event last named the file (tfs_now_ms),
			 * 0 never. Under the lock. */
			uint64_t changed_ms;
			/* Regular files: the sizes given to the kernel (lookups, getattr) since
			 * the last open that invalidated its attributes: TFS_SIZE_NONE, one size
			 * (given_size), or TFS_SIZE_MIXED. Under the table lock. */
			uint8_t given;
			off_t given_size;
			off_t opened_size;
			struct timespec opened_mtime, opened_ctime;
		};
		struct {                        /* Sibling inodes. */
			struct tfs_inode *dir;  /* the directory holding the source; a reference */
			struct tfs_doc_key key; /* owned */
			struct stat attr;       /* the virtual file's attributes; st_size = its
					   * document's size; its document is the cache's, which
					   * the table's holds pin (holds.h) */
		};
	};
};

struct tfs_inodes {
	pthread_mutex_t lock;
	struct tfs_inode root;
	struct tfs_htab real, sibling; /* real inodes by (st_dev, st_ino), siblings by (dir, key) */
	struct tfs_htab names;         /* real inodes by their latest entry (parent, name) */
	struct tfs_inode *fd_oldest, *fd_newest; /* open, unused pool descriptors */
	/* Open, unused descriptors of files that left their name (fd_unpooled), oldest first:
	 * closed TFS_FD_RETIRE_MS after their last use, by tfs_inodes_sweep_retired or any later
	 * use of the pool. */
	struct tfs_inode *retire_oldest, *retire_newest;
	size_t n_fds, fd_cap; /* open pool descriptors (used or not); the most kept unused */
	bool use_handles;     /* the daemon may reopen file handles (CAP_DAC_READ_SEARCH) */
	uint64_t events;      /* change events taken in so far (watch.c); under the lock */
	uint64_t marks;       /* moved marks set so far (lost events included); under the lock */
	uint64_t events_lost; /* inotify queue overflows (watch.c): every listing may differ; atomic */
	int mount_id;         /* of the root: handles of other mounts are not kept */
	/* The watch's hooks (watch.c keeps its state of each directory in a map of its own):
	 * on_free is called (outside the lock) for each real inode about to be freed, to drop its
	 * watch; watched (under the lock) says whether a directory's watch is in place. NULL when
	 * there is no watch; on_free_arg is the argument of both. */
	void (*on_free)(void *arg, struct tfs_inode *inode);
	bool (*watched)(void *arg, const struct tfs_inode *dir);
	void *on_free_arg;
	struct tfs_holds holds; /* the cache entries siblings pin from lookup to open */
};

/* Initialises the table with the root inode, which takes ownership of root_fd (O_PATH of SOURCE)
 * and is never forgotten. held_budget bounds the bytes of the cache entries that sibling inodes
 * pin from their lookup to their open (holds.h). The descriptor pool keeps at most
 * fd_cap unused descriptors open (tfs_inodes_fd_cap gives one from RLIMIT_NOFILE). File handles
 * are used when a probe on the root shows the daemon may reopen them. Returns 0, or -ENOMEM
 * (root_fd is then not taken). */
int tfs_inodes_init(struct tfs_inodes *tab, int root_fd, const struct stat *root_st,
		    uint64_t held_budget);

/* Frees every inode left (the kernel forgets nothing at unmount) and closes their fds. */
void tfs_inodes_destroy(struct tfs_inodes *tab);

/* Maps a node id to its inode (borrowed; valid while the kernel holds the id). */
struct tfs_inode *tfs_inodes_get(struct tfs_inodes *tab, uint64_t nodeid);

/* The node id of inode. */
uint64_t tfs_inode_nodeid(const struct tfs_inodes *tab, const struct tfs_inode *inode);

/* The latest entry of real inode: *parent with one more reference (drop it with
 * tfs_inodes_forget) and, unless name is NULL, a copy of *name (the caller frees it); both NULL
 * for the root or an inode with no entry. Returns false when out of memory. */
bool tfs_inodes_entry_ref(struct tfs_inodes *tab, struct tfs_inode *inode,
			  struct tfs_inode **parent, char **name);

/* The most inodes a chain of latest entries holds from any inode up to the root (both counted):
 * every walk up the tree ends within it. More than any path of PATH_MAX bytes can name. */
enum { TFS_MAX_DEPTH = 4096 };

/* Counts one kernel lookup of the real entry st, found as name in directory dir and opened as
 * fd (O_PATH | O_NOFOLLOW, owned by the call: it goes to the pool or is closed). (dir, name)
 * becomes the inode's latest entry; its moved mark is cleared when the event that set it was
 * taken in before the lookup resolved the name (its number at most seen). For a directory, path
 * (borrowed) becomes its path from the root. Sets *found to the inode and *created to whether
 * it is new, and returns 0; or returns -ENOMEM, or -ELOOP for a directory that dir is, or hangs
 * from (the tree would have a cycle), or one that would pass TFS_MAX_DEPTH (fd closed, the
 * table unchanged). */
int tfs_inodes_add_real(struct tfs_inodes *tab, int fd, const struct stat *st,
			struct tfs_inode *dir, const char *name, const char *path, uint64_t seen,
			struct tfs_inode **found, bool *created);

/* The real inode (dev, ino) with one more reference, or NULL. */
struct tfs_inode *tfs_inodes_real_ref(struct tfs_inodes *tab, dev_t dev, ino_t ino);

/* Whether the changes that affect the cached attributes of real inode are watched: a
 * directory's own watch, else the watch of the directory of its latest entry. */
bool tfs_inodes_attr_watched(struct tfs_inodes *tab, struct tfs_inode *inode);

/* The real inode whose latest entry is (dir, name), with one more reference (drop it with
 * tfs_inodes_forget), or NULL. With mark, its moved mark is set (see tfs_inode.moved_until). */
struct tfs_inode *tfs_inodes_child_ref(struct tfs_inodes *tab, struct tfs_inode *dir,
				       const char *name, bool mark);

/* Calls find(arg) under the table's lock and takes one more reference on the inode it returns
 * unless that one is being freed; returns it, or NULL. */
struct tfs_inode *tfs_inodes_ref_found(struct tfs_inodes *tab, struct tfs_inode *(*find)(void *arg),
				       void *arg);

/* Takes one more reference on inode unless it is being freed; returns whether it did. */
bool tfs_inodes_ref(struct tfs_inodes *tab, struct tfs_inode *inode);

/* Marks every real directory but the root moved (the change events were lost) and calls each(arg,
 * parent, name, inode) for each with a latest entry, with one more reference on parent and on
 * inode that each takes over; under the table lock. */
void tfs_inodes_mark_all(struct tfs_inodes *tab,
			 void (*each)(void *arg, struct tfs_inode *parent, const char *name,
				      struct tfs_inode *inode),
			 void *arg);

/* Sets the moved mark of a directory for the current event; under the table lock (marks.c). */
void tfs_inodes_mark_locked(struct tfs_inodes *tab, struct tfs_inode *inode);

/* Marks inode moved by the current event, or, with done, starts the one-second grace of a mark
 * whose kernel entry has been invalidated. */
void tfs_inodes_mark_moved(struct tfs_inodes *tab, struct tfs_inode *inode, bool done);

/* Whether directory dir was found inside SOURCE (tfs_inodes_beneath_seen) with no moved mark set
 * since, and every directory above it is watched, so that its moving out would have set one.
 * *marks is the count of marks now, for tfs_inodes_beneath_seen. */
bool tfs_inodes_beneath_known(struct tfs_inodes *tab, struct tfs_inode *dir, uint64_t *marks);

/* Records that dir was found inside SOURCE when marks moved marks had been set. */
void tfs_inodes_beneath_seen(struct tfs_inodes *tab, struct tfs_inode *dir, uint64_t marks);

/* False when inode, or a directory on the path of its latest entries up to the root, carries a
 * moved mark: the kernel may have reached it by a name that no longer holds it. */
bool tfs_inodes_reachable(struct tfs_inodes *tab, struct tfs_inode *inode);

/* Counts one kernel lookup of the sibling version key (borrowed, copied) of a source in dir,
 * creating its inode with attributes attr when it is new. entry (borrowed: the caller's pin, or
 * NULL) is the version's cache entry: the inode pins it until it is forgotten when cached is
 * false (pinned only: the cache could not keep it), else holds a pin for the open that follows
 * this lookup (holds.h). Returns the inode, or NULL when out of memory. */
struct tfs_inode *tfs_inodes_add_sibling(struct tfs_inodes *tab, struct tfs_inode *dir,
					 const struct tfs_doc_key *key, const struct stat *attr,
					 struct tfs_cache_entry *entry, bool cached);

/* For an open of a sibling inode: returns a new reference to the document of the entry it keeps
 * pinned or holds (the hold of one lookup is then taken), or NULL when it has neither. */
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

/* tfs_inode.given: what the daemon knows of the size the kernel holds for a regular file. */
enum { TFS_SIZE_NONE, TFS_SIZE_ONE, TFS_SIZE_MIXED };

/* How long after a change event names a regular file its attributes are given with a timeout of
 * 0 (ops.c, "Never a padded read"). */
#define TFS_FILE_HOT_MS 1000

/* Records that a reply (lookup, readdirplus, getattr) gives the kernel size for the real regular
 * file inode, its attributes to be valid timeout seconds. Returns the timeout to give: 0 when a
 * change event named the file less than TFS_FILE_HOT_MS ago, else timeout. */
double tfs_inodes_gave_attrs(struct tfs_inodes *tab, struct tfs_inode *inode, off_t size,
			     double timeout);

/* For a change event that names the real regular file inode (the watch takes it in): from now on
 * for TFS_FILE_HOT_MS, replies give its attributes no timeout. */
void tfs_inodes_file_changed(struct tfs_inodes *tab, struct tfs_inode *inode);

/* For the watch's invalidation of the real regular file inode after a change: returns whether a
 * reply since the previous one gave its attributes a timeout (the kernel may hold them still),
 * and from then on counts none as given. */
bool tfs_inodes_take_long_attrs(struct tfs_inodes *tab, struct tfs_inode *inode);

/* For an open of the real regular file inode whose descriptor has size: returns true when the
 * kernel may hold another size for it (any size given since the last such open differs, or
 * several did), and from then on counts size as the one given. On true the caller must
 * invalidate the kernel's attributes of inode before it replies to the open. */
bool tfs_inodes_open_size_stale(struct tfs_inodes *tab, struct tfs_inode *inode, off_t size);

#include "fdpool.h"

#endif
