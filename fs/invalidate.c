/* SPDX-License-Identifier: MIT */
/* invalidate.c - the watch's queue of invalidations and the kernel notifications it sends
 * (watch.c takes in the events that call for them). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "watch_impl.h"

/* Drops a reference the queue will not keep: with the table's lock held (tab_locked), where it is
 * never an inode's last, by a plain decrement. */
static void drop_ref(struct tfs_watch *w, struct tfs_inode *inode, bool tab_locked)
{
	if (tab_locked)
		inode->refs--;
	else
		tfs_inodes_forget(w->tab, inode, 1);
}

void tfs_watch_queue(struct tfs_watch *w, struct tfs_job job, bool tab_locked)
{
	if (!tfs_job_queue_add(&w->queue, &job))
		tfs_watch_drop_job(w, &job, tab_locked);
}

void tfs_watch_queue_entry(void *arg, struct tfs_inode *parent, const char *name,
			   struct tfs_inode *inode)
{
	struct tfs_watch *w = arg;

	tfs_watch_queue(w, (struct tfs_job){parent, strdup(name), inode, true, true, false}, true);
}

void tfs_watch_drop_job(struct tfs_watch *w, struct tfs_job *job, bool tab_locked)
{
	free(job->name);
	if (job->child)
		drop_ref(w, job->child, tab_locked);
	drop_ref(w, job->dir, tab_locked);
}

/* Whether inode no longer exists in SOURCE (its last link is gone). */
static bool is_deleted(struct tfs_inodes *tab, struct tfs_inode *inode)
{
	struct stat st;
	int fd = tfs_inode_fd(tab, inode);
	bool gone;

	if (fd < 0)
		return fd == -ESTALE;
	gone = fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 && st.st_nlink == 0;
	tfs_inode_fd_put(tab, inode);
	return gone;
}

/* Whether the job must invalidate its child's attributes: always, but for a regular file changed
 * in place, which needs it only when a reply gave its attributes a timeout since the last one
 * (ops.c, "Never a padded read"). */
static bool child_attrs_held(struct tfs_inodes *tab, const struct tfs_job *job)
{
	if (job->name || job->child->type != S_IFREG)
		return true;
	return tfs_inodes_take_long_attrs(tab, job->child);
}

/* Sends the kernel one job's invalidations, outside every lock: the kernel may have to wait
 * for a request on the same directory to finish, which may itself wait for the lock. */
void tfs_watch_run_job(struct tfs_watch *w, struct tfs_job *job)
{
	struct tfs_inodes *tab = w->tab;
	fuse_ino_t dir = tfs_inode_nodeid(tab, job->dir);

	/* A deleted file is deleted in the kernel too: an inode whose link count the kernel last
	 * saw above 0 stays in its inode cache, with the daemon's inode, until memory runs short,
	 * however unused; one with none goes at its last close. Its descriptor is closed at once,
	 * so that the daemon holds neither the file's space nor its inode number. A file moved
	 * away from the name the kernel knows it by (an editor's temporary file renamed over the
	 * file it saves, listed by readdirplus in between) is deleted from the kernel the same way:
	 * the kernel knows it by no other name, so it would stay cached, never forgotten; a lookup
	 * of its new name gives the kernel its link count back. */
	bool file_gone = job->name_gone && job->child && job->child != job->dir &&
			 job->child->type != S_IFDIR;
	bool deleted = job->name && job->child && job->child != job->dir &&
		       (file_gone || is_deleted(tab, job->child));

	if (deleted)
		tfs_inode_fd_drop(tab, job->child);
	if (deleted && fuse_lowlevel_notify_delete(w->se, dir, tfs_inode_nodeid(tab, job->child),
						   job->name, strlen(job->name)) == 0) {
		/* done: the kernel entry is gone */
	} else if (job->name) {
		fuse_lowlevel_notify_inval_entry(w->se, dir, job->name, strlen(job->name));
	}
	if (job->dir_attrs)
		fuse_lowlevel_notify_inval_inode(w->se, dir, 0, 0);
	if (job->child) {
		if ((job->child != job->dir || !job->dir_attrs) && child_attrs_held(tab, job))
			fuse_lowlevel_notify_inval_inode(w->se, tfs_inode_nodeid(tab, job->child),
							 0, 0);
		if (job->moved)
			tfs_inodes_mark_moved(tab, job->child, true);
		tfs_inodes_forget(tab, job->child, 1);
	}
	free(job->name);
	tfs_inodes_forget(tab, job->dir, 1);
}

struct tfs_job *tfs_watch_take_jobs(struct tfs_watch *w, size_t *n)
{
	return tfs_job_queue_take(&w->queue, n);
}
