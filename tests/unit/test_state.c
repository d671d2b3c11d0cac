/* SPDX-License-Identifier: MIT */
/* test_state.c - unit tests of the daemon's state built without FUSE (tfs_fs_init): a lookup
 * counted in the table, its directory watched, a rename taken in as a moved mark, and the
 * teardown (ASan: no leak). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beneath.h"
#include "expect.h"
#include "toolfs.h"

/* Builds fs over the directory src in mode; returns tfs_fs_init's answer. */
static int state_over(struct tfs_fs *fs, const char *src, enum tfs_cache_mode mode)
{
	struct stat st;
	struct tfs_fs_setup setup = {.held_budget = 1 << 20,
				     .nofile = 1024,
				     .watch_limit = -1,
				     .mode = mode,
				     .root_st = &st};

	memset(fs, 0, sizeof(*fs));
	tr_options_init(&fs->opts);
	EXPECT(tr_root_open(&fs->root, src) == 0);
	setup.root_fd = fcntl(fs->root.fd, F_DUPFD_CLOEXEC, 0);
	EXPECT(setup.root_fd >= 0 && fstat(setup.root_fd, &st) == 0);
	return tfs_fs_init(fs, &setup);
}

/* Counts a lookup of directory name in the root, as lookup.c does, and watches it. */
static struct tfs_inode *look_up_dir(struct tfs_fs *fs, const char *name)
{
	uint64_t seen = tfs_watch_sync(fs->watch);
	int fd = openat(fs->root.fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	char *path = tfs_inodes_child_path(&fs->inodes, &fs->inodes.root, name);
	struct tfs_inode *inode;
	struct stat st;
	bool created;

	EXPECT(fd >= 0 && fstat(fd, &st) == 0 && path);
	EXPECT(tfs_inodes_add_real(&fs->inodes, fd, &st, &fs->inodes.root, name, path, seen, &inode,
				   &created) == 0);
	free(path);
	EXPECT(inode && created && inode->type == S_IFDIR);
	fd = tfs_inode_fd(&fs->inodes, inode);
	EXPECT(fd >= 0);
	tfs_watch_dir(fs->watch, inode, fd);
	tfs_inode_fd_put(&fs->inodes, inode);
	return inode;
}

static void test_watched_state(const char *dir)
{
	char from[128], to[128];
	struct tfs_inode *sub;
	struct tfs_fs fs;

	EXPECT_INT(state_over(&fs, dir, TFS_CACHE_WATCH), 0);
	EXPECT(fs.cache && !fs.cache_attrs);
	if (!fs.watch || !tfs_watch_covers(fs.watch, &fs.inodes.root)) {
		fprintf(stderr, "test_state: %s is not watchable here; the watch part skipped\n",
			dir);
		tfs_fs_destroy(&fs);
		tr_root_close(&fs.root);
		return;
	}
	sub = look_up_dir(&fs, "sub");
	EXPECT(tfs_watch_covers(fs.watch, sub));
	EXPECT(tfs_inodes_reachable(&fs.inodes, sub));
	EXPECT_INT(tfs_inode_usable(&fs, sub), 0);
	/* Renamed in SOURCE: the next request that takes in the events finds it marked moved. */
	snprintf(from, sizeof(from), "%s/sub", dir);
	snprintf(to, sizeof(to), "%s/moved", dir);
	EXPECT(rename(from, to) == 0);
	tfs_watch_sync(fs.watch);
	EXPECT(!tfs_inodes_reachable(&fs.inodes, sub));
	EXPECT_INT(tfs_inode_usable(&fs, sub), -ESTALE);
	EXPECT(rename(to, from) == 0);
	tfs_inodes_forget(&fs.inodes, sub, 1);
	tfs_fs_destroy(&fs); /* drops the invalidations still queued, then the table */
	tr_root_close(&fs.root);
}

static void test_strict_state(const char *dir)
{
	struct tfs_fs fs;

	EXPECT_INT(state_over(&fs, dir, TFS_CACHE_STRICT), 0);
	EXPECT(!fs.watch && !fs.cache_attrs && fs.cache);
	EXPECT(tfs_inodes_get(&fs.inodes, 1) == &fs.inodes.root);
	tfs_fs_destroy(&fs);
	tr_root_close(&fs.root);
}

int main(void)
{
	char dir[] = "/tmp/toolfs-unit-state-XXXXXX", path[128];

	EXPECT(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/sub", dir);
	EXPECT(mkdir(path, 0755) == 0);
	test_watched_state(dir);
	test_strict_state(dir);
	rmdir(path);
	rmdir(dir);
	return EXPECT_DONE();
}
