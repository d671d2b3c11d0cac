/* SPDX-License-Identifier: MIT */
/* sandbox_worker.c - toolfs-reader-worker: the readers that run third-party parsers
 * (TR_CAP_UNTRUSTED) in a sandboxed process (docs/SPEC.md §8). Started by the core
 * (sandbox.c) with a control socket as descriptor 3, it is a fork server: it loads a reader's
 * module once, on the first request for that reader, and forks a worker per request, which
 * confines itself, reads one file from the descriptor it is sent, answers one serialized
 * tr_result and ends. The server kills and reaps a worker when asked; it reads no file and ends
 * with its control socket. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "reader.h"
#include "sandbox.h"
#include "sandbox_proto.h"
#include "sandbox_worker.h"
#include "util.h"

/* TOOLFS_WORKER_TEST (docs/SPEC.md §8): what every worker does in place of its read (ask:
 * before it), for the tests of the failure paths (profile and nolandlock change the
 * confinement instead: enum sandbox_test). Read from the server's environment, which only the process that started
 * toolfs sets. */
enum test_hook { HOOK_NONE, HOOK_CRASH, HOOK_LOOP, HOOK_ALLOC, HOOK_LIE, HOOK_SYSCALL, HOOK_ASK };
static enum test_hook hook;

static ssize_t receive_message(void *msg, size_t len, int *fd)
{
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {msg, len};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = control,
			   .msg_controllen = sizeof(control)};
	struct cmsghdr *c;
	ssize_t n;

	do
		n = recvmsg(SANDBOX_FD, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (n < 0 && errno == EINTR);
	*fd = -1;
	c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}

/* A string of len bytes from the socket (no NULs), owned; NULL when it does not come. */
static char *receive_string(uint32_t len)
{
	char *s = malloc((size_t)len + 1);

	if (!s || tr_read_full_before(SANDBOX_FD, s, len, 0) != 0 || memchr(s, '\0', len)) {
		free(s);
		return NULL;
	}
	s[len] = '\0';
	return s;
}

/* glibc's abort() after a failed allocation (a library that aborts on ENOMEM): the read ran
 * out of max_worker_memory, which the reply says. */
static void on_abort(int sig)
{
	static const struct sandbox_reply nomem = {.magic = SANDBOX_MAGIC, .status = SANDBOX_NOMEM};

	(void)sig;
	if (errno == ENOMEM)
		(void)!write(SANDBOX_FD, &nomem, sizeof(nomem));
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
}

/* The seccomp filter's trap: the reply names the system call, then the worker dies of SIGSYS
 * (the handler runs on one thread; the others die with it). In a traced profile run a refused
 * call traps instead of answering its errno: the handler answers it (the call's return
 * register) and the thread goes on, as under the filter of every other run. */
static void on_sigsys(int sig, siginfo_t *info, void *context)
{
	const char *name = sandbox_syscall_name(info->si_syscall);
	struct sandbox_reply rep = {
		.magic = SANDBOX_MAGIC, .status = SANDBOX_SYSCALL, .len = strlen(name)};
	int err = sandbox_profile_errno(info->si_syscall);

#if defined(__x86_64__)
	if (err) {
		((ucontext_t *)context)->uc_mcontext.gregs[REG_RAX] = -err;
		return;
	}
#elif defined(__aarch64__)
	if (err) {
		((ucontext_t *)context)->uc_mcontext.regs[0] = (unsigned long long)-err;
		return;
	}
#else
	(void)context;
	(void)err;
#endif
	(void)!write(SANDBOX_FD, &rep, sizeof(rep));
	(void)!write(SANDBOX_FD, name, rep.len);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int reply(uint32_t status, const struct tr_buf *body)
{
	struct sandbox_reply rep = {.magic = SANDBOX_MAGIC,
				    .status = status,
				    .len = body ? body->len : 0,
				    .modules = tr_module_loaded(tr_modules)};

	if (tr_send_full(SANDBOX_FD, &rep, sizeof(rep)))
		return -1;
	return body && body->len ? tr_send_full(SANDBOX_FD, body->data, body->len) : 0;
}

/* The read's watchdog (struct tr_watch, docs/SPEC.md §8): SANDBOX_ANSWER_MS past the deadline
 * it asks for the read's lock, which it gets only while the reader is inside a call it left the
 * lock for (the reader's thread keeps it from its start to its answer otherwise); it then has
 * the reader finish its result without that call, answers it and ends the worker, which the
 * core kills and reaps as any other. */
struct watchdog {
	struct tr_watch watch;
	struct tr_result *res;
	uint64_t at; /* CLOCK_MONOTONIC ns */
};

static void *watchdog_run(void *arg)
{
	struct watchdog *dog = arg;
	struct timespec at = {.tv_sec = (time_t)(dog->at / 1000000000u),
			      .tv_nsec = (long)(dog->at % 1000000000u)};
	struct tr_buf body = {0};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
	pthread_mutex_lock(&dog->watch.lock);
	if (dog->watch.finish(dog->watch.ctx) < 0 || tr_sandbox_encode(dog->res, &body) < 0)
		_exit(reply(SANDBOX_NOMEM, NULL) ? 1 : 0);
	_exit(reply(SANDBOX_OK, &body) ? 1 : 0);
}

/* Starts dog's thread for a read of deadline into res; the caller holds dog->watch.lock.
 * Returns 0, or -1 when no thread starts (the read then goes without a watch). */
static int watchdog_start(struct watchdog *dog, struct tr_result *res, uint64_t deadline)
{
	pthread_attr_t attr;
	pthread_t thread;
	int rc;

	dog->res = res;
	dog->at = deadline + (uint64_t)SANDBOX_ANSWER_MS * 1000000u;
	if (pthread_attr_init(&attr))
		return -1;
	/* a small stack: max_worker_memory bounds the address space */
	pthread_attr_setstacksize(&attr, 1u << 20);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thread, &attr, watchdog_run, dog);
	pthread_attr_destroy(&attr);
	return rc ? -1 : 0;
}

