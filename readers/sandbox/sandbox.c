/* SPDX-License-Identifier: MIT */
/* sandbox.c - the reader core's side of the isolation layer (docs/SPEC.md §8): a fork server
 * (toolfs-reader-worker, posix_spawn'd on first use) forks one worker per read, which gets the
 * file's descriptor (SCM_RIGHTS) and a fixed header, runs the reader and answers one serialized
 * tr_result (sandbox_wire.c). A worker is never reused: a decoder that a crafted file took over
 * sees that one file. A worker that dies, hangs past the read's deadline or answers wrongly is
 * killed and reaped by the server, asked; nothing is left behind. At most max_workers workers
 * of this process run at once; a read beyond them waits its turn within its deadline. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "nobody.h"
#include "sandbox.h"
#include "sandbox_proto.h"
#include "util.h"

#define SANDBOX_CONTROL_MS 5000 /* the fork server answers within this, or is ended */
/* A read without a deadline (max_render_ms 0) is still ended after this long. */
#define SANDBOX_NO_DEADLINE_MS (10 * 60 * 1000)

bool tr_sandbox_inside;

/* The fork server: this process's child, the socket it takes orders on, and its generation
 * (one more at each start): a worker is ended only through the server that forked it. */
static pthread_mutex_t server_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t server_pid = -1;
static int server_sock = -1;
static unsigned server_generation;
/* The mask of tr_modules this process's reads have loaded (their replies say): every later
 * spawn asks the server to warm them, so that only the first read of a kind starts them in its
 * own worker. Atomic. */
static uint32_t server_modules;

struct worker {
	pid_t pid;
	int sock;
	unsigned server; /* the generation of the server that forked it */
};

/* The worker slots of this process (max_workers, docs/SPEC.md §8): how many reads hold one,
 * and the reads waiting for one, first come first served. A waiter sleeps in poll(2) on its
 * own eventfd (beside its read's cancel), which the read that hands it a slot writes. The cap
 * is the latest read's max_workers: one process reads under one set of options. Lock order:
 * slots_lock is never held with server_lock. */
struct slot_waiter {
	struct slot_waiter *next;
	int fd;       /* eventfd, written when granted */
	bool granted; /* under slots_lock: it holds a slot now */
};

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t slots_cap = 1;
static uint64_t slots_held;
static struct slot_waiter *waiters, *waiters_tail;

/* Hands free slots to the waiters in order. Under slots_lock. */
static void slots_grant(void)
{
	while (waiters && slots_held < slots_cap) {
		struct slot_waiter *w = waiters;

		waiters = w->next;
		if (!waiters)
			waiters_tail = NULL;
		w->granted = true;
		slots_held++;
		(void)eventfd_write(w->fd, 1);
	}
}

static void slot_release(void)
{
	pthread_mutex_lock(&slots_lock);
	slots_held--;
	slots_grant();
	pthread_mutex_unlock(&slots_lock);
}

/* Takes a worker slot, waiting for one in turn until deadline or cancel. Returns 0 (holding
 * one: slot_release gives it back), 1 past the deadline with *held the slots held then, 5 when
 * cancelled, -1 when out of memory. */
static int slot_acquire(uint64_t cap, uint64_t deadline, const struct tr_cancel *cancel,
			uint64_t *held)
{
	struct slot_waiter self = {.fd = -1};
	int rc = 0;

	pthread_mutex_lock(&slots_lock);
	slots_cap = cap ? cap : 1;
	slots_grant(); /* a larger cap frees slots for those already waiting */
	if (!waiters && slots_held < slots_cap) {
		slots_held++;
		pthread_mutex_unlock(&slots_lock);
		return 0;
	}
	self.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (self.fd < 0) {
		pthread_mutex_unlock(&slots_lock);
		return -1;
	}
	if (waiters_tail)
		waiters_tail->next = &self;
	else
		waiters = &self;
	waiters_tail = &self;
	pthread_mutex_unlock(&slots_lock);
	for (;;) {
		struct pollfd p[2] = {{.fd = self.fd, .events = POLLIN},
				      {.fd = cancel ? cancel->fd : -1, .events = POLLIN}};
		int n = poll(p, 2, tr_deadline_wait_ms(deadline, -1));

		if (n < 0 && errno != EINTR) {
			rc = 1;
			break;
		}
		if (p[0].revents)
			break;
		if (p[1].revents) {
			rc = 5;
			break;
		}
		if (tr_deadline_passed(deadline)) {
			rc = 1;
			break;
		}
	}
	pthread_mutex_lock(&slots_lock);
	if (self.granted && rc) {
		slots_held--; /* granted as it gave up: the next one's */
		slots_grant();
	} else if (!self.granted) {
		struct slot_waiter **at = &waiters, *prev = NULL;

		while (*at && *at != &self)
			prev = *at, at = &(*at)->next;
		if (*at)
			*at = self.next;
		if (waiters_tail == &self)
			waiters_tail = prev;
		if (!rc)
			rc = 1; /* woken, yet not granted: cannot happen; give up */
	}
	*held = slots_held;
	pthread_mutex_unlock(&slots_lock);
	close(self.fd);
	return rc;
}

