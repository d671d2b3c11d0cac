/* SPDX-License-Identifier: MIT */
/* readahead.c - sibling read-ahead: runs of sibling lookups in listing order detected, and the
 * siblings that follow rendered into the document cache on a thread at the lowest priority. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "names.h"
#include "readahead.h"
#include "sibling.h"
#include "toolfs.h"
#include "tr_worker.h"

/*
 * A run is one directory that lookups walk in listing order. The listing gives a directory's
 * siblings in the order of its real entries (listing.c), so the thread follows a run with a
 * stream of the directory's entries of its own: no listing is kept for it, and what it holds is
 * bounded by the window whatever the directory's size. Freshness is the cache's: a document is
 * cached under the source state it was read from (tfs_sibling_make), and a lookup resolves the
 * source now and takes a cached document only under its current state, so what the thread
 * renders is at worst unused. A render may meet a source that vanished or is no longer a
 * regular file: it ends in an error that is dropped.
 *
 * Waiting: a lookup of the sibling the thread is rendering waits for it (a second render would
 * only share the CPU with the first). The thread runs at nice 19 so that it never takes a CPU
 * from the daemon's requests or anything else; a lookup that finds it starved (less than half a
 * CPU while it waits) stops waiting and renders the sibling itself.
 */

enum { WAIT_SLICE_MS = 2, MAX_BACKOFF = 1024 };

struct ra_entry {
	char *name;   /* owned: a source whose sibling is listed */
	bool started; /* rendered, or being rendered, by the thread */
};

/* One condition, worker.wake, is broadcast for both sides: to the thread, a lookup moved the
 * run on; to lookups, busy was cleared. */
struct tfs_readahead {
	struct tr_worker worker; /* worker.lock guards every field below */
	struct tfs_fs *fs;
	clockid_t clock; /* the thread's CPU time */
	bool has_clock;

	uint64_t gen;          /* counts runs begun and ended: the thread's cue to start over */
	struct tfs_inode *dir; /* the run's directory (a reference), or NULL: no run */
	char *first;      /* owned: the run's first lookup, until the thread confirms the run */
	char *latest;     /* owned: the run's latest lookup */
	unsigned steps;   /* lookups in the run before it was confirmed */
	uint64_t used_ms; /* CLOCK_MONOTONIC of the run's latest lookup */
	/* The latest lookup out of the run that had to render its sibling: with the next such one
	 * in the same directory, it begins a run there. cand_dir is compared, never used. */
	const struct tfs_inode *cand_dir;
	char *cand; /* owned */
	/* Runs that the thread could not confirm make the next ones wait: skip lookups pairs
	 * (backoff doubled at each failure, reset at a success). */
	unsigned skip, backoff;
	/* The sources that follow latest in the run, in listing order. */
	struct ra_entry ring[TFS_READAHEAD_WINDOW];
	size_t head, n;
	bool at_end;         /* the stream has no more entries */
	unsigned unrendered; /* the thread's latest renders in a row that found the document
			      * cached, or no source */
	const char *busy;    /* the source the thread renders now (its copy), or NULL */
	const struct tfs_inode *busy_dir;
};

/* The thread's side of the run it follows. */
struct run {
	uint64_t gen;
	struct tfs_inode *dir; /* a reference of the thread's, or NULL */
	DIR *stream;           /* dir's entries after the ring's last one, or NULL */
	uint64_t version;      /* dir's listing version when the stream was opened */
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct ra_entry *ring_at(struct tfs_readahead *ra, size_t i)
{
	return &ra->ring[(ra->head + i) % TFS_READAHEAD_WINDOW];
}

static void ring_drop(struct tfs_readahead *ra, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(ring_at(ra, i)->name);
		ring_at(ra, i)->name = NULL;
	}
	ra->head = (ra->head + count) % TFS_READAHEAD_WINDOW;
	ra->n -= count;
}

/* Drops the ring's entries up to base and base; false when base is not in the ring. */
static bool ring_advance(struct tfs_readahead *ra, const char *base)
{
	for (size_t i = 0; i < ra->n; i++) {
		if (strcmp(ring_at(ra, i)->name, base) == 0) {
			ring_drop(ra, i + 1);
			return true;
		}
	}
	return false;
}

static void replace(char **slot, char *value)
{
	free(*slot);
	*slot = value;
}

/* Ends the run (failed: the thread could not confirm it). Returns its directory's reference,
 * for the caller to drop once it has let go of the lock. */
static struct tfs_inode *end_run(struct tfs_readahead *ra, bool failed)
{
	struct tfs_inode *dir = ra->dir;

