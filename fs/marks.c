/* SPDX-License-Identifier: MIT */
/* marks.c - the inode table's moved marks: directories a change event took from the name the
 * kernel knows them by, answered ESTALE until a lookup finds them again. */
#include <stdint.h>
#include <time.h>

#include "inode.h"

/* How long a moved mark outlives the invalidation of its kernel entry: a request that walked
 * the old entry just before it was invalidated may still be on its way to the daemon. */
static const uint64_t MOVED_GRACE_NS = 1000000000ULL;

void tfs_inodes_mark_locked(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	if (inode->type != S_IFDIR || inode == &tab->root)
		return;
	inode->moved_until = UINT64_MAX;
	inode->moved_seq = tab->events;
	tab->marks++;
}

bool tfs_inodes_beneath_known(struct tfs_inodes *tab, struct tfs_inode *dir, uint64_t *marks)
{
	unsigned depth;
	bool known;

	pthread_mutex_lock(&tab->lock);
	*marks = tab->marks;
	known = dir->beneath_marks == tab->marks + 1;
	depth = 0;
	for (struct tfs_inode *p = dir->parent; known && p; p = p->parent)
		known = ++depth < TFS_MAX_DEPTH && tab->watched &&
			tab->watched(tab->on_free_arg, p);
	pthread_mutex_unlock(&tab->lock);
	return known;
}

void tfs_inodes_beneath_seen(struct tfs_inodes *tab, struct tfs_inode *dir, uint64_t marks)
{
	pthread_mutex_lock(&tab->lock);
	dir->beneath_marks = marks + 1;
	pthread_mutex_unlock(&tab->lock);
}

void tfs_inodes_mark_all(struct tfs_inodes *tab,
			 void (*each)(void *arg, struct tfs_inode *parent, const char *name,
				      struct tfs_inode *inode),
			 void *arg)
{
	pthread_mutex_lock(&tab->lock);
	size_t bucket = 0;

	for (struct tfs_hnode *node = tfs_htab_next(&tab->real, &bucket, NULL); node;
	     node = tfs_htab_next(&tab->real, &bucket, node)) {
		struct tfs_inode *p = tfs_hnode_entry(node, struct tfs_inode, link);

		tfs_inodes_mark_locked(tab, p);
		if (!p->parent)
			continue;
		p->refs++;
		p->parent->refs++;
		each(arg, p->parent, p->name, p);
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
		tfs_inodes_mark_locked(tab, inode);
	else if (inode->moved_until == UINT64_MAX)
		inode->moved_until = deadline;
	pthread_mutex_unlock(&tab->lock);
}

bool tfs_inodes_reachable(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	uint64_t now = 0;
	unsigned depth = 0;
	bool reachable = true;

	pthread_mutex_lock(&tab->lock);
	for (struct tfs_inode *p = inode->is_sibling ? inode->dir : inode; p; p = p->parent) {
		if (++depth > TFS_MAX_DEPTH) { /* past the bound entries are added within */
			reachable = false;
			break;
		}
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
