/* SPDX-License-Identifier: MIT */
/* fdpool.h - the inode table's bounded pool of O_PATH descriptors (fdpool.c). */
#ifndef TFS_FDPOOL_H
#define TFS_FDPOOL_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tfs_inode;
struct tfs_inodes;

/* The pool's fields live in struct tfs_inodes (n_fds, fd_cap, the LRU and retire lists) and in
 * each real inode (fd, fd_users, fd_unpooled, ...), all under the table's lock; only fdpool.c
 * touches them. */

/* CLOCK_MONOTONIC in milliseconds, the clock of the table's deadlines. */
uint64_t tfs_now_ms(void);

/* The least fd_cap. */
#define TFS_FD_CAP_MIN 16

/* The pool size for a descriptor limit: half of it (at least 16), the rest left to open files,
 * listings and reads. */
size_t tfs_inodes_fd_cap(uint64_t nofile);

/* An O_PATH | O_NOFOLLOW descriptor of real inode (borrowed until tfs_inode_fd_put): the
 * pool's, or reopened (reopen.c: by handle, else parent + name) and checked to be the same
 * (st_dev, st_ino). Returns it, or -errno: -ESTALE when the file is gone or its name now holds another
 * file (never a descriptor of a different file). */
int tfs_inode_fd(struct tfs_inodes *tab, struct tfs_inode *inode);

/* Moves inode's descriptor from the pool to the retire list (closed TFS_FD_RETIRE_MS after its
 * last use), and the descriptors opened for it later too, until a lookup finds it by a name
 * again: for a deleted file, whose space (and inode number) an open descriptor would keep, or
 * a file moved away from the name the kernel knows (under a load that keeps the kernel asking
 * about such inodes, pooled descriptors of deleted files grew to the pool's size). */
void tfs_inode_fd_drop(struct tfs_inodes *tab, struct tfs_inode *inode);

/* How long the descriptor of a file that left its name stays open after its last use: the
 * kernel may open what it looked up a moment before the file was replaced (a lookup and an
 * open are two requests), and a descriptor still open serves that inode as a native open
 * would, where a closed one could only answer ESTALE. */
#define TFS_FD_RETIRE_MS 1000

/* Closes the retired descriptors whose time has come. Returns the milliseconds until the next
 * one is due, or -1 when none is waiting (a watch thread polls with it). */
int tfs_inodes_sweep_retired(struct tfs_inodes *tab);

/* Gives back a descriptor from tfs_inode_fd; the pool closes its least recently used unused
 * descriptors beyond its size. */
void tfs_inode_fd_put(struct tfs_inodes *tab, struct tfs_inode *inode);

/* For the table (inode.c), under its lock. */

/* A file handle of fd (O_PATH), newly allocated, with *mount_id its mount; NULL when it has
 * none or out of memory. */
struct file_handle *tfs_fdpool_handle_of(int fd, int *mount_id);

/* Whether the daemon may reopen file handles of the root's mount (sets tab->mount_id). */
bool tfs_fdpool_probe_handles(struct tfs_inodes *tab);

/* Gives inode the unused descriptor fd when it has none; returns whether it took it. */
bool tfs_fdpool_adopt(struct tfs_inodes *tab, struct tfs_inode *inode, int fd);

/* Sets whether inode's descriptor is kept in the pool (else on the retire list). */
void tfs_fdpool_set_unpooled(struct tfs_inodes *tab, struct tfs_inode *inode, bool unpooled);

/* inode's pooled descriptor for one more user (reopen.c), or -1 when it has none. */
int tfs_fdpool_use(struct tfs_inodes *tab, struct tfs_inode *inode);

/* Installs fd, just reopened, as inode's descriptor for one user; when another request
 * installed one meanwhile, closes fd and uses that one. Returns the descriptor. */
int tfs_fdpool_install(struct tfs_inodes *tab, struct tfs_inode *inode, int fd);

/* Takes the unused descriptor of an inode being forgotten off its list (inode_free closes it). */
void tfs_fdpool_forget(struct tfs_inodes *tab, struct tfs_inode *inode);

#endif
