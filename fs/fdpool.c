/* SPDX-License-Identifier: MIT */
/* fdpool.c - the inode table's bounded pool of O_PATH descriptors: an LRU of unused ones and a
 * retire list for files that left their name. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inode.h"

/* A file handle of fd (O_PATH) when it belongs to the root's mount, else NULL. */
struct file_handle *tfs_fdpool_handle_of(int fd, int *mount_id)
{
	struct file_handle *fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ), *exact;

	if (!fh)
		return NULL;
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", fh, mount_id, AT_EMPTY_PATH) < 0) {
		free(fh);
		return NULL;
	}
	exact = realloc(fh, sizeof(*fh) + fh->handle_bytes);
	return exact ? exact : fh;
}

/* Whether the daemon may reopen file handles of the root's mount: open_by_handle_at needs
 * CAP_DAC_READ_SEARCH, and some file systems give no handles at all. */
bool tfs_fdpool_probe_handles(struct tfs_inodes *tab)
{
	struct file_handle *fh = tfs_fdpool_handle_of(tab->root.fd, &tab->mount_id);
	int fd;

	if (!fh)
		return false;
	fd = open_by_handle_at(tab->root.fd, fh, O_PATH | O_CLOEXEC);
	free(fh);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

size_t tfs_inodes_fd_cap(uint64_t nofile)
{
	return nofile / 2 > TFS_FD_CAP_MIN ? nofile / 2 : TFS_FD_CAP_MIN;
}

/* The descriptor pool. Descriptors not in use sit on an LRU list, newest at the end; the oldest
 * are closed while more than fd_cap are open. Those of files that left their name (fd_unpooled)
 * sit on the retire list instead, in the order they are due to close. All under the lock. */
static struct tfs_inode **fd_list_oldest(struct tfs_inodes *tab, const struct tfs_inode *inode)
{
	return inode->fd_unpooled ? &tab->retire_oldest : &tab->fd_oldest;
}

static struct tfs_inode **fd_list_newest(struct tfs_inodes *tab, const struct tfs_inode *inode)
{
	return inode->fd_unpooled ? &tab->retire_newest : &tab->fd_newest;
}

uint64_t tfs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void fd_lru_remove(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	*(inode->fd_older ? &inode->fd_older->fd_newer
			  : fd_list_oldest(tab, inode)) = inode->fd_newer;
	*(inode->fd_newer ? &inode->fd_newer->fd_older
			  : fd_list_newest(tab, inode)) = inode->fd_older;
	inode->fd_older = inode->fd_newer = NULL;
}

/* Appends inode to its list; a retired one is due TFS_FD_RETIRE_MS from now. */
static void fd_lru_push(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tfs_inode **newest = fd_list_newest(tab, inode);

	if (inode->fd_unpooled)
		inode->fd_retire_ms = tfs_now_ms() + TFS_FD_RETIRE_MS;
	inode->fd_newer = NULL;
	inode->fd_older = *newest;
	*(*newest ? &(*newest)->fd_newer : fd_list_oldest(tab, inode)) = inode;
	*newest = inode;
}

static void fd_close_unused(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	fd_lru_remove(tab, inode);
	close(inode->fd);
	inode->fd = -1;
	tab->n_fds--;
}

/* Closes the retired descriptors that are due; returns ms until the next one, or -1. */
static int fd_retire_due(struct tfs_inodes *tab)
{
	uint64_t now = tfs_now_ms();

	while (tab->retire_oldest && tab->retire_oldest->fd_retire_ms <= now)
		fd_close_unused(tab, tab->retire_oldest);
	return tab->retire_oldest ? (int)(tab->retire_oldest->fd_retire_ms - now) : -1;
}

static void fd_pool_trim(struct tfs_inodes *tab)
{
	fd_retire_due(tab);
	while (tab->n_fds > tab->fd_cap && tab->fd_oldest)
		fd_close_unused(tab, tab->fd_oldest);
}

int tfs_inodes_sweep_retired(struct tfs_inodes *tab)
{
	int next;

	pthread_mutex_lock(&tab->lock);
	next = fd_retire_due(tab);
	pthread_mutex_unlock(&tab->lock);
	return next;
}

/* Sets whether inode's descriptor is kept in the pool (unpooled: on the retire list), moving an
 * unused open one to the other list. */
void tfs_fdpool_set_unpooled(struct tfs_inodes *tab, struct tfs_inode *inode, bool unpooled)
{
	bool listed = inode->fd >= 0 && inode->fd_users == 0;

	if (inode == &tab->root || inode->fd_unpooled == unpooled)
		return;
	if (listed)
		fd_lru_remove(tab, inode);
	inode->fd_unpooled = unpooled;
	if (listed)
		fd_lru_push(tab, inode);
}

/* Gives inode the unused descriptor fd when it has none; returns whether it took it. */
void tfs_fdpool_forget(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	if (inode->fd >= 0) {
		fd_lru_remove(tab, inode); /* unused: no request holds a forgotten inode */
		tab->n_fds--;
	}
}

bool tfs_fdpool_adopt(struct tfs_inodes *tab, struct tfs_inode *inode, int fd)
{
	if (inode->fd >= 0 || inode == &tab->root)
		return false;
	inode->fd = fd;
	tab->n_fds++;
	fd_lru_push(tab, inode);
	fd_pool_trim(tab);
	return true;
}

int tfs_fdpool_use(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	if (inode->fd < 0)
		return -1;
	if (inode->fd_users++ == 0)
		fd_lru_remove(tab, inode);
	return inode->fd;
}

int tfs_fdpool_install(struct tfs_inodes *tab, struct tfs_inode *inode, int fd)
{
	if (inode->fd >= 0) { /* another request reopened it meanwhile */
		close(fd);
		return tfs_fdpool_use(tab, inode);
	}
	inode->fd = fd;
	inode->fd_users = 1;
	tab->n_fds++;
	fd_pool_trim(tab);
	return fd;
}

void tfs_inode_fd_drop(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	pthread_mutex_lock(&tab->lock);
	tfs_fdpool_set_unpooled(tab, inode, true);
	pthread_mutex_unlock(&tab->lock);
}

void tfs_inode_fd_put(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	if (inode == &tab->root)
		return;
	pthread_mutex_lock(&tab->lock);
	if (--inode->fd_users == 0) {
		fd_lru_push(tab, inode);
		fd_pool_trim(tab);
	}
	pthread_mutex_unlock(&tab->lock);
}
