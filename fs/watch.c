/* SPDX-License-Identifier: MIT */
/* watch.c - inotify on SOURCE's directories: moved entries marked before any request answers,
 * kernel entries and attributes invalidated from a thread of the daemon's own. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "htab.h"
#include "watch_impl.h"

#ifndef BCACHEFS_SUPER_MAGIC
#define BCACHEFS_SUPER_MAGIC 0xca451a4e
#endif
#ifndef ZFS_SUPER_MAGIC
#define ZFS_SUPER_MAGIC 0x2fc12fc1
#endif

/* Events that change a directory's entries or the attributes and data of its children. */
static const uint32_t WATCH_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE |
				   IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
				   IN_ONLYDIR;

/* What the watch knows of one directory inode it was asked to watch (tfs_watch_dir). */
struct watched {
	struct tfs_hnode by_dir; /* tfs_watch.dirs */
	struct tfs_hnode by_wd;  /* tfs_watch.wds, while it owns wd */
	struct tfs_inode *dir;
	int wd; /* the inotify watch (> 0), or -1 when the directory is not watched (its entries
		 * are served uncached) */
	/* Events taken in that may change its listing (names created, deleted or moved in it;
	 * itself moved or unwatched). */
	uint64_t listing_changes;
};

/* fd's file system's magic number, or 0. */
static unsigned long fs_type(int fd)
{
	struct statfs st;

	return fstatfs(fd, &st) < 0 ? 0 : (unsigned long)st.f_type;
}

/* Whether file systems of magic number type are hosted by this kernel (tfs_local_fs). */
static bool local_type(unsigned long type)
{
	switch (type) {
	case EXT4_SUPER_MAGIC: /* also ext2 and ext3 */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
	case OVERLAYFS_SUPER_MAGIC:
	case BCACHEFS_SUPER_MAGIC:
	case ZFS_SUPER_MAGIC: return true;
	default: return false;
	}
}

bool tfs_local_fs(int fd)
{
	return local_type(fs_type(fd));
}

bool tfs_attrs_own(int fd)
{
	unsigned long type = fs_type(fd);

	/* overlayfs passes AT_STATX_DONT_SYNC down to its layers, which may be a network's */
	return local_type(type) && type != OVERLAYFS_SUPER_MAGIC;
}

static uint64_t wd_hash(int wd)
{
	return (unsigned)wd * 2654435761U;
}

static uint64_t dir_hash(const struct tfs_inode *dir)
{
	return (uintptr_t)dir * 0x9e3779b97f4a7c15ULL;
}

static uint64_t by_wd_hash(const struct tfs_hnode *node)
{
	return wd_hash(tfs_hnode_entry(node, const struct watched, by_wd)->wd);
}

static uint64_t by_dir_hash(const struct tfs_hnode *node)
{
	return dir_hash(tfs_hnode_entry(node, const struct watched, by_dir)->dir);
}

/* The directory that owns wd, or NULL; under the map lock. */
static struct watched *find_wd(const struct tfs_watch *w, int wd)
{
	for (struct tfs_hnode *n = tfs_htab_chain(&w->wds, wd_hash(wd)); n; n = n->next) {
		struct watched *e = tfs_hnode_entry(n, struct watched, by_wd);

		if (e->wd == wd)
			return e;
	}
	return NULL;
}

/* What the watch knows of dir, or NULL (never asked to watch it); under the map lock. */
static struct watched *find_dir(const struct tfs_watch *w, const struct tfs_inode *dir)
{
	for (struct tfs_hnode *n = tfs_htab_chain(&w->dirs, dir_hash(dir)); n; n = n->next) {
		struct watched *e = tfs_hnode_entry(n, struct watched, by_dir);

		if (e->dir == dir)
			return e;
	}
	return NULL;
}

/* Makes e the owner of its wd; under the map lock. inotify gives a directory that is watched
 * already the same wd: when the inode that holds it is being freed (the kernel forgot it and a
 * lookup made a new inode for the same directory before its on_free ran), e takes the wd over,
 * and watch_forget then leaves the watch alone. */
static void own_wd(struct tfs_watch *w, struct watched *e)
{
	struct watched *was = find_wd(w, e->wd);

	if (was)
		tfs_htab_remove(&w->wds, &was->by_wd, wd_hash(was->wd));
	tfs_htab_insert(&w->wds, &e->by_wd, wd_hash(e->wd));
}

