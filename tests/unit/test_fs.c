/* SPDX-License-Identifier: MIT */
/* test_fs.c - unit tests of the daemon's FUSE-free parts: the document cache, the virtual name
 * grammar over a real directory, confined symlink resolution, and the watch thread's queue. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "expect.h"
#include "htab.h"
#include "names.h"
#include "tr_confine.h"
#include "watch_queue.h"

static struct tr_doc *doc_of_size(size_t n)
{
	struct tr_doc *doc = tr_doc_new();
	char *bytes = calloc(1, n ? n : 1);

	tr_doc_append(doc, bytes, n);
	free(bytes);
	return doc;
}

static struct tfs_doc_key key_for(const char *path, off_t size)
{
	struct tfs_doc_key key = {.version = {.dev = 1, .ino = 2, .size = size},
				  .path = (char *)path};

	key.version.mtime.tv_sec = 100;
	key.version.ctime.tv_nsec = 5;
	return key;
}

static void test_cache(void)
{
	struct tfs_cache *cache = tfs_cache_new(100);
	struct tfs_doc_key a = key_for("a", 1), b = key_for("b", 1), c = key_for("c", 1);
	struct tr_doc *da = doc_of_size(40), *db = doc_of_size(40), *dc = doc_of_size(40);
	struct tr_doc *big = doc_of_size(101), *got;

	EXPECT(tfs_cache_put(cache, &a, da));
	EXPECT(tfs_cache_put(cache, &b, db));
	got = tfs_cache_get(cache, &a); /* a becomes the most recent */
	EXPECT(got == da);
	tr_doc_unref(got);
	EXPECT(tfs_cache_put(cache, &c, dc)); /* 120 > 100: evicts b, the least recent */
	got = tfs_cache_get(cache, &b);
	EXPECT(got == NULL);
	got = tfs_cache_get(cache, &a);
	EXPECT(got == da);
	tr_doc_unref(got);
	got = tfs_cache_get(cache, &c);
	EXPECT(got == dc);
	tr_doc_unref(got);
	EXPECT(!tfs_cache_put(cache, &b, big)); /* larger than the whole cache */
	EXPECT(tfs_cache_get(cache, &b) == NULL);

	/* Every field of the key counts. */
	struct tfs_doc_key other = a;
	other.version.mtime.tv_nsec = 1;
	EXPECT(tfs_cache_get(cache, &other) == NULL);
	other = a;
	other.sel.present = true;
	other.sel.start = 1;
	EXPECT(tfs_cache_get(cache, &other) == NULL);
	other = a;
	other.unstable = 7;
	EXPECT(tfs_cache_get(cache, &other) == NULL);
	other = a;
	other.path = "a2";
	EXPECT(tfs_cache_get(cache, &other) == NULL);
	other = a;
	other.path = strdup("a"); /* equal by value, not by pointer */
	got = tfs_cache_get(cache, &other);
	EXPECT(got == da);
	tr_doc_unref(got);
	free(other.path);

	/* Replacing a key drops the old document. */
	EXPECT(tfs_cache_put(cache, &a, db));
	got = tfs_cache_get(cache, &a);
	EXPECT(got == db);
	tr_doc_unref(got);

	tfs_cache_free(cache);

	/* A new version of a name supersedes the cached ones (another source state, same path,
	 * selector and format): they stay readable but are the first to be evicted, before even
	 * older entries of other names. */
	cache = tfs_cache_new(100);
	struct tfs_doc_key a_next = a;
	a_next.version.mtime.tv_sec = 101;
	a_next.version.size = 2;
	EXPECT(tfs_cache_put(cache, &a, da));
	EXPECT(tfs_cache_put(cache, &b, db));
	EXPECT(tfs_cache_put(cache, &a_next, da)); /* 120 > 100: evicts a (superseded), not b */
	EXPECT(tfs_cache_get(cache, &a) == NULL);
	got = tfs_cache_get(cache, &b);
	EXPECT(got == db);
	tr_doc_unref(got);
	got = tfs_cache_get(cache, &a_next);
	EXPECT(got == da);
	tr_doc_unref(got);
	struct tfs_doc_key c_next = c;
	c_next.version.ctime.tv_sec = 9;
	EXPECT(tfs_cache_put(cache, &c, dc)); /* room: b goes (least recent), a_next stays */
	EXPECT(tfs_cache_put(cache, &c_next,
			     dc)); /* c is superseded: it goes before older a_next */
	EXPECT(tfs_cache_get(cache, &c) == NULL);
	got = tfs_cache_get(cache, &a_next);
	EXPECT(got == da);
	tr_doc_unref(got);
	tfs_cache_free(cache);

	/* Large superseded versions (an image's base64) are dropped at once. */
	struct tr_doc *large = doc_of_size(4u << 20), *large_next = doc_of_size(5u << 20);

	cache = tfs_cache_new(64u << 20);
	EXPECT(tfs_cache_put(cache, &a, large));
	EXPECT(tfs_cache_put(cache, &a_next, large_next));
	EXPECT(tfs_cache_get(cache, &a) == NULL);
	got = tfs_cache_get(cache, &a_next);
	EXPECT(got == large_next);
	tr_doc_unref(got);
	tr_doc_unref(large);
	tr_doc_unref(large_next);

	tfs_cache_free(cache);
	tr_doc_unref(da);
	tr_doc_unref(db);
	tr_doc_unref(dc);
	tr_doc_unref(big);
}

