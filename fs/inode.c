/* inode.c - the inode table: lookup counting, real inodes by (st_dev, st_ino) with a bounded pool
 * of descriptors, sibling versions. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "inode.h"

_Static_assert(sizeof(fuse_ino_t) >= sizeof(uintptr_t), "node ids hold inode addresses");

enum { INITIAL_BUCKETS = 1024, MIN_FD_CAP = 16 };

/* How long a moved mark outlives the invalidation of its kernel entry: a request that walked
 * the old entry just before it was invalidated may still be on its way to the daemon. */
static const uint64_t MOVED_GRACE_NS = 1000000000ULL;

/* A file handle of fd (O_PATH) when it belongs to the root's mount, else NULL. */
static struct file_handle *handle_of(int fd, int *mount_id)
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
static bool probe_handles(struct tfs_inodes *tab)
{
	struct file_handle *fh = handle_of(tab->root.fd, &tab->mount_id);
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
	return nofile / 2 > MIN_FD_CAP ? nofile / 2 : MIN_FD_CAP;
}

int tfs_inodes_init(struct tfs_inodes *tab, int root_fd, const struct stat *root_st,
		    uint64_t held_budget)
{
	memset(tab, 0, sizeof(*tab));
	tab->held_budget = held_budget;
	tab->real = calloc(INITIAL_BUCKETS, sizeof(*tab->real));
	tab->sibling = calloc(INITIAL_BUCKETS, sizeof(*tab->sibling));
	tab->names = calloc(INITIAL_BUCKETS, sizeof(*tab->names));
	tab->root.path = strdup("");
	if (!tab->real || !tab->sibling || !tab->names || !tab->root.path) {
		free(tab->real);
		free(tab->sibling);
		free(tab->names);
		free(tab->root.path);
		return -1;
	}
	tab->n_real_buckets = tab->n_sibling_buckets = tab->n_name_buckets = INITIAL_BUCKETS;
	tab->fd_cap = MIN_FD_CAP;
	tab->root.refs = 1;
	tab->root.fd = root_fd;
	tab->root.dev = root_st->st_dev;
	tab->root.ino = root_st->st_ino;
	tab->root.type = S_IFDIR;
	tab->use_handles = probe_handles(tab);
	pthread_mutex_init(&tab->lock, NULL);
	return 0;
}

static void inode_free(struct tfs_inode *inode)
{
	if (inode->is_sibling) {
		tfs_doc_key_destroy(&inode->key);
		tr_doc_unref(inode->pinned);
		tr_doc_unref(inode->held);
	} else {
		if (inode->fd >= 0)
			close(inode->fd);
		free(inode->path);
		free(inode->name);
		free(inode->handle);
	}
	free(inode);
}

void tfs_inodes_destroy(struct tfs_inodes *tab)
{
	/* Siblings first: they hold references on directories, which are freed regardless. */
	for (size_t i = 0; i < tab->n_sibling_buckets; i++) {
		for (struct tfs_inode *p = tab->sibling[i], *next; p; p = next) {
			next = p->bucket_next;
			inode_free(p);
		}
	}
	for (size_t i = 0; i < tab->n_real_buckets; i++) {
		for (struct tfs_inode *p = tab->real[i], *next; p; p = next) {
			next = p->bucket_next;
			inode_free(p);
		}
	}
	free(tab->real);
	free(tab->sibling);
	free(tab->names);
	close(tab->root.fd);
	free(tab->root.path);
	pthread_mutex_destroy(&tab->lock);
}

struct tfs_inode *tfs_inodes_get(struct tfs_inodes *tab, uint64_t nodeid)
{
	if (nodeid == FUSE_ROOT_ID)
		return &tab->root;
	return (struct tfs_inode *)(uintptr_t)nodeid;
}

uint64_t tfs_inode_nodeid(const struct tfs_inodes *tab, const struct tfs_inode *inode)
{
	if (inode == &tab->root)
		return FUSE_ROOT_ID;
	return (uintptr_t)inode;
}

