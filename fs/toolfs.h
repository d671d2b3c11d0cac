/* SPDX-License-Identifier: MIT */
/* toolfs.h - the daemon's shared state: options, the mounted source, inode table and cache. */
#ifndef TFS_TOOLFS_H
#define TFS_TOOLFS_H

#include <stdbool.h>

#include "cache.h"
#include "handles.h"
#include "heap.h"
#include "inode.h"
#include "listing.h"
#include "readahead.h"
#include "tr_confine.h"
#include "tr_options.h"
#include "watch.h"

struct tfs_fs {
	struct tr_options opts;
	struct tr_root root; /* SOURCE, which every path is confined to (tr_confine.h); owned */
	dev_t own_dev;       /* the daemon's own mount, never entered (beneath.h); 0 before it */
	char *root_kpath; /* SOURCE as the kernel names the root's descriptor (beneath.h); owned */
	struct tfs_inodes inodes;
	struct tfs_cache *cache;    /* owned */
	struct tfs_handles handles; /* open sibling handles */
	struct tfs_watch *watch; /* owned; NULL: every plain entry served uncached (cache=strict) */
	bool cache_attrs; /* cache=relaxed: plain attributes cached too, fresh within the delay */
	/* The kernel opens directories without the daemon and keeps every listing (cache=relaxed
	 * on a kernel that allows it, set by init): readdir serves listings kept in listings. */
	bool no_opendir;
	struct tfs_listing_store listings;
	struct fuse_session *se; /* borrowed; set before the session runs */
	struct tfs_trimmer
		*trimmer; /* owned; NULL before the session runs or when it could not start */
	struct tfs_readahead *readahead; /* owned; NULL before the session runs, with
					  * hide_siblings, or when it could not start */
};

#endif
