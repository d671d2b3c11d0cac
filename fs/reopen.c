/* SPDX-License-Identifier: MIT */
/* reopen.c - a real inode's descriptor: the pool's (fdpool.c), or the file reopened by its
 * handle or by the name of its latest entry, and checked to be the same file. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inode.h"

/* Opens inode as the name of its latest entry, or -errno (-ESTALE: the name is gone). */
static int reopen_by_name(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tfs_inode *parent;
	char *name;
	int fd, dir_fd;

	if (!tfs_inodes_entry_ref(tab, inode, &parent, &name))
		return -ENOMEM;
	if (!parent)
		return -ESTALE;
	dir_fd = tfs_inode_fd(tab, parent);
	fd = dir_fd < 0 ? dir_fd : openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd >= 0 && fd < 0)
		fd = errno == ENOENT || errno == ENOTDIR ? -ESTALE : -errno;
	if (dir_fd >= 0)
		tfs_inode_fd_put(tab, parent);
	tfs_inodes_forget(tab, parent, 1);
	free(name);
	return fd;
}

/* Opens inode anew: by its handle, else as the name of its latest entry; checked to be (dev,
 * ino). A handle that no longer opens may be of an earlier file with the same inode number (the
 * table is keyed by it): the name is tried then, and a match renews the handle. */
static int reopen(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct file_handle *handle = NULL, *renewed = NULL, *old;
	struct stat st;
	int fd = -ESTALE, mount_id;

	/* A copy: another request may renew the handle meanwhile. */
	pthread_mutex_lock(&tab->lock);
	if (inode->handle) {
		size_t size = sizeof(*handle) + inode->handle->handle_bytes;

		handle = malloc(size);
		if (handle)
			memcpy(handle, inode->handle, size);
	}
	pthread_mutex_unlock(&tab->lock);
	if (handle) {
		fd = open_by_handle_at(tab->root.fd, handle, O_PATH | O_CLOEXEC);
		if (fd < 0)
			fd = errno == ENOENT || errno == ESTALE ? -ESTALE : -errno;
	}
	if (fd == -ESTALE) {
		fd = reopen_by_name(tab, inode);
		if (fd >= 0 && handle)
			renewed = tfs_fdpool_handle_of(fd, &mount_id);
	}
	free(handle);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_dev != inode->dev || st.st_ino != inode->ino) {
		close(fd);
		free(renewed);
		return -ESTALE;
	}
	if (renewed) {
		pthread_mutex_lock(&tab->lock);
		old = inode->handle;
		inode->handle = renewed;
		pthread_mutex_unlock(&tab->lock);
		free(old);
	}
	return fd;
}

int tfs_inode_fd(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	int fd;

	if (inode == &tab->root)
		return inode->fd;
	pthread_mutex_lock(&tab->lock);
	fd = tfs_fdpool_use(tab, inode);
	pthread_mutex_unlock(&tab->lock);
	if (fd >= 0)
		return fd;
	fd = reopen(tab, inode);
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&tab->lock);
	fd = tfs_fdpool_install(tab, inode, fd);
	pthread_mutex_unlock(&tab->lock);
	return fd;
}
