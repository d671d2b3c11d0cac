/* SPDX-License-Identifier: MIT */
/* ops.h - the FUSE low-level request handlers of the toolfs daemon. */
#ifndef TFS_OPS_H
#define TFS_OPS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <stdint.h>

/* The handlers; the session's userdata must be the daemon's struct tfs_fs. Every handler ends
 * in exactly one reply; reader failures are replies with content, never errors. */
extern const struct fuse_lowlevel_ops tfs_ops;

struct tfs_fs;
struct tfs_inode;

/* The daemon state and the inode of a request (the session's userdata; borrowed). */
static inline struct tfs_fs *tfs_fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}
struct tfs_inode *tfs_inode_of(fuse_req_t req, fuse_ino_t ino);

/* Fills e for the real entry name of dir opened as fd (O_PATH, taken: kept by the pool or
 * closed), with the timeouts its watches allow; seen is tfs_watch_sync's answer before name was
 * resolved. Returns 0 or an errno. */
int tfs_lookup_real(struct tfs_fs *fs, struct tfs_inode *dir, const char *name, int fd,
		    uint64_t seen, struct fuse_entry_param *e);

/* Directory handlers (dir.c): opendir makes a handle, or answers ENOSYS where the kernel keeps
 * every listing (tfs_fs.no_opendir); readdir and readdirplus snapshot the listing at offset 0,
 * on the handle or kept in tfs_fs.listings, and serve it by index; releasedir frees a handle. */
void tfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void tfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void tfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi);
void tfs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

#endif
