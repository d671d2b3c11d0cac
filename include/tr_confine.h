/* SPDX-License-Identifier: MIT */
/* tr_confine.h - opening a path confined beneath a root directory: the one confined open of the
 * daemon, toolfs-read and toolfs-mcp (docs/SPEC.md §4 and §7). */
#ifndef TR_CONFINE_H
#define TR_CONFINE_H

#include <stdbool.h>
#include <sys/types.h>

#include "tr_options.h" /* enum tr_symlink_policy: TR_SYMLINKS_INSIDE, TR_SYMLINKS_NONE */

/* The outcome of tr_confined_open. */
enum tr_confine {
	TR_CONFINE_OK,           /* *fd is the final entry */
	TR_CONFINE_OUTSIDE_ROOT, /* the path, or a symbolic link on it, leads outside the root */
	TR_CONFINE_NOT_FOUND,    /* a component is missing, or one in the middle is no directory */
	TR_CONFINE_NOT_REGULAR,  /* regular_only and the entry is not a regular file; or a link
				  * met under TR_SYMLINKS_NONE */
	TR_CONFINE_LOOP,         /* more than 40 symbolic links on the way */
	TR_CONFINE_OWN_MOUNT,    /* a step is on how->avoid_dev */
	TR_CONFINE_ERROR,        /* another failure; *err holds its errno */
};

/* A directory that paths are confined to. */
struct tr_root {
	int fd;      /* owned, O_PATH | O_DIRECTORY */
	char *path;  /* owned: its real path */
	char *given; /* owned: as given, made absolute (may be a symlinked spelling of path) */
	dev_t dev;
	ino_t ino;
};

/* Opens dir (made absolute from the current directory when relative) as a root: fills every
 * field of root. Returns 0, or -errno with root's fields cleared (fd -1). */
int tr_root_open(struct tr_root *root, const char *dir);

/* Closes and frees what root holds; a cleared root (fd -1) is a no-op. */
void tr_root_close(struct tr_root *root);

/* How tr_confined_open resolves. */
struct tr_confine_how {
	/* TR_SYMLINKS_INSIDE: links are followed as long as every step stays beneath the root;
	 * TR_SYMLINKS_NONE: never followed, a link anywhere on the way (the last entry too) is
	 * NOT_REGULAR whatever its target, never OUTSIDE_ROOT */
	enum tr_symlink_policy symlinks;
	bool regular_only; /* a final entry that is not a regular file (a directory too) is
			    * NOT_REGULAR; it is only ever opened O_PATH */
	bool force_walk;   /* never openat2, always the component walk (tests) */
	dev_t avoid_dev;   /* 0, or a st_dev never stepped onto (the daemon's own mount): every
			    * step is checked before it is used, and one on it is OWN_MOUNT */
};

/* Opens path beneath root, starting at dirfd (borrowed: a directory beneath root; -1 means
 * root->fd). path is relative, or absolute when it begins with the components of root->path or
 * root->given ("//a/./b/x" is inside "/a/b"); any other absolute path is OUTSIDE_ROOT. ".."
 * that would leave the root is OUTSIDE_ROOT. Symbolic links (TR_SYMLINKS_INSIDE) are followed
 * as realpath(3) does, relative targets from the link's directory and absolute ones under the
 * same rule as an absolute path, as long as every step stays beneath root. A missing component,
 * a dangling link, or a trailing '/' after a non-directory is NOT_FOUND. openat2(RESOLVE_BENEATH)
 * when the kernel has it, else (and for avoid_dev, and for what openat2 refuses) a walk from
 * directory fds with openat(O_PATH | O_NOFOLLOW): targets outside the root are never opened.
 * On TR_CONFINE_OK, *fd is an O_PATH | O_CLOEXEC fd the caller owns (a directory when path ends
 * on one); otherwise *fd is -1. *err is the errno of TR_CONFINE_ERROR, else 0. */
enum tr_confine tr_confined_open(const struct tr_root *root, int dirfd, const char *path,
				 const struct tr_confine_how *how, int *fd, int *err);

/* A short English phrase for an outcome ("outside the root"); static storage. */
const char *tr_confine_strerror(enum tr_confine outcome);

/* Opens the inode of opath_fd (borrowed, O_PATH) again with flags (O_CLOEXEC and O_NOCTTY
 * added) through /proc/self/fd: exactly that inode, whatever its name now leads to. The magic
 * link is followed by design (O_NOFOLLOW would refuse it); an opath_fd that is itself a symbolic
 * link is refused with -ELOOP, and O_CREAT with -EINVAL. Add O_NONBLOCK when the entry may be a
 * FIFO. Returns the new fd (the caller owns it) or -errno. */
int tr_reopen(int opath_fd, int flags);

#endif
