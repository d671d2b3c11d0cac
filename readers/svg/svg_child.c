/* SPDX-License-Identifier: MIT */
/* svg_child.c - the SVG render in a child process under a memory limit, killed at the deadline,
 * and the module's interface table (part of toolfs-svg.so). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nobody.h"
#include "svg.h"
#include "util.h"

#if defined(__has_feature)
#define SVG_HAS_ASAN __has_feature(address_sanitizer)
#else
#define SVG_HAS_ASAN 0
#endif

/* With no deadline (max_render_ms 0) the child still gets this much time, CPU (RLIMIT_CPU) and
 * wall clock (a child stuck on a lock another thread held at the fork is killed too). */
#define SVG_CPU_SECONDS 60

/* The user and group a child forked by root renders as. */

/* What the child writes first; the PNG's png_len bytes follow. */
struct reply {
	int code; /* enum tr_error */
	uint32_t width, height, from_width, from_height;
	char err[256];
	uint64_t png_len;
};

static bool write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* The child: limits, the render, the reply; never returns. parent is the reading process. */
static void child(pid_t parent, int fd, const unsigned char *svg, size_t len,
		  const struct tr_svg_limits *lim, uint64_t deadline)
{
	struct tr_svg_render out;
	struct reply r = {0};
	uint64_t cpu = SVG_CPU_SECONDS;

	if (deadline)
		cpu = (uint64_t)tr_deadline_wait_ms(deadline, -1) / 1000 + 1;
	/* The core never prints (toolfs-mcp's stdout is its protocol): librsvg's own complaints (an
	 * allocation failing) go nowhere. */
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (devnull >= 0) {
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
	}
	/* Nothing of the reading process's but the pipe: not /dev/fuse, not other reads' files;
	 * and, when root forked it (the daemon), the user nobody, so the parser of an untrusted
	 * document holds no one's rights (fonts are world-readable). A change of user clears the
	 * parent-death signal: it comes after. */
	if (dup2(fd, 3) < 0)
		_exit(1);
	fd = 3;
	close_range(4, ~0u, 0);
	if (tr_drop_to_nobody())
		_exit(1);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	/* Killed with the reading process (whose thread waits for this one until it ends). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	setrlimit(RLIMIT_CPU, &(struct rlimit){cpu, cpu + 1});
	/* (AddressSanitizer reserves terabytes of address space: no limit there.) */
#if !defined(__SANITIZE_ADDRESS__) && !SVG_HAS_ASAN
	setrlimit(RLIMIT_AS, &(struct rlimit){TR_SVG_RENDER_MEMORY, TR_SVG_RENDER_MEMORY});
#endif
	r.code = (int)tr_svg_render_here(svg, len, lim, &out, r.err, sizeof(r.err));
	if (r.code == TR_OK) {
		r.width = out.width;
		r.height = out.height;
		r.png_len = out.png->len;
	}
	r.from_width = out.from_width;
	r.from_height = out.from_height;
	if (write_all(fd, &r, sizeof(r)) && r.code == TR_OK)
		write_all(fd, out.png->data, out.png->len);
	_exit(0);
}

/* The child's answer, or why there is none (waits for the child in every case). */
static enum tr_error collect(int fd, pid_t pid, uint64_t deadline, struct tr_svg_render *out,
			     char *err, size_t err_size)
{
	struct reply r;
	struct tr_blob *png = NULL;
	int status = 0, rc = tr_read_full_before(fd, &r, sizeof(r), deadline);

	if (rc == 0 && r.code == TR_OK) {
		if (r.png_len == 0 || r.png_len > SIZE_MAX / 2 ||
		    !(png = tr_blob_new_writable((size_t)r.png_len)))
			rc = -2;
		else
			rc = tr_read_full_before(fd, png->data, png->len, deadline);
	}
	if (rc != 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == 1) {
		tr_blob_unref(png);
		snprintf(err, err_size, "timeout: the SVG was not rendered within max_render_ms");
		return TR_E_TIMEOUT;
	}
	if (rc == -2) {
		tr_blob_unref(png);
		snprintf(err, err_size, "out of memory for the SVG's render");
		return TR_E_IO;
	}
	if (rc < 0) {
		tr_blob_unref(png);
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
			snprintf(err, err_size, "timeout: the SVG's render used up its CPU time");
		else if (WIFSIGNALED(status))
			snprintf(err, err_size,
				 "the render process stopped on signal %d (%s), most likely at its "
				 "%llu MiB memory limit",
				 WTERMSIG(status), strsignal(WTERMSIG(status)),
				 (unsigned long long)(TR_SVG_RENDER_MEMORY >> 20));
		else
			snprintf(err, err_size, "the SVG's render ended without an answer");
		return WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU ? TR_E_TIMEOUT
									  : TR_E_TOO_LARGE;
	}
	r.err[sizeof(r.err) - 1] = '\0';
	out->png = png;
	out->width = r.width;
	out->height = r.height;
	out->from_width = r.from_width;
	out->from_height = r.from_height;
	if (r.code != TR_OK)
		snprintf(err, err_size, "%s", r.err);
	return (enum tr_error)r.code;
}

enum tr_error tr_svg_render(const unsigned char *svg, size_t len, const struct tr_svg_limits *lim,
			    uint64_t deadline, struct tr_svg_render *out, char *err,
			    size_t err_size)
{
	pid_t parent = getpid(), pid;
	enum tr_error code;
	int fds[2];

	memset(out, 0, sizeof(*out));
	if (!deadline)
		deadline = tr_deadline_after_ms(SVG_CPU_SECONDS * 1000);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(err, err_size, "cannot start the SVG's render: %s", strerror(errno));
		return TR_E_IO;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child(parent, fds[1], svg, len, lim, deadline);
	}
	close(fds[1]);
	if (pid < 0) {
		snprintf(err, err_size, "cannot start the SVG's render: %s", strerror(errno));
		close(fds[0]);
		return TR_E_IO;
	}
	code = collect(fds[0], pid, deadline, out, err, err_size);
	close(fds[0]);
	return code;
}

const struct tr_svg_api tr_svg_api = {
	.abi = TR_SVG_ABI,
	.render = tr_svg_render,
};