/* Ends the server (its workers die with it). Under server_lock. */
static void server_stop(void)
{
	bool alive = server_pid > 0 && waitpid(server_pid, NULL, WNOHANG) == 0;

	tr_nobody_server_end(alive ? server_pid : -1, server_sock);
	server_pid = -1;
	server_sock = -1;
}

/* The server's environment: nothing of this process's but what an administrator sets for the
 * libraries and no file can (docs/SPEC.md §8): the module directory, Tesseract's data folder,
 * libvips's switch off its untrusted loaders, and the test hook. */
static const char *const kept_env[] = {"TOOLFS_MODULE_DIR", "TESSDATA_PREFIX",
				       "VIPS_BLOCK_UNTRUSTED", "TOOLFS_WORKER_TEST"};
#define KEPT_ENV (sizeof(kept_env) / sizeof(kept_env[0]))

static void server_environment(char *envp[KEPT_ENV + 1], char store[KEPT_ENV][PATH_MAX + 32])
{
	int n = 0;

	for (size_t i = 0; i < KEPT_ENV; i++) {
		const char *value = getenv(kept_env[i]);
		int len;

		if (!value)
			continue;
		len = snprintf(store[n], PATH_MAX + 32, "%s=%s", kept_env[i], value);
		if (len > 0 && len < PATH_MAX + 32)
			envp[n] = store[n], n++;
	}
	envp[n] = NULL;
}

/* Starts the server. Under server_lock. Returns 0, a TR_E_ code with err, or -1. */
static int server_start(char *err, size_t err_size)
{
	char path[PATH_MAX], store[KEPT_ENV][PATH_MAX + 32];
	char *const argv[] = {SANDBOX_WORKER_FILE, NULL};
	char *envp[KEPT_ENV + 1];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int sv[2], rc;

	if (tr_module_find(SANDBOX_WORKER_FILE, path, sizeof(path)) < 0) {
		snprintf(err, err_size, "toolfs's reader worker %s is not installed in %s",
			 SANDBOX_WORKER_FILE, path);
		return TR_E_UNSUPPORTED;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno == ENOMEM ? -1 : TR_E_IO;
	server_environment(envp, store);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, sv[1], SANDBOX_FD);
	posix_spawn_file_actions_addclosefrom_np(&fa, SANDBOX_FD + 1);
	/* the daemon's threads block signals: the server starts with none blocked, all default */
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&server_pid, path, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(sv[1]);
	if (rc) {
		close(sv[0]);
		server_pid = -1;
		snprintf(err, err_size, "toolfs's reader worker %s could not be started: %s", path,
			 strerror(rc));
		return TR_E_IO;
	}
	server_sock = sv[0];
	server_generation++;
	return 0;
}

