/* follow.c - confined symbolic link resolution, one component at a time from directory fds. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "follow.h"

enum { MAX_LINKS = 40 };

/* The remaining path to resolve: a malloc'd string consumed from the front. */
struct pending {
	char *buf;
	size_t at;
};

/* Reads the target of the symlink open as link_fd (O_PATH). Returns a malloc'd string or NULL
 * with errno. */
static char *read_link(int link_fd)
{
	size_t size = 256;

	for (;;) {
		char *buf = malloc(size);
		ssize_t n;

		if (!buf)
			return NULL;
		n = readlinkat(link_fd, "", buf, size);
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if ((size_t)n < size) {
			buf[n] = '\0';
			return buf;
		}
		free(buf);
		if (size >= PATH_MAX * 4) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		size *= 2;
	}
}

/* Replaces pending with target + "/" + what pending still holds. Returns 0 or -1 (ENOMEM). */
static int pending_prepend(struct pending *p, const char *target)
{
	const char *rest = p->buf ? p->buf + p->at : "";
	char *joined;

	if (asprintf(&joined, "%s%s%s", target, *rest ? "/" : "", rest) < 0)
		return -1;
	free(p->buf);
	p->buf = joined;
	p->at = 0;
	return 0;
}

/* True when path holds no component other than "." (only slashes and dots of that kind). */
static bool rest_is_empty(const char *path)
{
	for (const char *c = path; *c;) {
		size_t len;

		c += strspn(c, "/");
		len = strcspn(c, "/");
		if (len > 0 && !(len == 1 && c[0] == '.'))
			return false;
		c += len;
	}
	return true;
}

/* Takes the next component (skipping empty ones and ".") into *comp (pointing into p->buf,
 * NUL-terminated there) and sets *last when nothing follows it. Returns false at the end. */
static bool pending_next(struct pending *p, const char **comp, bool *last)
{
	for (;;) {
		char *start = p->buf + p->at;
		char *slash;

		while (*start == '/')
			start++;
		if (!*start)
			return false;
		slash = strchr(start, '/');
		if (slash) {
			*slash = '\0';
			p->at = slash + 1 - p->buf;
		} else {
			p->at = start + strlen(start) - p->buf;
		}
		if (strcmp(start, ".") == 0)
			continue;
		*comp = start;
		*last = rest_is_empty(p->buf + p->at);
		return true;
	}
}

/* Skips slashes and "." components; returns the next component and its length (0 at the end). */
static const char *next_component(const char *s, size_t *len)
{
	for (;;) {
		while (*s == '/')
			s++;
		*len = strcspn(s, "/");
		if (*len != 1 || s[0] != '.')
			return s;
		s++;
	}
}

/* When the absolute path starts with the components of prefix ("//a/./b" starts with "/a/b"),
 * returns what follows them; else NULL. */
static const char *strip_prefix(const char *path, const char *prefix)
{
	for (;;) {
		size_t path_len, prefix_len;

		prefix = next_component(prefix, &prefix_len);
		if (prefix_len == 0)
			return path;
		path = next_component(path, &path_len);
		if (path_len != prefix_len || strncmp(path, prefix, prefix_len) != 0)
			return NULL;
		path += path_len;
		prefix += prefix_len;
	}
}

static bool is_root(const struct tfs_root *root, int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == root->dev && st.st_ino == root->ino;
}

/* Whether fd is on the daemon's own mount, asked without a request to it (AT_STATX_DONT_SYNC). */
static bool on_own_mount(const struct tfs_root *root, int fd)
{
	struct statx stx;

	return root->own_dev &&
	       statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_INO,
		     &stx) == 0 &&
	       makedev(stx.stx_dev_major, stx.stx_dev_minor) == root->own_dev;
}

static void replace_fd(int *cur, int fresh)
{
	close(*cur);
	*cur = fresh;
}

enum tfs_follow tfs_follow(const struct tfs_root *root, int dirfd, int link_fd, int *target_fd,
			   int *err)
{
	struct pending p = {NULL, 0};
	enum tfs_follow outcome = TFS_FOLLOW_ERROR;
	int links = 1, cur, next;
	char *target = NULL;
	const char *comp;
	bool last;

	*target_fd = -1;
	*err = 0;
	cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (cur < 0)
		goto errno_out;
	target = read_link(link_fd);

	for (;;) {
		struct stat st;

		if (target) {
			/* A link was just read: its target goes in front of what is left. */
			if (!*target) {
				outcome = TFS_FOLLOW_DANGLING; /* realpath(3): ENOENT */
				goto out;
			}
			if (pending_prepend(&p, target) < 0)
				goto errno_out;
			free(target);
			target = NULL;
			if (p.buf[0] == '/') {
				const char *rest = strip_prefix(p.buf, root->real_path);

				if (!rest)
					rest = strip_prefix(p.buf, root->abs_path);
				if (!rest) {
					outcome = TFS_FOLLOW_OUTSIDE;
					goto out;
				}
				p.at = rest - p.buf;
				next = fcntl(root->fd, F_DUPFD_CLOEXEC, 0);
				if (next < 0)
					goto errno_out;
				replace_fd(&cur, next);
			}
		} else if (!p.buf) {
			goto errno_out; /* reading the first link failed */
		}
		if (!pending_next(&p, &comp, &last)) {
			/* The path ended on a directory ("dir/" or ".."): that is the target. */
			*target_fd = cur;
			cur = -1;
			outcome = TFS_FOLLOW_OK;
			goto out;
		}
		if (strcmp(comp, "..") == 0) {
			if (is_root(root, cur)) {
				outcome = TFS_FOLLOW_OUTSIDE;
				goto out;
			}
			next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (next < 0)
				goto errno_out;
			replace_fd(&cur, next);
			continue;
		}
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			goto errno_out;
		if (on_own_mount(root, next)) {
			close(next);
			outcome = TFS_FOLLOW_OWN_MOUNT;
			goto out;
		}
		if (fstat(next, &st) < 0) {
			close(next);
			goto errno_out;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++links > MAX_LINKS) {
				close(next);
				outcome = TFS_FOLLOW_LOOP;
				goto out;
			}
			target = read_link(next);
			close(next);
			if (!target)
				goto errno_out;
			continue;
		}
		if (last) {
			*target_fd = next;
			outcome = TFS_FOLLOW_OK;
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(next);
			outcome = TFS_FOLLOW_DANGLING;
			goto out;
		}
		replace_fd(&cur, next);
	}

errno_out:
	*err = errno;
	if (*err == ENOENT || *err == ENOTDIR)
		outcome = TFS_FOLLOW_DANGLING;
	else if (*err == ELOOP)
		outcome = TFS_FOLLOW_LOOP;
out:
	free(target);
	free(p.buf);
	if (cur >= 0)
		close(cur);
	return outcome;
}
