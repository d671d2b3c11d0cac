/* SPDX-License-Identifier: MIT */
/* state.c - the daemon's state built and torn down in one place, without FUSE (toolfs.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "toolfs.h"

int tfs_fs_init(struct tfs_fs *fs, const struct tfs_fs_setup *setup)
{
	int err;

	tfs_listing_store_init(&fs->listings);
	fs->source_dev = setup->root_st->st_dev;
	fs->source_local = tfs_attrs_own(setup->root_fd);
	tfs_handles_init(&fs->handles, fs->opts.max_open_memory);
	fs->cache = tfs_cache_new(fs->opts.cache_size);
	err = fs->cache ? tfs_inodes_init(&fs->inodes, setup->root_fd, setup->root_st,
					  setup->held_budget)
			: -ENOMEM;
	if (err < 0) {
		close(setup->root_fd);
		goto out_cache;
	}
	fs->inodes.fd_cap = tfs_inodes_fd_cap(setup->nofile);
	if (setup->no_handles)
		fs->inodes.use_handles = false;
	if (setup->mode != TFS_CACHE_STRICT) {
		fs->cache_attrs = setup->mode == TFS_CACHE_RELAXED;
		fs->watch = tfs_watch_new(&fs->inodes, setup->watch_limit, fs->cache_attrs);
		tfs_watch_dir(fs->watch, &fs->inodes.root, fs->root.fd);
	}
	return 0;
out_cache:
	tfs_handles_destroy(&fs->handles);
	tfs_cache_free(fs->cache);
	fs->cache = NULL;
	tfs_listing_store_destroy(&fs->listings);
	return err;
}

void tfs_fs_destroy(struct tfs_fs *fs)
{
	tfs_watch_free(fs->watch);
	fs->watch = NULL;
	tfs_inodes_destroy(&fs->inodes);
	tfs_handles_destroy(&fs->handles);
	tfs_cache_free(fs->cache);
	fs->cache = NULL;
	tfs_listing_store_destroy(&fs->listings);
}