struct map_ref_arg {
	struct tfs_watch *w;
	int wd;
	uint32_t mask;
};

/* tfs_inodes_ref_found's callback, under the table's lock: the directory that owns wd, its
 * listing changed by an event of mask. */
static struct tfs_inode *find_for_event(void *arg)
{
	struct map_ref_arg *a = arg;
	struct tfs_inode *dir = NULL;
	struct watched *e;

	pthread_mutex_lock(&a->w->map_lock);
	e = find_wd(a->w, a->wd);
	if (e && !e->dir->dead) {
		dir = e->dir;
		if (a->mask & (NAME_CHANGES | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
			e->listing_changes++;
		if (a->mask &
		    IN_IGNORED) { /* the directory is gone, or its file system unmounted */
			tfs_htab_remove(&a->w->wds, &e->by_wd, wd_hash(e->wd));
			e->wd = -1;
		}
	}
	pthread_mutex_unlock(&a->w->map_lock);
	return dir;
}

/* The directory watched as wd with one more reference, or NULL (none, or being freed), after
 * what the event of mask changes in the watch's map. */
static struct tfs_inode *map_ref(struct tfs_watch *w, int wd, uint32_t mask)
{
	struct map_ref_arg arg = {w, wd, mask};

	return tfs_inodes_ref_found(w->tab, find_for_event, &arg);
}

/* The table's on_free: a directory being freed stops being watched before its memory goes, so
 * the events still queued for its watch find nothing. */
static void watch_forget(void *arg, struct tfs_inode *inode)
{
	struct tfs_watch *w = arg;
	struct watched *e;

	if (inode->type != S_IFDIR)
		return;
	pthread_mutex_lock(&w->map_lock);
	e = find_dir(w, inode);
	if (e) {
		/* Only the inode the map names for wd owns the watch (own_wd). */
		if (e->wd > 0 && find_wd(w, e->wd) == e) {
			tfs_htab_remove(&w->wds, &e->by_wd, wd_hash(e->wd));
			inotify_rm_watch(w->ifd, e->wd);
		}
		tfs_htab_remove(&w->dirs, &e->by_dir, dir_hash(inode));
		free(e);
	}
	pthread_mutex_unlock(&w->map_lock);
}

/* The table's watched: whether dir's watch is in place; under the table's lock. */
static bool watch_covers_dir(void *arg, const struct tfs_inode *dir)
{
	struct tfs_watch *w = arg;
	struct watched *e;
	bool covered;

	pthread_mutex_lock(&w->map_lock);
	e = find_dir(w, dir);
	covered = e && e->wd > 0;
	pthread_mutex_unlock(&w->map_lock);
	return covered;
}

struct tfs_watch *tfs_watch_new(struct tfs_inodes *tab, long limit, bool files)
{
	struct tfs_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->tab = tab;
	w->limit = limit;
	w->files = files;
	w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (tfs_htab_init(&w->dirs, 256, by_dir_hash) < 0 ||
	    tfs_htab_init(&w->wds, 256, by_wd_hash) < 0 || w->ifd < 0 || w->wake_fd < 0) {
		fprintf(stderr,
			"toolfs: cannot watch SOURCE (%s): every entry is served uncached\n",
			strerror(errno));
		if (w->ifd >= 0)
			close(w->ifd);
		if (w->wake_fd >= 0)
			close(w->wake_fd);
		tfs_htab_destroy(&w->dirs);
		tfs_htab_destroy(&w->wds);
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->map_lock, NULL);
	tab->on_free = watch_forget;
	tab->watched = watch_covers_dir;
	tab->on_free_arg = w;
	return w;
}

void tfs_watch_dir(struct tfs_watch *w, struct tfs_inode *dir, int fd)
{
	char proc_path[64];
	const char *why = NULL;
	struct watched *e;

	if (!w)
		return;
	pthread_mutex_lock(&w->map_lock);
	if (find_dir(w, dir)) {
		pthread_mutex_unlock(&w->map_lock);
		return;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		why = strerror(ENOMEM);
	} else if (!tfs_local_fs(fd)) {
		why = "its file system's changes are not reported to inotify";
	} else if (w->limit >= 0 && (long)w->wds.count >= w->limit) {
		why = "watch_limit reached";
	} else {
		snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
		e->wd = inotify_add_watch(w->ifd, proc_path, WATCH_MASK);
		if (e->wd < 0)
			why = errno == ENOSPC ? "fs.inotify.max_user_watches reached"
					      : strerror(errno);
	}
	if (e) {
		e->dir = dir;
		if (why)
			e->wd = -1;
		else
			own_wd(w, e);
		tfs_htab_insert(&w->dirs, &e->by_dir, dir_hash(dir));
	}
	if (why && !w->warned) {
		w->warned = true;
		fprintf(stderr,
			"toolfs: cannot watch /%s (%s): directories that cannot be watched are "
			"served uncached\n",
			dir->path ? dir->path : "", why);
	}
	pthread_mutex_unlock(&w->map_lock);
}

bool tfs_watch_covers(struct tfs_watch *w, const struct tfs_inode *dir)
{
	return w && watch_covers_dir(w, dir);
}

/* The inode that name in dir now holds, with a reference, when the kernel may know it under
 * another entry (a hard link): found by (st_dev, st_ino). */
static struct tfs_inode *inode_at(struct tfs_watch *w, struct tfs_inode *dir, const char *name)
{
	struct tfs_inode *inode = NULL;
	struct stat st;
	int fd = tfs_inode_fd(w->tab, dir);

	if (fd < 0)
		return NULL;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		inode = tfs_inodes_real_ref(w->tab, st.st_dev, st.st_ino);
	tfs_inode_fd_put(w->tab, dir);
	return inode;
}

/* Takes in one event; under the lock. */
static void take_event(struct tfs_watch *w, const struct inotify_event *ev)
{
	struct tfs_inodes *tab = w->tab;
	struct tfs_inode *dir, *child;
	bool moved;

	pthread_mutex_lock(&tab->lock);
	tab->events++;
	pthread_mutex_unlock(&tab->lock);
	if (ev->mask & IN_Q_OVERFLOW) {
		__atomic_add_fetch(&tab->events_lost, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "toolfs: change events were lost; every cached entry is dropped\n");
		tfs_inodes_mark_all(tab, tfs_watch_queue_entry, w);
		return;
	}
	dir = map_ref(w, ev->wd, ev->mask);
	if (!dir)
		return;
	if (ev->mask & IN_IGNORED) { /* no longer watched (map_ref): served uncached from now */
		tfs_watch_queue(w, (struct tfs_job){dir, NULL, NULL, true, false, false}, false);
		return;
	}
	if (ev->len && ev->name[0] && !w->files) {
		/* Only directories' entries are cached: a moved one is marked and invalidated. */
		moved = ev->mask & NAME_CHANGES;
		child = moved ? tfs_inodes_child_ref(tab, dir, ev->name, true) : NULL;
		if (child && child->type == S_IFDIR) {
			tfs_watch_queue(
				w,
				(struct tfs_job){dir, strdup(ev->name), child, false, true, false},
				false);
			return;
		}
		/* A file the name no longer holds (deleted, moved away, replaced) keeps no pooled
		 * descriptor (fdpool.h, tfs_inode_fd_drop). */
		if (child && (ev->mask & (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)))
			tfs_inode_fd_drop(tab, child);
		if (child)
			tfs_inodes_forget(tab, child, 1);
		tfs_inodes_forget(tab, dir, 1);
		return;
	}
	if (ev->len && ev->name[0]) {
		moved = ev->mask & NAME_CHANGES;
		child = tfs_inodes_child_ref(tab, dir, ev->name, moved);
		if (!child && !moved)
			child = inode_at(w, dir, ev->name);
		if (!moved && !child) {
			tfs_inodes_forget(tab, dir, 1); /* a file the kernel does not know */
			return;
		}
		if (!moved && child->type == S_IFREG)
			tfs_inodes_file_changed(tab, child);
		/* A name created, deleted or moved changes dir's attributes (mtime, nlink) and
		 * its listing, which the kernel keeps (dir.c): both are invalidated. */
		tfs_watch_queue(w,
				(struct tfs_job){dir, moved ? strdup(ev->name) : NULL, child, moved,
						 moved,
						 (ev->mask & (IN_DELETE | IN_MOVED_FROM)) != 0},
				false);
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		tfs_inodes_mark_moved(tab, dir, false);
		if (tfs_inodes_ref(tab, dir)) {
			tfs_watch_queue(w, (struct tfs_job){dir, NULL, dir, true, true, false},
					false);
			return;
		}
	}
	tfs_watch_queue(w, (struct tfs_job){dir, NULL, NULL, true, false, false}, false);
}

/* Reads and takes in every pending event; under the lock. */
static void drain(struct tfs_watch *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t n = read(w->ifd, buf, sizeof(buf));

		if (n <= 0)
			return;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			take_event(w, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
}

uint64_t tfs_watch_sync(struct tfs_watch *w)
{
	uint64_t seen, one = 1;
	bool queued;

	if (!w)
		return UINT64_MAX;
	pthread_mutex_lock(&w->lock);
	drain(w);
	queued = w->queue.n > 0;
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_lock(&w->tab->lock);
	seen = w->tab->events;
	pthread_mutex_unlock(&w->tab->lock);
	if (queued && write(w->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the thread is awake already */
	}
	return seen;
}

static void *notify_loop(void *arg)
{
	struct tfs_watch *w = arg;
	struct pollfd fds[2] = {{.fd = w->ifd, .events = POLLIN},
				{.fd = w->wake_fd, .events = POLLIN}};
	int timeout = -1;

	pthread_setname_np(pthread_self(), "toolfs-watch"); /* its name in top -H, ps -L */

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		struct tfs_job *jobs;
		uint64_t count;
		size_t n;

		/* Wakes for the retired descriptors too, so that an idle daemon does not keep a
		 * deleted file open (fdpool.h, TFS_FD_RETIRE_MS). */
		if (poll(fds, 2, timeout) < 0 && errno != EINTR)
			break;
		if (fds[1].revents && read(w->wake_fd, &count, sizeof(count)) < 0) {
			/* nothing to clear */
		}
		pthread_mutex_lock(&w->lock);
		drain(w);
		jobs = tfs_watch_take_jobs(w, &n);
		pthread_mutex_unlock(&w->lock);
		for (size_t i = 0; i < n; i++)
			tfs_watch_run_job(w, &jobs[i]);
		free(jobs);
		timeout = tfs_inodes_sweep_retired(w->tab);
	}
	return NULL;
}

int tfs_watch_start(struct tfs_watch *w, struct fuse_session *se)
{
	int err;

	if (!w)
		return 0;
	w->se = se;
	err = pthread_create(&w->thread, NULL, notify_loop, w);
	if (err)
		return -err;
	w->started = true;
	return 0;
}

void tfs_watch_free(struct tfs_watch *w)
{
	struct tfs_hnode *p, *next;
	struct tfs_job *jobs;
	uint64_t one = 1;
	size_t n, bucket = 0;

	if (!w)
		return;
	if (w->started) {
		__atomic_store_n(&w->stop, true, __ATOMIC_RELEASE);
		if (write(w->wake_fd, &one, sizeof(one)) < 0) {
			/* the counter is full: the thread is awake already */
		}
		pthread_join(w->thread, NULL);
	}
	jobs = tfs_watch_take_jobs(w, &n);
	for (size_t i = 0; i < n; i++)
		tfs_watch_drop_job(w, &jobs[i], false);
	free(jobs);
	w->tab->on_free = NULL;
	w->tab->watched = NULL;
	for (p = tfs_htab_next(&w->dirs, &bucket, NULL); p; p = next) {
		next = tfs_htab_next(&w->dirs, &bucket, p);
		free(tfs_hnode_entry(p, struct watched, by_dir));
	}
	tfs_htab_destroy(&w->dirs);
	tfs_htab_destroy(&w->wds);
	close(w->ifd);
	close(w->wake_fd);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->map_lock);
	free(w);
}

uint64_t tfs_watch_listing_version(struct tfs_watch *w, const struct tfs_inode *dir)
{
	struct watched *e;
	uint64_t changes;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->map_lock);
	e = find_dir(w, dir);
	changes = e ? e->listing_changes : 0;
	pthread_mutex_unlock(&w->map_lock);
	return changes + __atomic_load_n(&w->tab->events_lost, __ATOMIC_RELAXED);
}
