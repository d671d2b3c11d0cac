/* SPDX-License-Identifier: MIT */
/* ops.h - the FUSE low-level request handlers of the toolfs daemon. */
#ifndef TFS_OPS_H
#define TFS_OPS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

/* The handlers (ops.c, with dir.c's for directories); the session's userdata must be the
 * daemon's struct tfs_fs. Every handler ends in exactly one reply; reader failures are replies
 * with content, never errors. */
extern const struct fuse_lowlevel_ops tfs_ops;

#endif