	ring_drop(ra, ra->n);
	replace(&ra->first, NULL);
	replace(&ra->latest, NULL);
	ra->dir = NULL;
	ra->at_end = false;
	ra->unrendered = 0;
	ra->gen++;
	if (failed) {
		ra->backoff = ra->backoff ? ra->backoff * 2 : 1;
		if (ra->backoff > MAX_BACKOFF)
			ra->backoff = MAX_BACKOFF;
		ra->skip = ra->backoff;
	}
	return dir;
}

/* Begins a run in dir whose lookups so far are cand then base. Returns the reference of the
 * run it replaces, for the caller to drop once it has let go of the lock. */
static struct tfs_inode *begin_run(struct tfs_readahead *ra, struct tfs_inode *dir,
				   const char *base)
{
	char *latest = strdup(base);
	struct tfs_inode *old;

	if (!latest || !tfs_inodes_ref(&ra->fs->inodes, dir)) {
		free(latest);
		return NULL;
	}
	old = end_run(ra, false);
	ra->dir = dir;
	ra->first = ra->cand;
	ra->cand = NULL;
	ra->cand_dir = NULL;
	ra->latest = latest;
	ra->steps = 1;
	return old;
}

/* Whether the lookup of base in the run's directory belongs to the run: the thread has yet to
 * confirm it, or base is in the ring (passed entries dropped), or the ring waits for the thread
 * to fill it. */
static bool in_run(struct tfs_readahead *ra, const char *base)
{
	if (ra->first) {
		ra->steps++;
		return true;
	}
	return ring_advance(ra, base) || (ra->n == 0 && !ra->at_end);
}

/* Waits while the thread renders base of dir and gets at least half a CPU. */
static void wait_render(struct tfs_readahead *ra, const struct tfs_inode *dir, const char *base)
{
	uint64_t wall0 = 0, cpu0 = 0;

	while (ra->busy && ra->busy_dir == dir && strcmp(ra->busy, base) == 0 && ra->has_clock) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);

		if (!wall0) {
			wall0 = now;
			cpu0 = now_ns(ra->clock);
		} else if (now - wall0 >= WAIT_SLICE_MS * 1000000ULL &&
			   (now_ns(ra->clock) - cpu0) * 2 < now - wall0) {
			return; /* starved: the lookup renders it */
		}
		tr_worker_wait_ms(&ra->worker, WAIT_SLICE_MS);
	}
}

bool tfs_readahead_lookup(struct tfs_readahead *ra, struct tfs_inode *dir, const char *base)
{
	bool ours;

	if (!ra)
		return false;
	pthread_mutex_lock(&ra->worker.lock);
	ours = dir == ra->dir && in_run(ra, base);
	if (ours) {
		char *latest = strdup(base);

		if (latest)
			replace(&ra->latest, latest);
		ra->used_ms = now_ns(CLOCK_MONOTONIC) / 1000000;
		/* The thread sleeps only when the window is rendered: woken once it is half used,
		 * not at every lookup. */
		if (ra->n <= TFS_READAHEAD_WINDOW / 2)
			pthread_cond_broadcast(&ra->worker.wake);
	}
	wait_render(ra, dir, base);
	pthread_mutex_unlock(&ra->worker.lock);
	return ours;
}

void tfs_readahead_rendered(struct tfs_readahead *ra, struct tfs_inode *dir, const char *base)
{
	struct tfs_inode *dropped = NULL;

	if (!ra)
		return;
	pthread_mutex_lock(&ra->worker.lock);
	if (dir == ra->cand_dir && ra->cand && strcmp(ra->cand, base) != 0 && !ra->skip) {
		dropped = begin_run(ra, dir, base);
		ra->used_ms = now_ns(CLOCK_MONOTONIC) / 1000000;
		pthread_cond_broadcast(&ra->worker.wake);
	} else {
		if (dir == ra->cand_dir && ra->skip)
			ra->skip--;
		ra->cand_dir = dir;
		replace(&ra->cand, strdup(base));
	}
	pthread_mutex_unlock(&ra->worker.lock);
	if (dropped)
		tfs_inodes_forget(&ra->fs->inodes, dropped, 1);
}

/* The name of the next entry of dp that has a listed sibling, or NULL at the end (or on an
 * error); borrowed until the next call. *budget counts down the entries read. */
static const char *next_source(const struct tfs_fs *fs, DIR *dp, size_t *budget)
{
	struct dirent *de;

	while (*budget && (de = readdir(dp))) {
		mode_t type = de->d_type == DT_UNKNOWN ? 0 : DTTOIF(de->d_type);

		(*budget)--;
		if (!type) {
			struct stat st;

			if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				type = st.st_mode & S_IFMT;
		}
		/* As listing.c lists them: names too long for their sibling are not listed. */
		if (type && tfs_name_has_sibling(type, &fs->opts) &&
		    strlen(de->d_name) + strlen(TFS_SIBLING_SUFFIX) <= NAME_MAX)
			return de->d_name;
	}
	return NULL;
}

