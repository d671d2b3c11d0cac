/* SPDX-License-Identifier: MIT */
/* test_confine.c - unit tests of the confined open (readers/util/confine.c): every outcome, each
 * through openat2 and through the forced walk, and symbolic link swaps raced against it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expect.h"
#include "tr_confine.h"

static char base[PATH_MAX]; /* holds root/, alias -> root, outside.txt, outside/ */
static char root_dir[PATH_MAX + 8];
static struct tr_root root;

static void make_file(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void make_link(const char *target, const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	unlink(path);
	if (symlink(target, path) < 0)
		perror(path);
}

static void make_dir(const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	mkdir(path, 0755);
}

static void make_tree(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX * 2], target[PATH_MAX * 2];

	snprintf(base, sizeof(base), "%s/confine.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(root_dir, sizeof(root_dir), "%s/root", base);
	make_dir("root");
	make_dir("root/sub");
	make_dir("root/sub/deeper");
	make_dir("outside");
	make_file("root/f.txt", "inside\n");
	make_file("root/sub/g.txt", "g\n");
	make_file("root/sub/deeper/h.txt", "h\n");
	make_file("outside.txt", "secret\n");
	make_file("outside/secret.txt", "secret\n");
	snprintf(path, sizeof(path), "%s/root/fifo", base);
	mkfifo(path, 0644);
	make_link("root", "alias");
	make_link("sub/g.txt", "root/in_rel");
	snprintf(target, sizeof(target), "%s/sub/g.txt", root_dir);
	make_link(target, "root/in_abs");
	snprintf(target, sizeof(target), "%s/alias//./sub/g.txt", base);
	make_link(target, "root/in_abs_given");
	make_link("../outside.txt", "root/out_rel");
	snprintf(target, sizeof(target), "%s/outside.txt", base);
	make_link(target, "root/out_abs");
	make_link("/etc/hostname", "root/out_etc");
	make_link("sub/../f.txt", "root/dotdot_in");
	make_link("sub/deeper/../../../outside.txt", "root/dotdot_out");
	make_link("nothere", "root/dangling");
	make_link("nothere/x", "root/dangling_dir");
	make_link("loop_b", "root/loop_a");
	make_link("loop_a", "root/loop_b");
	make_link("sub", "root/dirlink");
	make_link("../f.txt", "root/sub/up");
	make_link("../../outside.txt", "root/sub/out");
	make_link("fifo", "root/fifo_link");
	make_link("f.txt/", "root/file_slash");
	make_link("../outside", "root/escape_dir");
	/* c0 -> c1 -> ... -> c40 -> f.txt: "c1" takes 40 links, "c0" 41 */
	for (int i = 0; i <= 40; i++) {
		char name[32], to[32];

		snprintf(name, sizeof(name), "root/c%d", i);
		snprintf(to, sizeof(to), i == 40 ? "f.txt" : "c%d", i + 1);
		make_link(to, name);
	}
}

/* True when fd's path (/proc/self/fd) is root_dir or beneath it. */
static bool fd_inside(int fd)
{
	char proc[64], path[PATH_MAX];
	size_t n = strlen(root.path);
	ssize_t len;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	len = readlink(proc, path, sizeof(path) - 1);
	if (len < 0)
		return false;
	path[len] = '\0';
	if (strcmp(root.path, "/") == 0)
		return path[0] == '/';
	return strncmp(path, root.path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Opens path with how (force_walk set to walk) and checks outcome; on OK checks that the fd is
 * inside and of type want_type (S_IFREG, S_IFDIR). */
static void check_at(int dirfd, const char *path, struct tr_confine_how how, bool walk,
		     enum tr_confine want, mode_t want_type, int line)
{
	enum tr_confine got;
	int fd = -2, err = -1;

	how.force_walk = walk;
	got = tr_confined_open(&root, dirfd, path, &how, &fd, &err);
	expect_checks++;
	if (got != want) {
		expect_failures++;
		fprintf(stderr, "%s:%d: %s (%s): %s, expected %s (errno %d)\n", __FILE__, line,
			path, walk ? "walk" : "openat2", tr_confine_strerror(got),
			tr_confine_strerror(want), err);
	}
	if (got == TR_CONFINE_OK) {
		struct stat st;

		EXPECT(fd >= 0);
		EXPECT(fd_inside(fd));
		EXPECT(fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == want_type);
		EXPECT_INT(fcntl(fd, F_GETFL) & O_PATH, O_PATH);
		EXPECT_INT(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		close(fd);
	} else {
		EXPECT_INT(fd, -1);
		if (got != TR_CONFINE_ERROR)
			EXPECT_INT(err, 0);
	}
}

#define CHECK(path, how, want, type)                                  \
	do {                                                          \
		check_at(-1, path, how, false, want, type, __LINE__); \
		check_at(-1, path, how, true, want, type, __LINE__);  \
	} while (0)
#define CHECK_AT(dirfd, path, how, want, type)                           \
	do {                                                             \
		check_at(dirfd, path, how, false, want, type, __LINE__); \
		check_at(dirfd, path, how, true, want, type, __LINE__);  \
	} while (0)

static const struct tr_confine_how inside = {.symlinks = TR_SYMLINKS_INSIDE};
static const struct tr_confine_how inside_reg = {.symlinks = TR_SYMLINKS_INSIDE,
						 .regular_only = true};
static const struct tr_confine_how none = {.symlinks = TR_SYMLINKS_NONE};
static const struct tr_confine_how none_reg = {.symlinks = TR_SYMLINKS_NONE, .regular_only = true};

static void test_root_open(void)
{
	struct tr_root r;
	char given[PATH_MAX * 2];

	snprintf(given, sizeof(given), "%s/alias", base);
	EXPECT_INT(tr_root_open(&r, given), 0);
	EXPECT_STR(r.given, given);
	EXPECT_STR(r.path, root.path);
	EXPECT(r.dev == root.dev && r.ino == root.ino);
	tr_root_close(&r);
	EXPECT_INT(r.fd, -1);
	tr_root_close(&r); /* a cleared root is a no-op */
	EXPECT_INT(tr_root_open(&r, "/nonexistent/dir"), -ENOENT);
	EXPECT_INT(r.fd, -1);
	snprintf(given, sizeof(given), "%s/f.txt", root_dir);
	EXPECT_INT(tr_root_open(&r, given), -ENOTDIR);
	EXPECT(strcmp(tr_confine_strerror(TR_CONFINE_OUTSIDE_ROOT), "outside the root") == 0);
}

static void test_plain(void)
{
	CHECK("f.txt", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("./sub//deeper/./h.txt", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("sub", inside, TR_CONFINE_OK, S_IFDIR);
	CHECK("sub/", inside, TR_CONFINE_OK, S_IFDIR);
	CHECK(".", inside, TR_CONFINE_OK, S_IFDIR);
	CHECK("sub/..", inside, TR_CONFINE_OK, S_IFDIR);
	CHECK("sub", inside_reg, TR_CONFINE_NOT_REGULAR, 0);
	CHECK(".", inside_reg, TR_CONFINE_NOT_REGULAR, 0);
	CHECK("", inside, TR_CONFINE_NOT_FOUND, 0);
	CHECK("missing.txt", inside, TR_CONFINE_NOT_FOUND, 0);
	CHECK("missing/f.txt", inside, TR_CONFINE_NOT_FOUND, 0);
	CHECK("f.txt/x", inside, TR_CONFINE_NOT_FOUND, 0);
	CHECK("f.txt/", inside, TR_CONFINE_NOT_FOUND, 0);
	CHECK("f.txt/.", inside, TR_CONFINE_NOT_FOUND, 0);
	/* a FIFO is only ever opened O_PATH: no reader, so an open for reading would block */
	CHECK("fifo", inside_reg, TR_CONFINE_NOT_REGULAR, 0);
	CHECK("fifo", inside, TR_CONFINE_OK, S_IFIFO);
	CHECK("fifo_link", inside_reg, TR_CONFINE_NOT_REGULAR, 0);
}

static void test_dotdot(void)
{
	int sub = openat(root.fd, "sub", O_PATH | O_DIRECTORY | O_CLOEXEC);

	CHECK("sub/../f.txt", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("sub/deeper/../../f.txt", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("..", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("../outside.txt", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("../root/f.txt", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("sub/../../outside.txt", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("missing/../f.txt", inside, TR_CONFINE_NOT_FOUND, 0);
	/* from a directory beneath the root: ".." above it is still inside */
	CHECK_AT(sub, "../f.txt", inside, TR_CONFINE_OK, S_IFREG);
	CHECK_AT(sub, "g.txt", inside, TR_CONFINE_OK, S_IFREG);
	CHECK_AT(sub, "up", inside, TR_CONFINE_OK, S_IFREG);
	CHECK_AT(sub, "../../outside.txt", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK_AT(sub, "out", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	close(sub);
}

static void test_absolute(void)
{
	char path[PATH_MAX * 3];

	snprintf(path, sizeof(path), "%s/f.txt", root.path);
	CHECK(path, inside, TR_CONFINE_OK, S_IFREG);
	snprintf(path, sizeof(path), "/%s/./sub//g.txt", root.path);
	CHECK(path, inside, TR_CONFINE_OK, S_IFREG);
	snprintf(path, sizeof(path), "%s/alias/sub/g.txt", base); /* the given spelling */
	{
		struct tr_root saved = root;
		char given[PATH_MAX * 2];

		snprintf(given, sizeof(given), "%s/alias", base);
		root.given = given;
		CHECK(path, inside, TR_CONFINE_OK, S_IFREG);
		CHECK("in_abs_given", inside, TR_CONFINE_OK, S_IFREG);
		root = saved;
	}
	/* without the alias as the root's given name it is another path, outside */
	CHECK(path, inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("in_abs_given", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	snprintf(path, sizeof(path), "%s", root.path);
	CHECK(path, inside, TR_CONFINE_OK, S_IFDIR);
	snprintf(path, sizeof(path), "%s/../outside.txt", root.path);
	CHECK(path, inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	snprintf(path, sizeof(path), "%s/outside.txt", base);
	CHECK(path, inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	snprintf(path, sizeof(path), "%sx/f.txt", root.path); /* a sibling sharing the prefix */
	CHECK(path, inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("/etc/hostname", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("/", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
}

static void test_links(void)
{
	CHECK("in_rel", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("in_abs", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("dotdot_in", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("dirlink/g.txt", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("dirlink", inside, TR_CONFINE_OK, S_IFDIR);
	CHECK("dirlink/", inside, TR_CONFINE_OK, S_IFDIR);
	CHECK("dirlink/../f.txt", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("sub/up", inside, TR_CONFINE_OK, S_IFREG);
	CHECK("out_rel", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("out_abs", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("out_etc", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("dotdot_out", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("sub/out", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("escape_dir/secret.txt", inside, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("dangling", inside, TR_CONFINE_NOT_FOUND, 0);
	CHECK("dangling_dir", inside, TR_CONFINE_NOT_FOUND, 0);
	CHECK("in_rel/", inside, TR_CONFINE_NOT_FOUND, 0);
	CHECK("file_slash", inside, TR_CONFINE_NOT_FOUND, 0);
	CHECK("loop_a", inside, TR_CONFINE_LOOP, 0);
	CHECK("loop_a/x", inside, TR_CONFINE_LOOP, 0);
	CHECK("c1", inside, TR_CONFINE_OK, S_IFREG); /* 40 links */
	CHECK("c0", inside, TR_CONFINE_LOOP, 0);     /* 41 */
	CHECK("in_abs", inside_reg, TR_CONFINE_OK, S_IFREG);
	CHECK("dirlink", inside_reg, TR_CONFINE_NOT_REGULAR, 0);
}

/* TR_SYMLINKS_NONE: a link anywhere is NOT_REGULAR, whatever its target; never OUTSIDE_ROOT. */
static void test_no_links(void)
{
	CHECK("f.txt", none, TR_CONFINE_OK, S_IFREG);
	CHECK("sub/g.txt", none, TR_CONFINE_OK, S_IFREG);
	CHECK("sub", none, TR_CONFINE_OK, S_IFDIR);
	CHECK("in_rel", none, TR_CONFINE_NOT_REGULAR, 0);
	CHECK("in_rel", none_reg, TR_CONFINE_NOT_REGULAR, 0);
	CHECK("dirlink/g.txt", none, TR_CONFINE_NOT_REGULAR, 0);
	CHECK("out_abs", none, TR_CONFINE_NOT_REGULAR, 0);
	CHECK("escape_dir/secret.txt", none, TR_CONFINE_NOT_REGULAR, 0);
	CHECK("dangling", none, TR_CONFINE_NOT_REGULAR, 0);
	CHECK("loop_a", none, TR_CONFINE_NOT_REGULAR, 0);
	CHECK("../outside.txt", none, TR_CONFINE_OUTSIDE_ROOT, 0);
	CHECK("missing", none, TR_CONFINE_NOT_FOUND, 0);
	CHECK("fifo", none_reg, TR_CONFINE_NOT_REGULAR, 0);
}

/* avoid_dev: another file system mounted inside the tree stands in for the daemon's own mount.
 * "/" as the root holds /proc, which is always a file system of its own. */
static void test_avoid_dev(void)
{
	struct tr_root saved = root;
	struct tr_confine_how how = {.symlinks = TR_SYMLINKS_INSIDE};
	struct stat proc_st, etc_st;
	int fd, err;

	if (stat("/proc/self", &proc_st) < 0 || stat("/etc", &etc_st) < 0 ||
	    proc_st.st_dev == etc_st.st_dev) {
		fprintf(stderr, "test_avoid_dev: skipped, /proc is no file system of its own\n");
		return;
	}
	EXPECT_INT(tr_root_open(&root, "/"), 0);
	how.avoid_dev = proc_st.st_dev;
	CHECK("proc/self/status", how, TR_CONFINE_OWN_MOUNT, 0);
	CHECK("proc", how, TR_CONFINE_OWN_MOUNT, 0);
	CHECK("/proc/self", how, TR_CONFINE_OWN_MOUNT, 0);
	CHECK("etc", how, TR_CONFINE_OK, S_IFDIR);
	how.avoid_dev = 0;
	CHECK("proc/self/status", how, TR_CONFINE_OK, S_IFREG);
	tr_root_close(&root);
	root = saved;
	/* the tree's own device: not even the start is used */
	how.avoid_dev = root.dev;
	CHECK("f.txt", how, TR_CONFINE_OWN_MOUNT, 0);
	fd = -2;
	EXPECT_INT(tr_confined_open(&root, -1, "sub/g.txt", &how, &fd, &err), TR_CONFINE_OWN_MOUNT);
	EXPECT_INT(fd, -1);
}

static void test_reopen(void)
{
	int opath = -1, fd, err;
	char buf[16] = "";

	EXPECT_INT(tr_confined_open(&root, -1, "f.txt", &inside_reg, &opath, &err), TR_CONFINE_OK);
	fd = tr_reopen(opath, O_RDONLY | O_NOFOLLOW);
	EXPECT(fd >= 0);
	if (fd >= 0) {
		EXPECT_INT(read(fd, buf, sizeof(buf) - 1), 7);
		EXPECT_STR(buf, "inside\n");
		EXPECT_INT(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		close(fd);
	}
	EXPECT_INT(tr_reopen(opath, O_RDONLY | O_CREAT), -EINVAL);
	close(opath);
	EXPECT_INT(tr_confined_open(&root, -1, "in_rel", &none, &opath, &err),
		   TR_CONFINE_NOT_REGULAR);
	opath = openat(root.fd, "in_rel", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	EXPECT_INT(tr_reopen(opath, O_RDONLY), -ELOOP);
	close(opath);
	EXPECT_INT(tr_reopen(-1, O_RDONLY), -EBADF);
}

/* A link swapped between a target inside and one outside while it is opened: an fd is always
 * inside, and the outcome is OK or OUTSIDE_ROOT. The same for a directory swapped with a link
 * to a directory outside, and a dangling link whose target appears and goes. */
struct swapper {
	volatile bool stop;
	char link[PATH_MAX * 2], tmp[PATH_MAX * 2];
	char dir[PATH_MAX * 2];
	char out_target[PATH_MAX * 2];
};

static void *swap_links(void *arg)
{
	struct swapper *s = arg;

	for (unsigned i = 0; !s->stop; i++) {
		unlink(s->tmp);
		if (symlink(i & 1 ? "f.txt" : s->out_target, s->tmp) == 0)
			rename(s->tmp, s->link);
		/* a directory inside and a link outside under one name */
		if (i & 1) {
			unlink(s->dir);
			mkdir(s->dir, 0755);
		} else {
			rmdir(s->dir);
			symlink("../outside", s->dir);
		}
	}
	return NULL;
}

static void test_swaps(void)
{
	struct swapper s = {.stop = false};
	pthread_t thread;
	int counts[2][TR_CONFINE_ERROR + 1] = {{0}};

	snprintf(s.link, sizeof(s.link), "%s/swap", root_dir);
	snprintf(s.tmp, sizeof(s.tmp), "%s/swap.tmp", root_dir);
	snprintf(s.dir, sizeof(s.dir), "%s/swapdir", root_dir);
	snprintf(s.out_target, sizeof(s.out_target), "%s/outside.txt", base);
	make_file("outside/g.txt", "secret\n");
	if (pthread_create(&thread, NULL, swap_links, &s) != 0)
		return;
	for (int i = 0; i < 20000; i++) {
		struct tr_confine_how how = {.symlinks = TR_SYMLINKS_INSIDE, .force_walk = i & 1};
		const char *path = i & 2 ? "swap" : "swapdir/g.txt";
		enum tr_confine got;
		int fd, err;

		got = tr_confined_open(&root, -1, path, &how, &fd, &err);
		counts[i & 1][got]++;
		if (got == TR_CONFINE_OK) {
			expect_checks++;
			if (!fd_inside(fd)) {
				expect_failures++;
				fprintf(stderr, "%s:%d: %s opened outside the root\n", __FILE__,
					__LINE__, path);
			}
			close(fd);
		}
	}
	s.stop = true;
	pthread_join(thread, NULL);
	for (int w = 0; w < 2; w++)
		fprintf(stderr,
			"test_swaps (%s): ok %d, outside %d, not found %d, loop %d, error %d\n",
			w ? "walk" : "openat2", counts[w][TR_CONFINE_OK],
			counts[w][TR_CONFINE_OUTSIDE_ROOT], counts[w][TR_CONFINE_NOT_FOUND],
			counts[w][TR_CONFINE_LOOP], counts[w][TR_CONFINE_ERROR]);
	EXPECT_INT(counts[0][TR_CONFINE_ERROR] + counts[1][TR_CONFINE_ERROR], 0);
}

static void remove_tree(void)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", base);
}

int main(void)
{
	make_tree();
	if (tr_root_open(&root, root_dir) < 0) {
		perror(root_dir);
		return 1;
	}
	test_root_open();
	test_plain();
	test_dotdot();
	test_absolute();
	test_links();
	test_no_links();
	test_avoid_dev();
	test_reopen();
	test_swaps();
	tr_root_close(&root);
	remove_tree();
	return EXPECT_DONE();
}
