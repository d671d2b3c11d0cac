/* test_inodes.c - unit tests of the daemon's inode table: sibling versions, the documents they
 * keep or hold from a lookup to its open, and the budget that bounds the holds. */
#include <fcntl.h>
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
	struct tfs_doc_key key = {.dev = 1, .ino = 2, .size = size, .path = (char *)path};

	return key;
}

/* Looks up version key of dir with doc (cached), as lookup_sibling does; the caller drops its
 * own reference on doc afterwards, as the sibling does. */
static struct tfs_inode *look_up(struct tfs_inodes *tab, const struct tfs_doc_key *key,
				 struct tr_doc *doc, bool cached)
{
	struct stat attr = {.st_mode = S_IFREG | 0444, .st_size = (off_t)tr_doc_size(doc)};

	return tfs_inodes_add_sibling(tab, &tab->root, key, &attr, doc, cached);
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

	/* A lookup holds its document for the open that follows it, even when nothing else keeps
	 * it (the cache evicted the version meanwhile); the open takes the hold. */
	i1 = look_up(&tab, &k1, d1, true);
	EXPECT(i1 && i1->held == d1);
	EXPECT_INT(tab.held_bytes, 40);
	got = tfs_inodes_take_doc(&tab, i1);
	EXPECT(got == d1);
	tr_doc_unref(got);
	EXPECT(i1->held == NULL);
	EXPECT_INT(tab.held_bytes, 0);
	EXPECT(tfs_inodes_take_doc(&tab, i1) == NULL); /* a second open: the cache's business */

	/* Two lookups of one version before their opens: both opens find it. */
	again = look_up(&tab, &k1, d1, true);
	EXPECT(again == i1);
	again = look_up(&tab, &k1, d1, true);
	EXPECT_INT(tab.held_bytes, 40);
	got = tfs_inodes_take_doc(&tab, i1);
	EXPECT(got == d1);
	tr_doc_unref(got);
	EXPECT(i1->held == d1);
	got = tfs_inodes_take_doc(&tab, i1);
	EXPECT(got == d1);
	tr_doc_unref(got);
	EXPECT(i1->held == NULL);

	/* The budget (100 bytes) keeps the newest holds: a third 40-byte hold pushes out the
	 * oldest. */
	i1 = look_up(&tab, &k1, d1, true);
	i2 = look_up(&tab, &k2, d2, true);
	EXPECT(i2 && i2 != i1);
	EXPECT_INT(tab.held_bytes, 80);
	i3 = look_up(&tab, &k3, d3, true);
	EXPECT_INT(tab.held_bytes, 80);
	EXPECT(i1->held == NULL);
	EXPECT(i2->held == d2 && i3->held == d3);
	EXPECT(tab.held_oldest == i2 && tab.held_newest == i3);
	/* A renewed hold becomes the newest. */
	look_up(&tab, &k2, d2, true);
	EXPECT(tab.held_oldest == i3 && tab.held_newest == i2);

	/* Forgetting an inode drops its hold. */
	tfs_inodes_forget(&tab, i3, 1);
	EXPECT_INT(tab.held_bytes, 40);
	EXPECT(tab.held_oldest == i2 && tab.held_newest == i2);

	/* A document the cache could not keep is kept (pinned) until the inode is forgotten, and
	 * is never counted against the budget. */
	struct tfs_doc_key k4 = key_for("big", 1);
	struct tr_doc *big = doc_of_size(500);
	struct tfs_inode *i4 = look_up(&tab, &k4, big, false);

	EXPECT(i4 && i4->pinned == big && i4->held == NULL);
	EXPECT_INT(tab.held_bytes, 40);
	for (int open = 0; open < 3; open++) {
		got = tfs_inodes_take_doc(&tab, i4);
		EXPECT(got == big);
		tr_doc_unref(got);
	}
	/* A cached document larger than the budget is not held. */
	struct tfs_doc_key k5 = key_for("large", 1);
	struct tr_doc *large = doc_of_size(101);
	struct tfs_inode *i5 = look_up(&tab, &k5, large, true);

	EXPECT(i5 && i5->held == NULL);
	EXPECT(tfs_inodes_take_doc(&tab, i5) == NULL);

	tr_doc_unref(d1);
	tr_doc_unref(d2);
	tr_doc_unref(d3);
	tr_doc_unref(big);
	tr_doc_unref(large);
	tfs_inodes_destroy(&tab); /* frees what is left, holds included (ASan: no leak) */
	return EXPECT_DONE();
}