static void close_run(struct tfs_readahead *ra, struct run *run)
{
	if (run->stream)
		closedir(run->stream);
	run->stream = NULL;
	if (run->dir)
		tfs_inodes_forget(&ra->fs->inodes, run->dir, 1);
	run->dir = NULL;
}

/* Opens run->dir's stream and reads it past first, then on until the run's latest lookup (read
 * under the lock, as it moves on meanwhile) within TFS_READAHEAD_WINDOW entries past the
 * lookups made since the run began: the lookups follow the listing. Called without the lock.
 * Returns whether the run is confirmed, its stream just past the latest lookup. */
static bool confirm_run(struct tfs_readahead *ra, struct run *run, const char *first)
{
	size_t budget = TFS_READAHEAD_SCAN, passed = 0;
	const char *name;
	int path_fd, fd;

	path_fd = tfs_inode_fd(&ra->fs->inodes, run->dir);
	if (path_fd < 0)
		return false;
	fd = openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	tfs_inode_fd_put(&ra->fs->inodes, run->dir);
	if (fd < 0)
		return false;
	run->version = tfs_watch_listing_version(ra->fs->watch, run->dir);
	run->stream = fdopendir(fd);
	if (!run->stream) {
		close(fd);
		return false;
	}
	while ((name = next_source(ra->fs, run->stream, &budget)) && strcmp(name, first) != 0)
		;
	if (!name)
		return false;
	while ((name = next_source(ra->fs, run->stream, &budget))) {
		bool latest, near;

		pthread_mutex_lock(&ra->worker.lock);
		latest = ra->latest && strcmp(name, ra->latest) == 0;
		near = ++passed <= ra->steps + TFS_READAHEAD_WINDOW;
		pthread_mutex_unlock(&ra->worker.lock);
		if (latest)
			return true;
		if (!near)
			return false;
	}
	return false;
}

/* Follows the run begun as ra->gen says; called with the lock held, which it lets go of while
 * it reads the directory. */
static void start_run(struct tfs_readahead *ra, struct run *run)
{
	char *first = NULL;
	bool confirmed = false;
	struct tfs_inode *dropped;

	pthread_mutex_unlock(&ra->worker.lock);
	close_run(ra, run);
	pthread_mutex_lock(&ra->worker.lock);
	run->gen = ra->gen;
	if (!ra->dir || !ra->first)
		return;
	first = strdup(ra->first);
	if (!first || !tfs_inodes_ref(&ra->fs->inodes, ra->dir)) {
		free(first);
		return;
	}
	run->dir = ra->dir;
	pthread_mutex_unlock(&ra->worker.lock);
	confirmed = confirm_run(ra, run, first);
	free(first);
	pthread_mutex_lock(&ra->worker.lock);
	if (run->gen != ra->gen)
		return; /* another run began meanwhile */
	if (confirmed) {
		replace(&ra->first, NULL);
		ra->backoff = 0;
		return;
	}
	dropped = end_run(ra, true);
	run->gen = ra->gen;
	pthread_mutex_unlock(&ra->worker.lock);
	close_run(ra, run);
	if (dropped)
		tfs_inodes_forget(&ra->fs->inodes, dropped, 1);
	pthread_mutex_lock(&ra->worker.lock);
}

/* Tops the ring up to the window from the stream (read without the lock); closes the stream at
 * its end. Returns whether it read anything. */
static bool fill_ring(struct tfs_readahead *ra, struct run *run)
{
	char *names[TFS_READAHEAD_WINDOW];
	size_t want = TFS_READAHEAD_WINDOW - ra->n, got = 0, budget = TFS_READAHEAD_SCAN;

	if (!run->stream || want == 0)
		return false;
	pthread_mutex_unlock(&ra->worker.lock);
	while (got < want) {
		const char *name = next_source(ra->fs, run->stream, &budget);

		if (!name || !(names[got] = strdup(name)))
			break;
		got++;
	}
	if (got < want) { /* the end, or no source in the budget's entries: let the fd go */
		closedir(run->stream);
		run->stream = NULL;
	}
	pthread_mutex_lock(&ra->worker.lock);
	if (run->gen != ra->gen) {
		while (got)
			free(names[--got]);
		return true;
	}
	for (size_t i = 0; i < got; i++) {
		*ring_at(ra, ra->n) = (struct ra_entry){names[i], false};
		ra->n++;
	}
	ra->at_end = !run->stream;
	/* A lookup may have gone past the ring's end while it was being read. */
	if (ra->latest)
		ring_advance(ra, ra->latest);
	return true;
}

