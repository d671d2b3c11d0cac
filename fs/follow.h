/* follow.h - resolves a symlink of SOURCE like realpath(3), never leaving the mounted tree. */
#ifndef TFS_FOLLOW_H
#define TFS_FOLLOW_H

#include "toolfs.h"

enum tfs_follow {
	TFS_FOLLOW_OK,       /* *target_fd is the final entry (of any type) */
	TFS_FOLLOW_OUTSIDE,  /* the target leaves the tree */
	TFS_FOLLOW_DANGLING, /* a component does not exist (or is not a directory) */
	TFS_FOLLOW_LOOP,     /* more than 40 links on the way */
	TFS_FOLLOW_OWN_MOUNT, /* the way enters root->own_dev, the daemon's own mount */
	TFS_FOLLOW_ERROR,    /* another error; *err holds its errno */
};

/* Follows the symbolic link link_fd (O_PATH | O_NOFOLLOW, borrowed) found in directory dirfd
 * (O_PATH, borrowed). Relative targets resolve from the link's directory; absolute ones count as
 * inside when their leading components are root's real or given path ("//a/./b/x" is inside
 * "/a/b"); ".." above the root leaves the tree. Every step is an openat(O_PATH | O_NOFOLLOW) from
 * a directory fd inside the tree, so resolution never crosses the mount point itself, and
 * targets outside are never touched. On TFS_FOLLOW_OK, *target_fd is an O_PATH fd the caller
 * owns; *err holds the errno of TFS_FOLLOW_ERROR. */
enum tfs_follow tfs_follow(const struct tfs_root *root, int dirfd, int link_fd, int *target_fd,
			   int *err);

#endif
