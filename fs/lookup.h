/* SPDX-License-Identifier: MIT */
/* lookup.h - lookups: node ids to inodes, and a name in a directory to its entry. */
#ifndef TFS_LOOKUP_H
#define TFS_LOOKUP_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <stdint.h>

struct tfs_fs;
struct tfs_inode;

/* The timeouts (seconds) of plain entries and attributes where the caching mode and the watch
 * allow caching them, and of a sibling's attributes (one immutable version). ops.c explains. */
#define TFS_PLAIN_TIMEOUT 300.0
#define TFS_SIBLING_ATTR_TIMEOUT 86400.0

/* The daemon state and the inode of a request (the session's userdata; borrowed). */
static inline struct tfs_fs *tfs_fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}
struct tfs_inode *tfs_inode_of(fuse_req_t req, fuse_ino_t ino);

/* The attribute timeout of real inode: TFS_PLAIN_TIMEOUT in cache=relaxed when the changes
 * that affect them are watched, else 0. */
double tfs_plain_attr_timeout(struct tfs_fs *fs, struct tfs_inode *inode);

/* Fills e for the real entry name of dir opened as fd (O_PATH, taken: kept by the pool or
 * closed), with the timeouts its watches allow; seen is tfs_watch_sync's answer before name was
 * resolved. Returns 0 or -errno. */
int tfs_lookup_real(struct tfs_fs *fs, struct tfs_inode *dir, const char *name, int fd,
		    uint64_t seen, struct fuse_entry_param *e);

/* Fills e for name in dir, counting one kernel lookup of its inode: real entries win, name is
 * looked up in SOURCE first and as a virtual name (docs/SPEC.md §4) only when absent, the
 * sibling then produced so that its size is exact. Returns 0 or -errno. */
int tfs_lookup_entry(struct tfs_fs *fs, struct tfs_inode *dir, const char *name,
		     struct fuse_entry_param *e);

#endif
