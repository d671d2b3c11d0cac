/* SPDX-License-Identifier: MIT */
/* media_pool.c - the sandboxed FFmpeg workers (docs/SPEC.md §6 "The media sandbox"): forked by
 * a fork server (toolfs-media-worker, posix_spawn'd on first use, FFmpeg's libraries loaded once)
 * about a millisecond each, each reached over a socketpair that carries the file's descriptor
 * (SCM_RIGHTS), never a path. A worker serves one file: it is kept for more reads of that file
 * (other spans, frames) and never given another one's descriptor, so a decoder that a crafted
 * file took over sees no other file, whoever reads it. A worker that dies, hangs past the read's
 * deadline or answers wrongly is killed and reaped by the server, asked; the next read gets a
 * fresh one. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "media.h"
#include "nobody.h"
#include "util.h"

#define MEDIA_WORKER_FILE "toolfs-media-worker"
#define MEDIA_IDLE_MAX 2          /* idle workers kept: those of the latest files read */
#define MEDIA_RETIRE_CPU_MS 60000 /* a worker past this much CPU is not reused (RLIMIT_CPU) */
#define MEDIA_CONTROL_MS 5000     /* the fork server answers within this, or is ended */

/* A file as a worker may see it again: the same inode, unchanged in content and rights. */
struct media_file {
	dev_t dev;
	ino_t ino;
	struct timespec ctime;
	bool known; /* fstat answered: else the worker is used once */
};