static uint64_t real_hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL;

	return h ^ ((uint64_t)dev * 0xc2b2ae3d27d4eb4fULL);
}

static uint64_t sibling_hash(const struct tfs_inode *dir, const struct tfs_doc_key *key)
{
	return tfs_doc_key_hash(key) ^ ((uintptr_t)dir * 0x9e3779b97f4a7c15ULL);
}

static uint64_t name_hash(const struct tfs_inode *dir, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ ((uintptr_t)dir * 0x9e3779b97f4a7c15ULL);

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = (h ^ *c) * 0x100000001b3ULL;
	return h;
}

/* The chain link of an inode at byte offset next_off (bucket_next or name_next). */
static struct tfs_inode **link_at(struct tfs_inode *inode, size_t next_off)
{
	return (struct tfs_inode **)((char *)inode + next_off);
}

/* Rehashes a bucket array, chained through the link at next_off, to twice its size when it
 * holds more entries than buckets; a failed allocation keeps the old array (chains just get
 * longer). */
static void grow(struct tfs_inode ***buckets, size_t *n_buckets, size_t count,
		 uint64_t (*hash)(const struct tfs_inode *), size_t next_off)
{
	size_t n = *n_buckets * 2;
	struct tfs_inode **grown;

	if (count <= *n_buckets)
		return;
	grown = calloc(n, sizeof(*grown));
	if (!grown)
		return;
	for (size_t i = 0; i < *n_buckets; i++) {
		for (struct tfs_inode *p = (*buckets)[i], *next; p; p = next) {
			next = *link_at(p, next_off);
			*link_at(p, next_off) = grown[hash(p) % n];
			grown[hash(p) % n] = p;
		}
	}
	free(*buckets);
	*buckets = grown;
	*n_buckets = n;
}

static uint64_t real_inode_hash(const struct tfs_inode *inode)
{
	return real_hash(inode->dev, inode->ino);
}

static uint64_t sibling_inode_hash(const struct tfs_inode *inode)
{
	return sibling_hash(inode->dir, &inode->key);
}

static uint64_t name_inode_hash(const struct tfs_inode *inode)
{
	return name_hash(inode->parent, inode->name);
}

/* Puts inode in the (parent, name) index under its current entry; under the lock. */
static void name_index_add(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tfs_inode **slot = &tab->names[name_inode_hash(inode) % tab->n_name_buckets];

	inode->name_next = *slot;
	*slot = inode;
}

