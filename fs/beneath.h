/* SPDX-License-Identifier: MIT */
/* beneath.h - whether what a request reached is still inside SOURCE, and never the mount itself. */
#ifndef TFS_BENEATH_H
#define TFS_BENEATH_H

#include <stdbool.h>
#include <sys/stat.h>

struct tfs_fs;
struct tfs_inode;

/* Reads the device of the mount at mountpoint without asking its file system (no request to the
 * daemon, whose loop may not run yet) into fs->own_dev, the device of the daemon's own mount (0
 * until it is mounted), for the checks below. Returns 0 or -errno. */
int tfs_beneath_set_own_mount(struct tfs_fs *fs, const char *mountpoint);

/* Whether fd (a descriptor opened by path from a directory inside SOURCE, or a directory's by
 * handle: either way one whose kernel path is its own) is SOURCE or below it now: SOURCE as it
 * is named now (its root descriptor's path), never by the path it had before a rename. */
bool tfs_fd_beneath(const struct tfs_fs *fs, int fd);

/* 0 when the real or sibling inode is still inside SOURCE: a directory is, or lies below it; a
 * file or link was last found in such a directory (a sibling: its directory). Otherwise
 * -ESTALE: it was moved out, or a chain of directories it hangs from was (docs/SPEC.md §4).
 * Another -errno when the inode cannot be opened. */
int tfs_inode_beneath(struct tfs_fs *fs, struct tfs_inode *inode);

/* tfs_inode_beneath, after the moved mark a change event may have set (tfs_inodes_reachable):
 * what every request that reaches a real inode, or a sibling's directory, checks first. */
int tfs_inode_usable(struct tfs_fs *fs, struct tfs_inode *inode);

/* fstat of an entry just opened (O_PATH) in SOURCE, unless it is on the daemon's own mount
 * (bind-mounted into SOURCE, or SOURCE's own mount point): -ELOOP then, found without a request
 * to the mount. Returns 0 or -errno. */
int tfs_stat_entry(const struct tfs_fs *fs, int fd, struct stat *st);

#endif
