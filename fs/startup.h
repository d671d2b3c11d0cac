/* SPDX-License-Identifier: MIT */
/* startup.h - the daemon's start-up checks (startup.c). */
#ifndef TFS_STARTUP_H
#define TFS_STARTUP_H

#include <stdbool.h>
#include <sys/stat.h>

struct tfs_fs;
struct tr_root;

/* Checks what the kernel and libfuse would otherwise report obscurely about source and
 * mountpoint (borrowed). Opens fs->root (tr_confine.h) and fills *root_fd (a descriptor of
 * SOURCE of the caller's, for the inode table), *root_st and *mnt_real (the mountpoint's real
 * path, the caller's to free). Returns 0, or prints the reason and returns 1. */
int tfs_check_startup(const char *source, const char *mountpoint, struct tfs_fs *fs, int *root_fd,
		      struct stat *root_st, char **mnt_real);

/* For -o allow_other: the permission bits of SOURCE's root that its ancestors (those of its real
 * path and of the path given, root's) let through, 0777 when each of them lets others search
 * it. Who may search an ancestor is judged by its mode, per class of SOURCE's root (st): its
 * owner, its group's members, others; a class is let through only when every ancestor lets it
 * search (a reader's membership of an ancestor's other group can only have let more through). An
 * ancestor with an ACL, or one that cannot be read, lets through at most the owner (when it is
 * theirs, u+x). When the result is not 0777 it prints a warning naming the first
 * ancestor that narrows it. */
mode_t tfs_ancestors_mask(const struct tr_root *root, const struct stat *st);

/* Raises the mount's readahead to 1 MiB (/sys/class/bdi). Only root may write the setting;
 * elsewhere the mount keeps the default. The kernel lowers the setting to the max_readahead of
 * the INIT reply, which comes after this. Returns true when it was raised. */
bool tfs_raise_readahead(const char *mountpoint);

#endif