static char tmp_root[PATH_MAX];

static void touch(const char *rel)
{
	char path[PATH_MAX * 2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	EXPECT(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static void link_to(const char *target, const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
	EXPECT(symlink(target, path) == 0);
}

static void make_dir(const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
	EXPECT(mkdir(path, 0755) == 0);
}

/* A 245-byte and a 255-byte file name, the longest NAMEs whose next, resp. default sibling,
 * is longer than NAME_MAX. */
static char long_names[2][NAME_MAX + 1];

static void test_names(int root_fd)
{
	struct tr_options opts;
	struct tfs_sibling_name n;

	tr_options_init(&opts);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "a.txt.tool.json", &opts, &n), 0);
	EXPECT_INT(n.base_len, 5);
	EXPECT(!n.sel.present);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "a.txt:3-9.tool.json", &opts, &n), 0);
	EXPECT_INT(n.base_len, 5);
	EXPECT(n.sel.present && n.sel.start == 3 && n.sel.end == 9);
	/* The whole NAME[:SEL] is a real file first. */
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "notes:3.tool.json", &opts, &n), 0);
	EXPECT_INT(n.base_len, 7);
	EXPECT(!n.sel.present);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "notes:4.tool.json", &opts, &n), 0);
	EXPECT_INT(n.base_len, 5);
	EXPECT(n.sel.present && n.sel.start == 4);
	/* Without a selector NAME is not looked at: the lookup's resolve of it answers ENOENT for
	 * one missing, a directory, a FIFO, or a bad selector taken as part of NAME
	 * (tests/mount/test_mount.py: test_no_sibling_for_directories_and_fifos,
	 * test_unparseable_or_unknown_names_are_enoent). */
	{
		static const char *const whole[] = {"missing", "dir", "fifo", "a.txt:0x",
						    "a.txt:5-2"};
		char name[64];

		for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
			snprintf(name, sizeof(name), "%s.tool.json", whole[i]);
			EXPECT_INT(tfs_name_parse_sibling(root_fd, name, &opts, &n), 0);
			EXPECT_INT(n.base_len, strlen(whole[i]));
			EXPECT(!n.sel.present);
		}
	}
	/* A time with a colon splits off NAME ("notes", 90-100 s); where that NAME is not there,
	 * the selector after the last colon does ("log:1", lines 30-100). */
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "notes:1:30-100.tool.json", &opts, &n), 0);
	EXPECT_INT(n.base_len, 5);
	EXPECT(n.sel.present && n.sel.time);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "log:1:30-100.tool.json", &opts, &n), 0);
	EXPECT_INT(n.base_len, 5);
	EXPECT(n.sel.present && !n.sel.time && n.sel.start == 30 && n.sel.end == 100);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "log:1:30-1:40.tool.json", &opts, &n), -ENOENT);
	/* With one, the NAME it splits off must be an entry with a sibling. */
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "a.txt:1:60.tool.json", &opts, &n), -ENOENT);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "dir:2.tool.json", &opts, &n), -ENOENT);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "missing:2.tool.json", &opts, &n), -ENOENT);
	/* Provider formats resolve; unknown ones do not. */
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "a.txt.tool.anthropic.json", &opts, &n), 0);
	EXPECT_INT(n.fmt, TR_FORMAT_ANTHROPIC);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "a.txt:2.tool.mcp.json", &opts, &n), 0);
	EXPECT_INT(n.fmt, TR_FORMAT_MCP);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "a.txt:2-4.tool.txt", &opts, &n), 0);
	EXPECT_INT(n.fmt, TR_FORMAT_TXT);
	EXPECT_INT(n.base_len, 5);
	EXPECT_INT(n.sel.start, 2);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "a.txt.tool.yaml.json", &opts, &n), -ENOENT);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "a.txt", &opts, &n), -ENOENT);
	/* Names longer than NAME_MAX: a next of a 245-byte NAME, any sibling of a 255-byte one; a
	 * whole NAME[:SEL] that long is no entry (ENAMETOOLONG), so the selector is split off. */
	{
		char name[NAME_MAX + 128];

		snprintf(name, sizeof(name), "%.245s:4001-5000.tool.json", long_names[0]);
		EXPECT(strlen(name) > NAME_MAX);
		EXPECT_INT(tfs_name_parse_sibling(root_fd, name, &opts, &n), 0);
		EXPECT_INT(n.base_len, 245);
		EXPECT(n.sel.present && n.sel.start == 4001 && n.sel.end == 5000);
		snprintf(name, sizeof(name), "%.255s.tool.json", long_names[1]);
		EXPECT_INT(tfs_name_parse_sibling(root_fd, name, &opts, &n), 0);
		EXPECT_INT(n.base_len, 255);
		EXPECT(!n.sel.present);
		snprintf(name, sizeof(name),
			 "%.255s:18446744073709551615.18446744073709551615-"
			 ".tool.anthropic.json",
			 long_names[1]);
		EXPECT_INT(tfs_name_parse_sibling(root_fd, name, &opts, &n), 0);
		EXPECT_INT(n.base_len, 255);
		EXPECT_INT(n.fmt, TR_FORMAT_ANTHROPIC);
		EXPECT(n.sel.column == UINT64_MAX);
		name[0] = 'z'; /* no such source */
		EXPECT_INT(tfs_name_parse_sibling(root_fd, name, &opts, &n), -ENOENT);
	}
	/* Symlinks get siblings unless symlinks=none. */
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "rel.tool.json", &opts, &n), 0);
	EXPECT(tfs_name_has_sibling(S_IFLNK, &opts));
	EXPECT_INT(tr_options_set(&opts, "symlinks", "none"), 0);
	EXPECT_INT(tfs_name_parse_sibling(root_fd, "rel:1.tool.json", &opts, &n), -ENOENT);
	EXPECT(!tfs_name_has_sibling(S_IFLNK, &opts));
	EXPECT(tfs_name_has_sibling(S_IFREG, &opts));
	EXPECT(!tfs_name_has_sibling(S_IFDIR, &opts));
	EXPECT(!tfs_name_has_sibling(S_IFIFO, &opts));
}