/* Sends the len bytes of msg on sock, with the descriptor fd (SCM_RIGHTS) unless it is -1. */
static int send_message(int sock, const void *msg, size_t len, int fd)
{
	char control[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {(void *)msg, len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		m.msg_control = control;
		m.msg_controllen = sizeof(control);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

/* One order to the server and its answer. SANDBOX_SPAWN starts a server when there is none
 * (or once more when it is gone) and sets *generation to the server that forked; SANDBOX_END
 * goes only to the server of *generation: when that one is gone, its workers died with it and
 * their pids may be the next server's own workers', so nothing is asked (TR_E_IO). Returns 0,
 * or a TR_E_ code / -1 with err, the server then ended. */
static int server_call(const struct sandbox_control *msg, int fd, struct sandbox_control_reply *rep,
		       unsigned *generation, char *err, size_t err_size)
{
	int rc = 0;

	pthread_mutex_lock(&server_lock);
	for (int attempt = 0; attempt < 2; attempt++) {
		if (server_pid > 0 && waitpid(server_pid, NULL, WNOHANG) != 0) {
			server_pid = -1; /* it ended (reaped now): a fresh one */
			server_stop();
		}
		if (msg->op == SANDBOX_END &&
		    (server_pid < 0 || server_generation != *generation)) {
			snprintf(err, err_size, "toolfs's reader worker ended with its server");
			rc = TR_E_IO;
			break;
		}
		if (server_pid < 0 && (rc = server_start(err, err_size)) != 0)
			break;
		*generation = server_generation;
		if (send_message(server_sock, msg, sizeof(*msg), fd) == 0 &&
		    tr_read_full_before(server_sock, rep, sizeof(*rep),
					tr_deadline_after_ms(SANDBOX_CONTROL_MS)) == 0 &&
		    rep->magic == SANDBOX_MAGIC) {
			rc = 0;
			break;
		}
		server_stop();
		snprintf(err, err_size, "toolfs's reader worker stopped answering");
		rc = TR_E_IO;
		if (msg->op != SANDBOX_SPAWN)
			break; /* the worker it was asked about ended with it */
	}
	pthread_mutex_unlock(&server_lock);
	return rc;
}

/* Ends w: killed and reaped by the server (no zombie is left). Returns its wait status; a
 * worker whose server is gone counts as killed (SIGKILL). */
static int worker_end(struct worker *w)
{
	struct sandbox_control msg = {.magic = SANDBOX_MAGIC, .op = SANDBOX_END, .pid = w->pid};
	struct sandbox_control_reply rep;
	int status = SIGKILL; /* a wait status: killed by SIGKILL */
	char err[128];

	close(w->sock);
	if (server_call(&msg, -1, &rep, &w->server, err, sizeof(err)) == 0 && rep.pid == w->pid)
		status = rep.status;
	w->pid = -1;
	w->sock = -1;
	return status;
}

/* A fork server that found no Landlock (errno the kernel's answer): said once per process,
 * whichever server of it found it. */
static void landlock_missing(int err)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;

	if (err > 0 && !atomic_flag_test_and_set(&said))
		tr_notice("the kernel has no Landlock (landlock_create_ruleset: %s): the reader "
			  "worker reads without it; seccomp, the user nobody and the rlimits still "
			  "confine it",
			  strerror(err));
}

/* Forks a worker (the server warms first the modules earlier reads loaded). */
static int worker_spawn(struct worker *w, char *err, size_t err_size)
{
	struct sandbox_control msg = {.magic = SANDBOX_MAGIC,
				      .op = SANDBOX_SPAWN,
				      .warm = __atomic_load_n(&server_modules, __ATOMIC_RELAXED)};
	struct sandbox_control_reply rep;
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno == ENOMEM ? -1 : TR_E_IO;
	rc = server_call(&msg, sv[1], &rep, &w->server, err, err_size);
	close(sv[1]);
	if (rc == 0 && rep.pid <= 0) {
		snprintf(err, err_size, "toolfs's reader worker could not fork: %s",
			 strerror(rep.status));
		rc = TR_E_IO;
	}
	if (rc) {
		close(sv[0]);
		return rc;
	}
	landlock_missing((int)rep.landlock);
	w->pid = rep.pid;
	w->sock = sv[0];
	return 0;
}

static int send_request(const struct worker *w, uint32_t reader, const struct tr_file *file,
			const struct tr_selector *sel, const struct tr_options *opts)
{
	const char *path = file->src && file->src->path ? file->src->path : "";
	const char *name = file->src ? file->src->name : NULL;
	struct sandbox_request *req = calloc(1, sizeof(*req));
	int rc;

	if (!req)
		return -1;
	*req = (struct sandbox_request){.magic = SANDBOX_MAGIC,
					.version = SANDBOX_VERSION,
					.reader = reader,
					.path_len = (uint32_t)strnlen(path, SANDBOX_MAX_PATH),
					.name_len = name ? (uint32_t)strnlen(name, SANDBOX_MAX_PATH)
							 : 0,
					.has_name = name != NULL,
					.deadline = file->deadline,
					.st = file->st,
					.sel = *sel,
					.opts = *opts};
	rc = send_message(w->sock, req, sizeof(*req), file->fd);
	if (rc == 0)
		rc = tr_send_full(w->sock, path, req->path_len);
	if (rc == 0 && name)
		rc = tr_send_full(w->sock, name, req->name_len);
	free(req);
	return rc;
}

/* Waits until the worker's answer starts, the deadline passes or the read is cancelled.
 * Returns 0, 1 past the deadline, 5 when cancelled. */
static int await_reply(const struct worker *w, uint64_t deadline, const struct tr_cancel *cancel)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = w->sock, .events = POLLIN},
				      {.fd = cancel ? cancel->fd : -1, .events = POLLIN}};
		int n = poll(p, 2, tr_deadline_wait_ms(deadline, -1));

		if (n < 0 && errno != EINTR)
			return 0; /* the read below reports it */
		if (p[1].revents)
			return 5;
		if (p[0].revents)
			return 0;
		if (tr_deadline_passed(deadline))
			return 1;
	}
}

