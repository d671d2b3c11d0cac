/* SPDX-License-Identifier: MIT */
/* inode.c - the inode table: lookup counting, its indexes (real inodes by (st_dev, st_ino) and by
 * (parent, name), sibling versions by (directory, key)), and what it knows of regular files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "inode.h"

_Static_assert(sizeof(fuse_ino_t) >= sizeof(uintptr_t), "node ids hold inode addresses");

enum { INITIAL_BUCKETS = 1024 };

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

static struct tfs_inode *inode_of(struct tfs_hnode *node)
{
	return node ? tfs_hnode_entry(node, struct tfs_inode, link) : NULL;
}

static struct tfs_inode *named_of(struct tfs_hnode *node)
{
	return node ? tfs_hnode_entry(node, struct tfs_inode, name_link) : NULL;
}

static uint64_t real_node_hash(const struct tfs_hnode *node)
{
	const struct tfs_inode *inode = tfs_hnode_entry(node, const struct tfs_inode, link);

	return real_hash(inode->dev, inode->ino);
}

static uint64_t sibling_node_hash(const struct tfs_hnode *node)
{
	const struct tfs_inode *inode = tfs_hnode_entry(node, const struct tfs_inode, link);

	return sibling_hash(inode->dir, &inode->key);
}

static uint64_t name_node_hash(const struct tfs_hnode *node)
{
	const struct tfs_inode *inode = tfs_hnode_entry(node, const struct tfs_inode, name_link);

	return name_hash(inode->parent, inode->name);
}

int tfs_inodes_init(struct tfs_inodes *tab, int root_fd, const struct stat *root_st,
		    uint64_t held_budget)
{
	memset(tab, 0, sizeof(*tab));
	tab->root.path = strdup("");
	if (!tab->root.path || tfs_htab_init(&tab->real, INITIAL_BUCKETS, real_node_hash) < 0 ||
	    tfs_htab_init(&tab->sibling, INITIAL_BUCKETS, sibling_node_hash) < 0 ||
	    tfs_htab_init(&tab->names, INITIAL_BUCKETS, name_node_hash) < 0 ||
	    tfs_holds_init(&tab->holds, held_budget) < 0) {
		tfs_htab_destroy(&tab->real);
		tfs_htab_destroy(&tab->sibling);
		tfs_htab_destroy(&tab->names);
		free(tab->root.path);
		return -ENOMEM;
	}
	tab->fd_cap = TFS_FD_CAP_MIN;
	tab->root.refs = 1;
	tab->root.fd = root_fd;
	tab->root.dev = root_st->st_dev;
	tab->root.ino = root_st->st_ino;
	tab->root.type = S_IFDIR;
	tab->use_handles = tfs_fdpool_probe_handles(tab);
	pthread_mutex_init(&tab->lock, NULL);
	return 0;
}

static void inode_free(struct tfs_inode *inode)
{
	if (inode->is_sibling) {
		tfs_doc_key_destroy(&inode->key);
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
	struct tfs_htab *indexes[] = {&tab->sibling, &tab->real};

	/* Siblings first: they hold references on directories, which are freed regardless. */
	for (size_t i = 0; i < 2; i++) {
		size_t bucket = 0;
		struct tfs_hnode *p = tfs_htab_next(indexes[i], &bucket, NULL), *next;

		for (; p; p = next) {
			next = tfs_htab_next(indexes[i], &bucket, p);
			inode_free(inode_of(p));
		}
	}
	tfs_holds_destroy(&tab->holds);
	tfs_htab_destroy(&tab->real);
	tfs_htab_destroy(&tab->sibling);
	tfs_htab_destroy(&tab->names);
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

/* Puts inode in the (parent, name) index under its current entry; under the lock. */
static void name_index_add(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	tfs_htab_insert(&tab->names, &inode->name_link, name_hash(inode->parent, inode->name));
}

/* Takes inode out of the (parent, name) index; under the lock. */
static void name_index_remove(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	if (inode->parent)
		tfs_htab_remove(&tab->names, &inode->name_link,
				name_hash(inode->parent, inode->name));
}

/* Before inode takes the entry (dir, name): the files whose latest entry it was lost that name
 * (a file renamed over another is found by a lookup before the change event is taken in), so
 * no event will name them again; their descriptors leave the pool, which would otherwise keep
 * replaced files open (and their space allocated) until the kernel forgets them. Directories
 * keep theirs: a moved directory is found by its own events. Under the lock. */
