/* SPDX-License-Identifier: MIT */
/* mcp_roots.c - the directories toolfs-mcp may read, and opening a path confined to them with the
 * reader core's confined open. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp.h"
#include "tr_confine.h"
#include "tr_read.h"

struct mcp_roots *mcp_roots_new(char *const *dirs, size_t n, bool warn)
{
	struct mcp_roots *roots = calloc(1, sizeof(*roots));

	if (!roots)
		return NULL;
	roots->refs = 1;
	roots->dirs = calloc(n ? n : 1, sizeof(*roots->dirs));
	if (!roots->dirs) {
		mcp_roots_unref(roots);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = tr_root_open(&roots->dirs[roots->n], dirs[i]);

		if (rc == -ENOMEM) {
			mcp_roots_unref(roots);
			return NULL;
		}
		if (rc < 0) {
			if (warn)
				fprintf(stderr, "toolfs-mcp: not a directory, left out: %s (%s)\n",
					dirs[i], strerror(-rc));
			continue;
		}
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
	for (size_t i = 0; i < roots->n; i++)
		tr_root_close(&roots->dirs[i]);
	free(roots->dirs);
	free(roots);
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

		if (*p == '%' && (hi = mcp_hex_digit(p[1])) >= 0 &&
		    (lo = mcp_hex_digit(p[2])) >= 0) {
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

/* When path (absolute, normal) is dir or beneath it, what follows dir in it ("" for dir itself);
 * else NULL. dir is absolute, possibly not normal (a root's given name). */
static const char *beneath(const char *path, const char *dir)
{
	char *norm = lexical_normal(dir);
	const char *rest = NULL;
	size_t n;

	if (!norm)
		return NULL;
	n = strcmp(norm, "/") == 0 ? 0 : strlen(norm);
	if (strncmp(path, norm, n) == 0 && (path[n] == '\0' || path[n] == '/'))
		rest = path + n + (path[n] == '/');
	free(norm);
	return rest;
}

/* The index of the first root that holds path (an absolute normal path) by its real or given
 * name, with *rel the path relative to it ("." for the root itself); or -1. Lexical: it names
 * the file as it was asked, and decides nothing. */
static int root_of(const struct mcp_roots *roots, const char *path, const char **rel)
{
	for (size_t i = 0; i < roots->n; i++) {
		const char *rest = beneath(path, roots->dirs[i].path);

		if (!rest)
			rest = beneath(path, roots->dirs[i].given);
		if (rest) {
			*rel = *rest ? rest : ".";
			return (int)i;
		}
	}
	return -1;
}

/* True when full (an absolute path as asked, not normalized) climbs above the root it starts
 * in with "..", or, starting in none, holds a ".." at all: the confined open follows each name
 * in turn and refuses such a step even when a later one would come back. */
static bool climbs_out(const struct mcp_roots *roots, const char *full)
{
	const char *rest = NULL;
	long depth = 0;

	for (size_t i = 0; i < roots->n && !rest; i++)
		if (!(rest = beneath(full, roots->dirs[i].path)))
			rest = beneath(full, roots->dirs[i].given);
	if (!rest)
		depth = LONG_MIN / 2; /* any ".." is below every root */
	for (const char *p = rest ? rest : full; *p;) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return true;
		} else if (n && !(n == 1 && p[0] == '.')) {
			depth++;
		}
		p = *end ? end + 1 : end;
	}
	return false;
}

static void fail_outside(const struct mcp_roots *roots, struct tr_result *res, const char *given,
			 bool through_link, const char *inside)
{
	if (inside)
		tr_result_fail(
			res, TR_E_OUTSIDE_ROOT,
			"Access denied: %s climbs out of the allowed directories with \"..\" "
			"before coming back: each name is followed in turn, and none may "
			"leave them. Ask for %s instead.",
			given, inside);
	else if (through_link)
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
			given, roots->dirs[0].path,
			roots->n > 1 ? " or another allowed directory" : "");
	else
		tr_result_fail(
			res, TR_E_OUTSIDE_ROOT,
			"Access denied: %s. No directory is allowed: start toolfs-mcp with a "
			"directory, or give it roots from the client.",
			given);
}

/* res's not_found failure for rel (normal, relative to root), with the close names of its
 * folder when the folder itself opens beneath root: only a directory the confined open reached
 * is ever listed. ask is rel as a file_path names it (askable_path). */
static int fail_not_found(const struct tr_root *root, const char *rel, const char *ask,
			  const char *given, const struct tr_confine_how *how,
			  struct tr_result *res)
{
	const char *slash = strrchr(rel, '/');
	char *folder = slash ? strndup(rel, (size_t)(slash - rel)) : strdup(".");
	int dir, err;

