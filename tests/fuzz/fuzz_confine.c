/* SPDX-License-Identifier: MIT */
/* fuzz_confine.c - libFuzzer target for the confined open (readers/util/confine.c): the input is
 * a path and the targets of four symbolic links inside a small tree made once under TMPDIR, next
 * to files outside it. An opened fd must lie beneath the root (its /proc/self/fd name and its
 * ".." ancestry), and the walk and openat2 must agree. */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "tr_confine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { N_LINKS = 4 };

static char base[512];
static struct tr_root root;
static int sub_fd = -1;
/* Where the links are, relative to the root. */
static const char *const link_names[N_LINKS] = {"l0", "sub/l1", "sub/deeper/l2", "l3"};

static void make_file(const char *rel)
{
	char path[sizeof(base) + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	if (!(f = fopen(path, "w")))
		fuzz_fail("fopen %s", path);
	fputs(rel, f);
	fclose(f);
}

static void make_dir(const char *rel)
{
	char path[sizeof(base) + 64];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	if (mkdir(path, 0755) < 0)
		fuzz_fail("mkdir %s", path);
}

/* base/{root/{f.txt, sub/{g.txt, deeper/}, fifo}, alias -> root, outside/{f.txt, sub/},
 * outside.txt}; the root is opened by its alias. */
static void make_tree(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[sizeof(base) + 64];

	/* Under TMPDIR, which tests/fuzz/run.sh removes when it ends. */
	if ((size_t)snprintf(base, sizeof(base), "%s/fuzz_confine.XXXXXX",
			     tmp && *tmp ? tmp : "/tmp") >= sizeof(base) - 64)
		fuzz_fail("TMPDIR is too long");
	if (!mkdtemp(base))
		fuzz_fail("mkdtemp");
	make_dir("root");
	make_dir("root/sub");
	make_dir("root/sub/deeper");
	make_dir("outside");
	make_dir("outside/sub");
	make_file("root/f.txt");
	make_file("root/sub/g.txt");
	make_file("outside/f.txt");
	make_file("outside.txt");
	snprintf(path, sizeof(path), "%s/root/fifo", base);
	mkfifo(path, 0644);
	snprintf(path, sizeof(path), "%s/alias", base);
	if (symlink("root", path) < 0)
		fuzz_fail("symlink");
	if (tr_root_open(&root, path) < 0)
		fuzz_fail("tr_root_open %s", path);
	sub_fd = openat(root.fd, "sub", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sub_fd < 0)
		fuzz_fail("open sub");
}

/* text[0..len) with "@R", "@G" and "@B" replaced by the root's real path, its given path and the
 * folder around it (outside), so that absolute paths are reachable. NUL ends it. */
static char *expand(const uint8_t *text, size_t len)
{
	size_t cap = len * sizeof(base) + 1, o = 0;
	char *out = malloc(cap);

	if (!out)
		fuzz_fail("malloc");
	for (size_t i = 0; i < len && text[i]; i++) {
		const char *with = NULL;

		if (text[i] == '@' && i + 1 < len) {
			with = text[i + 1] == 'R'   ? root.path
			       : text[i + 1] == 'G' ? root.given
			       : text[i + 1] == 'B' ? base
						    : NULL;
		}
		if (with) {
			size_t n = strlen(with);

			memcpy(out + o, with, n);
			o += n;
			i++;
		} else {
			out[o++] = (char)text[i];
		}
	}
	out[o] = '\0';
	return out;
}

/* Fails unless fd's name is root.path or beneath it, and, for a directory, its ".." chain meets
 * the root. */
static void check_inside(int fd, const char *path)
{
	char proc[64], name[PATH_MAX];
	size_t n = strlen(root.path);
	ssize_t len;
	int cur;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	len = readlink(proc, name, sizeof(name) - 1);
	if (len < 0)
		fuzz_fail("readlink %s", proc);
	name[len] = '\0';
	if (strncmp(name, root.path, n) != 0 || (name[n] != '\0' && name[n] != '/'))
		fuzz_fail("%s opened %s, outside the root %s", path, name, root.path);
	cur = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	for (int depth = 0;; depth++) {
		struct stat st;
		int up;

		if (cur < 0 || fstat(cur, &st) < 0)
			fuzz_fail("fstat");
		if (!S_ISDIR(st.st_mode) || (st.st_dev == root.dev && st.st_ino == root.ino))
			break;
		if (depth > 64)
			fuzz_fail("%s opened %s, whose parents never reach the root", path, name);
		up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(cur);
		cur = up;
	}
	close(cur);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input params, payload;
	struct tr_confine_how how = {.symlinks = TR_SYMLINKS_INSIDE};
	enum tr_confine fast, walked;
	const uint8_t *part[N_LINKS + 1];
	size_t part_len[N_LINKS + 1];
	int fd_fast, fd_walk, err, dirfd;
	uint8_t flags;
	char *path;

	if (!root.path)
		make_tree();
	fuzz_split(data, size, &params, &payload);
	flags = fuzz_byte(&params);
	how.symlinks = flags & 1 ? TR_SYMLINKS_NONE : TR_SYMLINKS_INSIDE;
	how.regular_only = flags & 2;
	dirfd = flags & 4 ? sub_fd : -1;
	/* the payload: the path, then each link's target, separated by NULs */
	for (int i = 0; i <= N_LINKS; i++) {
		const uint8_t *end = memchr(payload.data, '\0', payload.len);
		size_t n = end ? (size_t)(end - payload.data) : payload.len;

		part[i] = payload.data;
		part_len[i] = n;
		payload.data += end ? n + 1 : n;
		payload.len -= end ? n + 1 : n;
	}
	for (int i = 0; i < N_LINKS; i++) {
		char *target = expand(part[i], part_len[i]);

		unlinkat(root.fd, link_names[i], 0);
		if (*target && strlen(target) < PATH_MAX)
			(void)symlinkat(target, root.fd, link_names[i]);
		free(target);
	}
	path = expand(part[0], part_len[0]);
	if (strlen(path) >= PATH_MAX) {
		free(path);
		return 0;
	}
	fast = tr_confined_open(&root, dirfd, path, &how, &fd_fast, &err);
	how.force_walk = true;
	walked = tr_confined_open(&root, dirfd, path, &how, &fd_walk, &err);
	if (fast == TR_CONFINE_OK)
		check_inside(fd_fast, path);
	if (walked == TR_CONFINE_OK)
		check_inside(fd_walk, path);
	if (fast == TR_CONFINE_OK && walked == TR_CONFINE_OK) {
		struct stat a, b;

		if (fstat(fd_fast, &a) < 0 || fstat(fd_walk, &b) < 0 || a.st_dev != b.st_dev ||
		    a.st_ino != b.st_ino)
			fuzz_fail("%s: openat2 and the walk opened different files", path);
	}
	if (fast != walked && fast != TR_CONFINE_ERROR && walked != TR_CONFINE_ERROR)
		fuzz_fail("%s: openat2 says %s, the walk %s", path, tr_confine_strerror(fast),
			  tr_confine_strerror(walked));
	if (fd_fast >= 0)
		close(fd_fast);
	if (fd_walk >= 0)
		close(fd_walk);
	free(path);
	return 0;
}