/* Receives the reply into a new result tmp, and its wire bytes into *wire (owned by the caller
 * when 0 is returned; *wire_len bytes), for the reply cache. Returns 0, 1 past the deadline, 2 when the worker
 * ran out of memory, 3 when the reply is not valid, 4 when the seccomp filter stopped the worker
 * (the call's name in syscall), 5 when cancelled before the answer started, -2 when the stream
 * ended (the worker died), -1 when out of memory. */
static int receive_reply(const struct worker *w, uint64_t deadline, const struct tr_cancel *cancel,
			 struct tr_result *tmp, char syscall[SANDBOX_MAX_SYSCALL_NAME + 1],
			 unsigned char **wire, size_t *wire_len)
{
	struct sandbox_reply rep;
	unsigned char *data;
	int rc = await_reply(w, deadline, cancel);

	if (rc == 0)
		rc = tr_read_full_before(w->sock, &rep, sizeof(rep), deadline);
	if (rc == 5)
		return 5;
	if (rc)
		return rc == 1 ? 1 : -2;
	if (rep.magic != SANDBOX_MAGIC || rep.status > SANDBOX_SYSCALL ||
	    rep.len > SANDBOX_MAX_REPLY || (rep.status == SANDBOX_NOMEM && rep.len) ||
	    (rep.status == SANDBOX_SYSCALL && rep.len > SANDBOX_MAX_SYSCALL_NAME))
		return 3;
	if (rep.status == SANDBOX_NOMEM)
		return 2;
	if (rep.status == SANDBOX_OK)
		__atomic_fetch_or(&server_modules, rep.modules, __ATOMIC_RELAXED);
	if (rep.status == SANDBOX_SYSCALL) {
		memset(syscall, 0, SANDBOX_MAX_SYSCALL_NAME + 1);
		if (tr_read_full_before(w->sock, syscall, rep.len, deadline) != 0 ||
		    strspn(syscall, "abcdefghijklmnopqrstuvwxyz0123456789_?") != rep.len)
			return 3;
		return 4;
	}
	data = malloc(rep.len ? rep.len : 1);
	if (!data)
		return -1;
	rc = tr_read_full_before(w->sock, data, rep.len, deadline);
	if (rc == 0)
		rc = tr_sandbox_decode(data, rep.len, tmp) == 0 ? 0 : 3;
	else
		rc = rc == 1 ? 1 : -2;
	if (rc == 0) {
		*wire = data;
		*wire_len = rep.len;
	} else {
		free(data);
	}
	return rc;
}

static uint32_t reader_index(const struct tr_reader *reader)
{
	uint32_t i = 0;

	while (tr_readers[i] && tr_readers[i] != reader)
		i++;
	return i;
}

/* Fills res with the failure of a worker that gave no valid result (rc of receive_reply). */
static void worker_failed(struct tr_result *res, const struct tr_reader *reader,
			  const struct tr_options *opts, int rc, int status, const char *syscall)
{
	char limit[32], actual[32];

	if (rc == 5) {
		tr_result_fail(res, TR_E_IO,
			       "The read of %s was cancelled: its sandboxed worker was stopped",
			       res->path);
	} else if (rc == 4) {
		tr_result_fail(res, TR_E_CORRUPT,
			       "The %s reader's sandboxed worker was stopped by its sandbox at "
			       "syscall %s on %s",
			       reader->name, syscall, res->path);
	} else if (rc == 1) {
		tr_result_fail(
			res, TR_E_TIMEOUT,
			"The %s reader ran past max_render_ms (%llu ms) on %s: its sandboxed "
			"worker was stopped",
			reader->name, (unsigned long long)opts->max_render_ms, res->path);
	} else if (rc == 2) {
		tr_format_limit(opts->max_worker_memory, opts->max_worker_memory, limit, actual,
				sizeof(limit));
		tr_result_fail(
			res, TR_E_TOO_LARGE,
			"The %s reader needed more memory than max_worker_memory (%s) for %s",
			reader->name, limit, res->path);
	} else if (rc == 3) {
		tr_result_fail(res, TR_E_CORRUPT,
			       "The %s reader's sandboxed worker gave an invalid answer on %s",
			       reader->name, res->path);
	} else if (WIFSIGNALED(status)) {
		const char *sig = sigabbrev_np(WTERMSIG(status));

		tr_result_fail(res, TR_E_CORRUPT,
			       "The %s reader's sandboxed worker was stopped by SIG%s on %s",
			       reader->name, sig ? sig : "?", res->path);
	} else {
		tr_result_fail(res, TR_E_CORRUPT,
			       "The %s reader's sandboxed worker ended without an answer (exit "
			       "status %d) on %s",
			       reader->name, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			       res->path);
	}
}

