/* SPDX-License-Identifier: MIT */
/* media_worker.c - toolfs-media-worker: FFmpeg in a sandboxed process. Started by the reader's
 * pool (media_pool.c) with a control socket as descriptor 3, it is a fork server: with FFmpeg's
 * libraries loaded and its limits set, it forks a worker on each socket it is sent, which puts
 * on its seccomp filter and answers the requests of one file (each with the file's descriptor)
 * until that socket closes; and it kills and reaps a worker when asked. It reads no file and
 * ends with its control socket. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libavutil/log.h>

#include "media_worker.h"

/* Receives a message of len bytes and the descriptor it carries (SCM_RIGHTS; -1 if none) on
 * MEDIA_WORKER_FD. Returns the bytes received, 0 at the socket's end, -1 on an error. */
static ssize_t receive_message(void *msg, size_t len, int *fd)
{
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {msg, len};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = control,
			   .msg_controllen = sizeof(control)};
	struct cmsghdr *c;
	ssize_t n = recvmsg(MEDIA_WORKER_FD, &m, MSG_CMSG_CLOEXEC);

	*fd = -1;
	c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}

/* Receives a request and its descriptor. Returns 1, 0 at the socket's end, -1 on a bad one. */
static int receive(struct media_request *req, int *fd)
{
	ssize_t n = receive_message(req, sizeof(*req), fd);

	if (n <= 0)
		return n == 0 ? 0 : -1;
	if (n != sizeof(*req) || req->magic != MEDIA_MAGIC || *fd < 0)
		return -1;
	return 1;
}