/* The first entry of the ring from index first on that the thread has not started, or NULL. */
static struct ra_entry *first_pending(struct tfs_readahead *ra, size_t first)
{
	for (size_t i = first; i < ra->n; i++) {
		if (!ring_at(ra, i)->started)
			return ring_at(ra, i);
	}
	return NULL;
}

/* Renders the first source of the ring not started, but for the very next one, which the next
 * lookup renders. Returns whether it rendered one. */
static bool render_next(struct tfs_readahead *ra, struct run *run)
{
	static const struct tr_selector no_sel = {.present = false};
	struct tfs_sibling sib;
	struct ra_entry *e = first_pending(ra, 1);
	bool rendered;
	char *name;

	if (!e || !(name = strdup(e->name)))
		return false;
	e->started = true;
	ra->busy = name;
	ra->busy_dir = run->dir;
	pthread_mutex_unlock(&ra->worker.lock);
	rendered = tfs_sibling_make(ra->fs, run->dir, name, &no_sel, TR_FORMAT_TOOL, &sib) == 0;
	if (rendered) {
		rendered = sib.rendered;
		tfs_sibling_destroy(&sib);
	}
	pthread_mutex_lock(&ra->worker.lock);
	ra->unrendered = rendered ? 0 : ra->unrendered + 1;
	ra->busy = NULL;
	ra->busy_dir = NULL;
	pthread_cond_broadcast(&ra->worker.wake);
	free(name);
	return true;
}

/* Whether the run should end: its directory's names changed since the stream was opened, the
 * thread found a whole window of siblings cached (or gone) already, or no lookup came for
 * TFS_READAHEAD_IDLE_MS and the window is rendered (a thread starved for that long still
 * renders what the lookups before asked for). */
static bool run_over(struct tfs_readahead *ra, const struct run *run)
{
	uint64_t now_ms = now_ns(CLOCK_MONOTONIC) / 1000000;

	return tfs_watch_listing_version(ra->fs->watch, run->dir) != run->version ||
	       ra->unrendered >= TFS_READAHEAD_WINDOW ||
	       (now_ms - ra->used_ms >= TFS_READAHEAD_IDLE_MS && !first_pending(ra, 1));
}

static void *readahead_loop(void *arg)
{
	struct tfs_readahead *ra = arg;
	struct run run = {.gen = 0};

	pthread_setname_np(pthread_self(), "toolfs-ahead"); /* its name in top -H, ps -L */
	/* The lowest priority: renders ahead only on a CPU nothing else wants. */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	pthread_mutex_lock(&ra->worker.lock);
	while (!ra->worker.stop) {
		if (run.gen != ra->gen) {
			start_run(ra, &run);
			continue;
		}
		if (run.dir && run_over(ra, &run)) {
			struct tfs_inode *dropped = end_run(ra, false);

			pthread_mutex_unlock(&ra->worker.lock);
			if (dropped)
				tfs_inodes_forget(&ra->fs->inodes, dropped, 1);
			pthread_mutex_lock(&ra->worker.lock);
			continue;
		}
		if (run.dir && (fill_ring(ra, &run) || render_next(ra, &run)))
			continue;
		if (!run.dir)
			pthread_cond_wait(&ra->worker.wake, &ra->worker.lock);
		else
			tr_worker_wait_ms(&ra->worker, TFS_READAHEAD_IDLE_MS);
	}
	pthread_mutex_unlock(&ra->worker.lock);
	close_run(ra, &run);
	return NULL;
}

struct tfs_readahead *tfs_readahead_start(struct tfs_fs *fs)
{
	struct tfs_readahead *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return NULL;
	ra->fs = fs;
	if (tr_worker_start(&ra->worker, readahead_loop, ra) < 0) {
		free(ra);
		return NULL;
	}
	/* Set before any lookup can see ra (the caller publishes it after this returns). */
	ra->has_clock = pthread_getcpuclockid(ra->worker.thread, &ra->clock) == 0;
	return ra;
}

void tfs_readahead_stop(struct tfs_readahead *ra)
{
	if (!ra)
		return;
	tr_worker_stop(&ra->worker);
	if (ra->dir)
		tfs_inodes_forget(&ra->fs->inodes, ra->dir, 1);
	ring_drop(ra, ra->n);
	free(ra->first);
	free(ra->latest);
	free(ra->cand);
	free(ra);
}
