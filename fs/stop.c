/* SPDX-License-Identifier: MIT */
/* stop.c - the daemon's bounded stop: a stop signal detaches the mount at once, and a stopped
 * daemon (by a signal or an unmount) exits within TFS_STOP_GRACE_MS of it.
 *
 * libfuse's own handlers end the session loop, which then joins every worker thread; a worker
 * rendering a large page or image for a lookup finishes it first, so SIGTERM used to wait
 * seconds with the mount still there (issue 23, defect 7). Here the mount is detached by the
 * thread that sees the signal, and a render still running when the grace is over is abandoned
 * with the process: _exit closes /dev/fuse, the kernel ends the connection, and a reader waiting
 * on the render gets ECONNABORTED. Nothing is freed under a running render: main frees only
 * after joining the threads that render, and _exit frees nothing. */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "stop.h"

extern char **environ;

/* The handler's state: the signal and the eventfd it wakes the thread with (one daemon). */
static volatile sig_atomic_t stop_signal;
static int stop_wake_fd = -1;

static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP};

static void on_stop_signal(int sig)
{
	int saved = errno;
	uint64_t one = 1;
	ssize_t n;

	stop_signal = sig;
	n = write(stop_wake_fd, &one, sizeof(one)); /* async-signal-safe */
	(void)n;
	errno = saved;
}

static void drain(int fd)
{
	uint64_t count;
	ssize_t n = read(fd, &count, sizeof(count));

	(void)n;
}

/* Detaches the mount (lazily: a reader waiting on a render keeps the connection until the process
 * ends). root may umount2; a user's mount needs fusermount3, as libfuse's own unmount does. */
static void detach(const char *mountpoint)
{
	char *argv[] = {"fusermount3", "-u", "-z", "-q", "--", (char *)mountpoint, NULL};
	pid_t pid;
	int status;

	if (umount2(mountpoint, MNT_DETACH) == 0)
		return;
	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether the connection on conn_fd has ended (an unmount or an abort), waiting up to wait_ms
 * for it. With no events asked, poll reports /dev/fuse only when the connection has ended; but
 * the kernel wakes every poller of /dev/fuse at each request, so it is polled only here, for a
 * moment, never while the thread waits: a poller there cost a context switch a request (one
 * more than the request's own; `ls -l` of 10,000 siblings again 0.42-0.60 s before, see
 * docs/PERFORMANCE.md). */
static bool connection_ended(int conn_fd, int wait_ms)
{
	struct pollfd fd = {.fd = conn_fd};

	return poll(&fd, 1, wait_ms) > 0 && fd.revents;
}

static void *stop_thread(void *arg)
{
	struct tfs_stop *s = arg;
	/* A stop signal, and a change of the mount table (POLLPRI of mountinfo): an unmount. */
	struct pollfd fds[2] = {
		{.fd = s->wake_fd, .events = POLLIN},
		{.fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC), .events = POLLPRI}};
	nfds_t nfds = fds[1].fd >= 0 ? 2 : 1;
	int64_t deadline;

	pthread_setname_np(pthread_self(), "toolfs-stop"); /* its name in top -H, ps -L */

	for (;;) {
		int n = poll(fds, nfds, TFS_STOP_CHECK_MS);

		if (n < 0 && errno != EINTR)
			break; /* no watch: the stop is then as libfuse's */
		if (atomic_load(&s->done))
			break;
		if (stop_signal) {
			detach(s->mountpoint);
			goto grace;
		}
		if (n > 0 && fds[0].revents)
			drain(s->wake_fd);
		/* An unmount changes the table before the kernel ends the connection (that follows
		 * when the umount returns): waited for a moment then. An abort changes no table: it
		 * is seen at the periodic look. */
		if (connection_ended(s->conn_fd,
				     n > 0 && nfds == 2 && fds[1].revents ? TFS_STOP_UMOUNT_MS : 0))
			goto grace;
	}
	if (fds[1].fd >= 0)
		close(fds[1].fd);
	return NULL;
grace:
	if (fds[1].fd >= 0)
		close(fds[1].fd);
	deadline = now_ms() + TFS_STOP_GRACE_MS;
	while (!atomic_load(&s->done)) {
		int64_t left = deadline - now_ms();

		if (left <= 0) {
			fflush(NULL);
			_exit(EXIT_SUCCESS); /* a stop, however abrupt, is a normal end */
		}
		if (poll(fds, 1, (int)left) > 0)
			drain(s->wake_fd);
	}
	return NULL;
}

static void set_actions(void (*handler)(int), void (*pipe_handler)(int))
{
	struct sigaction sa = {.sa_handler = handler};

	/* SA_RESTART: a signal that lands on a thread in the middle of a read of a source must not
	 * turn into a reader's I/O error. */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaction(stop_signals[i], &sa, NULL);
	sa.sa_handler = pipe_handler;
	sigaction(SIGPIPE, &sa, NULL);
}

int tfs_stop_init(struct tfs_stop *s)
{
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->conn_fd = -1;
	s->mountpoint = NULL;
	s->started = false;
	atomic_init(&s->done, false);
	if (s->wake_fd < 0)
		return -errno;
	stop_signal = 0;
	stop_wake_fd = s->wake_fd;
	set_actions(on_stop_signal, SIG_IGN);
	return 0;
}

int tfs_stop_start(struct tfs_stop *s, struct fuse_session *se, const char *mountpoint)
{
	int err;

	/* A descriptor of its own: main's unmount closes the session's while this thread polls. */
	s->conn_fd = fcntl(fuse_session_fd(se), F_DUPFD_CLOEXEC, 0);
	if (s->conn_fd < 0)
		return -errno;
	s->mountpoint = mountpoint;
	err = pthread_create(&s->thread, NULL, stop_thread, s);
	if (err) {
		close(s->conn_fd);
		s->conn_fd = -1;
		errno = err;
		return -err;
	}
	s->started = true;
	return 0;
}

void tfs_stop_destroy(struct tfs_stop *s)
{
	if (s->started) {
		uint64_t one = 1;
		ssize_t n;

		atomic_store(&s->done, true);
		n = write(s->wake_fd, &one, sizeof(one));
		(void)n;
		pthread_join(s->thread, NULL);
		s->started = false;
	}
	if (s->wake_fd >= 0) {
		set_actions(SIG_DFL, SIG_DFL);
		stop_wake_fd = -1;
		close(s->wake_fd);
		s->wake_fd = -1;
	}
	if (s->conn_fd >= 0) {
		close(s->conn_fd);
		s->conn_fd = -1;
	}
}