/* Takes inode out of the (parent, name) index; under the lock. */
static void name_index_remove(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tfs_inode **slot;

	if (!inode->parent)
		return;
	slot = &tab->names[name_inode_hash(inode) % tab->n_name_buckets];
	while (*slot && *slot != inode)
		slot = &(*slot)->name_next;
	if (*slot)
		*slot = inode->name_next;
	inode->name_next = NULL;
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

static uint64_t now_ms(void)
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
		inode->fd_retire_ms = now_ms() + TFS_FD_RETIRE_MS;
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
	uint64_t now = now_ms();

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
static void fd_set_unpooled(struct tfs_inodes *tab, struct tfs_inode *inode, bool unpooled)
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
static bool fd_pool_adopt(struct tfs_inodes *tab, struct tfs_inode *inode, int fd)
{
	if (inode->fd >= 0 || inode == &tab->root)
		return false;
	inode->fd = fd;
	tab->n_fds++;
	fd_lru_push(tab, inode);
	fd_pool_trim(tab);
	return true;
}

/* Before inode takes the entry (dir, name): the files whose latest entry it was lost that name
 * (a file renamed over another is found by a lookup before the change event is taken in), so
 * no event will name them again; their descriptors leave the pool, which would otherwise keep
 * replaced files open (and their space allocated) until the kernel forgets them. Directories
 * keep theirs: a moved directory is found by its own events. Under the lock. */
static void unpool_displaced(struct tfs_inodes *tab, struct tfs_inode *inode,
			     const struct tfs_inode *dir, const char *name)
{
	struct tfs_inode *p = tab->names[name_hash(dir, name) % tab->n_name_buckets];

	for (; p; p = p->name_next) {
		if (p != inode && p->parent == dir && p->type != S_IFDIR &&
		    strcmp(p->name, name) == 0)
			fd_set_unpooled(tab, p, true);
	}
}

bool tfs_inodes_entry_ref(struct tfs_inodes *tab, struct tfs_inode *inode,
			  struct tfs_inode **parent, char **name)
{
	bool ok = true;

	pthread_mutex_lock(&tab->lock);
	*parent = inode->parent;
	if (name) {
		*name = *parent ? strdup(inode->name) : NULL;
		ok = *name || !*parent;
	}
	if (*parent && ok)
		(*parent)->refs++;
	else
		*parent = NULL;
	pthread_mutex_unlock(&tab->lock);
	return ok;
}

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
			renewed = handle_of(fd, &mount_id);
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
	if (inode->fd >= 0) {
		if (inode->fd_users++ == 0)
			fd_lru_remove(tab, inode);
		fd = inode->fd;
		pthread_mutex_unlock(&tab->lock);
		return fd;
	}
	pthread_mutex_unlock(&tab->lock);
	fd = reopen(tab, inode);
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&tab->lock);
	if (inode->fd >= 0) { /* another request reopened it meanwhile */
		close(fd);
		if (inode->fd_users++ == 0)
			fd_lru_remove(tab, inode);
		fd = inode->fd;
	} else {
		inode->fd = fd;
		inode->fd_users = 1;
		tab->n_fds++;
		fd_pool_trim(tab);
	}
	pthread_mutex_unlock(&tab->lock);
	return fd;
}

