/* SPDX-License-Identifier: MIT */
/* confine.c - opening a path beneath a root directory: openat2 where it can decide, else a walk
 * one component at a time from directory fds. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tr_confine.h"

enum { MAX_LINKS = 40 }; /* the kernel's MAXSYMLINKS */

/* Set once openat2 answered ENOSYS: every later open walks. */
static bool openat2_missing;

int tr_root_open(struct tr_root *root, const char *dir)
{
	struct stat st;
	char *cwd = NULL;
	int err;

	root->fd = -1;
	root->path = root->given = NULL;
	root->dev = 0;
	root->ino = 0;
	if (dir[0] == '/') {
		root->given = strdup(dir);
	} else {
		cwd = getcwd(NULL, 0);
		if (!cwd)
			return -errno;
		if (asprintf(&root->given, "%s/%s", cwd, dir) < 0)
			root->given = NULL;
		free(cwd);
	}
	if (!root->given)
		return -ENOMEM;
	/* The operator's own directory: realpath(3) of it decides nothing about requests. */
	root->path = realpath(root->given, NULL);
	if (!root->path)
		goto fail;
	root->fd = open(root->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root->fd < 0 || fstat(root->fd, &st) < 0)
		goto fail;
	root->dev = st.st_dev;
	root->ino = st.st_ino;
	return 0;
fail:
	err = errno;
	tr_root_close(root);
	return -err;
}

void tr_root_close(struct tr_root *root)
{
	if (root->fd >= 0)
		close(root->fd);
	free(root->path);
	free(root->given);
	root->fd = -1;
	root->path = root->given = NULL;
}

const char *tr_confine_strerror(enum tr_confine outcome)
{
	switch (outcome) {
	case TR_CONFINE_OK: return "success";
	case TR_CONFINE_OUTSIDE_ROOT: return "outside the root";
	case TR_CONFINE_NOT_FOUND: return "not found";
	case TR_CONFINE_NOT_REGULAR: return "not a regular file";
	case TR_CONFINE_LOOP: return "too many levels of symbolic links";
	case TR_CONFINE_OWN_MOUNT: return "on the mount itself";
	case TR_CONFINE_ERROR: return "system error";
	}
	return "unknown outcome";
}