static int send_all(const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(MEDIA_WORKER_FD, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static uint32_t cpu_ms(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint32_t)((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
			  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000);
}

/* MEDIA_OP_TEST_ASK: the questions the filter answers with EPERM (media_sandbox.c), asked as
 * glibc and libraries ask them. Returns NULL when each failed with EPERM, else the first that
 * did not. */
static const char *ask_harmless(void)
{
	struct sysinfo si;
	struct utsname u;
	struct rlimit r;
	cpu_set_t cpus;

	if (sysinfo(&si) == 0 || errno != EPERM)
		return "sysinfo";
	if (uname(&u) == 0 || errno != EPERM)
		return "uname";
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 || errno != EPERM)
		return "getrlimit";
	if (prlimit(0, RLIMIT_AS, NULL, &r) == 0 || errno != EPERM)
		return "prlimit64";
	/* allowed: FFmpeg's av_cpu_count */
	return sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? NULL : "sched_getaffinity";
}

/* Runs one request into rep, text (open_memstream) and *blob. */
static void answer(const struct media_request *req, int fd, struct media_reply *rep, FILE *text,
		   unsigned char **blob, size_t *blob_len, char *err, size_t err_size)
{
	const char *not_refused = req->op == MEDIA_OP_TEST_ASK ? ask_harmless() : NULL;
	struct media_input in = {0};
	int rc;

	/* docs/SPEC.md §6's test hooks: the filter stops the worker at openat, at prlimit64 */
	if (req->op == MEDIA_OP_TEST_OPEN)
		rc = open("/etc/hostname", O_RDONLY);
	if (req->op == MEDIA_OP_TEST_LIMIT)
		prlimit(0, RLIMIT_CORE, &(struct rlimit){0, 0}, NULL);
	if (not_refused) {
		snprintf(err, err_size, "%s was not refused with EPERM", not_refused);
		rep->status = MEDIA_CORRUPT;
		return;
	}
	if (req->op == MEDIA_OP_TEST_LOOP)
		for (volatile unsigned long spin = 0;; spin++)
			;
	rc = media_open(&in, fd, req->size, err, err_size);
	if (rc == MEDIA_OK) {
		rc = media_describe(&in, rep, text);
		if (rc == MEDIA_UNSUPPORTED)
			snprintf(err, err_size, "it holds no audio or video stream");
	}
	if (rc == MEDIA_OK && rep->kind == MEDIA_KIND_AUDIO)
		media_loudness(&in, req->t0, req->t1, req->deadline, text);
	if (rc == MEDIA_OK && rep->kind == MEDIA_KIND_VIDEO)
		rc = media_video_reply(&in, req, rep, text, blob, blob_len);
	if (rc == MEDIA_OK && req->op == MEDIA_OP_AUDIO && req->skip_whole && req->t0 == 0 &&
	    rep->duration >= 0 && rep->duration <= req->t1) {
		rep->blob_t1 = rep->duration;
	} else if (rc == MEDIA_OK && req->op == MEDIA_OP_AUDIO) {
		rc = media_wav(&in, req->t0, req->t1, req->max_blob, blob, blob_len, &rep->blob_t1,
			       err, err_size);
		rep->blob_t0 = req->t0;
	}
	if (rc == MEDIA_OK && req->op == MEDIA_OP_TEST_LIE && rep->kind == MEDIA_KIND_VIDEO) {
		free(*blob); /* 13 bytes that 2900561549 x 4239809835 x 3 equals modulo 2^64 */
		*blob = calloc(1, 13);
		*blob_len = *blob ? 13 : 0;
		rep->pic_w = 2900561549u;
		rep->pic_h = 4239809835u;
	}
	if (in.fmt || in.io)
		media_close(&in);
	rep->status = (uint32_t)rc;
}

/* Answers the requests on MEDIA_WORKER_FD, the filter put on before the first is run. */
static int serve(void)
{
	struct media_request req;
	bool sandboxed = false;
	int fd, got;

	while ((got = receive(&req, &fd)) > 0) {
		struct media_reply rep = {.magic = MEDIA_MAGIC, .duration = -1.0};
		unsigned char *blob = NULL;
		size_t blob_len = 0, text_len = 0;
		char *text = NULL, err[256] = "";
		FILE *out = open_memstream(&text, &text_len);

		if (!sandboxed && media_sandbox_seccomp(req.profile != 0))
			return 1;
		sandboxed = true;
		if (!out)
			return 1;
		answer(&req, fd, &rep, out, &blob, &blob_len, err, sizeof(err));
		close(fd);
		if (fclose(out))
			return 1;
		if (rep.status != MEDIA_OK) { /* the sentence alone */
			text_len = strlen(err);
			free(text);
			text = strdup(err);
			if (!text)
				return 1;
		}
		if (text_len > MEDIA_MAX_TEXT)
			text_len = MEDIA_MAX_TEXT;
		rep.text_len = (uint32_t)text_len;
		rep.blob_len = blob_len;
		rep.cpu_ms = cpu_ms();
		if (send_all(&rep, sizeof(rep)) || send_all(text, text_len) ||
		    send_all(blob, blob_len))
			return 1;
		free(text);
		free(blob);
	}
	return got == 0 ? 0 : 1;
}

/* Receives a control message, with a socket for MEDIA_SPAWN. Returns 1, 0 at the socket's end,
 * -1 on a bad one. */
static int receive_control(struct media_control *msg, int *sock)
{
	ssize_t n = receive_message(msg, sizeof(*msg), sock);

	if (n <= 0)
		return n == 0 ? 0 : -1;
	if (n != sizeof(*msg) || msg->magic != MEDIA_MAGIC ||
	    (msg->op == MEDIA_SPAWN) != (*sock >= 0)) {
		if (*sock >= 0)
			close(*sock);
		return -1;
	}
	return 1;
}

/* The worker: on sock, under its filter, for one file; never returns. */
static void worker(int sock, pid_t server)
{
	if (dup2(sock, MEDIA_WORKER_FD) < 0)
		_exit(1);
	close(sock);
	if (media_sandbox_worker(server))
		_exit(1);
	_exit(serve());
}

/* MEDIA_END: kills pid when it is a child of this process still running (a pid it has not
 * reaped is never another process's), then reaps it. */
static struct media_control_reply end_worker(pid_t pid)
{
	struct media_control_reply rep = {.magic = MEDIA_MAGIC, .pid = -1};
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

static int fork_server(void)
{
	struct media_control msg;
	pid_t self = getpid();
	int sock, got;

	while ((got = receive_control(&msg, &sock)) > 0) {
		struct media_control_reply rep = {.magic = MEDIA_MAGIC, .pid = -1};

		if (msg.op == MEDIA_SPAWN) {
			rep.pid = fork();
			if (rep.pid == 0)
				worker(sock, self);
			rep.status = rep.pid < 0 ? errno : 0;
			close(sock);
		} else if (msg.op == MEDIA_END) {
			rep = end_worker(msg.pid);
		}
		if (send_all(&rep, sizeof(rep)))
			return 1;
	}
	return got == 0 ? 0 : 1;
}

int main(void)
{
	/* only 0-2 and the socket: nothing of the parent's leaks in */
	close_range(MEDIA_WORKER_FD + 1, ~0u, 0);
	av_log_set_level(AV_LOG_QUIET);
	/* FFmpeg formats creation times with localtime_r: the zone is read now, not later under
	 * seccomp (/etc/localtime), and it is UTC */
	setenv("TZ", "UTC", 1);
	tzset();
	/* _exit: no exit-time work in a confined process (a sanitizer build's leak check there
	 * cannot stop the world under the filter and spins forever) */
	if (media_sandbox_limits())
		_exit(1);
	_exit(fork_server());
}