struct worker {
	pid_t pid;
	int sock;
	unsigned server;          /* the generation of the server that forked it */
	struct media_file served; /* the one file it has read */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct worker idle[MEDIA_IDLE_MAX];
static int n_idle;

/* The fork server: this process's child, the socket it takes orders on, and its generation
 * (one more at each start): a worker is ended only through the server that forked it. */
static pthread_mutex_t server_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t server_pid = -1;
static int server_sock = -1;
static unsigned server_generation;

/* Ends the server (its workers die with it). Under server_lock. */
static void server_stop(void)
{
	bool alive = server_pid > 0 && waitpid(server_pid, NULL, WNOHANG) == 0;

	tr_nobody_server_end(alive ? server_pid : -1, server_sock);
	server_pid = -1;
	server_sock = -1;
}

/* Starts the server. Under server_lock. */
static int server_start(char *err, size_t err_size)
{
	char path[PATH_MAX];
	char *const argv[] = {MEDIA_WORKER_FILE, NULL};
	char *const envp[] = {NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int sv[2], rc;

	if (tr_module_find(MEDIA_WORKER_FILE, path, sizeof(path)) < 0) {
		snprintf(err, err_size, "toolfs's media worker %s is not installed in %s",
			 MEDIA_WORKER_FILE, path);
		return TR_E_UNSUPPORTED;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno == ENOMEM ? -1 : TR_E_IO;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, sv[1], MEDIA_WORKER_FD);
	posix_spawn_file_actions_addclosefrom_np(&fa, MEDIA_WORKER_FD + 1);
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
		snprintf(err, err_size, "toolfs's media worker %s could not be started: %s", path,
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

/* One order to the server and its answer. MEDIA_SPAWN starts a server when there is none (or
 * once more when it is gone) and sets *generation to the server that forked; MEDIA_END goes
 * only to the server of *generation: when that one is gone, its workers died with it and their
 * pids may be the next server's own workers', so nothing is asked (TR_E_IO). Returns 0, or a
 * TR_E_ code / -1 with err, the server then ended. */
static int server_call(const struct media_control *msg, int fd, struct media_control_reply *rep,
		       unsigned *generation, char *err, size_t err_size)
{
	int rc = 0;

	pthread_mutex_lock(&server_lock);
	for (int attempt = 0; attempt < 2; attempt++) {
		if (server_pid > 0 && waitpid(server_pid, NULL, WNOHANG) != 0) {
			server_pid = -1; /* it ended (reaped now): a fresh one */
			server_stop();
		}
		if (msg->op == MEDIA_END && (server_pid < 0 || server_generation != *generation)) {
			snprintf(err, err_size, "toolfs's media worker ended with its server");
			rc = TR_E_IO;
			break;
		}
		if (server_pid < 0 && (rc = server_start(err, err_size)) != 0)
			break;
		*generation = server_generation;
		if (send_message(server_sock, msg, sizeof(*msg), fd) == 0 &&
		    tr_read_full_before(server_sock, rep, sizeof(*rep),
					tr_deadline_after_ms(MEDIA_CONTROL_MS)) == 0 &&
		    rep->magic == MEDIA_MAGIC) {
			rc = 0;
			break;
		}
		server_stop();
		snprintf(err, err_size, "toolfs's media worker stopped answering");
		rc = TR_E_IO;
		if (msg->op != MEDIA_SPAWN)
			break; /* the worker it was asked about ended with it */
	}
	pthread_mutex_unlock(&server_lock);
	return rc;
}

/* Ends w: killed and reaped by the server (no zombie is left). Returns its wait status; a
 * worker whose server is gone counts as killed (SIGKILL). */
static int worker_end(struct worker *w)
{
	struct media_control msg = {.magic = MEDIA_MAGIC, .op = MEDIA_END, .pid = w->pid};
	struct media_control_reply rep;
	int status = SIGKILL; /* a wait status: killed by SIGKILL */
	char err[128];

	if (server_call(&msg, -1, &rep, &w->server, err, sizeof(err)) == 0 && rep.pid == w->pid)
		status = rep.status;
	close(w->sock);
	w->pid = -1;
	w->sock = -1;
	return status;
}

static int worker_spawn(struct worker *w, char *err, size_t err_size)
{
	struct media_control msg = {.magic = MEDIA_MAGIC, .op = MEDIA_SPAWN};
	struct media_control_reply rep;
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno == ENOMEM ? -1 : TR_E_IO;
	rc = server_call(&msg, sv[1], &rep, &w->server, err, err_size);
	close(sv[1]);
	if (rc == 0 && rep.pid <= 0) {
		snprintf(err, err_size, "toolfs's media worker could not fork: %s",
			 strerror(rep.status));
		rc = TR_E_IO;
	}
	if (rc) {
		close(sv[0]);
		return rc;
	}
	w->pid = rep.pid;
	w->sock = sv[0];
	return 0;
}

/* Whether idle worker w is still there: a worker that ended shows its socket hung up. */
static bool worker_alive(const struct worker *w)
{
	struct pollfd pfd = {.fd = w->sock, .events = POLLIN};

	return poll(&pfd, 1, 0) == 0;
}

static bool same_file(const struct media_file *a, const struct media_file *b)
{
	return a->known && b->known && a->dev == b->dev && a->ino == b->ino &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* The idle worker that has read file, still alive, or a new one. */
static int worker_take(struct worker *w, const struct media_file *file, char *err, size_t err_size)
{
	bool found = false;

	pthread_mutex_lock(&pool_lock);
	for (int i = 0; i < n_idle && !found; i++) {
		if (!same_file(&idle[i].served, file))
			continue;
		*w = idle[i];
		memmove(&idle[i], &idle[i + 1], (size_t)(n_idle - i - 1) * sizeof(idle[0]));
		n_idle--;
		found = true;
	}
	pthread_mutex_unlock(&pool_lock);
	if (found && worker_alive(w))
		return 0;
	if (found)
		worker_end(w);
	w->served = *file;
	return worker_spawn(w, err, err_size);
}

/* Keeps w idle for more reads of its file, in place of the idle worker least recently used. */
static void worker_give_back(struct worker *w, uint32_t cpu_ms)
{
	struct worker dropped = {.pid = -1};

	if (!w->served.known || cpu_ms >= MEDIA_RETIRE_CPU_MS) {
		worker_end(w);
		return;
	}
	pthread_mutex_lock(&pool_lock);
	if (n_idle == MEDIA_IDLE_MAX) {
		dropped = idle[0];
		memmove(&idle[0], &idle[1], (size_t)(n_idle - 1) * sizeof(idle[0]));
		n_idle--;
	}
	idle[n_idle++] = *w;
	pthread_mutex_unlock(&pool_lock);
	if (dropped.pid > 0)
		worker_end(&dropped);
}

/* Reads len bytes before deadline. Returns 0, -1 at the end of the stream or an error,
 * -2 when the deadline passed. */
static int receive_all(int sock, void *data, size_t len, uint64_t deadline)
{
	int rc = tr_read_full_before(sock, data, len, deadline);

	return rc == 1 ? -2 : rc;
}

static int receive_answer(int sock, uint64_t max_blob, uint64_t deadline, struct media_answer *ans)
{
	int rc = receive_all(sock, &ans->rep, sizeof(ans->rep), deadline);

	if (rc)
		return rc;
	if (ans->rep.magic != MEDIA_MAGIC || ans->rep.text_len > MEDIA_MAX_TEXT ||
	    ans->rep.blob_len > max_blob)
		return -1;
	ans->rep.format[sizeof(ans->rep.format) - 1] = '\0';
	ans->rep.audio_codec[sizeof(ans->rep.audio_codec) - 1] = '\0';
	ans->text = malloc(ans->rep.text_len + 1);
	ans->blob = ans->rep.blob_len ? malloc(ans->rep.blob_len) : NULL;
	if (!ans->text || (ans->rep.blob_len && !ans->blob))
		return -3;
	ans->text[ans->rep.text_len] = '\0';
	rc = receive_all(sock, ans->text, ans->rep.text_len, deadline);
	if (rc == 0)
		rc = receive_all(sock, ans->blob, ans->rep.blob_len, deadline);
	return rc;
}

void media_answer_free(struct media_answer *ans)
{
	free(ans->text);
	free(ans->blob);
	ans->text = NULL;
	ans->blob = NULL;
}

/* The sentence for a worker that did not answer, from its wait status. */
static void describe_death(int status, char *err, size_t err_size)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		snprintf(err, err_size, "the media decoder crashed on it (SIG%s)",
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
	else if (WIFSIGNALED(status))
		snprintf(err, err_size, "the media decoder was killed on it (SIGKILL)");
	else
		snprintf(err, err_size, "the media decoder gave no answer (exit status %d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* The sentence for a worker its filter stopped at the system call name (the worker's, so
 * only its first letters, digits and underscores are taken). */
static void stopped_at(const char *name, char *err, size_t err_size)
{
	char call[sizeof(((struct media_reply *)0)->syscall)];
	size_t n = 0;

	while (n + 1 < sizeof(call) && (isalnum((unsigned char)name[n]) || name[n] == '_')) {
		call[n] = name[n];
		n++;
	}
	call[n] = '\0';
	snprintf(err, err_size, "the media decoder was stopped by its sandbox at syscall %s",
		 n ? call : "?");
}

/* One request on a worker taken from the pool (fresh: a new one). Returns as media_call, with
 * *status the worker's wait status when it died. */
static int call_once(int fd, const struct media_request *req, uint64_t deadline, bool fresh,
		     struct media_answer *ans, int *status, char *err, size_t err_size)
{
	uint64_t max_blob = req->max_blob + 64 + (uint64_t)req->max_w * req->max_h * 3;
	struct media_file file = {.known = false};
	struct worker w;
	struct stat st;
	int rc;

	if (max_blob > MEDIA_MAX_BLOB) /* what the worker may make, whatever it claims */
		max_blob = MEDIA_MAX_BLOB;
	if (fstat(fd, &st) == 0)
		file = (struct media_file){st.st_dev, st.st_ino, st.st_ctim, true};
	w.served = file;
	rc = fresh ? worker_spawn(&w, err, err_size) : worker_take(&w, &file, err, err_size);
	if (rc)
		return rc;
	rc = send_message(w.sock, req, sizeof(*req), fd);
	if (rc == 0)
		rc = receive_answer(w.sock, max_blob, deadline, ans);
	if (rc == 0 && ans->rep.status != MEDIA_SANDBOXED) {
		worker_give_back(&w, ans->rep.cpu_ms);
		return 0;
	}
	if (rc == 0) /* its filter stopped it: the reply names the call */
		stopped_at(ans->rep.syscall, err, err_size);
	media_answer_free(ans);
	*status = worker_end(&w);
	if (rc == 0)
		return TR_E_CORRUPT;
	if (rc == -3)
		return -1;
	if (rc == -2) {
		snprintf(err, err_size, "the media decoder ran past max_render_ms");
		return TR_E_TIMEOUT;
	}
	describe_death(*status, err, err_size);
	return TR_E_CORRUPT;
}

int media_call(int fd, const struct media_request *req, uint64_t deadline, struct media_answer *ans,
	       char *err, size_t err_size)
{
	int status = 0;
	int rc;

	memset(ans, 0, sizeof(*ans));
	rc = call_once(fd, req, deadline, false, ans, &status, err, err_size);
	/* A pooled worker is killed (SIGKILL) when the thread that spawned it ends: one more try
	 * on a worker of this thread. A decoder's crash (another signal) is not retried. */
	if (rc == TR_E_CORRUPT && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		rc = call_once(fd, req, deadline, true, ans, &status, err, err_size);
	return rc;
}

void tr_media_pool_shutdown(void)
{
	struct worker ended[MEDIA_IDLE_MAX];
	int n;

	pthread_mutex_lock(&pool_lock);
	n = n_idle;
	memcpy(ended, idle, sizeof(idle));
	n_idle = 0;
	pthread_mutex_unlock(&pool_lock);
	while (n > 0)
		worker_end(&ended[--n]);
	pthread_mutex_lock(&server_lock);
	server_stop();
	pthread_mutex_unlock(&server_lock);
}
