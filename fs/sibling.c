/* SPDX-License-Identifier: MIT */
/* sibling.c - a virtual file's source resolved now, its document cached or read, its attributes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "beneath.h"
#include "creds.h"
#include "names.h"
#include "sibling.h"
#include "tr_read.h"

/* Serial numbers of reads that saw no consistent version (tfs_doc_key.unstable). */
static uint64_t unstable_serial;

/* What a sibling shows, resolved now. */
struct source {
	int fd;         /* O_PATH of the regular file to read (outcome TR_OK), or -1 */
	struct stat st; /* the state shown: the file, a followed link's target, or the link */
	enum tr_error outcome;
	bool loop;          /* TR_E_NOT_REGULAR: a symbolic link loop */
	bool own_mount;     /* TR_E_NOT_REGULAR: the link leads into the daemon's own mount */
	bool followed;      /* the name is a symbolic link, followed */
	struct stat target; /* TR_E_NOT_REGULAR otherwise: the link's target's stat */
	int err;            /* the errno of other failures */
};

static void source_destroy(struct source *src)
{
	if (src->fd >= 0)
		close(src->fd);
	src->fd = -1;
}

/* Applies the symlink policy of docs/SPEC.md §4 to the link base found in dir: followed beneath
 * SOURCE, never onto the daemon's own mount. */
static void follow_link(struct tfs_fs *fs, int dir_fd, const char *base, struct source *src)
{
	struct tr_confine_how how = {.symlinks = TR_SYMLINKS_INSIDE, .avoid_dev = fs->own_dev};
	int target, err;

	switch (tr_confined_open(&fs->root, dir_fd, base, &how, &target, &err)) {
	case TR_CONFINE_OK:
		/* The walk began in a directory inside SOURCE; one moved out meanwhile could have
		 * led it anywhere, so where it ended is checked too. */
		if (!tfs_fd_beneath(fs, target)) {
			src->outcome = TR_E_OUTSIDE_ROOT;
			close(target);
		} else if (fstat(target, &src->target) < 0) {
			src->outcome = tr_error_from_errno(errno);
			src->err = errno;
			close(target);
		} else if (!S_ISREG(src->target.st_mode)) {
			src->outcome = TR_E_NOT_REGULAR;
			close(target);
		} else {
			/* Attributes and state are the target's from now on. */
			close(src->fd);
			src->fd = target;
			src->st = src->target;
		}
		return;
	case TR_CONFINE_OUTSIDE_ROOT: src->outcome = TR_E_OUTSIDE_ROOT; break;
	case TR_CONFINE_NOT_FOUND: src->outcome = TR_E_NOT_FOUND; break;
	case TR_CONFINE_LOOP:
		src->outcome = TR_E_NOT_REGULAR;
		src->loop = true;
		break;
	case TR_CONFINE_OWN_MOUNT:
		src->outcome = TR_E_NOT_REGULAR;
		src->own_mount = true;
		break;
	case TR_CONFINE_NOT_REGULAR: /* not asked for: regular_only is off */
	case TR_CONFINE_ERROR:
		src->outcome = tr_error_from_errno(err);
		src->err = err;
		if (src->outcome == TR_E_NOT_REGULAR)
			src->outcome = TR_E_IO; /* no target to name a type for */
		break;
	}
}

/* With rights other than the daemon's own: the source may be read by them (its ACL, the link's
 * target), else outcome says why not. A document cached for another reader is served only
 * after this. */
static void check_readable(enum tfs_rights rights, struct source *src)
{
	int err = 0;

	if (rights == TFS_RIGHTS_CALLER &&
	    syscall(SYS_faccessat2, src->fd, "", R_OK, AT_EACCESS | AT_EMPTY_PATH) != 0)
		err = errno;
	else if (rights == TFS_RIGHTS_UNCHECKED && src->followed)
		err = EACCES; /* a link's way cannot be checked for this reader */
	if (err) {
		src->outcome = tr_error_from_errno(err);
		src->err = err;
	}
}

/* Resolves base in the directory dir_fd, with the rights of the request's caller (creds.h).
 * Returns 0 (src filled; src->fd is the file to read when the outcome is TR_OK, else closed) or
 * -errno for the name itself. */
