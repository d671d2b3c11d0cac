/* SPDX-License-Identifier: MIT */
/* dir.c - the directory handlers of the daemon: listings (listing.h) served by readdir and
 * readdirplus, from a directory handle or, where the kernel keeps listings, without one. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "creds.h"
#include "dir.h"
#include "listing.h"
#include "lookup.h"
#include "toolfs.h"

/* Directory handles (cache=strict and cache=watch): the listing is snapshotted on the handle
 * at offset 0 and served by index (offsets are indexes + 1). */
struct dir_handle {
	DIR *dp;
	struct tfs_listing listing;
	bool built;        /* a listing was snapshotted on this handle */
	bool kernel_keeps; /* opened with cache_readdir: the kernel may keep its listing */
};

/* Opens directory dir for reading its names, with the rights of the request's caller (creds.h).
 * Returns the descriptor or -errno. */
static int open_for_listing(struct tfs_fs *fs, struct tfs_inode *dir)
{
	int path_fd = tfs_inode_fd(&fs->inodes, dir);
	enum tfs_rights rights;
	int fd;

	if (path_fd < 0)
		return path_fd;
	rights = tfs_creds_begin();
	fd = openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	tfs_creds_end(rights);
	tfs_inode_fd_put(&fs->inodes, dir);
	return fd;
}

void tfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	struct tfs_inode *inode = tfs_inode_of(req, ino);
	struct dir_handle *d;
	int fd, err;

	/* Where the kernel may keep every listing (tfs_fs.no_opendir), ENOSYS tells it to open
	 * directories without asking, for the rest of the session: a walk then costs no OPENDIR
	 * and RELEASEDIR per directory, and readdir serves kept listings (do_readdir). */
	if (fs->no_opendir) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	if (inode->is_sibling || inode->type != S_IFDIR) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	tfs_watch_sync(fs->watch);
	err = tfs_inode_usable(fs, inode);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	tfs_creds_set_caller(req);
	fd = open_for_listing(fs, inode);
	tfs_creds_clear_caller();
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	d->dp = fdopendir(fd);
	if (!d->dp) {
		err = -errno;
		close(fd);
		goto fail;
	}
	fi->fh = (uintptr_t)d;
	/* Where plain entries are cached (cache=relaxed, a watched directory) the kernel keeps the
	 * listing too, across opens, until the watch invalidates the directory (any name created,
	 * deleted or moved in it): a walk that comes again reads no directory from the daemon. */
	if (fs->cache_attrs && tfs_watch_covers(fs->watch, inode)) {
		fi->cache_readdir = 1;
		fi->keep_cache = 1;
		d->kernel_keeps = true;
	}
	if (fuse_reply_open(req, fi) == -ENOENT) {
		closedir(d->dp);
		free(d);
	}
	return;
fail:
	free(d);
	fuse_reply_err(req, -err);
}

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* Snapshots directory dir's listing into l from a descriptor of its own. Returns 0 or
 * -errno. */
static int build_unopened(struct tfs_fs *fs, struct tfs_inode *dir, struct tfs_listing *l)
{
	int fd = open_for_listing(fs, dir), err;
	DIR *dp;

	if (fd < 0)
		return fd;
	dp = fdopendir(fd);
	if (!dp) {
		err = -errno;
		close(fd);
		return err;
	}
	err = tfs_listing_build(fs, dir, dp, l);
	closedir(dp);
	return err;
}

/* One readdir(plus) reply: the entries of l from index first, entry i at offset
 * (gen << 32) + i + 1; dir_fd (O_PATH) resolves the plain entries readdirplus describes. */
static void reply_entries(fuse_req_t req, struct tfs_fs *fs, struct tfs_inode *dir, int dir_fd,
			  const struct tfs_listing *l, size_t first, uint64_t gen, uint64_t seen,
			  size_t size, bool plus)
{
	char *buf = malloc(size), *p;
	size_t rem = size;
	int err;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	p = buf;
	for (size_t i = first; i < l->n; i++) {
		const struct tfs_listing_entry *ent = &l->entries[i];
		off_t next = (off_t)((gen << 32) + i + 1);
		size_t entsize;

		if (!plus) {
			struct stat st = {.st_ino = ent->ino, .st_mode = ent->type};

			entsize = fuse_add_direntry(req, p, rem, ent->name, &st, next);
		} else {
			struct fuse_entry_param e = {.attr.st_ino = ent->ino,
						     .attr.st_mode = ent->type};

			/* Siblings go with node id 0: the kernel shows the name and looks it up
			 * when it is used, so listing never generates a document. So do entries
			 * the kernel may not cache (cache=strict, files unless cache=relaxed, an
			 * unwatched directory): it would look them up again at their first use
			 * anyway, and an inode made for each would cost a walk (find) an openat,
			 * a file handle and a kernel inode per entry for nothing. */
			if (!ent->sibling && !is_dot_or_dotdot(ent->name) &&
			    tfs_watch_covers(fs->watch, dir) &&
			    (ent->type == S_IFDIR || fs->cache_attrs)) {
				int fd = openat(dir_fd, ent->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

				if (fd < 0)
					continue; /* gone since the snapshot */
				err = tfs_lookup_real(fs, dir, ent->name, fd, seen, &e);
				if (err == -ELOOP) /* listed; its lookup answers ELOOP */
					e = (struct fuse_entry_param){.attr.st_ino = ent->ino,
								      .attr.st_mode = ent->type};
				else if (err)
					continue;
			}
			entsize = fuse_add_direntry_plus(req, p, rem, ent->name, &e, next);
			if (entsize > rem && e.ino)
				tfs_inodes_forget(&fs->inodes, tfs_inode_of(req, e.ino), 1);
		}
		if (entsize > rem)
			break;
		p += entsize;
		rem -= entsize;
	}
	fuse_reply_buf(req, buf, size - rem);
	free(buf);
}

/* Before the empty reply that ends a listing the kernel keeps: it must not keep one that may
 * be stale. Its pages are dropped now (the kernel then reads the directory again at the next
 * open) when dir is not watched, or when a change to its names was taken in since l was read:
 * that change's own invalidation may have reached the kernel before the listing's first entries
 * did, and so have dropped nothing. Inode invalidation takes no lock that a readdir holds. */
static void drop_kept_if_unsure(struct tfs_fs *fs, fuse_ino_t ino, struct tfs_inode *dir,
				const struct tfs_listing *l)
{
	if (!tfs_watch_covers(fs->watch, dir) ||
	    tfs_watch_listing_version(fs->watch, dir) != l->version)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, 0, 0);
}

