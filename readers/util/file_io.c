/* SPDX-License-Identifier: MIT */
/* file_io.c - positional and deadline-bounded reads, file digests and name helpers for the readers (whole-file loads,
 * which make blobs and digests, are core/load.c). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

int tr_read_full_before(int fd, void *buf, size_t len, uint64_t deadline)
{
	char *p = buf;

	while (len) {
		/* a minute at most between looks: a clock step never leaves it waiting for good */
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int timeout = tr_deadline_wait_ms(deadline, 60000), n;
		ssize_t got;

		if (timeout == 0 && deadline)
			return 1;
		n = poll(&pfd, 1, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			continue; /* the deadline is looked at again above */
		got = read(fd, p, len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		p += got;
		len -= (size_t)got;
	}
	return 0;
}

int tr_send_full(int sock, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(sock, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t tr_pread_full(int fd, void *buf, size_t len, off_t offset)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, offset + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int tr_sha256_fd(int fd, uint64_t size, char *hex)
{
	enum { CHUNK = 1 << 20 };
	struct tr_sha256 *ctx = tr_sha256_new();
	unsigned char *buf = malloc(CHUNK);
	uint64_t at = 0;

	if (!ctx || !buf)
		goto fail;
	while (at < size) {
		size_t want = size - at < CHUNK ? (size_t)(size - at) : CHUNK;
		ssize_t n = tr_pread_full(fd, buf, want, (off_t)at);

		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		tr_sha256_update(ctx, buf, (size_t)n);
		at += (uint64_t)n;
	}
	free(buf);
	tr_sha256_finish(ctx, hex);
	return 0;
fail:
	free(buf);
	tr_sha256_free(ctx);
	return -1;
}

bool tr_has_extension(const char *name, const char *ext)
{
	size_t len = strlen(name), ext_len = strlen(ext);

	return len > ext_len + 1 && name[len - ext_len - 1] == '.' &&
	       strcasecmp(name + len - ext_len, ext) == 0;
}

const char *tr_path_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}
