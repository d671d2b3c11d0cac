/* SPDX-License-Identifier: MIT */
/* test_inodes.c - unit tests of the daemon's inode table: sibling versions, the documents they
 * keep or hold from a lookup to its open, the budget that bounds the holds, the descriptor pool,
 * and the sizes given to the kernel for a regular file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expect.h"
#include "inode.h"

static struct tr_doc *doc_of_size(size_t n)
{
	struct tr_doc *doc = tr_doc_new();
	char *bytes = calloc(1, n);

	tr_doc_append(doc, bytes, n);
	free(bytes);
	return doc;
}

static struct tfs_doc_key key_for(const char *path, off_t size)
{
	struct tfs_doc_key key = {.version = {.dev = 1, .ino = 2, .size = size},
				  .path = (char *)path};

	return key;
}

static struct tfs_cache *cache; /* 200 bytes */

/* Looks up version key of dir with doc, put in the cache (resident when cached, else pinned
 * only), as lookup_sibling does; the caller drops its own reference on doc afterwards, and the
 * pin of the put is let go, as the sibling does. */
static struct tfs_inode *look_up(struct tfs_inodes *tab, const struct tfs_doc_key *key,
				 struct tr_doc *doc, bool cached)
{
	struct stat attr = {.st_mode = S_IFREG | 0444, .st_size = (off_t)tr_doc_size(doc)};
	bool resident = !cached;
	struct tfs_cache_entry *entry = tfs_cache_put_pinned(cache, key, doc, &resident);
	struct tfs_inode *inode;

	EXPECT(entry && resident == cached);
	inode = tfs_inodes_add_sibling(tab, &tab->root, key, &attr, entry, resident);
	tfs_cache_unpin(entry);
	return inode;
}

/* The document inode holds for an open, and the one it keeps pinned (holds.h). */
static struct tr_doc *held(const struct tfs_inodes *tab, const struct tfs_inode *inode)
{
	struct tr_doc *pin;

	return tfs_holds_peek(&tab->holds, inode, &pin);
}

static struct tr_doc *pinned(const struct tfs_inodes *tab, const struct tfs_inode *inode)
{
	struct tr_doc *pin;

	tfs_holds_peek(&tab->holds, inode, &pin);
	return pin;
}

enum { POOL_FILES = 40, POOL_CAP = 8 };

/* Makes the directory dir (a mkdtemp template) holding n empty files f0, f1, ..., and tab over
 * it; returns its O_PATH descriptor, which tab borrows. */
static int temp_tree(char *dir, int n, struct tfs_inodes *tab)
{
	char path[64];
	struct stat st;
	int fd, root_fd;

	EXPECT(mkdtemp(dir) != NULL);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		EXPECT(fd >= 0);
		close(fd);
	}
	root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	EXPECT(fstat(root_fd, &st) == 0);
	EXPECT(tfs_inodes_init(tab, root_fd, &st, 100) == 0);
	return root_fd;
}

/* The descriptor pool: inodes keep their identity without a descriptor (by file handle, or by
 * parent + name when handles is false), at most POOL_CAP unused descriptors stay open, and an
 * inode whose file is gone answers -ESTALE, never another file. */