	if (!folder)
		return -1;
	/* rel, the path as written made normal, names a file: the way it was written failed. */
	if (tr_confined_open(root, -1, rel, how, &dir, &err) == TR_CONFINE_OK) {
		close(dir);
		free(folder);
		if (*given && given[strlen(given) - 1] == '/')
			tr_result_fail(
				res, TR_E_NOT_FOUND,
				"Not a directory: %s. %s is a file, and a trailing slash names "
				"a directory: ask for %s.",
				given, ask, ask);
		else
			tr_result_fail(
				res, TR_E_NOT_FOUND,
				"File not found: %s. A name before \"..\" does not exist or is "
				"not a directory (each name is followed in turn: \"..\" does "
				"not cancel it); %s itself exists.",
				given, strcmp(rel, ".") ? ask : "the allowed directory");
		return 0;
	}
	tr_result_fail_errno(res, ENOENT);
	if (tr_confined_open(root, -1, folder, how, &dir, &err) == TR_CONFINE_OK) {
		tr_result_suggest_names(res, dir, ask);
		close(dir);
	}
	free(folder);
	return 0;
}

/* rel (normal, inside root number at) as a file_path names it: relative paths are taken beneath
 * the first root, so beneath another one it is that root's path joined. malloc'd or NULL. */
static char *askable_path(const struct mcp_roots *roots, int at, const char *rel)
{
	char *path;

	if (at == 0)
		return strdup(rel);
	if (strcmp(rel, ".") == 0)
		return strdup(roots->dirs[at].path);
	return asprintf(&path, "%s/%s", roots->dirs[at].path, rel) < 0 ? NULL : path;
}

/* The name fd's inode has now (/proc/self/fd): for the result's file:// URI and its path when
 * asked by another name; never for a decision. Returns malloc'd or NULL. */
static char *name_of(int fd)
{
	char proc[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/* Replaces res->path with path; -1 when out of memory. */
static int set_shown(struct tr_result *res, const char *path)
{
	char *copy = strdup(path);

	if (!copy)
		return -1;
	free(res->path);
	res->path = copy;
	return 0;
}

int mcp_open_confined(const struct mcp_roots *roots, const char *file_path,
		      enum tr_symlink_policy symlinks, char **shown, char **real,
		      struct tr_result *res)
{
	struct tr_confine_how how = {.symlinks = symlinks};
	enum tr_confine outcome = TR_CONFINE_OUTSIDE_ROOT;
	char *full = NULL, *lex = NULL, *ask = NULL;
	const char *lex_rel = NULL, *rest;
	int lex_root, fd = -1, err = 0, rc = -1;
	size_t at;

	*shown = *real = NULL;
	if (tr_result_init(res, file_path) < 0)
		return -2;
	if (file_path[0] == '/')
		full = strdup(file_path);
	else if (roots->n && asprintf(&full, "%s/%s", roots->dirs[0].path, file_path) < 0)
		full = NULL;
	else if (!roots->n)
		full = strdup("/");
	if (!full || !(lex = lexical_normal(full)))
		goto oom;
	lex_root = root_of(roots, lex, &lex_rel);
	/* The file is named by its path inside the root it was asked under, as in a mount. */
	if (lex_root >= 0 &&
	    (set_shown(res, lex_rel) < 0 || !(ask = askable_path(roots, lex_root, lex_rel))))
		goto oom;
	/* A relative path is opened beneath the first root, an absolute one beneath the first root
	 * whose real or given name it starts with: the core decides, from the root's fd down. */
	for (at = 0; at < roots->n; at++) {
		outcome = tr_confined_open(&roots->dirs[at], -1, file_path, &how, &fd, &err);
		if (outcome != TR_CONFINE_OUTSIDE_ROOT || file_path[0] != '/')
			break;
	}
	switch (outcome) {
	case TR_CONFINE_OK: break;
	case TR_CONFINE_OUTSIDE_ROOT:
		fail_outside(roots, res, file_path, lex_root >= 0,
			     lex_root >= 0 && climbs_out(roots, full) ? ask : NULL);
		goto out;
	case TR_CONFINE_NOT_FOUND:
		if (lex_root < 0)
			fail_outside(roots, res, file_path, false, NULL);
		else if (fail_not_found(&roots->dirs[lex_root], lex_rel, ask, file_path, &how,
					res) < 0)
			goto oom;
		goto out;
	case TR_CONFINE_NOT_REGULAR: /* regular_only is off: a link under symlinks=none */
		tr_result_fail(res, TR_E_NOT_REGULAR,
			       "Not a regular file: %s (a symbolic link; this server follows none: "
			       "symlinks=none)",
			       res->path);
		goto out;
	case TR_CONFINE_LOOP:
		tr_result_fail(res, TR_E_NOT_REGULAR, "Not a regular file: %s (symbolic link loop)",
			       res->path);
		goto out;
	case TR_CONFINE_OWN_MOUNT: /* no avoid_dev here */
	case TR_CONFINE_ERROR: tr_result_fail_errno(res, err ? err : EIO); goto out;
	}
	*real = name_of(fd);
	if (lex_root < 0 && *real && (rest = beneath(*real, roots->dirs[at].path)) &&
	    set_shown(res, *rest ? rest : ".") < 0)
		goto oom;
	*shown = strdup(res->path);
	if (!*shown)
		goto oom;
	rc = fd;
	fd = -1;
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
	free(ask);
	free(lex);
	free(full);
	return rc;
}