int tr_reopen(int opath_fd, int flags)
{
	char proc[64];
	struct stat st;
	int fd;

	if (flags & O_CREAT)
		return -EINVAL;
	if (fstat(opath_fd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", opath_fd);
	fd = open(proc, (flags & ~O_NOFOLLOW) | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

/* --- the walk --- */

/* The remaining path: a malloc'd string consumed from the front. */
struct pending {
	char *buf;
	size_t at;
	bool slash_after; /* the component last taken was followed by '/': it must be a directory */
};

/* What the walk knows of an entry it opened. */
struct step {
	dev_t dev;
	ino_t ino;
	mode_t mode;
};

/* Stats fd (O_PATH) without a round trip to a FUSE server (AT_STATX_DONT_SYNC): st_dev comes
 * from the superblock, so an entry on avoid_dev is recognised without asking its daemon. */
static enum tr_confine step_stat(int fd, const struct tr_confine_how *how, struct step *s, int *err)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_INO, &stx) < 0) {
		*err = errno;
		return TR_CONFINE_ERROR;
	}
	s->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	s->ino = stx.stx_ino;
	s->mode = stx.stx_mode;
	if (how->avoid_dev && s->dev == how->avoid_dev)
		return TR_CONFINE_OWN_MOUNT;
	return TR_CONFINE_OK;
}

/* Reads the target of the symbolic link link_fd (O_PATH). Returns a malloc'd string or NULL
 * with errno. */
static char *read_link(int link_fd)
{
	for (size_t size = 256;; size *= 2) {
		char *buf = malloc(size);
		ssize_t n;

		if (!buf)
			return NULL;
		n = readlinkat(link_fd, "", buf, size);
		if (n >= 0 && (size_t)n < size) {
			buf[n] = '\0';
			return buf;
		}
		free(buf);
		if (n < 0)
			return NULL;
		if (size >= PATH_MAX * 4) {
			errno = ENAMETOOLONG;
			return NULL;
		}
	}
}

/* True when path holds no component but "." (only slashes and such dots). */
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

/* Takes the next component but "." into *comp (NUL-terminated inside p->buf); *last when no
 * other follows. Returns false at the end. */
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
		p->slash_after = slash != NULL;
		if (slash) {
			*slash = '\0';
			p->at = (size_t)(slash + 1 - p->buf);
		} else {
			p->at = (size_t)(start + strlen(start) - p->buf);
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

/* When the absolute path starts with the components of prefix, what follows them; else NULL.
 * Lexical only: nothing named by the path is looked at. */
static const char *strip_prefix(const char *path, const char *prefix)
{
	if (!prefix)
		return NULL;
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

/* An absolute path's part below root, or NULL when it names no place beneath it. */
static const char *below_root(const struct tr_root *root, const char *path)
{
	const char *rest = strip_prefix(path, root->path);

	return rest ? rest : strip_prefix(path, root->given);
}

/* Puts text (the path asked, or a link's target) in front of what is left to resolve. An
 * absolute text restarts at the root. */
static enum tr_confine prepend_path(struct pending *p, const char *text, const struct tr_root *root,
				    int *cur, struct step *cur_step, int *err)
{
	const char *rest = p->buf ? p->buf + p->at : "";
	char *joined;
	int fd;

	if (asprintf(&joined, "%s%s%s", text, *rest || p->slash_after ? "/" : "", rest) < 0) {
		*err = ENOMEM;
		return TR_CONFINE_ERROR;
	}
	free(p->buf);
	p->buf = joined;
	p->at = 0;
	if (joined[0] != '/')
		return TR_CONFINE_OK;
	rest = below_root(root, joined);
	if (!rest)
		return TR_CONFINE_OUTSIDE_ROOT;
	p->at = (size_t)(rest - joined);
	fd = fcntl(root->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		*err = errno;
		return TR_CONFINE_ERROR;
	}
	close(*cur);
	*cur = fd;
	cur_step->dev = root->dev;
	cur_step->ino = root->ino;
	cur_step->mode = S_IFDIR;
	return TR_CONFINE_OK;
}

static enum tr_confine from_errno(int e, int *err)
{
	if (e == ENOENT || e == ENOTDIR)
		return TR_CONFINE_NOT_FOUND;
	if (e == ELOOP)
		return TR_CONFINE_LOOP;
	*err = e;
	return TR_CONFINE_ERROR;
}

/* The component walk: every step an openat(O_PATH | O_NOFOLLOW) from a directory fd already
 * known to be beneath the root, checked (statx) before it is used. */
static enum tr_confine walk(const struct tr_root *root, int start, const char *path,
			    const struct tr_confine_how *how, int *out, int *err)
{
	struct pending p = {NULL, 0, false};
	enum tr_confine outcome;
	struct step cur_step, st;
	int links = 0, cur, next = -1;
	const char *comp;
	bool last;

	cur = fcntl(start, F_DUPFD_CLOEXEC, 0);
	if (cur < 0)
		return from_errno(errno, err);
	outcome = step_stat(cur, how, &cur_step, err);
	if (outcome == TR_CONFINE_OK)
		outcome = prepend_path(&p, path, root, &cur, &cur_step, err);
	while (outcome == TR_CONFINE_OK) {
		if (!pending_next(&p, &comp, &last)) {
			/* The path ended on a directory ("dir/.." or "."). */
			if (how->regular_only)
				outcome = TR_CONFINE_NOT_REGULAR;
			else {
				*out = cur;
				cur = -1;
			}
			break;
		}
		if (strcmp(comp, "..") == 0) {
			if (cur_step.dev == root->dev && cur_step.ino == root->ino) {
				outcome = TR_CONFINE_OUTSIDE_ROOT;
				break;
			}
			next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		} else {
			next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			outcome = from_errno(errno, err);
			break;
		}
		outcome = step_stat(next, how, &st, err);
		if (outcome != TR_CONFINE_OK)
			break;
		if (strcmp(comp, "..") == 0 && st.dev == cur_step.dev && st.ino == cur_step.ino) {
			/* the top of the file system: dirfd was not beneath the root */
			outcome = TR_CONFINE_OUTSIDE_ROOT;
			break;
		}
		if (S_ISLNK(st.mode)) {
			char *target;

			if (how->symlinks == TR_SYMLINKS_NONE) {
				outcome = TR_CONFINE_NOT_REGULAR;
				break;
			}
			if (++links > MAX_LINKS) {
				outcome = TR_CONFINE_LOOP;
				break;
			}
			target = read_link(next);
			if (!target) {
				outcome = from_errno(errno, err);
				break;
			}
			close(next);
			next = -1;
			if (!*target) /* realpath(3): ENOENT */
				outcome = TR_CONFINE_NOT_FOUND;
			else
				outcome = prepend_path(&p, target, root, &cur, &cur_step, err);
			free(target);
			continue;
		}
		if (last && !(p.slash_after && !S_ISDIR(st.mode))) {
			if (how->regular_only && !S_ISREG(st.mode)) {
				outcome = TR_CONFINE_NOT_REGULAR;
			} else {
				*out = next;
				next = -1;
			}
			break;
		}
		if (!S_ISDIR(st.mode)) {
			outcome = TR_CONFINE_NOT_FOUND;
			break;
		}
		close(cur);
		cur = next;
		cur_step = st;
		next = -1;
	}
	if (next >= 0)
		close(next);
	if (cur >= 0)
		close(cur);
	free(p.buf);
	return outcome;
}

/* --- openat2 --- */

/* A result of try_openat2 that is not an outcome: the walk decides. */
enum { WALK_INSTEAD = -1 };

/* openat2 where its answer is final (a enum tr_confine); WALK_INSTEAD where it cannot tell (an absolute link target
 * naming the root by its path, ".." above dirfd but beneath the root, a rename race, a loop
 * that may be a magic link) or the kernel lacks it. */
static int try_openat2(const struct tr_root *root, int start, const char *path,
		       const struct tr_confine_how *how, int *out, int *err)
{
	bool none = how->symlinks == TR_SYMLINKS_NONE;
	struct open_how oh = {
		.flags = O_PATH | O_CLOEXEC | (none ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
			   (none ? RESOLVE_NO_SYMLINKS : 0),
	};
	enum tr_confine outcome;
	struct step st;
	long fd;

	if (path[0] == '/') {
		path = below_root(root, path);
		if (!path)
			return TR_CONFINE_OUTSIDE_ROOT;
		start = root->fd;
	}
	fd = syscall(SYS_openat2, start, rest_is_empty(path) ? "." : path, &oh, sizeof(oh));
	if (fd < 0) {
		switch (errno) {
		case ENOSYS:
			__atomic_store_n(&openat2_missing, true, __ATOMIC_RELAXED);
			return WALK_INSTEAD;
		case ENOENT:
		case ENOTDIR: return TR_CONFINE_NOT_FOUND;
		case ELOOP: return none ? TR_CONFINE_NOT_REGULAR : WALK_INSTEAD;
		case EXDEV:
		case EAGAIN: return WALK_INSTEAD;
		default: *err = errno; return TR_CONFINE_ERROR;
		}
	}
	outcome = step_stat((int)fd, how, &st, err);
	if (outcome == TR_CONFINE_OK && S_ISLNK(st.mode))
		outcome = TR_CONFINE_NOT_REGULAR; /* none: the last entry is a link */
	else if (outcome == TR_CONFINE_OK && how->regular_only && !S_ISREG(st.mode))
		outcome = TR_CONFINE_NOT_REGULAR;
	if (outcome == TR_CONFINE_OK)
		*out = (int)fd;
	else
		close((int)fd);
	return outcome;
}

enum tr_confine tr_confined_open(const struct tr_root *root, int dirfd, const char *path,
				 const struct tr_confine_how *how, int *fd, int *err)
{
	int start = dirfd < 0 ? root->fd : dirfd;

	*fd = -1;
	*err = 0;
	if (!*path)
		return TR_CONFINE_NOT_FOUND; /* as open("") */
	if (!how->force_walk && !how->avoid_dev &&
	    !__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED)) {
		int outcome = try_openat2(root, start, path, how, fd, err);

		if (outcome != WALK_INSTEAD)
			return (enum tr_confine)outcome;
	}
	return walk(root, start, path, how, fd, err);
}