static void test_descriptor_pool(bool handles)
{
	char dir[] = "/tmp/toolfs-unit-pool-XXXXXX", path[64], moved[64];
	struct tfs_inode *inodes[POOL_FILES];
	struct tfs_inodes tab;
	struct stat st;
	int root_fd, fd;

	root_fd = temp_tree(dir, POOL_FILES, &tab);
	tab.fd_cap = POOL_CAP;
	if (!handles)
		tab.use_handles = false;
	for (int i = 0; i < POOL_FILES; i++) {
		bool created;

		snprintf(path, sizeof(path), "f%d", i);
		fd = openat(root_fd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		EXPECT(fd >= 0 && fstat(fd, &st) == 0);
		EXPECT(tfs_inodes_add_real(&tab, fd, &st, &tab.root, path, NULL, UINT64_MAX,
					   &inodes[i], &created) == 0);
		EXPECT(inodes[i] && created);
		EXPECT(tab.n_fds <= POOL_CAP);
	}
	/* Every inode reopens as itself, however often the pool cycled. */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < POOL_FILES; i++) {
			fd = tfs_inode_fd(&tab, inodes[i]);
			EXPECT(fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == inodes[i]->ino);
			tfs_inode_fd_put(&tab, inodes[i]);
			EXPECT(tab.n_fds <= POOL_CAP);
		}
	}
	/* Renamed: a handle still finds the file; a name does not, and says so. */
	snprintf(path, sizeof(path), "%s/f1", dir);
	snprintf(moved, sizeof(moved), "%s/g1", dir);
	tfs_inode_fd_drop(&tab, inodes[1]);
	EXPECT(rename(path, moved) == 0);
	fd = tfs_inode_fd(&tab, inodes[1]);
	if (tab.use_handles) {
		EXPECT(fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == inodes[1]->ino);
		tfs_inode_fd_put(&tab, inodes[1]);
	} else {
		EXPECT_INT(fd, -ESTALE);
	}
	/* Deleted and recreated under its name: -ESTALE, never the new file. */
	snprintf(path, sizeof(path), "%s/f2", dir);
	tfs_inode_fd_drop(&tab, inodes[2]);
	EXPECT(unlink(path) == 0);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	EXPECT(fd >= 0 && fstat(fd, &st) == 0);
	close(fd);
	fd = tfs_inode_fd(&tab, inodes[2]);
	if (fd >= 0) { /* the new file got the old inode number: it must still be that file */
		struct stat now;

		EXPECT(fstat(fd, &now) == 0 && now.st_ino == inodes[2]->ino);
		tfs_inode_fd_put(&tab, inodes[2]);
	} else {
		EXPECT_INT(fd, -ESTALE);
	}
	for (int i = 0; i < POOL_FILES; i++)
		tfs_inodes_forget(&tab, inodes[i], 1);
	EXPECT_INT(tab.real.count, 0);
	EXPECT_INT(tab.n_fds, 0);
	tfs_inodes_destroy(&tab);
	for (int i = 0; i < POOL_FILES; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		unlink(path);
	}
	unlink(moved);
	rmdir(dir);
}

/* The sizes given to the kernel for a regular file: an open whose descriptor's size is not the
 * one size given since the last such open must invalidate the kernel's attributes (ops.c,
 * open_real), and counts its own size as given from then on. */