/* Replaces res (which holds path and stat) with the worker's result tmp, keeping the stat. */
static int adopt(struct tr_result *res, struct tr_result *tmp)
{
	tmp->meta.has_stat = res->meta.has_stat;
	tmp->meta.size = res->meta.size;
	tmp->meta.modified_sec = res->meta.modified_sec;
	tr_result_destroy(res);
	*res = *tmp;
	return 0;
}

int tr_sandbox_read(const struct tr_reader *reader, const struct tr_file *file,
		    const struct tr_selector *sel, const struct tr_options *opts,
		    struct tr_result *res)
{
	uint32_t index = reader_index(reader);
	uint64_t start_by = file->deadline ? file->deadline
					   : tr_deadline_after_ms(SANDBOX_NO_DEADLINE_MS);
	uint64_t deadline = file->deadline ? file->deadline + (uint64_t)SANDBOX_GRACE_MS * 1000000u
					   : start_by;
	const struct tr_cancel *cancel = file->src ? file->src->cancel : NULL;
	struct tr_result tmp;
	struct worker w;
	char err[PATH_MAX + 128] = "", syscall[SANDBOX_MAX_SYSCALL_NAME + 1] = "";
	unsigned char *wire = NULL;
	size_t wire_len = 0;
	uint64_t held = 0;
	int rc, status = 0;

	/* A reply kept for this version, selector and options needs no worker (§8 "Reply cache"):
	 * the file was opened with the caller's rights before this lookup. */
	if (tr_result_init(&tmp, res->path) < 0) {
		tr_result_destroy(&tmp);
		return -1;
	}
	rc = tr_sandbox_cache_get(index, file, sel, opts, &tmp);
	if (rc != 0) {
		if (rc < 0) {
			tr_result_destroy(&tmp);
			return -1;
		}
		return adopt(res, &tmp);
	}
	tr_result_destroy(&tmp);
	rc = tr_cancel_fired(cancel) ? 5 : slot_acquire(opts->max_workers, start_by, cancel, &held);
	if (rc < 0)
		return -1;
	if (rc == 1) {
		res->type = TR_TYPE_UNKNOWN;
		tr_result_fail(
			res, TR_E_TIMEOUT,
			"The %s reader waited for a sandboxed worker past max_render_ms (%llu "
			"ms) on %s: %llu %s running (max_workers %llu)",
			reader->name, (unsigned long long)opts->max_render_ms, res->path,
			(unsigned long long)held, held == 1 ? "read was" : "reads were",
			(unsigned long long)opts->max_workers);
		return 0;
	}
	if (rc == 5) {
		res->type = TR_TYPE_UNKNOWN;
		worker_failed(res, reader, opts, rc, status, syscall);
		return 0;
	}
	if (tr_result_init(&tmp, res->path) < 0) {
		tr_result_destroy(&tmp);
		slot_release();
		return -1;
	}
	rc = worker_spawn(&w, err, sizeof(err));
	if (rc) {
		tr_result_destroy(&tmp);
		slot_release();
		if (rc < 0)
			return -1;
		tr_result_fail(res, (enum tr_error)rc, "%s", err);
		return 0;
	}
	rc = send_request(&w, index, file, sel, opts);
	if (rc == 0)
		rc = receive_reply(&w, deadline, cancel, &tmp, syscall, &wire, &wire_len);
	else
		rc = -2;
	status = worker_end(&w);
	slot_release();
	if (rc == 0) {
		tr_sandbox_cache_put(index, file, sel, opts, &tmp, wire, wire_len);
		return adopt(res, &tmp);
	}
	tr_result_destroy(&tmp);
	if (rc == -1)
		return -1;
	res->type = TR_TYPE_UNKNOWN;
	worker_failed(res, reader, opts, rc, status, syscall);
	return 0;
}

void tr_sandbox_shutdown(void)
{
	pthread_mutex_lock(&server_lock);
	server_stop();
	pthread_mutex_unlock(&server_lock);
	tr_sandbox_cache_free();
}