static void unpool_displaced(struct tfs_inodes *tab, struct tfs_inode *inode,
			     const struct tfs_inode *dir, const char *name)
{
	struct tfs_inode *p = named_of(tfs_htab_chain(&tab->names, name_hash(dir, name)));

	for (; p; p = named_of(p->name_link.next)) {
		if (p != inode && p->parent == dir && p->type != S_IFDIR &&
		    strcmp(p->name, name) == 0)
			tfs_fdpool_set_unpooled(tab, p, true);
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

/* Finds the real inode (dev, ino); under the lock. */
static struct tfs_inode *find_real(struct tfs_inodes *tab, dev_t dev, ino_t ino)
{
	struct tfs_inode *inode;

	if (dev == tab->root.dev && ino == tab->root.ino)
		return &tab->root; /* a bind mount of the root inside itself */
	inode = inode_of(tfs_htab_chain(&tab->real, real_hash(dev, ino)));
	while (inode && !(inode->dev == dev && inode->ino == ino))
		inode = inode_of(inode->link.next);
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

/* Whether dir may become the directory of the latest entry of directory inode: it is not inode
 * and does not hang from it (a directory bound inside itself, or two mounts bound into each
 * other, would make inode its own ancestor), and a chain of TFS_MAX_DEPTH - 1 directories at
 * most leads from inode up to the root, so that every walk up the tree ends within the bound.
 * Under the lock. */
static bool parent_allowed(const struct tfs_inode *inode, const struct tfs_inode *dir)
{
	unsigned depth = 0;

	for (const struct tfs_inode *p = dir; p; p = p->parent) {
		if (p == inode || ++depth >= TFS_MAX_DEPTH - 1)
			return false;
	}
	return true;
}

int tfs_inodes_add_real(struct tfs_inodes *tab, int fd, const struct stat *st,
			struct tfs_inode *dir, const char *name, const char *path, uint64_t seen,
			struct tfs_inode **found, bool *created)
{
	struct tfs_inode *inode, *fresh = NULL, *was = NULL;
	char *dir_path = S_ISDIR(st->st_mode) ? strdup(path) : NULL, *copy = strdup(name);
	int mount_id, err = -ENOMEM;

	*created = false;
	*found = NULL;
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
			fresh->handle = tfs_fdpool_handle_of(fd, &mount_id);
			if (fresh->handle && mount_id != tab->mount_id) {
				free(fresh->handle); /* another mount: parent + name instead */
				fresh->handle = NULL;
			}
		}
		pthread_mutex_lock(&tab->lock);
		inode = find_real(tab, st->st_dev, st->st_ino);
	}
	if (S_ISDIR(st->st_mode) && inode != &tab->root && !parent_allowed(inode, dir)) {
		pthread_mutex_unlock(&tab->lock);
		if (fresh)
			free(fresh->handle);
		err = -ELOOP;
		goto fail;
	}
	if (inode) {
		inode->refs++;
		if (inode != &tab->root) {
			tfs_fdpool_set_unpooled(tab, inode, false); /* found by a name again */
			was = set_entry(tab, inode, dir, copy, dir_path, seen);
			copy = dir_path = NULL;
		}
		if (tfs_fdpool_adopt(tab, inode, fd))
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
		*found = inode;
		return 0;
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
	tfs_htab_insert(&tab->real, &fresh->link, real_hash(st->st_dev, st->st_ino));
	unpool_displaced(tab, fresh, dir, copy);
	name_index_add(tab, fresh);
	tfs_fdpool_adopt(tab, fresh, fd);
	pthread_mutex_unlock(&tab->lock);
	*created = true;
	*found = fresh;
	return 0;
fail:
	free(copy);
	free(dir_path);
	free(fresh);
	close(fd);
	return err;
}

struct tfs_inode *tfs_inodes_child_ref(struct tfs_inodes *tab, struct tfs_inode *dir,
				       const char *name, bool mark)
{
	struct tfs_inode *inode;

	pthread_mutex_lock(&tab->lock);
	inode = named_of(tfs_htab_chain(&tab->names, name_hash(dir, name)));
	while (inode && !(inode->parent == dir && strcmp(inode->name, name) == 0))
		inode = named_of(inode->name_link.next);
	if (inode) {
		inode->refs++;
		if (mark)
			tfs_inodes_mark_locked(tab, inode);
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
	if (!tab->watched)
		watched = false;
	else if (inode->type == S_IFDIR || !inode->parent)
		watched = tab->watched(tab->on_free_arg, inode);
	else
		watched = tab->watched(tab->on_free_arg, inode->parent);
	pthread_mutex_unlock(&tab->lock);
	return watched;
}

struct tfs_inode *tfs_inodes_ref_found(struct tfs_inodes *tab, struct tfs_inode *(*find)(void *arg),
				       void *arg)
{
	struct tfs_inode *inode;

	pthread_mutex_lock(&tab->lock);
	inode = find(arg);
	if (inode && !inode->dead)
		inode->refs++;
	else
		inode = NULL;
	pthread_mutex_unlock(&tab->lock);
	return inode;
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

struct tfs_inode *tfs_inodes_add_sibling(struct tfs_inodes *tab, struct tfs_inode *dir,
					 const struct tfs_doc_key *key, const struct stat *attr,
					 struct tfs_cache_entry *entry, bool cached)
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
	inode = inode_of(tfs_htab_chain(&tab->sibling, hash));
	while (inode && !(inode->dir == dir && tfs_doc_key_equal(&inode->key, key)))
		inode = inode_of(inode->link.next);
	if (inode) {
		inode_free(fresh);
	} else {
		inode = fresh;
		inode->dir = dir;
		dir->refs++;
		inode->attr = *attr;
		tfs_htab_insert(&tab->sibling, &inode->link, hash);
	}
	inode->refs++;
	tfs_holds_keep(&tab->holds, inode, entry, cached);
	pthread_mutex_unlock(&tab->lock);
	return inode;
}

struct tr_doc *tfs_inodes_take_doc(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tr_doc *doc;

	pthread_mutex_lock(&tab->lock);
	doc = tfs_holds_take(&tab->holds, inode);
	pthread_mutex_unlock(&tab->lock);
	return doc;
}

/* Takes inode out of the table (its index, the name index, the descriptor pool, the holds);
 * under the lock. */
static void unlink_inode(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	if (inode->is_sibling) {
		tfs_htab_remove(&tab->sibling, &inode->link, sibling_hash(inode->dir, &inode->key));
		tfs_holds_drop(&tab->holds, inode);
	} else {
		tfs_fdpool_forget(tab, inode);
		tfs_htab_remove(&tab->real, &inode->link, real_hash(inode->dev, inode->ino));
		name_index_remove(tab, inode);
	}
	inode->dead = true;
}

void tfs_inodes_forget(struct tfs_inodes *tab, struct tfs_inode *inode, uint64_t n)
{
	struct tfs_hnode *dead = NULL; /* the inodes unlinked, chained through their link */

	pthread_mutex_lock(&tab->lock);
	/* An inode left with no reference goes, and with it its reference on the directory that
	 * names it, which may be that directory's last. */
	while (inode && inode != &tab->root) {
		struct tfs_inode *up = inode->is_sibling ? inode->dir : inode->parent;

		inode->refs = inode->refs > n ? inode->refs - n : 0;
		if (inode->refs)
			break;
		unlink_inode(tab, inode);
		inode->link.next = dead;
		dead = &inode->link;
		inode = up;
		n = 1;
	}
	pthread_mutex_unlock(&tab->lock);
	while (dead) {
		struct tfs_inode *gone = inode_of(dead);

		dead = dead->next;
		if (!gone->is_sibling && tab->on_free)
			tab->on_free(tab->on_free_arg, gone);
		inode_free(gone);
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

double tfs_inodes_gave_attrs(struct tfs_inodes *tab, struct tfs_inode *inode, off_t size,
			     double timeout)
{
	uint64_t now = timeout > 0 ? tfs_now_ms() : 0;

	pthread_mutex_lock(&tab->lock);
	if (timeout > 0 && inode->changed_ms && now - inode->changed_ms < TFS_FILE_HOT_MS)
		timeout = 0;
	if (timeout > 0)
		inode->long_attrs = true;
	if (inode->given == TFS_SIZE_NONE) {
		inode->given = TFS_SIZE_ONE;
		inode->given_size = size;
	} else if (inode->given == TFS_SIZE_ONE && inode->given_size != size) {
		/* Two replies of different sizes may reach the kernel in either order, and it
		 * keeps the first (the later one started at the same attr_version): unknown. */
		inode->given = TFS_SIZE_MIXED;
	}
	pthread_mutex_unlock(&tab->lock);
	return timeout;
}

void tfs_inodes_file_changed(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	uint64_t now = tfs_now_ms();

	pthread_mutex_lock(&tab->lock);
	inode->changed_ms = now ? now : 1;
	pthread_mutex_unlock(&tab->lock);
}

bool tfs_inodes_take_long_attrs(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	bool given;

	pthread_mutex_lock(&tab->lock);
	given = inode->long_attrs;
	inode->long_attrs = false;
	pthread_mutex_unlock(&tab->lock);
	return given;
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
