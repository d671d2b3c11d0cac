/* SPDX-License-Identifier: MIT */
/* media_pool.c - the sandboxed FFmpeg workers (docs/SPEC.md §6 "The media sandbox"): spawned on
 * first use (posix_spawn of toolfs-media-worker), each reached over a socketpair that carries
 * the file's descriptor (SCM_RIGHTS), never a path. A worker serves one file: it is kept for
 * more reads of that file (other spans, frames) and never given another one's descriptor, so a
 * decoder that a crafted file took over sees no other file, whoever reads it. A worker that
 * dies, hangs past the read's deadline or answers wrongly is killed and reaped; the next read
 * spawns a fresh one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "util.h"

#define MEDIA_WORKER_FILE "toolfs-media-worker"
#define MEDIA_IDLE_MAX 2          /* idle workers kept: those of the latest files read */
#define MEDIA_RETIRE_CPU_MS 60000 /* a worker past this much CPU is not reused (RLIMIT_CPU) */

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
	struct media_file served; /* the one file it has read */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct worker idle[MEDIA_IDLE_MAX];
static int n_idle;

/* Kills and reaps w (no zombie is left). Returns its wait status. */
static int worker_end(struct worker *w)
{
	int status = 0;

	kill(w->pid, SIGKILL);
	while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(w->sock);
	w->pid = -1;
	w->sock = -1;
	return status;
}

static int worker_spawn(struct worker *w, char *err, size_t err_size)
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
	/* the daemon's threads block signals: the worker starts with none blocked, all default */
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&w->pid, path, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(sv[1]);
	if (rc) {
		close(sv[0]);
		snprintf(err, err_size, "toolfs's media worker %s could not be started: %s", path,
			 strerror(rc));
		return TR_E_IO;
	}
	w->sock = sv[0];
	return 0;
}

static bool same_file(const struct media_file *a, const struct media_file *b)
{
	return a->known && b->known && a->dev == b->dev && a->ino == b->ino &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* The idle worker that has read file, still alive, or a new one. */
static int worker_take(struct worker *w, const struct media_file *file, char *err, size_t err_size)
{
	pthread_mutex_lock(&pool_lock);
	for (int i = 0; i < n_idle; i++) {
		if (!same_file(&idle[i].served, file))
			continue;
		*w = idle[i];
		memmove(&idle[i], &idle[i + 1], (size_t)(n_idle - i - 1) * sizeof(idle[0]));
		n_idle--;
		/* a worker dies with the thread that spawned it (PR_SET_PDEATHSIG) */
		if (waitpid(w->pid, NULL, WNOHANG) == 0) {
			pthread_mutex_unlock(&pool_lock);
			return 0;
		}
		close(w->sock);
		break;
	}
	pthread_mutex_unlock(&pool_lock);
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

static int send_request(int sock, const struct media_request *req, int fd)
{
	char control[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {(void *)req, sizeof(*req)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = control,
			     .msg_controllen = sizeof(control)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	ssize_t n;

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*req) ? 0 : -1;
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
	rc = send_request(w.sock, req, fd);
	if (rc == 0)
		rc = receive_answer(w.sock, max_blob, deadline, ans);
	if (rc == 0) {
		worker_give_back(&w, ans->rep.cpu_ms);
		return 0;
	}
	media_answer_free(ans);
	*status = worker_end(&w);
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
	pthread_mutex_lock(&pool_lock);
	while (n_idle > 0)
		worker_end(&idle[--n_idle]);
	pthread_mutex_unlock(&pool_lock);
}
