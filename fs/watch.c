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
#include "watch.h"

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
static const uint32_t NAME_CHANGES = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;

/* One invalidation for the thread. */
struct job {
	struct tfs_inode *dir;   /* a reference */
	char *name;              /* the entry of dir to invalidate (owned), or NULL */
	struct tfs_inode *child; /* an inode to invalidate (a reference), or NULL */
	bool dir_attrs;          /* dir's own attributes changed too */
	bool moved;              /* child's moved mark waits for this job */
	bool name_gone;          /* name left dir (deleted or moved away) */
};

struct wd_entry {
	struct tfs_hnode link; /* tfs_watch.map */
	int wd;
	struct tfs_inode *dir;
};

struct tfs_watch {
	struct tfs_inodes *tab;
	struct fuse_session *se;
	int ifd, wake_fd;
	/* Taking in events and the job queue: a request that takes in events waits for one being
	 * taken in by another thread, so it never answers before its marks are set. */
	pthread_mutex_t lock;
	/* The watch map (wd -> directory; its count is the watches made) and warned. Taken alone
	 * or inside lock; held while a directory found in the map gets its reference, so that the
	 * table's on_free (watch_forget), which takes it too, cannot free the directory meanwhile.
	 * It replaces a recursive use of lock: taking in events drops references, which may free
	 * a directory and so call watch_forget, which takes this lock alone. */
	pthread_mutex_t map_lock;
	struct tfs_htab map;
	long limit;
	bool files; /* files' entries and all attributes are cached too */
	bool warned;
	struct job *jobs;
	size_t n_jobs, cap_jobs;
	pthread_t thread;
	bool started, stop; /* stop: atomic */
};

/* inotify sees only the changes made through the kernel that hosts the file system: not those
 * of another host (network file systems), of a FUSE daemon, or of pseudo file systems. The
 * directories of these are served uncached. */