void tfs_inode_fd_drop(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	pthread_mutex_lock(&tab->lock);
	fd_set_unpooled(tab, inode, true);
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

/* Finds the real inode (dev, ino); under the lock. */
static struct tfs_inode *find_real(struct tfs_inodes *tab, dev_t dev, ino_t ino)
{
	struct tfs_inode *inode;

	if (dev == tab->root.dev && ino == tab->root.ino)
		return &tab->root; /* a bind mount of the root inside itself */
	inode = tab->real[real_hash(dev, ino) % tab->n_real_buckets];
	while (inode && !(inode->dev == dev && inode->ino == ino))
		inode = inode->bucket_next;
	return inode;
}

/* Makes (dir, name) the latest entry of inode, name owned by the call; under the lock. A
 * directory renamed in SOURCE shows its new path from its next lookup on (dir_path, owned).
 * Returns the previous directory, whose reference the caller drops (tfs_inodes_forget) after
 * the lock, or NULL. */
static struct tfs_inode *set_entry(struct tfs_inodes *tab, struct tfs_inode *inode,
				   struct tfs_inode *dir, char *name, char *dir_path, uint64_t seen)
{
	struct tfs_inode *was;

	if (inode->moved_seq <= seen)
		inode->moved_until = 0;
	if (dir_path && inode->path && strcmp(inode->path, dir_path) != 0) {
		free(inode->path);
		inode->path = dir_path;
		dir_path = NULL;
	}
	free(dir_path);
	if (inode->parent == dir && inode->name && strcmp(inode->name, name) == 0) {
		free(name);
		return NULL;
	}
	name_index_remove(tab, inode);
	unpool_displaced(tab, inode, dir, name);
	dir->refs++;
	was = inode->parent;
	inode->parent = dir;
	free(inode->name);
	inode->name = name;
	name_index_add(tab, inode);
	return was;
}

struct tfs_inode *tfs_inodes_add_real(struct tfs_inodes *tab, int fd, const struct stat *st,
				      struct tfs_inode *dir, const char *name, const char *path,
				      uint64_t seen, bool *created)
{
	struct tfs_inode *inode, *fresh = NULL, *was = NULL;
	char *dir_path = S_ISDIR(st->st_mode) ? strdup(path) : NULL, *copy = strdup(name);
	int mount_id;

	*created = false;
	if (!copy || (S_ISDIR(st->st_mode) && !dir_path))
		goto fail;
	pthread_mutex_lock(&tab->lock);
	inode = find_real(tab, st->st_dev, st->st_ino);
	if (!inode) {
		/* A new inode: its handle is made outside the lock, then the table is searched
		 * again, as another lookup may have added the same entry meanwhile. */
		pthread_mutex_unlock(&tab->lock);
		fresh = calloc(1, sizeof(*fresh));
		if (!fresh)
			goto fail;
		if (tab->use_handles) {
			fresh->handle = handle_of(fd, &mount_id);
			if (fresh->handle && mount_id != tab->mount_id) {
				free(fresh->handle); /* another mount: parent + name instead */
				fresh->handle = NULL;
			}
		}
		pthread_mutex_lock(&tab->lock);
		inode = find_real(tab, st->st_dev, st->st_ino);
	}
	if (inode) {
		inode->refs++;
		if (inode != &tab->root) {
			fd_set_unpooled(tab, inode, false); /* found by a name again */
			was = set_entry(tab, inode, dir, copy, dir_path, seen);
			copy = dir_path = NULL;
		}
		if (fd_pool_adopt(tab, inode, fd))
			fd = -1;
		pthread_mutex_unlock(&tab->lock);
		if (fd >= 0)
			close(fd);
		free(copy);
		free(dir_path);
		if (fresh)
			free(fresh->handle);
		free(fresh);
		if (was)
			tfs_inodes_forget(tab, was, 1);
		return inode;
	}
	fresh->refs = 1;
	fresh->fd = -1;
	fresh->dev = st->st_dev;
	fresh->ino = st->st_ino;
	fresh->type = st->st_mode & S_IFMT;
	fresh->path = dir_path;
	fresh->parent = dir;
	fresh->name = copy;
	dir->refs++;
	fresh->bucket_next = tab->real[real_hash(st->st_dev, st->st_ino) % tab->n_real_buckets];
	tab->real[real_hash(st->st_dev, st->st_ino) % tab->n_real_buckets] = fresh;
	unpool_displaced(tab, fresh, dir, copy);
	name_index_add(tab, fresh);
	tab->n_real++;
	grow(&tab->real, &tab->n_real_buckets, tab->n_real, real_inode_hash,
	     offsetof(struct tfs_inode, bucket_next));
	grow(&tab->names, &tab->n_name_buckets, tab->n_real, name_inode_hash,
	     offsetof(struct tfs_inode, name_next));
	fd_pool_adopt(tab, fresh, fd);
	pthread_mutex_unlock(&tab->lock);
	*created = true;
	return fresh;
fail:
	free(copy);
	free(dir_path);
	free(fresh);
	close(fd);
	return NULL;
}

/* Removes inode from the (st_dev, st_ino) index; under the lock. */
static void real_index_remove(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tfs_inode **slot = &tab->real[real_inode_hash(inode) % tab->n_real_buckets];

	while (*slot != inode)
		slot = &(*slot)->bucket_next;
	*slot = inode->bucket_next;
	tab->n_real--;
}

/* Sets the moved mark of a directory for the current event; under the lock. */
static void mark_locked(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	if (inode->type != S_IFDIR || inode == &tab->root)
		return;
	inode->moved_until = UINT64_MAX;
	inode->moved_seq = tab->events;
	tab->marks++;
}

bool tfs_inodes_beneath_known(struct tfs_inodes *tab, struct tfs_inode *dir, uint64_t *marks)
{
	bool known;

	pthread_mutex_lock(&tab->lock);
	*marks = tab->marks;
	known = dir->beneath_marks == tab->marks + 1;
	for (struct tfs_inode *p = dir->parent; known && p; p = p->parent)
		known = __atomic_load_n(&p->wd, __ATOMIC_RELAXED) > 0;
	pthread_mutex_unlock(&tab->lock);
	return known;
}

void tfs_inodes_beneath_seen(struct tfs_inodes *tab, struct tfs_inode *dir, uint64_t marks)
{
	pthread_mutex_lock(&tab->lock);
	dir->beneath_marks = marks + 1;
	pthread_mutex_unlock(&tab->lock);
}

struct tfs_inode *tfs_inodes_child_ref(struct tfs_inodes *tab, struct tfs_inode *dir,
				       const char *name, bool mark)
{
	struct tfs_inode *inode;

	pthread_mutex_lock(&tab->lock);
	inode = tab->names[name_hash(dir, name) % tab->n_name_buckets];
	while (inode && !(inode->parent == dir && strcmp(inode->name, name) == 0))
		inode = inode->name_next;
	if (inode) {
		inode->refs++;
		if (mark)
			mark_locked(tab, inode);
	}
	pthread_mutex_unlock(&tab->lock);
	return inode;
}

struct tfs_inode *tfs_inodes_real_ref(struct tfs_inodes *tab, dev_t dev, ino_t ino)
{
	struct tfs_inode *inode;

	pthread_mutex_lock(&tab->lock);
	inode = find_real(tab, dev, ino);
	if (inode)
		inode->refs++;
	pthread_mutex_unlock(&tab->lock);
	return inode;
}

bool tfs_inodes_attr_watched(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	bool watched;

	pthread_mutex_lock(&tab->lock);
	if (inode->type == S_IFDIR || !inode->parent)
		watched = __atomic_load_n(&inode->wd, __ATOMIC_RELAXED) > 0;
	else
		watched = __atomic_load_n(&inode->parent->wd, __ATOMIC_RELAXED) > 0;
	pthread_mutex_unlock(&tab->lock);
	return watched;
}

bool tfs_inodes_ref(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	bool live;

	pthread_mutex_lock(&tab->lock);
	live = !inode->dead;
	if (live)
		inode->refs++;
	pthread_mutex_unlock(&tab->lock);
	return live;
}

void tfs_inodes_mark_all(struct tfs_inodes *tab,
			 void (*each)(void *arg, struct tfs_inode *parent, const char *name,
				      struct tfs_inode *inode),
			 void *arg)
{
	pthread_mutex_lock(&tab->lock);
	for (size_t i = 0; i < tab->n_real_buckets; i++) {
		for (struct tfs_inode *p = tab->real[i], *next; p; p = next) {
			next = p->bucket_next;
			mark_locked(tab, p);
			if (!p->parent)
				continue;
			p->refs++;
			p->parent->refs++;
			each(arg, p->parent, p->name, p);
		}
	}
	pthread_mutex_unlock(&tab->lock);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void tfs_inodes_mark_moved(struct tfs_inodes *tab, struct tfs_inode *inode, bool done)
{
	uint64_t deadline = done ? monotonic_ns() + MOVED_GRACE_NS : 0;

	pthread_mutex_lock(&tab->lock);
	if (!done)
		mark_locked(tab, inode);
	else if (inode->moved_until == UINT64_MAX)
		inode->moved_until = deadline;
	pthread_mutex_unlock(&tab->lock);
}

bool tfs_inodes_reachable(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	uint64_t now = 0;
	bool reachable = true;

	pthread_mutex_lock(&tab->lock);
	for (struct tfs_inode *p = inode->is_sibling ? inode->dir : inode; p; p = p->parent) {
		if (!p->moved_until)
			continue;
		if (p->moved_until != UINT64_MAX && !now)
			now = monotonic_ns();
		if (p->moved_until == UINT64_MAX || now < p->moved_until) {
			reachable = false;
			break;
		}
		p->moved_until = 0;
	}
	pthread_mutex_unlock(&tab->lock);
	return reachable;
}

/* Takes inode off the list of holding inodes and returns its held document (the caller's
 * reference now), or NULL; under the lock. */
static struct tr_doc *unhold(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tr_doc *doc = inode->held;

	if (!doc)
		return NULL;
	*(inode->held_older ? &inode->held_older->held_newer
			    : &tab->held_oldest) = inode->held_newer;
	*(inode->held_newer ? &inode->held_newer->held_older
			    : &tab->held_newest) = inode->held_older;
	tab->held_bytes -= tr_doc_size(doc);
	inode->held = NULL;
	inode->held_older = inode->held_newer = NULL;
	inode->held_opens = 0;
	return doc;
}

/* Makes inode hold doc for one more open (renewing its place as the newest hold), then drops
 * the oldest holds beyond the budget; under the lock. A dropped document is almost always
 * still cached, so its unref here is one atomic decrement. */
static void hold(struct tfs_inodes *tab, struct tfs_inode *inode, struct tr_doc *doc)
{
	uint64_t size = tr_doc_size(doc), opens = inode->held_opens;
	struct tr_doc *had = unhold(tab, inode);

	if (size > tab->held_budget) {
		tr_doc_unref(had);
		return;
	}
	inode->held = had ? had : tr_doc_ref(doc);
	inode->held_opens = opens + 1;
	inode->held_older = tab->held_newest;
	*(tab->held_newest ? &tab->held_newest->held_newer : &tab->held_oldest) = inode;
	tab->held_newest = inode;
	tab->held_bytes += size;
	while (tab->held_bytes > tab->held_budget)
		tr_doc_unref(unhold(tab, tab->held_oldest));
}

struct tfs_inode *tfs_inodes_add_sibling(struct tfs_inodes *tab, struct tfs_inode *dir,
					 const struct tfs_doc_key *key, const struct stat *attr,
					 struct tr_doc *doc, bool cached)
{
	uint64_t hash = sibling_hash(dir, key);
	struct tfs_inode *inode, *fresh = calloc(1, sizeof(*fresh));

	if (!fresh || tfs_doc_key_copy(&fresh->key, key) < 0) {
		free(fresh);
		return NULL;
	}
	fresh->is_sibling = true;
	fresh->fd = -1;
	pthread_mutex_lock(&tab->lock);
	inode = tab->sibling[hash % tab->n_sibling_buckets];
	while (inode && !(inode->dir == dir && tfs_doc_key_equal(&inode->key, key)))
		inode = inode->bucket_next;
	if (inode) {
		inode_free(fresh);
	} else {
		inode = fresh;
		inode->dir = dir;
		dir->refs++;
		inode->attr = *attr;
		inode->bucket_next = tab->sibling[hash % tab->n_sibling_buckets];
		tab->sibling[hash % tab->n_sibling_buckets] = inode;
		tab->n_sibling++;
		grow(&tab->sibling, &tab->n_sibling_buckets, tab->n_sibling, sibling_inode_hash,
		     offsetof(struct tfs_inode, bucket_next));
	}
	inode->refs++;
	if (!inode->pinned) { /* a pinned document serves every open already */
		if (cached)
			hold(tab, inode, doc);
		else
			inode->pinned = tr_doc_ref(doc);
	}
	pthread_mutex_unlock(&tab->lock);
	return inode;
}

struct tr_doc *tfs_inodes_take_doc(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tr_doc *doc;

	pthread_mutex_lock(&tab->lock);
	doc = tr_doc_ref(inode->pinned);
	if (!doc && inode->held) {
		if (inode->held_opens > 1) {
			inode->held_opens--;
			doc = tr_doc_ref(inode->held);
		} else {
			doc = unhold(tab, inode);
		}
	}
	pthread_mutex_unlock(&tab->lock);
	return doc;
}

/* Takes inode out of the table (its bucket chain, the name index, the descriptor pool); under
 * the lock. */
static void unlink_inode(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tfs_inode **slot;

	if (inode->is_sibling) {
		slot = &tab->sibling[sibling_inode_hash(inode) % tab->n_sibling_buckets];
		tab->n_sibling--;
	} else {
		if (inode->fd >= 0) {
			fd_lru_remove(tab, inode); /* unused: no request holds a forgotten inode */
			tab->n_fds--;
		}
		real_index_remove(tab, inode);
		name_index_remove(tab, inode);
		inode->dead = true;
		return;
	}
	while (*slot != inode)
		slot = &(*slot)->bucket_next;
	*slot = inode->bucket_next;
	inode->dead = true;
}

void tfs_inodes_forget(struct tfs_inodes *tab, struct tfs_inode *inode, uint64_t n)
{
	struct tfs_inode *dead = NULL;

	pthread_mutex_lock(&tab->lock);
	/* An inode left with no reference goes, and with it its reference on the directory that
	 * names it, which may be that directory's last. */
	while (inode && inode != &tab->root) {
		struct tfs_inode *up = inode->is_sibling ? inode->dir : inode->parent;

		inode->refs = inode->refs > n ? inode->refs - n : 0;
		if (inode->refs)
			break;
		unlink_inode(tab, inode);
		if (inode->is_sibling)
			tr_doc_unref(unhold(tab, inode));
		inode->bucket_next = dead;
		dead = inode;
		inode = up;
		n = 1;
	}
	pthread_mutex_unlock(&tab->lock);
	while (dead) {
		struct tfs_inode *next = dead->bucket_next;

		if (!dead->is_sibling && tab->on_free)
			tab->on_free(tab->on_free_arg, dead);
		inode_free(dead);
		dead = next;
	}
}

char *tfs_inodes_child_path(struct tfs_inodes *tab, struct tfs_inode *dir, const char *name)
{
	char *path;
	int n;

	pthread_mutex_lock(&tab->lock);
	if (dir->path && dir->path[0])
		n = asprintf(&path, "%s/%s", dir->path, name);
	else
		n = asprintf(&path, "%s", name);
	pthread_mutex_unlock(&tab->lock);
	return n < 0 ? NULL : path;
}

bool tfs_inodes_reopen_unchanged(struct tfs_inodes *tab, struct tfs_inode *inode,
				 const struct stat *st)
{
	bool same;

	pthread_mutex_lock(&tab->lock);
	same = inode->opened && st->st_size == inode->opened_size &&
	       st->st_mtim.tv_sec == inode->opened_mtime.tv_sec &&
	       st->st_mtim.tv_nsec == inode->opened_mtime.tv_nsec &&
	       st->st_ctim.tv_sec == inode->opened_ctime.tv_sec &&
	       st->st_ctim.tv_nsec == inode->opened_ctime.tv_nsec;
	inode->opened_size = st->st_size;
	inode->opened_mtime = st->st_mtim;
	inode->opened_ctime = st->st_ctim;
	inode->opened = true;
	pthread_mutex_unlock(&tab->lock);
	return same;
}

void tfs_inodes_gave_size(struct tfs_inodes *tab, struct tfs_inode *inode, off_t size)
{
	pthread_mutex_lock(&tab->lock);
	if (inode->given == TFS_SIZE_NONE) {
		inode->given = TFS_SIZE_ONE;
		inode->given_size = size;
	} else if (inode->given == TFS_SIZE_ONE && inode->given_size != size) {
		/* Two replies of different sizes may reach the kernel in either order, and it
		 * keeps the first (the later one started at the same attr_version): unknown. */
		inode->given = TFS_SIZE_MIXED;
	}
	pthread_mutex_unlock(&tab->lock);
}

bool tfs_inodes_open_size_stale(struct tfs_inodes *tab, struct tfs_inode *inode, off_t size)
{
	bool stale;

	pthread_mutex_lock(&tab->lock);
	stale = inode->given != TFS_SIZE_ONE || inode->given_size != size;
	inode->given = TFS_SIZE_ONE;
	inode->given_size = size;
	pthread_mutex_unlock(&tab->lock);
	return stale;
}