/* HOOK_ASK: the questions the filter answers with an errno (sandbox_confine.c), asked as glibc
 * and the libraries ask them. Returns NULL when each failed with EPERM, else the first that
 * did not. */
static const char *ask_harmless(void)
{
	struct sysinfo si;
	struct utsname u;
	struct rlimit r;

	if (sysinfo(&si) == 0 || errno != EPERM)
		return "sysinfo";
	if (uname(&u) == 0 || errno != EPERM)
		return "uname";
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 || errno != EPERM)
		return "getrlimit";
	if (prlimit(0, RLIMIT_AS, NULL, &r) == 0 || errno != EPERM)
		return "prlimit64";
	return NULL;
}

/* The hook's read in place of the reader's. */
static int run_hook(void)
{
	if (hook == HOOK_SYSCALL) /* a call no reader makes: the filter stops the worker at it */
		(void)socket(AF_INET, SOCK_STREAM, 0);
	if (hook ==
	    HOOK_CRASH) { /* the kernel's default action, even under a sanitizer's handler */
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	if (hook == HOOK_LOOP)
		for (volatile unsigned long spin = 0;; spin++)
			;
	if (hook == HOOK_ALLOC) {
		for (;;) { /* touched, so that the memory is there; max_worker_memory stops it */
			char *p = malloc(64u << 20);

			if (!p)
				break;
			memset(p, 1, 64u << 20);
		}
		errno = ENOMEM;
		abort();
	}
	/* HOOK_LIE: a reply whose one image claims 2^40 bytes */
	{
		struct tr_buf body = {0};
		uint64_t words[] = {SANDBOX_VERSION,
				    1,
				    0,
				    UINT64_MAX,
				    0,
				    UINT64_MAX,
				    0,
				    UINT64_MAX,
				    0,
				    0,
				    0,
				    0,
				    0,
				    UINT64_MAX,
				    1,
				    1ull << 40,
				    0,
				    0,
				    0,
				    0,
				    0,
				    0,
				    0,
				    0};

		tr_buf_append(&body, words, sizeof(words));
		return reply(SANDBOX_OK, &body);
	}
}

/* The worker: one request on SANDBOX_FD, under its sandbox; never returns. */
static void worker(int sock, pid_t server)
{
	static struct watchdog dog = {.watch = {.lock = PTHREAD_MUTEX_INITIALIZER}};
	struct sandbox_request req;
	struct tr_source src = {0};
	struct tr_result res;
	struct tr_buf body = {0};
	unsigned char head[TR_HEAD_SIZE];
	struct tr_file file;
	size_t n_readers = 0;
	ssize_t head_len;
	int fd, rc;

	if (dup2(sock, SANDBOX_FD) < 0)
		_exit(1);
	close(sock);
	while (tr_readers[n_readers])
		n_readers++;
	if (receive_message(&req, sizeof(req), &fd) != sizeof(req) || fd < 0 ||
	    req.magic != SANDBOX_MAGIC || req.version != SANDBOX_VERSION ||
	    req.reader >= n_readers || req.path_len > SANDBOX_MAX_PATH ||
	    req.name_len > SANDBOX_MAX_PATH)
		_exit(1);
	src.path = receive_string(req.path_len);
	src.name = req.has_name ? receive_string(req.name_len) : NULL;
	if (!src.path || (req.has_name && !src.name))
		_exit(1);
	/* one arena per thread would take max_worker_memory in reservations alone */
	mallopt(M_ARENA_MAX, 2);
	signal(SIGABRT, on_abort);
	{
		struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};

		sigaction(SIGSYS, &sa, NULL);
	}
	if (sandbox_worker_confine(server, req.opts.max_worker_memory,
				   tr_readers[req.reader]->caps & TR_CAP_THREADS))
		_exit(1);
	if (hook == HOOK_ASK && ask_harmless())
		_exit(3); /* the read goes on below when each question failed */
	if (hook != HOOK_NONE && hook != HOOK_ASK)
		_exit(run_hook() ? 1 : 0);
	head_len = tr_pread_full(fd, head, sizeof(head), 0);
	if (tr_result_init(&res, src.path) < 0)
		_exit(reply(SANDBOX_NOMEM, NULL) ? 1 : 0);
	tr_result_set_stat(&res, &req.st);
	if (head_len < 0) {
		tr_result_fail_errno(&res, errno);
		rc = 0;
	} else {
		file = (struct tr_file){.fd = fd,
					.st = req.st,
					.src = &src,
					.head = head,
					.head_len = (size_t)head_len,
					.deadline = req.deadline};
		/* held until the answer: the watchdog answers only what a reader left it */
		pthread_mutex_lock(&dog.watch.lock);
		if (req.deadline && watchdog_start(&dog, &res, req.deadline) == 0)
			file.watch = &dog.watch;
		rc = tr_readers[req.reader]->read(&file, &req.sel, &req.opts, &res);
	}
	if (rc < 0 || tr_sandbox_encode(&res, &body) < 0)
		_exit(reply(SANDBOX_NOMEM, NULL) ? 1 : 0);
	_exit(reply(SANDBOX_OK, &body) ? 1 : 0);
}

