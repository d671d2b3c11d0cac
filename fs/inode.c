/* inode.c - the inode table: lookup counting, real inodes by (st_dev, st_ino), sibling versions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "inode.h"

_Static_assert(sizeof(fuse_ino_t) >= sizeof(uintptr_t), "node ids hold inode addresses");

enum { INITIAL_BUCKETS = 1024 };

int tfs_inodes_init(struct tfs_inodes *tab, int root_fd, const struct stat *root_st,
		    uint64_t held_budget)
{
	memset(tab, 0, sizeof(*tab));
	tab->held_budget = held_budget;
	tab->real = calloc(INITIAL_BUCKETS, sizeof(*tab->real));
	tab->sibling = calloc(INITIAL_BUCKETS, sizeof(*tab->sibling));
	tab->root.path = strdup("");
	if (!tab->real || !tab->sibling || !tab->root.path) {
		free(tab->real);
		free(tab->sibling);
		free(tab->root.path);
		return -1;
	}
	tab->n_real_buckets = tab->n_sibling_buckets = INITIAL_BUCKETS;
	tab->root.refs = 1;
	tab->root.fd = root_fd;
	tab->root.dev = root_st->st_dev;
	tab->root.ino = root_st->st_ino;
	tab->root.type = S_IFDIR;
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
		close(inode->fd);
		free(inode->path);
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

/* Rehashes a bucket array to twice its size when it holds more entries than buckets; a failed
 * allocation keeps the old array (chains just get longer). */
static void grow(struct tfs_inode ***buckets, size_t *n_buckets, size_t count,
		 uint64_t (*hash)(const struct tfs_inode *))
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
			next = p->bucket_next;
			p->bucket_next = grown[hash(p) % n];
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

struct tfs_inode *tfs_inodes_add_real(struct tfs_inodes *tab, int fd, const struct stat *st,
				      const char *path)
{
	struct tfs_inode *inode, *fresh = calloc(1, sizeof(*fresh));
	char *dir_path = S_ISDIR(st->st_mode) ? strdup(path) : NULL;

	if (!fresh || (S_ISDIR(st->st_mode) && !dir_path)) {
		free(fresh);
		free(dir_path);
		close(fd);
		return NULL;
	}
	pthread_mutex_lock(&tab->lock);
	if (st->st_dev == tab->root.dev && st->st_ino == tab->root.ino) {
		inode = &tab->root; /* a bind mount of the root inside itself */
	} else {
		inode = tab->real[real_hash(st->st_dev, st->st_ino) % tab->n_real_buckets];
		while (inode && !(inode->dev == st->st_dev && inode->ino == st->st_ino))
			inode = inode->bucket_next;
	}
	if (inode) {
		inode->refs++;
		/* A directory renamed in SOURCE shows its new path from its next lookup on. */
		if (dir_path && inode->path && strcmp(inode->path, dir_path) != 0 &&
		    inode != &tab->root) {
			free(inode->path);
			inode->path = dir_path;
			dir_path = NULL;
		}
		pthread_mutex_unlock(&tab->lock);
		close(fd);
		free(dir_path);
		free(fresh);
		return inode;
	}
	fresh->refs = 1;
	fresh->fd = fd;
	fresh->dev = st->st_dev;
	fresh->ino = st->st_ino;
	fresh->type = st->st_mode & S_IFMT;
	fresh->path = dir_path;
	fresh->bucket_next = tab->real[real_hash(st->st_dev, st->st_ino) % tab->n_real_buckets];
	tab->real[real_hash(st->st_dev, st->st_ino) % tab->n_real_buckets] = fresh;
	tab->n_real++;
	grow(&tab->real, &tab->n_real_buckets, tab->n_real, real_inode_hash);
	pthread_mutex_unlock(&tab->lock);
	return fresh;
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
		grow(&tab->sibling, &tab->n_sibling_buckets, tab->n_sibling, sibling_inode_hash);
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

/* Removes inode from its bucket chain; under the lock. */
static void unlink_inode(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct tfs_inode **slot;

	if (inode->is_sibling) {
		slot = &tab->sibling[sibling_inode_hash(inode) % tab->n_sibling_buckets];
		tab->n_sibling--;
	} else {
		slot = &tab->real[real_inode_hash(inode) % tab->n_real_buckets];
		tab->n_real--;
	}
	while (*slot != inode)
		slot = &(*slot)->bucket_next;
	*slot = inode->bucket_next;
}

void tfs_inodes_forget(struct tfs_inodes *tab, struct tfs_inode *inode, uint64_t n)
{
	struct tfs_inode *dead[2] = {NULL, NULL};

	pthread_mutex_lock(&tab->lock);
	inode->refs = inode->refs > n ? inode->refs - n : 0;
	if (inode->refs == 0 && inode != &tab->root) {
		unlink_inode(tab, inode);
		dead[0] = inode;
		if (inode->is_sibling) {
			struct tfs_inode *dir = inode->dir;

			tr_doc_unref(unhold(tab, inode));
			if (--dir->refs == 0 && dir != &tab->root) {
				unlink_inode(tab, dir);
				dead[1] = dir;
			}
		}
	}
	pthread_mutex_unlock(&tab->lock);
	for (int i = 0; i < 2; i++) {
		if (dead[i])
			inode_free(dead[i]);
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
	const struct stat *was = &inode->opened_st;
	bool same;

	pthread_mutex_lock(&tab->lock);
	same = inode->opened && st->st_size == was->st_size &&
	       st->st_mtim.tv_sec == was->st_mtim.tv_sec &&
	       st->st_mtim.tv_nsec == was->st_mtim.tv_nsec &&
	       st->st_ctim.tv_sec == was->st_ctim.tv_sec &&
	       st->st_ctim.tv_nsec == was->st_ctim.tv_nsec;
	inode->opened_st = *st;
	inode->opened = true;
	pthread_mutex_unlock(&tab->lock);
	return same;
}
