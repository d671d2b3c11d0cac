/* SPDX-License-Identifier: MIT */
/* beneath.c - whether what a request reached is still inside SOURCE, and never the mount itself.
 *
 * A directory moved out of SOURCE keeps its inode, its file handle and every descriptor open on
 * it, so a reader that holds it (a shell's working directory, an agent's directory fd) would
 * keep reaching names outside. The kernel's own path of a descriptor (d_path, read back from
 * /proc/self/fd) is computed under its rename lock from the entry's parents: a descriptor whose
 * path does not start with SOURCE's has left it. Where the path cannot be read (longer than
 * PATH_MAX), the parents are walked with ".." up to SOURCE or the top. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "beneath.h"
#include "toolfs.h"

/* More parents than any path of PATH_MAX bytes can have: the walk ends there as outside. */
enum { MAX_PARENTS = 4096 };

/* Reads the kernel's path of fd into buf (PATH_MAX bytes). Returns buf, or NULL (errno). */
static char *fd_path(int fd, char *buf)
{
	char proc[32];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, PATH_MAX - 1);
	if (n < 0 || n >= PATH_MAX - 1) {
		if (n >= 0)
			errno = ENAMETOOLONG;
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

static bool statx_dev_ino(int fd, dev_t *dev, ino_t *ino)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_INO,
		  &stx) < 0)
		return false;
	*dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	*ino = stx.stx_ino;
	return true;
}

int tfs_beneath_set_own_mount(struct tfs_fs *fs, const char *mountpoint)
{
	struct statx stx;

	if (statx(AT_FDCWD, mountpoint, AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT, STATX_INO, &stx) < 0)
		return -errno;
	fs->own_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	return 0;
}

/* path is prefix or lies below it. */
static bool path_within(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strcmp(prefix, "/") == 0)
		return path[0] == '/';
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The ".." walk from directory fd: true when it meets SOURCE's root before the top. */
static bool parents_reach_root(const struct tfs_fs *fs, int fd)
{
	int cur = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	bool inside = false;
	dev_t dev;
	ino_t ino;

	for (int i = 0; cur >= 0 && i < MAX_PARENTS && statx_dev_ino(cur, &dev, &ino); i++) {
		dev_t up_dev;
		ino_t up_ino;
		int up;

		if (dev == fs->root.dev && ino == fs->root.ino) {
			inside = true;
			break;
		}
		up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = up;
		if (cur >= 0 && statx_dev_ino(cur, &up_dev, &up_ino) && up_dev == dev &&
		    up_ino == ino)
			break; /* the top: ".." is itself */
	}
	if (cur >= 0)
		close(cur);
	return inside;
}

bool tfs_fd_beneath(const struct tfs_fs *fs, int fd)
{
	char path[PATH_MAX], root_now[PATH_MAX];

	/* SOURCE's path now: it may have been renamed since the daemon started, and its old path
	 * may hold another tree (a directory moved out of it there included). */
	if (!fd_path(fd, path) || !fd_path(fs->root.fd, root_now))
		return parents_reach_root(fs, fd);
	return path_within(path, root_now);
}

/* A file or link: the directory of its latest name is inside SOURCE. Whether the name still
 * holds it is not asked: a lookup and an open are two requests, and a file replaced between them
 * is opened as it was looked up (fdpool.h: TFS_FD_RETIRE_MS), as a native open would. */
static int entry_beneath(struct tfs_fs *fs, struct tfs_inode *inode)
{
	struct tfs_inode *parent;
	int err;

	tfs_inodes_entry_ref(&fs->inodes, inode, &parent, NULL);
	if (!parent)
		return -ESTALE;
	err = tfs_inode_beneath(fs, parent);
	tfs_inodes_forget(&fs->inodes, parent, 1);
	return err;
}

int tfs_inode_usable(struct tfs_fs *fs, struct tfs_inode *inode)
{
	if (fs->watch && !tfs_inodes_reachable(&fs->inodes, inode))
		return -ESTALE;
	return tfs_inode_beneath(fs, inode);
}

int tfs_inode_beneath(struct tfs_fs *fs, struct tfs_inode *inode)
{
	uint64_t marks = 0;
	int fd, err;

	if (inode->is_sibling)
		inode = inode->dir;
	if (inode == &fs->inodes.root)
		return 0;
	if (inode->type != S_IFDIR)
		return entry_beneath(fs, inode);
	/* Where every directory above it is watched, it cannot have left SOURCE without a change
	 * event that marks it (or an ancestor) moved: found inside once, it needs no new look
	 * until a mark is set anywhere (a rename of a directory, or lost events). */
	if (fs->watch && tfs_inodes_beneath_known(&fs->inodes, inode, &marks))
		return 0;
	fd = tfs_inode_fd(&fs->inodes, inode);
	if (fd < 0)
		return fd;
	err = tfs_fd_beneath(fs, fd) ? 0 : -ESTALE;
	tfs_inode_fd_put(&fs->inodes, inode);
	if (!err && fs->watch)
		tfs_inodes_beneath_seen(&fs->inodes, inode, marks);
	return err;
}

/* st as fstat fills it, from stx (STATX_BASIC_STATS). */
static void stat_of_statx(const struct statx *stx, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(stx->stx_dev_major, stx->stx_dev_minor);
	st->st_ino = stx->stx_ino;
	st->st_mode = stx->stx_mode;
	st->st_nlink = stx->stx_nlink;
	st->st_uid = stx->stx_uid;
	st->st_gid = stx->stx_gid;
	st->st_rdev = makedev(stx->stx_rdev_major, stx->stx_rdev_minor);
	st->st_size = (off_t)stx->stx_size;
	st->st_blksize = (blksize_t)stx->stx_blksize;
	st->st_blocks = (blkcnt_t)stx->stx_blocks;
	st->st_atim = (struct timespec){stx->stx_atime.tv_sec, stx->stx_atime.tv_nsec};
	st->st_mtim = (struct timespec){stx->stx_mtime.tv_sec, stx->stx_mtime.tv_nsec};
	st->st_ctim = (struct timespec){stx->stx_ctime.tv_sec, stx->stx_ctime.tv_nsec};
}

int tfs_stat_entry(const struct tfs_fs *fs, int fd, struct stat *st)
{
	struct statx stx;
	dev_t dev;

	if (!fs->own_dev)
		return fstat(fd, st) < 0 ? -errno : 0;
	/* Asked first without syncing: a FUSE file system answers that from the kernel's cache,
	 * so the daemon never waits on a request to its own mount. On SOURCE's own local file
	 * system not syncing changes nothing, so that answer is the whole stat. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  STATX_BASIC_STATS, &stx) < 0)
		return -errno;
	dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	if (dev == fs->own_dev)
		return -ELOOP;
	if (fs->source_local && dev == fs->source_dev &&
	    (stx.stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS) {
		stat_of_statx(&stx, st);
		return 0;
	}
	return fstat(fd, st) < 0 ? -errno : 0;
}
