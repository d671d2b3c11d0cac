/* SPDX-License-Identifier: MIT */
/* dir.h - the directory handlers of the toolfs daemon (dir.c). */
#ifndef TFS_DIR_H
#define TFS_DIR_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

/* opendir makes a handle, or answers ENOSYS where the kernel keeps every listing
 * (tfs_fs.no_opendir); readdir and readdirplus snapshot the listing at offset 0, on the handle
 * or kept in tfs_fs.listings, and serve it by index; releasedir frees a handle. Each ends in
 * exactly one reply. */
void tfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void tfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void tfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi);
void tfs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

#endif