static int resolve(struct tfs_fs *fs, int dir_fd, const char *base, struct source *src)
{
	enum tfs_rights rights = tfs_creds_begin();
	int err = 0;

	memset(src, 0, sizeof(*src));
	src->fd = openat(dir_fd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (src->fd < 0) {
		err = -errno;
		goto out;
	}
	err = tfs_stat_entry(fs, src->fd, &src->st);
	if (!err && !tfs_name_has_sibling(src->st.st_mode, &fs->opts))
		err = -ENOENT;
	if (err) {
		source_destroy(src);
		goto out;
	}
	src->outcome = TR_OK;
	if (S_ISLNK(src->st.st_mode)) {
		src->followed = true;
		follow_link(fs, dir_fd, base, src);
	}
	if (src->outcome == TR_OK)
		check_readable(rights, src);
	if (src->outcome != TR_OK)
		source_destroy(src);
out:
	tfs_creds_end(rights);
	return err;
}

/* Renders res as the sibling key names (selector, format) under the mount's options. */
static struct tr_doc *render_sibling(const struct tfs_fs *fs, const struct tr_result *res,
				     const struct tfs_doc_key *key)
{
	struct tr_render_style style;

	tr_render_style_init(&style, &fs->opts);
	style.sel = &key->sel;
	return tr_render_ex(res, key->fmt, &style);
}

/* Renders the failure outcome of src for key->path. Returns a document or NULL (out of memory). */
static struct tr_doc *failure_doc(const struct tfs_fs *fs, const struct source *src,
				  const struct tfs_doc_key *key)
{
	const char *path = key->path;
	struct tr_result res;
	struct tr_doc *doc = NULL;

	if (tr_result_init(&res, path) < 0)
		goto out;
	tr_result_set_stat(&res, &src->st); /* the link's, or the file's that could not be read */
	switch (src->outcome) {
	case TR_E_OUTSIDE_ROOT:
		tr_result_fail(&res, TR_E_OUTSIDE_ROOT,
			       "Symbolic link points outside the mounted tree: %s", path);
		break;
	case TR_E_NOT_FOUND:
		if (S_ISLNK(src->st.st_mode))
			tr_result_fail(&res, TR_E_NOT_FOUND,
				       "File not found: %s (the symbolic link's target is missing)",
				       path);
		else
			tr_result_fail(&res, TR_E_NOT_FOUND, "File not found: %s", path);
		break;
	case TR_E_NOT_REGULAR:
		if (src->loop)
			tr_result_fail(&res, TR_E_NOT_REGULAR,
				       "Not a regular file: %s (symbolic link loop)", path);
		else if (src->own_mount)
			tr_result_fail(&res, TR_E_NOT_REGULAR,
				       "Not a regular file: %s (the symbolic link leads into this "
				       "toolfs mount itself)",
				       path);
		else
			tr_result_not_regular(&res, &src->target);
		break;
	default: tr_result_fail_errno(&res, src->err ? src->err : EIO); break;
	}
	doc = render_sibling(fs, &res, key);
out:
	tr_result_destroy(&res);
	return doc;
}

static bool same_state(const struct tfs_doc_key *key, const struct stat *st)
{
	struct tfs_doc_key now = *key;

	tfs_doc_key_set_stat(&now, st);
	return tfs_doc_key_equal(&now, key);
}

/* Reads the regular file src->fd into a document. key holds the state the read was asked for
 * and is updated to the state actually read (made unique when the file kept changing). On open
 * failure the document is a failure result and key->outcome says which. */
static struct tr_doc *read_doc(struct tfs_fs *fs, struct source *src, const char *base,
			       struct tfs_doc_key *key)
{
	struct tr_source tsrc = {.path = key->path, .name = base};
	struct tr_result res;
	struct tr_doc *doc = NULL;
	struct stat after;
	int fd, rc;

	/* Reopening the O_PATH fd reads exactly the inode that was resolved and checked regular. */
	fd = tr_reopen(src->fd, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		src->outcome = key->outcome = tr_error_from_errno(-fd);
		src->err = -fd;
		return failure_doc(fs, src, key);
	}
	if (tr_result_init(&res, key->path) < 0)
		goto out;
	/* The core retries a read that sees the file change; what it returns is one version, whose
	 * state becomes the key (the lookup may have seen an older one). A read with no consistent
	 * version is served under a unique key, never shared. */
	rc = tr_read_fd(fd, &tsrc, &key->sel, &fs->opts, &res, &after);
	if (rc < 0)
		goto out;
	if (rc == 0 && !same_state(key, &after)) {
		tfs_doc_key_set_stat(key, &after);
		src->st = after;
	} else if (rc > 0) {
		key->unstable = __atomic_add_fetch(&unstable_serial, 1, __ATOMIC_RELAXED);
	}
	/* The source file's own path, as toolfs-read gives it (file:// URIs in MCP). */
	if (asprintf(&res.abs_path, "%s/%s", fs->root.path, key->path) < 0)
		res.abs_path = NULL;
	doc = render_sibling(fs, &res, key);
out:
	tr_result_destroy(&res);
	close(fd);
	return doc;
}

static void fill_attr(struct stat *attr, const struct stat *st, uint64_t size, ino_t ino)
{
	memset(attr, 0, sizeof(*attr));
	attr->st_ino = ino;
	attr->st_mode = S_IFREG | (st->st_mode & 0444);
	attr->st_nlink = 1;
	attr->st_uid = st->st_uid;
	attr->st_gid = st->st_gid;
	attr->st_size = size;
	attr->st_blksize = 4096;
	attr->st_blocks = (size + 511) / 512;
	attr->st_atim = st->st_atim;
	attr->st_mtim = st->st_mtim;
	attr->st_ctim = st->st_ctim;
}

ino_t tfs_sibling_ino(dev_t dir_dev, ino_t dir_ino, const char *base, const struct tr_selector *sel,
		      enum tr_format fmt)
{
	struct tfs_doc_key key = {
		.version = {.dev = dir_dev, .ino = dir_ino},
		.sel = sel->present ? *sel : (struct tr_selector){.present = false},
		.fmt = fmt,
		.path = (char *)base,
	};

	return (ino_t)(tfs_doc_key_hash(&key) | (1ULL << 63));
}

int tfs_sibling_make(struct tfs_fs *fs, struct tfs_inode *dir, const char *base,
		     const struct tr_selector *sel, enum tr_format fmt, struct tfs_sibling *out)
{
	struct source src;
	struct tfs_doc_key key = {
		.sel = sel->present ? *sel : (struct tr_selector){.present = false},
		.fmt = fmt,
	};
	struct tr_doc *doc;
	int dir_fd, err;

	memset(out, 0, sizeof(*out));
	key.path = tfs_inodes_child_path(&fs->inodes, dir, base);
	if (!key.path)
		return -ENOMEM;
	dir_fd = tfs_inode_fd(&fs->inodes, dir);
	err = dir_fd < 0 ? dir_fd : resolve(fs, dir_fd, base, &src);
	if (dir_fd >= 0)
		tfs_inode_fd_put(&fs->inodes, dir);
	if (err) {
		free(key.path);
		return err;
	}
	key.outcome = src.outcome;
	tfs_doc_key_set_stat(&key, &src.st);
	out->entry = tfs_cache_get_pinned(fs->cache, &key, &doc);
	if (!doc) {
		if (src.outcome == TR_OK)
			doc = read_doc(fs, &src, base, &key);
		else
			doc = failure_doc(fs, &src, &key);
		if (doc && tr_doc_failed(doc)) {
			tr_doc_unref(doc);
			doc = NULL;
		}
		if (doc)
			out->entry = tfs_cache_put_pinned(fs->cache, &key, doc, &out->cached);
		out->rendered = doc != NULL;
	} else {
		out->cached = true;
	}
	if (!doc) {
		source_destroy(&src);
		free(key.path);
		return -ENOMEM;
	}
	fill_attr(&out->attr, &src.st, tr_doc_size(doc),
		  tfs_sibling_ino(dir->dev, dir->ino, base, sel, fmt));
	source_destroy(&src);
	out->key = key;
	out->doc = doc;
	return 0;
}

void tfs_sibling_destroy(struct tfs_sibling *s)
{
	tr_doc_unref(s->doc);
	tfs_cache_unpin(s->entry);
	tfs_doc_key_destroy(&s->key);
	s->doc = NULL;
	s->entry = NULL;
}
