/* SPDX-License-Identifier: MIT */
/* stop.h - the daemon's bounded stop: SIGTERM, SIGINT and SIGHUP unmount at once, and the process
 * exits within 0.3 s of a stop or an unmount and 0.7 s of an abort of the connection (or of the
 * end of a lazily unmounted one), whatever renders are in flight. */
#ifndef TFS_STOP_H
#define TFS_STOP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct fuse_session;

/* How long a stopped daemon's own teardown (joining the threads, freeing; a few ms when no
 * render holds it up) may take before the process ends without it, abandoning what is still
 * rendering. The sanitizers' leak check runs after the teardown, at exit, unbounded. */
enum { TFS_STOP_GRACE_MS = 200 };

/* How the end of the connection is noticed without polling /dev/fuse meanwhile (stop.c): after
 * a change of the mount table, within TFS_STOP_UMOUNT_MS; otherwise (an abort, or a lazy unmount
 * whose last open file closed later) at a look every TFS_STOP_CHECK_MS. */
enum { TFS_STOP_UMOUNT_MS = 100, TFS_STOP_CHECK_MS = 500 };

/* Process-wide: one per daemon, owned by main. */
struct tfs_stop {
	int wake_fd; /* eventfd: a stop signal arrived, or main is done */
	int conn_fd; /* dup of the session's /dev/fuse descriptor: POLLERR once it ends */
	const char *mountpoint; /* borrowed */
	pthread_t thread;
	bool started;
	atomic_bool done; /* main's teardown is over: the thread returns */
};

/* Installs the handlers of SIGTERM, SIGINT and SIGHUP (a stop, seen by the thread of
 * tfs_stop_start) and ignores SIGPIPE, in place of fuse_set_signal_handlers. Call before
 * mounting. Returns 0, or -errno (errno set too) with nothing installed. */
int tfs_stop_init(struct tfs_stop *s);

/* Starts the thread that, on a stop signal, detaches the mount at mountpoint (borrowed; it must
 * outlive s) at once (umount2 MNT_DETACH, or fusermount3 -u -z for a user's mount), and, from a
 * stop signal or the end of se's connection (an unmount), gives main TFS_STOP_GRACE_MS to finish
 * its teardown before it ends the process with _exit(0). Call after fuse_daemonize (a fork keeps
 * no thread). Returns 0, or -errno (errno set too). */
int tfs_stop_start(struct tfs_stop *s, struct fuse_session *se, const char *mountpoint);

/* Main's teardown is over: stops and joins the thread, restores the signals' default actions
 * and closes s's descriptors. For a started or only initialised s. */
void tfs_stop_destroy(struct tfs_stop *s);

#endif
