/* SPDX-License-Identifier: MIT */
/* startup.h - the daemon's start-up checks (startup.c). */
#ifndef TFS_STARTUP_H
#define TFS_STARTUP_H

#include <stdbool.h>
#include <sys/stat.h>

struct tfs_fs;

/* Checks what the kernel and libfuse would otherwise report obscurely about source and
 * mountpoint (borrowed). Opens fs->root (tr_confine.h) and fills *root_fd (a descriptor of
 * SOURCE of the caller's, for the inode table), *root_st and *mnt_real (the mountpoint's real
 * path, the caller's to free). Returns 0, or prints the reason and returns 1. */
int tfs_check_startup(const char *source, const char *mountpoint, struct tfs_fs *fs, int *root_fd,
		      struct stat *root_st, char **mnt_real);

/* Raises the mount's readahead to 1 MiB (/sys/class/bdi). Only root may write the setting;
 * elsewhere the mount keeps the default. The kernel lowers the setting to the max_readahead of
 * the INIT reply, which comes after this. Returns true when it was raised. */
bool tfs_raise_readahead(const char *mountpoint);

#endif