/* Follows the symlink dir/name as the daemon follows a sibling's link (tr_confined_open from the
 * link's directory, by its name) and checks the outcome; for TR_CONFINE_OK, that the target is
 * the entry expect (relative to the root). */
static void check_follow(const struct tr_root *root, const char *dir, const char *name,
			 enum tr_confine want, const char *expect)
{
	struct tr_confine_how how = {.symlinks = TR_SYMLINKS_INSIDE};
	int dirfd = openat(root->fd, dir, O_PATH | O_DIRECTORY);
	int target = -1, err = 0;
	enum tr_confine got = tr_confined_open(root, dirfd, name, &how, &target, &err);

	if (got != want)
		fprintf(stderr, "follow %s/%s: got %d, want %d (errno %d)\n", dir, name, got, want,
			err);
	EXPECT_INT(got, want);
	if (got == TR_CONFINE_OK && expect) {
		struct stat a, b;

		EXPECT(fstat(target, &a) == 0);
		EXPECT(fstatat(root->fd, expect, &b, AT_SYMLINK_NOFOLLOW) == 0);
		EXPECT(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	}
	if (got != TR_CONFINE_OK)
		EXPECT_INT(target, -1);
	if (target >= 0)
		close(target);
	close(dirfd);
}

static void test_follow(void)
{
	char alias[PATH_MAX * 2];
	struct tr_root root;

	/* SOURCE as given on the command line: here through a symlink to it. */
	snprintf(alias, sizeof(alias), "%s-alias", tmp_root);
	EXPECT_INT(tr_root_open(&root, alias), 0);

	check_follow(&root, ".", "rel", TR_CONFINE_OK, "a.txt");
	check_follow(&root, "dir", "up", TR_CONFINE_OK, "a.txt");
	check_follow(&root, "dir", "chain", TR_CONFINE_OK, "a.txt");
	check_follow(&root, ".", "abs", TR_CONFINE_OK, "dir/b.txt");
	check_follow(&root, ".", "abs_spelled", TR_CONFINE_OK, "a.txt");
	check_follow(&root, ".", "abs_via_alias", TR_CONFINE_OK, "dir/b.txt");
	check_follow(&root, ".", "abs_root", TR_CONFINE_OK, ".");
	check_follow(&root, ".", "to_dir", TR_CONFINE_OK, "dir");
	check_follow(&root, ".", "dir_dotdot", TR_CONFINE_OK, ".");
	check_follow(&root, ".", "outside_abs", TR_CONFINE_OUTSIDE_ROOT, NULL);
	check_follow(&root, ".", "outside_rel", TR_CONFINE_OUTSIDE_ROOT, NULL);
	check_follow(&root, "dir", "escape", TR_CONFINE_OUTSIDE_ROOT, NULL);
	check_follow(&root, ".", "dangling", TR_CONFINE_NOT_FOUND, NULL);
	check_follow(&root, ".", "through_file", TR_CONFINE_NOT_FOUND, NULL);
	check_follow(&root, ".", "loop1", TR_CONFINE_LOOP, NULL);
	check_follow(&root, ".", "self", TR_CONFINE_LOOP, NULL);
	tr_root_close(&root);
}

/* Events for one entry and inode make one job however they interleave with others (a rewrite
 * storm over many files queued 36,000 jobs, each holding its inodes, while the thread ran the
 * previous batch); distinct ones keep their first event's order, flags are or-ed. */
static void test_watch_queue(void)
{
	static char inodes[3000]; /* stand-ins: the queue compares inode addresses only */
	struct tfs_inode *dir = (struct tfs_inode *)&inodes[0], *a = (struct tfs_inode *)&inodes[1],
			 *b = (struct tfs_inode *)&inodes[2];
	struct tfs_job_queue q = {0};
	char name[32];
	struct tfs_job *jobs;
	size_t n;

	for (int round = 0; round < 1000; round++) {
		for (int k = 0; k < 8; k++) {
			struct tfs_job job = {dir, NULL, k % 2 ? a : b, false, false, false};

			snprintf(name, sizeof(name), "hot%d.txt", k);
			job.name = strdup(name);
			job.name_gone = round == 500 && k == 3;
			if (!tfs_job_queue_add(&q, &job))
				free(job.name);
			job = (struct tfs_job){dir, NULL, NULL, true, false, false};
			EXPECT(tfs_job_queue_add(&q, &job) == (round == 0 && k == 0));
			job = (struct tfs_job){dir, NULL, a, false, round == 999, false};
			EXPECT(tfs_job_queue_add(&q, &job) == (round == 0 && k == 0));
		}
	}
	jobs = tfs_job_queue_take(&q, &n);
	EXPECT_INT(n, 10);
	EXPECT_INT(q.n, 0);
	EXPECT(strcmp(jobs[0].name, "hot0.txt") == 0 && jobs[0].child == b);
	EXPECT(!jobs[1].name && !jobs[1].child && jobs[1].dir_attrs);
	EXPECT(!jobs[2].name && jobs[2].child == a && jobs[2].moved && !jobs[2].dir_attrs);
	EXPECT(strcmp(jobs[3].name, "hot1.txt") == 0 && jobs[3].child == a);
	EXPECT(strcmp(jobs[9].name, "hot7.txt") == 0);
	for (size_t i = 0; i < n; i++)
		EXPECT(jobs[i].name_gone ==
		       (jobs[i].name && strcmp(jobs[i].name, "hot3.txt") == 0));
	for (size_t i = 0; i < n; i++)
		free(jobs[i].name);
	free(jobs);
	/* Same name, other inode: another job (the kernel may know both). */
	for (int k = 0; k < 3000; k++) {
		struct tfs_job job = {dir,   NULL,  (struct tfs_inode *)&inodes[k],
				      false, false, false};

		EXPECT(tfs_job_queue_add(&q, &job));
	}
	jobs = tfs_job_queue_take(&q, &n);
	EXPECT_INT(n, 3000);
	EXPECT(jobs[2999].child == (struct tfs_inode *)&inodes[2999]);
	free(jobs);
	EXPECT(!tfs_job_queue_take(&q, &n) && n == 0);
}

struct item {
	struct tfs_hnode link;
	int key;
};

static uint64_t item_hash(const struct tfs_hnode *node)
{
	return (uint64_t)tfs_hnode_entry(node, const struct item, link)->key % 7; /* long chains */
}

static struct item *item_find(const struct tfs_htab *h, int key)
{
	for (struct tfs_hnode *n = tfs_htab_chain(h, (uint64_t)key % 7); n; n = n->next) {
		struct item *it = tfs_hnode_entry(n, struct item, link);

		if (it->key == key)
			return it;
	}
	return NULL;
}

/* The intrusive table behind every index of the daemon: it grows past its buckets, finds each
 * node, iterates each once, and removes only what it holds. */
static void test_htab(void)
{
	enum { N = 100 };
	struct item items[N];
	struct tfs_htab h;
	struct tfs_hnode *n;
	size_t bucket = 0, seen = 0;
	long sum = 0;

	EXPECT_INT(tfs_htab_init(&h, 4, item_hash), 0);
	for (int i = 0; i < N; i++) {
		items[i].key = i;
		tfs_htab_insert(&h, &items[i].link, (uint64_t)i % 7);
	}
	EXPECT_INT(h.count, N);
	EXPECT(h.n_buckets >= N); /* doubled while the nodes outnumbered the buckets */
	for (int i = 0; i < N; i++)
		EXPECT(item_find(&h, i) == &items[i]);
	for (n = tfs_htab_next(&h, &bucket, NULL); n; n = tfs_htab_next(&h, &bucket, n)) {
		seen++;
		sum += tfs_hnode_entry(n, struct item, link)->key;
	}
	EXPECT_INT(seen, N);
	EXPECT_INT(sum, N * (N - 1) / 2);
	EXPECT(tfs_htab_remove(&h, &items[42].link, 42 % 7));
	EXPECT(!tfs_htab_remove(&h, &items[42].link, 42 % 7));
	EXPECT(item_find(&h, 42) == NULL && item_find(&h, 43) == &items[43]);
	EXPECT_INT(h.count, N - 1);
	tfs_htab_destroy(&h);
}

/* Pins: a pinned entry the cache evicts stays alive (its document readable through it, no
 * longer found by key) until its last unpin; a document larger than the whole cache is admitted
 * pinned only. The frees are checked by the ASan build (no leak, no use after free). */
static void test_cache_pins(void)
{
	struct tfs_cache *cache = tfs_cache_new(100);
	struct tfs_doc_key a = key_for("a", 1), b = key_for("b", 1), c = key_for("c", 1);
	struct tr_doc *da = doc_of_size(40), *db = doc_of_size(40), *dc = doc_of_size(40);
	struct tr_doc *big = doc_of_size(101), *got;
	struct tfs_cache_entry *ea, *again, *ebig;
	bool cached = false;

	ea = tfs_cache_put_pinned(cache, &a, da, &cached);
	EXPECT(ea && cached && tfs_cache_entry_doc(ea) == da);
	again = tfs_cache_get_pinned(cache, &a, &got);
	EXPECT(again == ea && got == da);
	tr_doc_unref(got);
	EXPECT(tfs_cache_get_pinned(cache, &b, &got) == NULL && got == NULL);
	EXPECT(tfs_cache_put(cache, &b, db));
	EXPECT(tfs_cache_put(cache, &c, dc)); /* 120 > 100: evicts a, the least recent, pinned */
	EXPECT(tfs_cache_get(cache, &a) == NULL);
	EXPECT(tfs_cache_entry_doc(ea) == da);
	tfs_cache_unpin(again);
	EXPECT(tfs_cache_entry_doc(ea) == da); /* one pin left */
	/* Evicted, it no longer counts against the capacity: b and c stay with a 20-byte put. */
	struct tfs_doc_key d = key_for("d", 1);
	struct tr_doc *dd = doc_of_size(20);

	EXPECT(tfs_cache_put(cache, &d, dd));
	got = tfs_cache_get(cache, &b);
	EXPECT(got == db);
	tr_doc_unref(got);
	tfs_cache_unpin(ea); /* the last: the entry goes */
	EXPECT(tfs_cache_get(cache, &a) == NULL);

	/* Pinned only: never found by key, never counted, gone at the last unpin. */
	ebig = tfs_cache_put_pinned(cache, &a, big, &cached);
	EXPECT(ebig && !cached && tfs_cache_entry_doc(ebig) == big);
	EXPECT(tfs_cache_get(cache, &a) == NULL);
	got = tfs_cache_get(cache, &c);
	EXPECT(got == dc);
	tr_doc_unref(got);
	tfs_cache_pin(ebig);
	tfs_cache_unpin(ebig);
	EXPECT(tfs_cache_entry_doc(ebig) == big);
	tfs_cache_unpin(ebig);
	tfs_cache_unpin(NULL);

	/* A pinned entry replaced by an equal key stays with its document. */
	ea = tfs_cache_put_pinned(cache, &a, da, &cached);
	EXPECT(tfs_cache_put(cache, &a, db));
	EXPECT(tfs_cache_entry_doc(ea) == da);
	got = tfs_cache_get(cache, &a);
	EXPECT(got == db);
	tr_doc_unref(got);
	tfs_cache_unpin(ea);

	tfs_cache_free(cache);
	tr_doc_unref(da);
	tr_doc_unref(db);
	tr_doc_unref(dc);
	tr_doc_unref(dd);
	tr_doc_unref(big);
}

int main(void)
{
	char path[PATH_MAX * 2];
	int root_fd;

	test_cache();
	test_cache_pins();
	test_watch_queue();
	test_htab();

	snprintf(tmp_root, sizeof(tmp_root), "%s/toolfs-unit-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return 1;
	}
	touch("a.txt");
	touch("notes");
	touch("notes:3");
	touch("log:1"); /* and no "log" */
	memset(long_names[0], 'L', 241);
	strcpy(long_names[0] + 241, ".txt");
	memset(long_names[1], 'M', 251);
	strcpy(long_names[1] + 251, ".txt");
	touch(long_names[0]);
	touch(long_names[1]);
	make_dir("dir");
	touch("dir/b.txt");
	snprintf(path, sizeof(path), "%s/fifo", tmp_root);
	EXPECT(mkfifo(path, 0644) == 0);
	link_to("a.txt", "rel");
	link_to("../a.txt", "dir/up");
	link_to("up", "dir/chain");
	snprintf(path, sizeof(path), "%s/dir/b.txt", tmp_root);
	link_to(path, "abs");
	{
		char *real = realpath(tmp_root, NULL);

		snprintf(path, sizeof(path), "//%s/./a.txt", real);
		free(real);
	}
	link_to(path, "abs_spelled");
	snprintf(path, sizeof(path), "%s-alias", tmp_root);
	EXPECT(symlink(tmp_root, path) == 0);
	snprintf(path, sizeof(path), "%s-alias/dir/b.txt", tmp_root);
	link_to(path, "abs_via_alias");
	link_to(tmp_root, "abs_root");
	link_to("dir", "to_dir");
	link_to("dir/..", "dir_dotdot");
	link_to("/etc/passwd", "outside_abs");
	link_to("../x", "outside_rel");
	link_to("../../x", "dir/escape");
	link_to("missing", "dangling");
	link_to("a.txt/x", "through_file");
	link_to("loop2", "loop1");
	link_to("loop1", "loop2");
	link_to("self", "self");

	root_fd = open(tmp_root, O_PATH | O_DIRECTORY);
	test_names(root_fd);
	test_follow();
	close(root_fd);

	char cleanup[PATH_MAX * 3];

	snprintf(cleanup, sizeof(cleanup), "rm -rf '%s' '%s-alias'", tmp_root, tmp_root);
	if (system(cleanup) != 0)
		fprintf(stderr, "could not remove %s\n", tmp_root);
	return EXPECT_DONE();
}