static bool watchable_fs(int fd)
{
	struct statfs st;

	if (fstatfs(fd, &st) < 0)
		return false;
	switch ((unsigned long)st.f_type) {
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

static uint64_t wd_hash(int wd)
{
	return (unsigned)wd * 2654435761U;
}

static uint64_t entry_hash(const struct tfs_hnode *node)
{
	return wd_hash(tfs_hnode_entry(node, const struct wd_entry, link)->wd);
}

static struct wd_entry *map_entry(const struct tfs_watch *w, int wd)
{
	for (struct tfs_hnode *n = tfs_htab_chain(&w->map, wd_hash(wd)); n; n = n->next) {
		struct wd_entry *e = tfs_hnode_entry(n, struct wd_entry, link);

		if (e->wd == wd)
			return e;
	}
	return NULL;
}

/* The directory watched as wd, or NULL; under the map lock. */
static struct tfs_inode *map_find(const struct tfs_watch *w, int wd)
{
	struct wd_entry *e = map_entry(w, wd);

	return e ? e->dir : NULL;
}

/* Under the map lock. */
static void map_remove(struct tfs_watch *w, int wd)
{
	struct wd_entry *e = map_entry(w, wd);

	if (e) {
		tfs_htab_remove(&w->map, &e->link, wd_hash(wd));
		free(e);
	}
}

/* Adds wd -> dir; under the map lock. inotify gives a directory that is watched already the
 * same wd: when the inode that holds it is being freed (the kernel forgot it and a lookup made a
 * new inode for the same directory before its on_free ran), dir takes the entry over, and
 * watch_forget then leaves it alone. Returns 0 or -ENOMEM. */
static int map_add(struct tfs_watch *w, int wd, struct tfs_inode *dir)
{
	struct wd_entry *e = map_entry(w, wd);

	if (e) {
		e->dir = dir;
		return 0;
	}
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->wd = wd;
	e->dir = dir;
	tfs_htab_insert(&w->map, &e->link, wd_hash(wd));
	return 0;
}

/* The directory watched as wd with one more reference, or NULL (none, or being freed). */
static struct tfs_inode *map_ref(struct tfs_watch *w, int wd)
{
	struct tfs_inode *dir;

	pthread_mutex_lock(&w->map_lock);
	dir = map_find(w, wd);
	if (dir && !tfs_inodes_ref(w->tab, dir))
		dir = NULL;
	pthread_mutex_unlock(&w->map_lock);
	return dir;
}

/* The table's on_free: a directory being freed stops being watched before its memory goes, so
 * the events still queued for its watch find nothing. */
static void watch_forget(void *arg, struct tfs_inode *inode)
{
	struct tfs_watch *w = arg;
	int wd = __atomic_load_n(&inode->wd, __ATOMIC_RELAXED);

	if (wd <= 0)
		return;
	pthread_mutex_lock(&w->map_lock);
	/* Only the inode the map names for wd owns the watch (map_add). */
	if (map_find(w, wd) == inode) {
		map_remove(w, wd);
		inotify_rm_watch(w->ifd, wd);
	}
	pthread_mutex_unlock(&w->map_lock);
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
	if (tfs_htab_init(&w->map, 256, entry_hash) < 0 || w->ifd < 0 || w->wake_fd < 0) {
		fprintf(stderr,
			"toolfs: cannot watch SOURCE (%s): every entry is served uncached\n",
			strerror(errno));
		if (w->ifd >= 0)
			close(w->ifd);
		if (w->wake_fd >= 0)
			close(w->wake_fd);
		tfs_htab_destroy(&w->map);
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->map_lock, NULL);
	tab->on_free = watch_forget;
	tab->on_free_arg = w;
	return w;
}

void tfs_watch_dir(struct tfs_watch *w, struct tfs_inode *dir, int fd)
{
	char proc_path[64];
	const char *why = NULL;
	int wd = -1;

	if (!w || __atomic_load_n(&dir->wd, __ATOMIC_RELAXED) != 0)
		return;
	pthread_mutex_lock(&w->map_lock);
	if (!watchable_fs(fd)) {
		why = "its file system's changes are not reported to inotify";
	} else if (w->limit >= 0 && (long)w->map.count >= w->limit) {
		why = "watch_limit reached";
	} else {
		snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
		wd = inotify_add_watch(w->ifd, proc_path, WATCH_MASK);
		if (wd < 0)
			why = errno == ENOSPC ? "fs.inotify.max_user_watches reached"
					      : strerror(errno);
		else if (map_add(w, wd, dir) < 0) {
			inotify_rm_watch(w->ifd, wd);
			wd = -1;
			why = strerror(ENOMEM);
		}
	}
	__atomic_store_n(&dir->wd, wd, __ATOMIC_RELAXED);
	if (why && !w->warned) {
		w->warned = true;
		fprintf(stderr,
			"toolfs: cannot watch /%s (%s): directories that cannot be watched are "
			"served uncached\n",
			dir->path ? dir->path : "", why);
	}
	pthread_mutex_unlock(&w->map_lock);
}

bool tfs_watch_covers(const struct tfs_watch *w, const struct tfs_inode *dir)
{
	return w && __atomic_load_n(&dir->wd, __ATOMIC_RELAXED) > 0;
}

/* Drops a reference the queue will not keep: with the table's lock held (tab_locked), where it is
 * never an inode's last, by a plain decrement. */
static void drop_ref(struct tfs_watch *w, struct tfs_inode *inode, bool tab_locked)
{
	if (tab_locked)
		inode->refs--;
	else
		tfs_inodes_forget(w->tab, inode, 1);
}

/* Queues one job (its references and name are the queue's from now on); under the lock, and
 * under the table's too when tab_locked. A job equal to the last one queued (a burst of writes to
 * one file) is merged into it. */
static void queue_job(struct tfs_watch *w, struct job job, bool tab_locked)
{
	struct job *last = w->n_jobs ? &w->jobs[w->n_jobs - 1] : NULL;

	if (last && last->dir == job.dir && last->child == job.child && !job.moved &&
	    !last->moved &&
	    ((!last->name && !job.name) ||
	     (last->name && job.name && strcmp(last->name, job.name) == 0))) {
		last->dir_attrs |= job.dir_attrs;
		goto drop;
	}
	if (w->n_jobs == w->cap_jobs) {
		size_t cap = w->cap_jobs ? w->cap_jobs * 2 : 64;
		struct job *grown = realloc(w->jobs, cap * sizeof(*grown));

		if (!grown)
			goto drop; /* the kernel keeps the entry for its timeout: never for a sibling */
		w->jobs = grown;
		w->cap_jobs = cap;
	}
	w->jobs[w->n_jobs++] = job;
	return;
drop:
	free(job.name);
	if (job.child)
		drop_ref(w, job.child, tab_locked);
	drop_ref(w, job.dir, tab_locked);
}

/* tfs_inodes_mark_all's callback after lost events: every entry is invalidated. */
static void queue_entry(void *arg, struct tfs_inode *parent, const char *name,
			struct tfs_inode *inode)
{
	struct tfs_watch *w = arg;

	queue_job(w, (struct job){parent, strdup(name), inode, true, true, false}, true);
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
		tfs_inodes_mark_all(tab, queue_entry, w);
		return;
	}
	dir = map_ref(w, ev->wd);
	if (!dir)
		return;
	if (ev->mask & (NAME_CHANGES | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
		__atomic_add_fetch(&dir->listing_changes, 1, __ATOMIC_RELAXED);
	if (ev->mask & IN_IGNORED) { /* the directory is gone, or its file system unmounted */
		pthread_mutex_lock(&w->map_lock);
		map_remove(w, ev->wd);
		pthread_mutex_unlock(&w->map_lock);
		__atomic_store_n(&dir->wd, -1, __ATOMIC_RELAXED);
		queue_job(w, (struct job){dir, NULL, NULL, true, false, false}, false);
		return;
	}
	if (ev->len && ev->name[0] && !w->files) {
		/* Only directories' entries are cached: a moved one is marked and invalidated. */
		moved = ev->mask & NAME_CHANGES;
		child = moved ? tfs_inodes_child_ref(tab, dir, ev->name, true) : NULL;
		if (child && child->type == S_IFDIR) {
			queue_job(w, (struct job){dir, strdup(ev->name), child, false, true, false},
				  false);
			return;
		}
		/* A file the name no longer holds (deleted, moved away, replaced) keeps no pooled
		 * descriptor (inode.h, tfs_inode_fd_drop). */
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
		/* A name created, deleted or moved changes dir's attributes (mtime, nlink) and
		 * its listing, which the kernel keeps (dir.c): both are invalidated. */
		queue_job(w,
			  (struct job){dir, moved ? strdup(ev->name) : NULL, child, moved, moved,
				       (ev->mask & (IN_DELETE | IN_MOVED_FROM)) != 0},
			  false);
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		tfs_inodes_mark_moved(tab, dir, false);
		if (tfs_inodes_ref(tab, dir)) {
			queue_job(w, (struct job){dir, NULL, dir, true, true, false}, false);
			return;
		}
	}
	queue_job(w, (struct job){dir, NULL, NULL, true, false, false}, false);
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
	queued = w->n_jobs > 0;
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_lock(&w->tab->lock);
	seen = w->tab->events;
	pthread_mutex_unlock(&w->tab->lock);
	if (queued && write(w->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the thread is awake already */
	}
	return seen;
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

/* Sends the kernel one job's invalidations, outside every lock: the kernel may have to wait
 * for a request on the same directory to finish, which may itself wait for the lock. */
static void run_job(struct tfs_watch *w, struct job *job)
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
		if (job->child != job->dir || !job->dir_attrs)
			fuse_lowlevel_notify_inval_inode(w->se, tfs_inode_nodeid(tab, job->child),
							 0, 0);
		if (job->moved)
			tfs_inodes_mark_moved(tab, job->child, true);
		tfs_inodes_forget(tab, job->child, 1);
	}
	free(job->name);
	tfs_inodes_forget(tab, job->dir, 1);
}

/* Takes the queue; under the lock. */
static struct job *take_jobs(struct tfs_watch *w, size_t *n)
{
	struct job *jobs = w->jobs;

	*n = w->n_jobs;
	w->jobs = NULL;
	w->n_jobs = w->cap_jobs = 0;
	return jobs;
}

static void *notify_loop(void *arg)
{
	struct tfs_watch *w = arg;
	struct pollfd fds[2] = {{.fd = w->ifd, .events = POLLIN},
				{.fd = w->wake_fd, .events = POLLIN}};

	int timeout = -1;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		struct job *jobs;
		uint64_t count;
		size_t n;

		/* Wakes for the retired descriptors too, so that an idle daemon does not keep a
		 * deleted file open (inode.h, TFS_FD_RETIRE_MS). */
		if (poll(fds, 2, timeout) < 0 && errno != EINTR)
			break;
		if (fds[1].revents && read(w->wake_fd, &count, sizeof(count)) < 0) {
			/* nothing to clear */
		}
		pthread_mutex_lock(&w->lock);
		drain(w);
		jobs = take_jobs(w, &n);
		pthread_mutex_unlock(&w->lock);
		for (size_t i = 0; i < n; i++)
			run_job(w, &jobs[i]);
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
	struct job *jobs;
	uint64_t one = 1;
	size_t n;

	if (!w)
		return;
	if (w->started) {
		__atomic_store_n(&w->stop, true, __ATOMIC_RELEASE);
		if (write(w->wake_fd, &one, sizeof(one)) < 0) {
			/* the counter is full: the thread is awake already */
		}
		pthread_join(w->thread, NULL);
	}
	jobs = take_jobs(w, &n);
	for (size_t i = 0; i < n; i++) {
		free(jobs[i].name);
		if (jobs[i].child)
			tfs_inodes_forget(w->tab, jobs[i].child, 1);
		tfs_inodes_forget(w->tab, jobs[i].dir, 1);
	}
	free(jobs);
	w->tab->on_free = NULL;
	size_t bucket = 0;
	struct tfs_hnode *p = tfs_htab_next(&w->map, &bucket, NULL), *next;

	for (; p; p = next) {
		next = tfs_htab_next(&w->map, &bucket, p);
		free(tfs_hnode_entry(p, struct wd_entry, link));
	}
	tfs_htab_destroy(&w->map);
	close(w->ifd);
	close(w->wake_fd);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->map_lock);
	free(w);
}

uint64_t tfs_watch_listing_version(const struct tfs_watch *w, const struct tfs_inode *dir)
{
	if (!w)
		return 0;
	return __atomic_load_n(&dir->listing_changes, __ATOMIC_RELAXED) +
	       __atomic_load_n(&w->tab->events_lost, __ATOMIC_RELAXED);
}
