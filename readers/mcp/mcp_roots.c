/* mcp_roots.c - the directories toolfs-mcp may read, and opening a path confined to them. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mcp.h"
#include "tr_read.h"

struct mcp_roots *mcp_roots_new(char *const *dirs, size_t n, bool warn)
{
	struct mcp_roots *roots = calloc(1, sizeof(*roots));

	if (!roots)
		return NULL;
	roots->refs = 1;
	roots->paths = calloc(n ? n : 1, sizeof(*roots->paths));
	roots->fds = calloc(n ? n : 1, sizeof(*roots->fds));
	if (!roots->paths || !roots->fds) {
		mcp_roots_unref(roots);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		char *real = realpath(dirs[i], NULL);
		int fd = real ? open(real, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;

		if (fd < 0) {
			if (warn)
				fprintf(stderr, "toolfs-mcp: not a directory, left out: %s (%s)\n",
					dirs[i], strerror(errno));
			free(real);
			continue;
		}
		roots->paths[roots->n] = real;
		roots->fds[roots->n] = fd;
		roots->n++;
	}
	return roots;
}

struct mcp_roots *mcp_roots_ref(struct mcp_roots *roots)
{
	if (roots)
		__atomic_add_fetch(&roots->refs, 1, __ATOMIC_RELAXED);
	return roots;
}

void mcp_roots_unref(struct mcp_roots *roots)
{
	if (!roots || __atomic_sub_fetch(&roots->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	for (size_t i = 0; i < roots->n; i++) {
		free(roots->paths[i]);
		close(roots->fds[i]);
	}
	free(roots->paths);
	free(roots->fds);
	free(roots);
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *mcp_file_uri_path(const char *uri)
{
	const char *p;
	char *out, *o;

	if (strncmp(uri, "file://", 7) != 0)
		return NULL;
	p = uri + 7;
	if (strncmp(p, "localhost/", 10) == 0)
		p += 9;
	if (*p != '/')
		return NULL;
	out = o = malloc(strlen(p) + 1);
	if (!out)
		return NULL;
	for (; *p && *p != '?' && *p != '#'; p++) {
		int hi, lo;

		if (*p == '%' && (hi = hex_value(p[1])) >= 0 && (lo = hex_value(p[2])) >= 0) {
			*o++ = (char)(hi << 4 | lo);
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	if (memchr(out, '\0', (size_t)(o - out))) { /* %00 */
		free(out);
		return NULL;
	}
	return out;
}

/* path with ".", ".." and repeated slashes removed, without reading the file system; ".." at
 * "/" stays there. path is absolute. Returns malloc'd or NULL. */
