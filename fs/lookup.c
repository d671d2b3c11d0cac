/* SPDX-License-Identifier: MIT */
/* lookup.c - lookups: a name in a directory to a real entry of SOURCE or a virtual sibling, with
 * the timeouts the caching mode allows (ops.c explains the caching). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "creds.h"
#include "lookup.h"
#include "names.h"
#include "sibling.h"
#include "toolfs.h"

struct tfs_inode *tfs_inode_of(fuse_req_t req, fuse_ino_t ino)
{
	return tfs_inodes_get(&tfs_fs_of(req)->inodes, ino);
}

double tfs_plain_attr_timeout(struct tfs_fs *fs, struct tfs_inode *inode)
{
	return fs->cache_attrs && tfs_inodes_attr_watched(&fs->inodes, inode) ? TFS_PLAIN_TIMEOUT
									      : 0.0;
}

/* Watches the new directory inode, then reads its attributes again into st, so that a change
 * made before the watch existed is in them. */
static void watch_new_dir(struct tfs_fs *fs, struct tfs_inode *inode, struct stat *st)
{
	int fd = tfs_inode_fd(&fs->inodes, inode);

	if (fd < 0)
		return;
	tfs_watch_dir(fs->watch, inode, fd);
	fstat(fd, st);
	tfs_inode_fd_put(&fs->inodes, inode);
}

int tfs_lookup_real(struct tfs_fs *fs, struct tfs_inode *dir, const char *name, int fd,
		    uint64_t seen, struct fuse_entry_param *e)
{
	struct tfs_inode *inode;
	char *path = NULL;
	bool created;
	int err = tfs_stat_entry(fs, fd, &e->attr);

	if (err) {
		close(fd);
		return err;
	}
	if (S_ISDIR(e->attr.st_mode)) {
		path = tfs_inodes_child_path(&fs->inodes, dir, name);
		if (!path) {
			close(fd);
			return -ENOMEM;
		}
	}
	err = tfs_inodes_add_real(&fs->inodes, fd, &e->attr, dir, name, path, seen, &inode,
				  &created);
	free(path);
	if (err)
		return err;
	if (created && fs->watch && inode->type == S_IFDIR)
		watch_new_dir(fs, inode, &e->attr);
	e->ino = tfs_inode_nodeid(&fs->inodes, inode);
	e->entry_timeout = tfs_watch_covers(fs->watch, dir) &&
					   (inode->type == S_IFDIR || fs->cache_attrs)
				   ? TFS_PLAIN_TIMEOUT
				   : 0.0;
	/* Attributes are cached only in cache=relaxed, as getattr gives them (plain_attr_timeout):
	 * in cache=watch a directory renamed in SOURCE must reach the daemon at the next stat,
	 * which answers ESTALE, rather than wait for the watch thread's invalidation. */
	if (inode->type == S_IFDIR)
		e->attr_timeout = tfs_plain_attr_timeout(fs, inode);
	else
		e->attr_timeout = fs->cache_attrs && tfs_watch_covers(fs->watch, dir)
					  ? TFS_PLAIN_TIMEOUT
					  : 0.0;
	if (inode->type == S_IFREG)
		e->attr_timeout = tfs_inodes_gave_attrs(&fs->inodes, inode, e->attr.st_size,
							e->attr_timeout);
	return 0;
}

/* Fills e for the virtual name of dir, producing the sibling now so its size is exact. */
static int lookup_sibling(struct tfs_fs *fs, struct tfs_inode *dir, int dir_fd, const char *name,
			  struct fuse_entry_param *e)
{
	struct tfs_sibling_name parsed;
	struct tfs_sibling sib;
	struct tfs_inode *inode;
	bool listed, in_run = false;
	char *base;
	int err;

	err = tfs_name_parse_sibling(dir_fd, name, &fs->opts, &parsed);
	if (err)
		return err;
	base = strndup(name, parsed.base_len);
	if (!base)
		return -ENOMEM;
	listed = !parsed.sel.present && parsed.fmt == TR_FORMAT_TOOL;
	if (listed)
		in_run = tfs_readahead_lookup(fs->readahead, dir, base);
	err = tfs_sibling_make(fs, dir, base, &parsed.sel, parsed.fmt, &sib);
	if (!err && listed && !in_run && sib.rendered)
		tfs_readahead_rendered(fs->readahead, dir, base);
	free(base);
	if (err)
		return err == -ENAMETOOLONG ? -ENOENT : err; /* no such NAME, as any other */
	inode = tfs_inodes_add_sibling(&fs->inodes, dir, &sib.key, &sib.attr, sib.entry,
				       sib.cached);
	tfs_sibling_destroy(&sib);
	if (!inode)
		return -ENOMEM;
	e->ino = tfs_inode_nodeid(&fs->inodes, inode);
	e->attr = inode->attr;
	e->attr_timeout = TFS_SIBLING_ATTR_TIMEOUT;
	e->entry_timeout = 0.0;
	return 0;
}

int tfs_lookup_entry(struct tfs_fs *fs, struct tfs_inode *dir, const char *name,
		     struct fuse_entry_param *e)
{
	uint64_t seen = tfs_watch_sync(fs->watch);

	enum tfs_rights rights;
	int dir_fd, fd, open_err, err;

	memset(e, 0, sizeof(*e));
	if (dir->is_sibling || dir->type != S_IFDIR)
		return -ENOTDIR;
	dir_fd = tfs_inode_fd(&fs->inodes, dir);
	if (dir_fd < 0)
		return dir_fd;
	rights = tfs_creds_begin();
	fd = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	open_err = errno;
	tfs_creds_end(rights);
	/* Checked after the name was resolved: a directory moved out before it is caught. */
	err = tfs_inode_usable(fs, dir);
	if (err) {
		if (fd >= 0)
			close(fd);
	} else if (fd >= 0) {
		err = tfs_lookup_real(fs, dir, name, fd, seen, e);
	} else if (open_err != ENOENT && open_err != ENAMETOOLONG) {
		/* A name longer than SOURCE's NAME_MAX is no real entry but may be a virtual
		 * one: the kernel passes FUSE lookups of up to 1024 bytes, and a next of a
		 * 236-255-byte NAME is longer than 255 (docs/SPEC.md §4). */
		err = -open_err;
	} else {
		err = lookup_sibling(fs, dir, dir_fd, name, e);
	}
	tfs_inode_fd_put(&fs->inodes, dir);
	return err;
}