static ssize_t receive_control(struct sandbox_control *msg, int *sock)
{
	ssize_t n = receive_message(msg, sizeof(*msg), sock);

	if (n <= 0)
		return n == 0 ? 0 : -1;
	if (n != sizeof(*msg) || msg->magic != SANDBOX_MAGIC ||
	    (msg->op == SANDBOX_SPAWN) != (*sock >= 0)) {
		if (*sock >= 0)
			close(*sock);
		return -1;
	}
	return 1;
}

/* SANDBOX_END: kills pid when it is a child of this process still running (a pid it has not
 * reaped is never another process's), then reaps it. */
static struct sandbox_control_reply end_worker(pid_t pid)
{
	struct sandbox_control_reply rep = {.magic = SANDBOX_MAGIC, .pid = -1};
	int status = 0;
	pid_t got = pid > 0 ? waitpid(pid, &status, WNOHANG) : -1;

	if (got == 0) {
		kill(pid, SIGKILL);
		while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
			;
	}
	if (got == pid) {
		rep.pid = pid;
		rep.status = status;
	}
	return rep;
}

/* Forks a worker for each SANDBOX_SPAWN, after it has loaded and warmed the modules earlier
 * reads loaded (struct tr_module_head): every later worker inherits them started. The first
 * read of a kind loads what it needs in its own worker (util/module.c), so a process that reads
 * once (toolfs-read) never pays for what its read does not need: a PNG that needs no fit loads
 * no module, a PDF page's text starts no libvips (40-50 ms of its plug-ins). A module that does
 * not load is the worker's to report. */
static int fork_server(void)
{
	struct sandbox_control msg;
	pid_t self = getpid();
	uint32_t warmed = 0;
	int sock;
	ssize_t got;

	while ((got = receive_control(&msg, &sock)) > 0) {
		struct sandbox_control_reply rep = {.magic = SANDBOX_MAGIC, .pid = -1};

		if (msg.op == SANDBOX_SPAWN) {
			tr_module_warm(tr_modules, msg.warm & ~warmed);
			warmed |= msg.warm;
			rep.pid = fork();
			if (rep.pid == 0)
				worker(sock, self);
			rep.status = rep.pid < 0 ? errno : 0;
			rep.landlock = (uint32_t)sandbox_landlock_missing();
			close(sock);
		} else if (msg.op == SANDBOX_END) {
			rep = end_worker(msg.pid);
		}
		if (tr_send_full(SANDBOX_FD, &rep, sizeof(rep)))
			return 1;
	}
	return got == 0 ? 0 : 1;
}

int main(void)
{
	const char *test = getenv("TOOLFS_WORKER_TEST");
	unsigned tests = 0;

	/* only 0-2 and the socket: nothing of the parent's leaks in */
	close_range(SANDBOX_FD + 1, ~0u, 0);
	tr_sandbox_inside = true;
	if (test && strcmp(test, "crash") == 0)
		hook = HOOK_CRASH;
	else if (test && strcmp(test, "loop") == 0)
		hook = HOOK_LOOP;
	else if (test && strcmp(test, "alloc") == 0)
		hook = HOOK_ALLOC;
	else if (test && strcmp(test, "lie") == 0)
		hook = HOOK_LIE;
	else if (test && strcmp(test, "syscall") == 0)
		hook = HOOK_SYSCALL;
	else if (test && strcmp(test, "ask") == 0)
		hook = HOOK_ASK;
	else if (test && strcmp(test, "profile") == 0)
		tests = SANDBOX_TEST_PROFILE;
	else if (test && strcmp(test, "nolandlock") == 0)
		tests = SANDBOX_TEST_NO_LANDLOCK;
	unsetenv("TOOLFS_WORKER_TEST");
	/* _exit: no exit-time work in a confined process (a sanitizer build's leak check there
	 * cannot stop the world under the filter and spins forever) */
	if (sandbox_server_confine(tests))
		_exit(1);
	_exit(fork_server());
}