static char *lexical_normal(const char *path)
{
	size_t len = strlen(path);
	char *out = malloc(len + 2);
	size_t o = 0;

	if (!out)
		return NULL;
	for (const char *p = path; *p;) {
		const char *end;
		size_t n;

		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = end;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

/* The index of the root that holds path (an absolute normal path), or -1. */
static int root_of(const struct mcp_roots *roots, const char *path)
{
	for (size_t i = 0; i < roots->n; i++) {
		const char *r = roots->paths[i];
		size_t n = strlen(r);

		if (strcmp(r, "/") == 0)
			return (int)i;
		if (strncmp(path, r, n) == 0 && (path[n] == '\0' || path[n] == '/'))
			return (int)i;
	}
	return -1;
}

/* path relative to roots->paths[i] ("." for the root itself). */
static const char *relative_to(const struct mcp_roots *roots, int i, const char *path)
{
	size_t n = strlen(roots->paths[i]);

	if (strcmp(roots->paths[i], "/") == 0)
		return path[1] ? path + 1 : ".";
	return path[n] ? path + n + 1 : ".";
}

/* Opens rel beneath dirfd without following any symbolic link or leaving it (openat2); where
 * the kernel lacks openat2, an O_NOFOLLOW open of the real path already checked. */
static int open_beneath(int dirfd, const char *rel, const char *real)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		return open(real, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	return (int)fd;
}

/* True when the deepest existing ancestor of lex (a normal absolute path) has its real path
 * inside a root: the missing rest cannot lead anywhere else. */
static bool ancestor_inside(const struct mcp_roots *roots, const char *lex)
{
	char *dir = strdup(lex);
	bool inside = false;

	while (dir) {
		char *slash = strrchr(dir, '/');
		char *real;

		if (!slash)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		real = realpath(dir, NULL);
		if (real) {
			inside = root_of(roots, real) >= 0;
			free(real);
			break;
		}
		if (errno != ENOENT && errno != ENOTDIR)
			break;
		if (strcmp(dir, "/") == 0)
			break;
	}
	free(dir);
	return inside;
}

static void fail_outside(const struct mcp_roots *roots, struct tr_result *res, const char *given,
			 bool through_link)
{
	if (through_link)
		tr_result_fail(
			res, TR_E_OUTSIDE_ROOT,
			"Symbolic link points outside the allowed directories: %s. Its target "
			"cannot be read with this tool; read files inside the allowed "
			"directories (list_allowed_directories names them).",
			given);
	else if (roots->n)
		tr_result_fail(
			res, TR_E_OUTSIDE_ROOT,
			"Access denied: %s is outside the allowed directories. Read files under "
			"%s%s (relative paths are relative to it); list_allowed_directories "
			"names them all.",
			given, roots->paths[0],
			roots->n > 1 ? " or another allowed directory" : "");
	else
		tr_result_fail(
			res, TR_E_OUTSIDE_ROOT,
			"Access denied: %s. No directory is allowed: start toolfs-mcp with a "
			"directory, or give it roots from the client.",
			given);
}

int mcp_open_confined(const struct mcp_roots *roots, const char *file_path, char **shown,
		      char **real, struct tr_result *res)
{
	char *full = NULL, *lex = NULL, *resolved = NULL;
	int lex_root, real_root, fd = -1, rc = -1;

	*shown = *real = NULL;
	if (tr_result_init(res, file_path) < 0)
		return -2;
	if (file_path[0] == '/')
		full = strdup(file_path);
	else if (roots->n && asprintf(&full, "%s/%s", roots->paths[0], file_path) < 0)
		full = NULL;
	else if (!roots->n)
		full = strdup("/");
	if (!full || !(lex = lexical_normal(full)))
		goto oom;
	lex_root = root_of(roots, lex);
	/* The file is named by its path inside the root it was asked under, as in a mount. */
	if (lex_root >= 0) {
		free(res->path);
		res->path = strdup(relative_to(roots, lex_root, lex));
		if (!res->path)
			goto oom;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		resolved = realpath(full, NULL);
		if (!resolved) {
			int err = errno;

			if (lex_root < 0) {
				fail_outside(roots, res, file_path, false);
			} else if ((err == ENOENT || err == ENOTDIR) &&
				   !ancestor_inside(roots, lex)) {
				fail_outside(roots, res, file_path, true);
			} else if (err == ENOENT || err == ENOTDIR) {
				/* Missing inside a root: the core words it and suggests close names. It
				 * is trusted only when it finds nothing: a file that appeared meanwhile
				 * is resolved again, so no open of it escapes the checks above. */
				tr_read_path(roots->fds[lex_root],
					     relative_to(roots, lex_root, lex), NULL, NULL, res);
				if (res->error != TR_E_NOT_FOUND) {
					char *path = strdup(res->path);

					tr_result_destroy(res);
					if (!path || tr_result_init(res, path) < 0) {
						free(path);
						goto oom;
					}
					free(path);
					continue;
				}
			} else if (err == ELOOP) {
				tr_result_fail(res, TR_E_NOT_REGULAR,
					       "Not a regular file: %s (symbolic link loop)",
					       res->path);
			} else {
				tr_result_fail_errno(res, err);
			}
			goto out;
		}
		real_root = root_of(roots, resolved);
		if (real_root < 0) {
			fail_outside(roots, res, file_path, lex_root >= 0);
			goto out;
		}
		fd = open_beneath(roots->fds[real_root], relative_to(roots, real_root, resolved),
				  resolved);
		if (fd < 0 && (errno == ELOOP || errno == EXDEV || errno == ENOENT) &&
		    attempt < 2) {
			free(resolved); /* changed between the realpath and the open */
			resolved = NULL;
			continue;
		}
		if (fd < 0) {
			tr_result_fail_errno(res, errno);
			goto out;
		}
		if (lex_root < 0) { /* asked by another name of a path inside a root */
			free(res->path);
			res->path = strdup(relative_to(roots, real_root, resolved));
			if (!res->path)
				goto oom;
		}
		*shown = strdup(res->path);
		*real = resolved;
		resolved = NULL;
		if (!*shown)
			goto oom;
		rc = fd;
		fd = -1;
		goto out;
	}
	tr_result_fail(res, TR_E_IO,
		       "I/O error reading %s: the path kept changing while it was read", res->path);
	goto out;
oom:
	rc = -2;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		free(*shown);
		free(*real);
		*shown = *real = NULL;
	}
	free(resolved);
	free(lex);
	free(full);
	return rc;
}