/* readdir(plus) on a directory handle (fi->fh). */
static void readdir_handle(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi, bool plus, uint64_t seen)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	struct tfs_inode *dir = tfs_inode_of(req, ino);
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;
	size_t first = (size_t)off;

	/* A kernel that keeps listings (cache_readdir) may serve the start of one from its cache
	 * and ask this handle for the rest when its cache is dropped midway: the handle then
	 * snapshots the listing first, in the same order (SOURCE's, then the siblings'). */
	if (off == 0 || !d->built) {
		int err = tfs_listing_build(fs, dir, d->dp, &d->listing);

		/* A handle held while its directory left SOURCE lists nothing more (beneath.h);
		 * checked after the listing was read. */
		if (!err)
			err = tfs_inode_usable(fs, dir);
		d->built = err == 0;
		if (err) {
			fuse_reply_err(req, -err);
			return;
		}
	}
	if (first >= d->listing.n && d->kernel_keeps)
		drop_kept_if_unsure(fs, ino, dir, &d->listing);
	reply_entries(req, fs, dir, dirfd(d->dp), &d->listing, first, 0, seen, size, plus);
}

/* readdir(plus) without a handle (tfs_fs.no_opendir): a listing is snapshotted at offset 0 and
 * kept in tfs_fs.listings under a generation that its offsets carry, so that the rest of the
 * pass reads the same snapshot; a pass whose listing was dropped (a reader that paused over a
 * second, or came again at an offset the kernel kept) is served from a new one. */
static void readdir_unopened(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus,
			     uint64_t seen)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	struct tfs_inode *dir = tfs_inode_of(req, ino);
	struct tfs_kept_listing *kept = NULL;
	size_t first = (size_t)((uint64_t)off & 0xffffffffu);
	int dir_fd, err;

	if (dir->is_sibling || dir->type != S_IFDIR) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	/* Checked where an opendir would have checked it: at the start of a pass. */
	if (off == 0 && (err = tfs_inode_usable(fs, dir)) != 0) {
		fuse_reply_err(req, -err);
		return;
	}
	if (off != 0)
		kept = tfs_listing_find(&fs->listings, ino, (uint32_t)((uint64_t)off >> 32));
	if (!kept) {
		struct tfs_listing l = {.entries = NULL};

		err = build_unopened(fs, dir, &l);
		if (err) {
			tfs_listing_destroy(&l);
			fuse_reply_err(req, -err);
			return;
		}
		kept = tfs_listing_keep(&fs->listings, ino, &l);
		if (!kept) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	if (first >= kept->listing.n) {
		drop_kept_if_unsure(fs, ino, dir, &kept->listing);
		tfs_listing_put(&fs->listings, kept, true);
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	dir_fd = plus ? tfs_inode_fd(&fs->inodes, dir) : -1;
	if (plus && dir_fd < 0) {
		tfs_listing_put(&fs->listings, kept, false);
		fuse_reply_err(req, -dir_fd);
		return;
	}
	reply_entries(req, fs, dir, dir_fd, &kept->listing, first, kept->gen, seen, size, plus);
	if (plus)
		tfs_inode_fd_put(&fs->inodes, dir);
	tfs_listing_put(&fs->listings, kept, false);
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	uint64_t seen = tfs_watch_sync(tfs_fs_of(req)->watch);

	tfs_creds_set_caller(req);
	if (fi->fh)
		readdir_handle(req, ino, size, off, fi, plus, seen);
	else
		readdir_unopened(req, ino, size, off, plus, seen);
	tfs_creds_clear_caller();
}

void tfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

void tfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

void tfs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;

	(void)ino;
	if (d) {
		tfs_listing_destroy(&d->listing);
		closedir(d->dp);
		free(d);
	}
	fuse_reply_err(req, 0);
}