static void test_size_given(void)
{
	char dir[] = "/tmp/toolfs-unit-size-XXXXXX", path[64];
	struct tfs_inodes tab;
	struct tfs_inode *inode;
	struct stat st;
	bool created;
	int root_fd, fd;

	root_fd = temp_tree(dir, 1, &tab);
	fd = openat(root_fd, "f0", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	EXPECT(fd >= 0 && fstat(fd, &st) == 0);
	EXPECT(tfs_inodes_add_real(&tab, fd, &st, &tab.root, "f0", NULL, UINT64_MAX, &inode,
				   &created) == 0);
	EXPECT(inode && created);

	EXPECT(tfs_inodes_open_size_stale(&tab, inode, 10)); /* nothing given yet */
	EXPECT(!tfs_inodes_open_size_stale(&tab, inode, 10));
	tfs_inodes_gave_attrs(&tab, inode, 10, 0);
	EXPECT(!tfs_inodes_open_size_stale(&tab, inode, 10));
	EXPECT(tfs_inodes_open_size_stale(&tab, inode, 20)); /* rewritten in place */
	tfs_inodes_gave_attrs(&tab, inode, 20, 0);
	EXPECT(!tfs_inodes_open_size_stale(&tab, inode, 20));
	/* Two sizes given: the kernel keeps whichever reply came first. */
	tfs_inodes_gave_attrs(&tab, inode, 30, 0);
	tfs_inodes_gave_attrs(&tab, inode, 20, 0);
	EXPECT(tfs_inodes_open_size_stale(&tab, inode, 20));
	EXPECT(!tfs_inodes_open_size_stale(&tab, inode, 20));

	/* Attributes cached (cache=relaxed) until a change event names the file; then none for
	 * TFS_FILE_HOT_MS, and the watch invalidates only what a reply gave with a timeout. */
	EXPECT(!tfs_inodes_take_long_attrs(&tab, inode));
	EXPECT(tfs_inodes_gave_attrs(&tab, inode, 20, 300) == 300);
	tfs_inodes_file_changed(&tab, inode);
	EXPECT(tfs_inodes_take_long_attrs(&tab, inode));
	EXPECT(!tfs_inodes_take_long_attrs(&tab, inode));
	EXPECT(tfs_inodes_gave_attrs(&tab, inode, 20, 300) == 0);
	EXPECT(!tfs_inodes_take_long_attrs(&tab, inode));

	tfs_inodes_forget(&tab, inode, 1);
	tfs_inodes_destroy(&tab);
	snprintf(path, sizeof(path), "%s/f0", dir);
	unlink(path);
	rmdir(dir);
}

/* Adds the directory at path (below root_fd) as name in dir; returns add_real's answer. */
static int add_dir(struct tfs_inodes *tab, int root_fd, const char *path, struct tfs_inode *dir,
		   const char *name, struct tfs_inode **inode)
{
	int fd = openat(root_fd, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	bool created;

	EXPECT(fd >= 0 && fstat(fd, &st) == 0);
	return tfs_inodes_add_real(tab, fd, &st, dir, name, path, UINT64_MAX, inode, &created);
}

/* No cycles in the tree: a directory found again inside itself (a bind mount of x on x/y), or
 * below a directory that hangs from it (a/b then a as b's child, a stale kernel entry's view of
 * a swap), is -ELOOP and leaves the table as it was. */
static void test_no_cycles(void)
{
	char dir[] = "/tmp/toolfs-unit-cycle-XXXXXX", path[64];
	struct tfs_inode *a, *b, *again = NULL;
	struct tfs_inodes tab;
	int root_fd;

	root_fd = temp_tree(dir, 0, &tab);
	snprintf(path, sizeof(path), "%s/a", dir);
	EXPECT(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	EXPECT(mkdir(path, 0755) == 0);
	EXPECT(add_dir(&tab, root_fd, "a", &tab.root, "a", &a) == 0);
	EXPECT(add_dir(&tab, root_fd, "a/b", a, "b", &b) == 0);
	EXPECT(add_dir(&tab, root_fd, "a", a, "y", &again) == -ELOOP && !again);
	EXPECT(add_dir(&tab, root_fd, "a", b, "a", &again) == -ELOOP && !again);
	EXPECT(a->parent == &tab.root && b->parent == a && a->refs == 2 && b->refs == 1);
	EXPECT(tfs_inodes_reachable(&tab, b));
	/* found again where it is, it is counted once more */
	EXPECT(add_dir(&tab, root_fd, "a/b", a, "b", &again) == 0 && again == b && b->refs == 2);
	tfs_inodes_forget(&tab, b, 2);
	tfs_inodes_forget(&tab, a, 1);
	tfs_inodes_destroy(&tab);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/a", dir);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	struct tfs_inodes tab;
	struct stat root_st;
	int root_fd = open("/", O_PATH | O_DIRECTORY);
	struct tfs_doc_key k1 = key_for("a", 1), k2 = key_for("a", 2), k3 = key_for("b", 1);
	struct tr_doc *d1 = doc_of_size(40), *d2 = doc_of_size(40), *d3 = doc_of_size(40);
	struct tfs_inode *i1, *i2, *i3, *again;
	struct tr_doc *got;

	EXPECT(fstat(root_fd, &root_st) == 0);
	EXPECT(tfs_inodes_init(&tab, root_fd, &root_st, 100) == 0);
	cache = tfs_cache_new(200);

	/* A lookup holds (pins) its document's cache entry for the open that follows it, even
	 * when the cache evicts the version meanwhile; the open takes the hold. */
	i1 = look_up(&tab, &k1, d1, true);
	EXPECT(i1 && held(&tab, i1) == d1);
	EXPECT_INT(tab.holds.bytes, 40);
	for (int i = 0; i < 5; i++) {
		char path[8];
		struct tfs_doc_key filler = key_for(path, 1);
		struct tr_doc *doc = doc_of_size(40);

		snprintf(path, sizeof(path), "f%d", i);
		EXPECT(tfs_cache_put(cache, &filler, doc));
		tr_doc_unref(doc);
	}
	EXPECT(tfs_cache_get(cache, &k1) == NULL); /* evicted, still pinned by the hold */
	EXPECT(held(&tab, i1) == d1);
	got = tfs_inodes_take_doc(&tab, i1);
	EXPECT(got == d1);
	tr_doc_unref(got);
	EXPECT(held(&tab, i1) == NULL);
	EXPECT_INT(tab.holds.bytes, 0);
	EXPECT(tfs_inodes_take_doc(&tab, i1) == NULL); /* a second open: the cache's business */

	/* Two lookups of one version before their opens: both opens find it. */
	again = look_up(&tab, &k1, d1, true);
	EXPECT(again == i1);
	again = look_up(&tab, &k1, d1, true);
	EXPECT_INT(tab.holds.bytes, 40);
	got = tfs_inodes_take_doc(&tab, i1);
	EXPECT(got == d1);
	tr_doc_unref(got);
	EXPECT(held(&tab, i1) == d1);
	got = tfs_inodes_take_doc(&tab, i1);
	EXPECT(got == d1);
	tr_doc_unref(got);
	EXPECT(held(&tab, i1) == NULL);

	/* The budget (100 bytes) keeps the newest holds: a third 40-byte hold pushes out the
	 * oldest. */
	i1 = look_up(&tab, &k1, d1, true);
	i2 = look_up(&tab, &k2, d2, true);
	EXPECT(i2 && i2 != i1);
	EXPECT_INT(tab.holds.bytes, 80);
	i3 = look_up(&tab, &k3, d3, true);
	EXPECT_INT(tab.holds.bytes, 80);
	EXPECT(held(&tab, i1) == NULL);
	EXPECT(held(&tab, i2) == d2 && held(&tab, i3) == d3);
	EXPECT(tfs_holds_end(&tab.holds, true) == i2 && tfs_holds_end(&tab.holds, false) == i3);
	/* A renewed hold becomes the newest. */
	look_up(&tab, &k2, d2, true);
	EXPECT(tfs_holds_end(&tab.holds, true) == i3 && tfs_holds_end(&tab.holds, false) == i2);

	/* Forgetting an inode drops its hold. */
	tfs_inodes_forget(&tab, i3, 1);
	EXPECT_INT(tab.holds.bytes, 40);
	EXPECT(tfs_holds_end(&tab.holds, true) == i2 && tfs_holds_end(&tab.holds, false) == i2);

	/* A document the cache could not keep is kept (pinned) until the inode is forgotten, and
	 * is never counted against the budget. */
	struct tfs_doc_key k4 = key_for("big", 1);
	struct tr_doc *big = doc_of_size(500);
	struct tfs_inode *i4 = look_up(&tab, &k4, big, false);

	EXPECT(i4 && pinned(&tab, i4) == big && held(&tab, i4) == NULL);
	EXPECT_INT(tab.holds.bytes, 40);
	for (int open = 0; open < 3; open++) {
		got = tfs_inodes_take_doc(&tab, i4);
		EXPECT(got == big);
		tr_doc_unref(got);
	}
	/* A cached document larger than the budget is not held. */
	struct tfs_doc_key k5 = key_for("large", 1);
	struct tr_doc *large = doc_of_size(101);
	struct tfs_inode *i5 = look_up(&tab, &k5, large, true);

	EXPECT(i5 && held(&tab, i5) == NULL);
	EXPECT(tfs_inodes_take_doc(&tab, i5) == NULL);

	tr_doc_unref(d1);
	tr_doc_unref(d2);
	tr_doc_unref(d3);
	tr_doc_unref(big);
	tr_doc_unref(large);
	tfs_inodes_destroy(&tab); /* frees what is left, holds included (ASan: no leak) */
	tfs_cache_free(cache);
	test_descriptor_pool(true);
	test_descriptor_pool(false);
	test_size_given();
	test_no_cycles();
	return EXPECT_DONE();
}
