/* dir.c - directory handles of the daemon: listings snapshotted at offset 0, real entries then
 * the siblings of regular files and symlinks, served by readdir and readdirplus. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"
#include "ops.h"
#include "sibling.h"
#include "toolfs.h"

/* A directory listing, snapshotted when it is read from offset 0: the real entries in SOURCE's
 * order, then the siblings of its regular files and symlinks. Offsets are indexes + 1. */
struct list_entry {
	char *name;
	ino_t ino;
	mode_t type; /* S_IFMT bits; 0 when unknown */
	bool sibling;
};

struct dir_handle {
	DIR *dp;
	struct list_entry *entries;
	size_t n, cap;
	bool built; /* a listing was snapshotted on this handle */
};

static void listing_clear(struct dir_handle *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->entries[i].name);
	d->n = 0;
}

/* Makes room for n entries in all. Returns 0 or -1 (out of memory). */
static int listing_reserve(struct dir_handle *d, size_t n)
{
	struct list_entry *grown;
	size_t cap = d->cap ? d->cap : 64;

	if (n <= d->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	grown = realloc(d->entries, cap * sizeof(*grown));
	if (!grown)
		return -1;
	d->entries = grown;
	d->cap = cap;
	return 0;
}

/* Appends an entry that takes name. Returns 0 or -1 (out of memory; name freed). */
static int listing_push(struct dir_handle *d, char *name, ino_t ino, mode_t type, bool sibling)
{
	if (listing_reserve(d, d->n + 1) < 0) {
		free(name);
		return -1;
	}
	d->entries[d->n++] = (struct list_entry){name, ino, type, sibling};
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the sibling of real entry e (in dir) unless hidden, unnamable or shadowed by a real
 * entry of that name (real_names: sorted, n_real). Returns 0 or -1 (out of memory). */
static int push_sibling(struct tfs_fs *fs, struct tfs_inode *dir, struct dir_handle *d,
			const struct list_entry *e, char **real_names, size_t n_real)
{
	static const struct tr_selector no_sel = {.present = false};
	char *name;

	if (fs->opts.hide_siblings || !e->type || !tfs_name_has_sibling(e->type, &fs->opts))
		return 0;
	if (asprintf(&name, "%s" TFS_SIBLING_SUFFIX, e->name) < 0)
		return -1;
	/* Longer names stay resolvable but are not listed: most tools cannot hold them. */
	if (strlen(name) > NAME_MAX ||
	    bsearch(&name, real_names, n_real, sizeof(*real_names), compare_names)) {
		free(name);
		return 0;
	}
	return listing_push(d, name,
			    tfs_sibling_ino(dir->dev, dir->ino, e->name, &no_sel, TR_FORMAT_TOOL),
			    S_IFREG, true);
}

static int listing_build(struct tfs_fs *fs, struct tfs_inode *dir, struct dir_handle *d)
{
	char **real_names = NULL;
	size_t n_real;
	int err = ENOMEM;

	listing_clear(d);
	rewinddir(d->dp);
	for (;;) {
		struct dirent *de;
		mode_t type;
		char *name;

		errno = 0;
		de = readdir(d->dp);
		if (!de) {
			if (errno) {
				err = errno;
				goto fail;
			}
			break;
		}
		type = de->d_type == DT_UNKNOWN ? 0 : DTTOIF(de->d_type);
		if (!type) {
			struct stat st;

			if (fstatat(dirfd(d->dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				type = st.st_mode & S_IFMT;
		}
		name = strdup(de->d_name);
		if (!name || listing_push(d, name, de->d_ino, type, false) < 0)
			goto fail;
	}
	n_real = d->n;
	real_names = malloc((n_real ? n_real : 1) * sizeof(*real_names));
	if (!real_names)
		goto fail;
	for (size_t i = 0; i < n_real; i++)
		real_names[i] = d->entries[i].name;
	qsort(real_names, n_real, sizeof(*real_names), compare_names);

	/* The siblings follow the real entries; room for all is made first, so that pushing never
	 * moves the entry it reads from. */
	if (listing_reserve(d, 2 * n_real) < 0)
		goto fail;
	for (size_t i = 0; i < n_real; i++) {
		if (push_sibling(fs, dir, d, &d->entries[i], real_names, n_real) < 0)
			goto fail;
	}
	free(real_names);
	return 0;
fail:
	free(real_names);
	listing_clear(d);
	return err;
}

void tfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	struct tfs_inode *inode = tfs_inode_of(req, ino);
	struct dir_handle *d;
	int path_fd, fd, err;

	if (inode->is_sibling || inode->type != S_IFDIR) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	tfs_watch_sync(fs->watch);
	if (fs->watch && !tfs_inodes_reachable(&fs->inodes, inode)) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	path_fd = tfs_inode_fd(&fs->inodes, inode);
	if (path_fd < 0) {
		errno = -path_fd;
		goto fail;
	}
	fd = openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	tfs_inode_fd_put(&fs->inodes, inode);
	errno = err;
	if (fd < 0)
		goto fail;
	d->dp = fdopendir(fd);
	if (!d->dp) {
		err = errno;
		close(fd);
		errno = err;
		goto fail;
	}
	fi->fh = (uintptr_t)d;
	/* Where plain entries are cached (cache=relaxed, a watched directory) the kernel keeps the
	 * listing too, across opens, until the watch invalidates the directory (any name created,
	 * deleted or moved in it): a walk that comes again reads no directory from the daemon. */
	if (fs->cache_attrs && tfs_watch_covers(fs->watch, inode)) {
		fi->cache_readdir = 1;
		fi->keep_cache = 1;
	}
	if (fuse_reply_open(req, fi) == -ENOENT) {
		closedir(d->dp);
		free(d);
	}
	return;
fail:
	err = errno;
	free(d);
	fuse_reply_err(req, err);
}

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	struct tfs_inode *dir = tfs_inode_of(req, ino);
	struct dir_handle *d = (struct dir_handle *)(uintptr_t)fi->fh;
	char *buf, *p;
	size_t rem = size;
	uint64_t seen = tfs_watch_sync(fs->watch);
	int err;

	/* A kernel that keeps listings (cache_readdir) may serve the start of one from its cache
	 * and ask this handle for the rest when its cache is dropped midway: the handle then
	 * snapshots the listing first, in the same order (SOURCE's, then the siblings'). */
	if (off == 0 || !d->built) {
		err = listing_build(fs, dir, d);
		d->built = err == 0;
		if (err) {
			fuse_reply_err(req, err);
			return;
		}
	}
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	p = buf;
	for (size_t i = off; i < d->n; i++) {
		const struct list_entry *ent = &d->entries[i];
		size_t entsize;

		if (!plus) {
			struct stat st = {.st_ino = ent->ino, .st_mode = ent->type};

			entsize = fuse_add_direntry(req, p, rem, ent->name, &st, i + 1);
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
				int fd = openat(dirfd(d->dp), ent->name,
						O_PATH | O_NOFOLLOW | O_CLOEXEC);

				if (fd < 0)
					continue; /* gone since the snapshot */
				err = tfs_lookup_real(fs, dir, ent->name, fd, seen, &e);
				if (err)
					continue;
			}
			entsize = fuse_add_direntry_plus(req, p, rem, ent->name, &e, i + 1);
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
	listing_clear(d);
	free(d->entries);
	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}
