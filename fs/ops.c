/* SPDX-License-Identifier: MIT */
/* ops.c - the FUSE low-level handlers: a read-only mirror of SOURCE plus the virtual siblings. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/limits.h>
#include <linux/xattr.h>

#include "beneath.h"
#include "creds.h"
#include "dir.h"
#include "lookup.h"
#include "ops.h"
#include "sibling.h"
#include "toolfs.h"

/*
 * Caching. In -o cache=relaxed (the default), plain entries and their attributes get timeouts
 * of TFS_PLAIN_TIMEOUT, and listings are kept by the kernel (dir.c), when the directory that holds
 * them is watched (watch.c): a stat or a repeated walk costs no round trip, and a plain entry may
 * show its state from before a change for the invalidation delay (README). In -o cache=watch
 * only directories' entries get TFS_PLAIN_TIMEOUT; files' and symlinks' entries and every attribute
 * keep timeouts of 0, so a stat, open or read past the cached size asks the daemon (which is how
 * a moved directory is noticed at once, and how a stat of the mount point notices a dead
 * daemon). In -o cache=strict, a directory over the watch limit or on a file system inotify
 * cannot see, every timeout is 0. A watched change is invalidated from the watch's own thread
 * (fuse_lowlevel_notify_inval_entry / _inode), never from a handler, where the kernel may hold
 * the directory's lock the invalidation waits for; the one invalidation a handler sends is
 * open_real's of a file's attributes alone, which takes no such lock.
 *
 * Nothing is stale meanwhile in cache=watch, and no sibling in any mode, by construction: every handler that reads
 * SOURCE first takes in the pending change events (tfs_watch_sync), which the kernel queued
 * before the write, rename or unlink that made them returned. A directory the kernel may still
 * reach by a name that a change took from it (renamed, deleted, replaced) carries a moved mark
 * until a lookup finds it again; getattr, open, opendir and lookups in it or under it answer
 * ESTALE, on which the kernel walks the path again with every entry revalidated (LOOKUP_REVAL).
 * A directory has one kernel entry, so the lookup that finds it again is the one the kernel
 * uses. Siblings keep an entry timeout of 0: every path walk to one ends in a lookup, which
 * resolves the source by name in its directory now.
 *
 * Real files' pages stay cached across opens only while (size, mtime, ctime) are unchanged
 * (tfs_inodes_reopen_unchanged) and the kernel's size is the opened one (open_real); an
 * IN_MODIFY of a file whose attributes the kernel may hold for long drops them too, and for a
 * file changed within the last second ("Never a padded read", below) the getattr that precedes
 * each read() does when the size or mtime changed (FUSE_CAP_AUTO_INVAL_DATA).
 *
 * A sibling inode is one immutable version (inode.h), so its attributes never go stale and its
 * pages can always be kept; only its entry timeout is 0, so that the next lookup after a change
 * gives the new version's inode.
 */
static void tfs_op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct tfs_fs *fs = userdata;

	/* Listings kept by the kernel need every change to reach it as an invalidation: only
	 * cache=relaxed with a watch (directories the watch does not cover are handled in dir.c). */
	fs->no_opendir = fs->cache_attrs && fs->watch &&
			 (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
	/* FUSE_CAP_AUTO_INVAL_DATA makes every read() first refresh the attributes when they are
	 * no longer valid (fuse_cache_read_iter). In cache=relaxed they are valid for
	 * TFS_PLAIN_TIMEOUT unless an open of a changed file or the watch thread invalidated them, so
	 * it costs a GETATTR only then, and a read of a file whose size shrank then stops at the
	 * opened version's size (see open_real): without it, a read inside the old, larger size
	 * ends only where a short READ lowers i_size, and the kernel drops that lowering when an
	 * invalidation raced with the READ, keeping zeroed pages past the end. With the
	 * attribute timeouts of 0 of the other modes it would cost a GETATTR before every read(),
	 * which quadruples the cost of a warm `cat`: not asked there. */
	if (fs->cache_attrs && (conn->capable & FUSE_CAP_AUTO_INVAL_DATA))
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	else
		conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	/* Fewer, larger requests: reads and readahead of up to 1 MiB (FUSE_MAX_PAGES follows
	 * max_write in libfuse). The kernel lowers what it cannot grant. */
	conn->max_write = 1U << 20;
	conn->max_readahead = 1U << 20;
	/* A symlink's text never changes: a replaced link is a new inode. */
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* Under allow_other the kernel's permission checks (default_permissions) apply SOURCE's
	 * POSIX ACLs, which it asks by getxattr and caches with the attributes: the daemon opens by
	 * inode, where no path is searched, so a directory's ACL is honoured only by the kernel's
	 * walk. Not without it: only the daemon's own user enters, whose own lookups in SOURCE meet
	 * the ACLs, and `ls -l` would ask every name for its ACL (2.5 times the time). */
	fs->posix_acl = tfs_creds_others() && (conn->capable & FUSE_CAP_POSIX_ACL);
	if (fs->posix_acl)
		conn->want |= FUSE_CAP_POSIX_ACL;
}

static void tfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int err;

	tfs_creds_set_caller(req);
	err = tfs_lookup_entry(tfs_fs_of(req), tfs_inode_of(req, parent), name, &e);
	tfs_creds_clear_caller();

	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, &e);
}

static void tfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	tfs_inodes_forget(&tfs_fs_of(req)->inodes, tfs_inode_of(req, ino), nlookup);
	fuse_reply_none(req);
}

static void tfs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		tfs_inodes_forget(&tfs_fs_of(req)->inodes, tfs_inode_of(req, forgets[i].ino),
				  forgets[i].nlookup);
	fuse_reply_none(req);
}

static void tfs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	struct tfs_inode *inode = tfs_inode_of(req, ino);
	struct stat st;
	double timeout;
	int fd, rc;

	/* With or without a handle: a sibling inode is one version, whose size every handle on it
	 * reads. */
	tfs_watch_sync(fs->watch);
	if (inode->is_sibling) {
		fuse_reply_attr(req, &inode->attr, TFS_SIBLING_ATTR_TIMEOUT);
		return;
	}
	/* An open real file answers for itself, even when it has been deleted since. */
	if (fi && inode->type == S_IFREG) {
		rc = fstat(fi->fh, &st);
	} else if ((rc = tfs_inode_usable(fs, inode)) != 0) {
		fuse_reply_err(req, -rc);
		return;
	} else {
		fd = tfs_inode_fd(&fs->inodes, inode);
		if (fd < 0) {
			fuse_reply_err(req, -fd);
			return;
		}
		rc = fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
		tfs_inode_fd_put(&fs->inodes, inode);
	}
	if (rc < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	/* The kernel checks every walk into the mount against the root's mode
	 * (default_permissions): it lets in no one whom SOURCE's ancestors keep out. */
	if (inode == &fs->inodes.root)
		st.st_mode &= fs->root_mask | ~(mode_t)0777;
	timeout = tfs_plain_attr_timeout(fs, inode);
	if (inode->type == S_IFREG)
		timeout = tfs_inodes_gave_attrs(&fs->inodes, inode, st.st_size, timeout);
	fuse_reply_attr(req, &st, timeout);
}

static void tfs_op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	struct tfs_inode *inode = tfs_inode_of(req, ino);
	char buf[PATH_MAX + 1];
	ssize_t n;
	int fd;

	if (inode->is_sibling || inode->type != S_IFLNK) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	tfs_watch_sync(fs->watch);
	n = tfs_inode_usable(fs, inode);
	if (n) {
		fuse_reply_err(req, (int)-n);
		return;
	}
	fd = tfs_inode_fd(&fs->inodes, inode);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	n = readlinkat(fd, "", buf, sizeof(buf));
	if (n < 0)
		n = -errno;
	tfs_inode_fd_put(&fs->inodes, inode);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if ((size_t)n == sizeof(buf))
		fuse_reply_err(req, ENAMETOOLONG);
	else {
		buf[n] = '\0';
		fuse_reply_readlink(req, buf);
	}
}

/*
 * Never a torn read. The kernel serves a real file's reads through its page cache, cut at the
 * size it holds for the inode (filemap_read stops at i_size; fuse_cache_read_iter asks for
 * attributes only when a read passes that size and they are no longer valid, and an mmap
 * faults past it with SIGBUS). That size came from the last lookup or getattr: in
 * cache=relaxed it stays valid for TFS_PLAIN_TIMEOUT, until the watch thread's invalidation lands;
 * in the other modes, for the rest of the jiffy it came in. A file rewritten in place (same
 * inode) and opened within that window would be read as the new bytes cut or padded at the old
 * size, which is no version the file ever had.
 *
 * So an open compares the size of the descriptor it opened with the sizes given to the kernel
 * for the inode (tfs_inodes_open_size_stale), and when they may differ invalidates the inode's
 * attributes (offset -1: attributes only, which takes no page or directory lock, so it is safe
 * inside a handler) before it replies. The kernel's next stat, read past the old size or
 * lseek(SEEK_END) then asks getattr, which answers by fstat of this very descriptor (the
 * kernel sends its fh), so the size is the opened version's; a read inside a larger old size
 * ends where this descriptor's short READ ends (fuse_short_read lowers i_size). A getattr or
 * lookup reply that left before the invalidation and arrives after it is dropped by the kernel
 * (its attr_version is older). keep_cache is 0 then, so no page of another version is served
 * either. FOPEN_DIRECT_IO would not clamp reads to i_size, but it refuses MAP_SHARED mmap
 * (ENODEV without FUSE_DIRECT_IO_ALLOW_MMAP, which libfuse 3.14 cannot ask for) and its
 * MAP_PRIVATE faults are cut at i_size all the same.
 *
 * Never a padded read. A file rewritten in place after the open is read by the descriptor as
 * it is now: a READ inside the size the kernel holds comes back short, the kernel zero-fills the
 * rest of the page and lowers i_size to the READ's end (fuse_short_read), unless the inode's
 * attr_version moved while the READ was in flight, and then it keeps the old size and read()
 * returns the zeros. Every notify_inval_inode moves it (fuse_reverse_inval_inode), so
 * invalidating on a short read only makes sure of the padding (tried: 34-858 padded reads in
 * 3,000 of tests/mount/test_mount_torn.py, where a3ab549 padded 0-14), and the watch thread's
 * invalidation after each IN_MODIFY is what padded reads of a file rewritten every 2 ms in
 * cache=relaxed (1-50 in 3,000; never in watch or strict, which send none). So a regular file
 * that a change event named within TFS_FILE_HOT_MS gets its attributes with timeout 0
 * (tfs_inodes_gave_attrs), read() then asks getattr first (FUSE_CAP_AUTO_INVAL_DATA), and the
 * watch invalidates a file's attributes after a change in place only when some reply gave them
 * a timeout since its last invalidation (tfs_inodes_take_long_attrs): once per quiet second, not
 * per rewrite. Measured against FOPEN_DIRECT_IO for files changed since their last open
 * (bench/scale --pairs, 5 rounds): a cat of a 4 KB file rewritten every 20 ms costs 2.5 times
 * a3ab549's here, 1.07 times with direct_io, but direct_io still padded 3-5 reads in 3,000 (the
 * file changes after the open that chose it) and its mmap fails with ENODEV.
 */
static void open_real(fuse_req_t req, fuse_ino_t ino, struct tfs_inode *inode,
		      struct fuse_file_info *fi)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	enum tfs_rights rights;
	struct stat st;
	int path_fd, fd, err;

	if (inode->type != S_IFREG) {
		fuse_reply_err(req, inode->type == S_IFDIR ? EISDIR : EINVAL);
		return;
	}
	path_fd = tfs_inode_fd(&fs->inodes, inode);
	if (path_fd < 0) {
		fuse_reply_err(req, -path_fd);
		return;
	}
	rights = tfs_creds_begin();
	fd = tr_reopen(path_fd, O_RDONLY);
	err = fd < 0 ? fd : fstat(fd, &st) < 0 ? -errno : 0;
	tfs_creds_end(rights);
	tfs_inode_fd_put(&fs->inodes, inode);
	/* Checked once the file is open: one moved out before that is caught. */
	if (!err)
		err = tfs_inode_usable(fs, inode);
	if (err) {
		fuse_reply_err(req, -err);
		if (fd >= 0)
			close(fd);
		return;
	}
	fi->fh = fd;
	fi->keep_cache = tfs_inodes_reopen_unchanged(&fs->inodes, inode, &st);
	if (tfs_inodes_open_size_stale(&fs->inodes, inode, st.st_size)) {
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
		fi->keep_cache = 0;
	}
	fi->noflush = 1;
	if (fuse_reply_open(req, fi) == -ENOENT)
		close(fd); /* the open was interrupted; no release will come */
}

/* Finds the document of a sibling version for a new handle: the one of the cache entry the inode
 * pins from the lookup that preceded the open, else the cache's. When neither has it (the hold
 * was pushed out of its budget and the cache evicted the version), the source is read again, and if
 * it changed in between the open fails with ESTALE, on which the kernel redoes the path walk
 * (and so the lookup) once. */
static int sibling_doc(struct tfs_fs *fs, struct tfs_inode *inode, struct tr_doc **out)
{
	const char *slash = strrchr(inode->key.path, '/');
	struct tfs_sibling sib;
	int err;

	*out = tfs_inodes_take_doc(&fs->inodes, inode);
	if (!*out)
		*out = tfs_cache_get(fs->cache, &inode->key);
	if (*out && (off_t)tr_doc_size(*out) == inode->attr.st_size)
		return 0;
	tr_doc_unref(*out);
	*out = NULL;
	err = tfs_sibling_make(fs, inode->dir, slash ? slash + 1 : inode->key.path, &inode->key.sel,
			       inode->key.fmt, &sib);
	if (err)
		return err == -ENOMEM ? -ENOMEM : -ESTALE;
	if (tfs_doc_key_equal(&sib.key, &inode->key) && sib.attr.st_size == inode->attr.st_size)
		*out = tr_doc_ref(sib.doc);
	tfs_sibling_destroy(&sib);
	return *out ? 0 : -ESTALE;
}

static void open_sibling(fuse_req_t req, struct tfs_inode *inode, struct fuse_file_info *fi)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	struct tfs_handle *h;
	struct tr_doc *doc;
	int err = sibling_doc(fs, inode, &doc);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	/* -o max_open_memory: past it, the open is refused (EMFILE) rather than pin more. */
	err = tfs_handle_open(&fs->handles, doc, fuse_req_ctx(req)->uid, &h);
	if (err) {
		tr_doc_unref(doc);
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uintptr_t)h;
	/* The inode is one immutable version: whatever the kernel cached of it is still right. */
	fi->keep_cache = 1;
	fi->noflush = 1;
	if (fuse_reply_open(req, fi) == -ENOENT)
		tfs_handle_release(&fs->handles, h);
}

static void tfs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tfs_inode *inode = tfs_inode_of(req, ino);

	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & (O_TRUNC | O_CREAT))) {
		fuse_reply_err(req, EROFS);
		return;
	}
	tfs_watch_sync(tfs_fs_of(req)->watch);
	tfs_creds_set_caller(req);
	if (inode->is_sibling)
		open_sibling(req, inode, fi);
	else
		open_real(req, ino, inode, fi);
	tfs_creds_clear_caller();
}

/* A worker thread that encodes base64 keeps its read buffer, of the largest read the kernel
 * sends (max_write, which FUSE_MAX_PAGES follows): a fresh 1 MiB buffer per request costs 256
 * page faults, more than encoding its base64. Allocated once at full size, not grown read by
 * read, so it does not leave a trail of smaller buffers behind. Freed when the thread ends. */
enum { READ_BUF_CAP = 1 << 20 };
static pthread_key_t read_buf_key;
static pthread_once_t read_buf_once = PTHREAD_ONCE_INIT;
static bool read_buf_key_ok;

struct read_buf {
	size_t cap;
	char data[];
};

static void read_buf_key_create(void)
{
	read_buf_key_ok = pthread_key_create(&read_buf_key, free) == 0;
}

/* Returns a buffer of at least len bytes: this thread's (*owned false), or, when threads cannot
 * keep one, a new one the caller frees (*owned true). NULL when out of memory. */
static char *read_buf_get(size_t len, bool *owned)
{
	struct read_buf *buf;

	pthread_once(&read_buf_once, read_buf_key_create);
	*owned = !read_buf_key_ok;
	if (*owned)
		return malloc(len ? len : 1);
	buf = pthread_getspecific(read_buf_key);
	if (!buf || buf->cap < len) {
		size_t cap = len > READ_BUF_CAP ? len : READ_BUF_CAP;
		struct read_buf *grown = malloc(sizeof(*grown) + cap);

		if (!grown)
			return NULL;
		grown->cap = cap;
		free(buf);
		pthread_setspecific(read_buf_key, grown);
		buf = grown;
	}
	return buf->data;
}

/* Reads a handle's snapshot: replies straight from the document when the range is literal
 * bytes in one piece (text, JSON), else encodes only the base64 the range covers
 * (tr_doc_read). */
static void read_sibling(fuse_req_t req, const struct tr_doc *doc, size_t size, off_t off)
{
	uint64_t total = tr_doc_size(doc);
	size_t len = off < 0 || (uint64_t)off >= total ? 0 : total - off;
	const void *span;
	bool owned;
	char *buf;

	if (len > size)
		len = size;
	span = len ? tr_doc_span(doc, (uint64_t)off, len) : NULL;
	if (span) {
		/* The reply's own reference: once the kernel has the reply, it may end the request
		 * and, for the last readahead of a closed file, send RELEASE, which another thread
		 * serves while this one is still returning from writev (ASan checks the iovec
		 * then). */
		tr_doc_ref((struct tr_doc *)doc);
		fuse_reply_buf(req, span, len);
		tr_doc_unref((struct tr_doc *)doc);
		return;
	}
	buf = read_buf_get(len, &owned);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	len = tr_doc_read(doc, off, buf, len);
	fuse_reply_buf(req, buf, len);
	if (owned)
		free(buf);
}

static void read_real(fuse_req_t req, int fd, size_t size, off_t off)
{
	struct fuse_bufvec data = FUSE_BUFVEC_INIT(size);

	data.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	data.buf[0].fd = fd;
	data.buf[0].pos = off;
	fuse_reply_data(req, &data, FUSE_BUF_SPLICE_MOVE);
}

static void tfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	if (tfs_inode_of(req, ino)->is_sibling)
		read_sibling(req, ((const struct tfs_handle *)(uintptr_t)fi->fh)->doc, size, off);
	else
		read_real(req, fi->fh, size, off);
}

static void tfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (tfs_inode_of(req, ino)->is_sibling) {
		tfs_handle_release(&tfs_fs_of(req)->handles,
				   (struct tfs_handle *)(uintptr_t)fi->fh);
		tfs_trimmer_note(tfs_fs_of(req)->trimmer);
	} else {
		close(fi->fh);
	}
	fuse_reply_err(req, 0);
}

static void tfs_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;

	(void)ino;
	if (fstatvfs(tfs_fs_of(req)->root.fd, &st) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &st);
}

/* Every mutation: the mount is read-only (the kernel refuses most of them first, as the mount is
 * "ro"; these cover the rest). */
static void tfs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			   struct fuse_file_info *fi)
{
	(void)ino, (void)attr, (void)to_set, (void)fi;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			 dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_remove(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent, (void)name;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link, (void)parent, (void)name;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
			  const char *newname, unsigned int flags)
{
	(void)parent, (void)name, (void)newparent, (void)newname, (void)flags;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino, (void)newparent, (void)newname;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			  struct fuse_file_info *fi)
{
	(void)parent, (void)name, (void)mode, (void)fi;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
			 struct fuse_file_info *fi)
{
	(void)ino, (void)buf, (void)size, (void)off, (void)fi;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			     struct fuse_file_info *fi)
{
	(void)ino, (void)mode, (void)offset, (void)length, (void)fi;
	fuse_reply_err(req, EROFS);
}

static void tfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			    size_t size, int flags)
{
	(void)ino, (void)name, (void)value, (void)size, (void)flags;
	fuse_reply_err(req, EROFS);
}

/* The POSIX ACL of a real directory or regular file, which the kernel asks for its permission
 * checks when it applies them (fs->posix_acl): its size when size is 0, else its bytes.
 * Siblings, links and special files have none (ENODATA). Any other attribute, and every one
 * when the kernel applies no ACLs, is EOPNOTSUPP: `ls -l` then stops asking after one name. */
static void tfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct tfs_fs *fs = tfs_fs_of(req);
	struct tfs_inode *inode = tfs_inode_of(req, ino);
	char proc[32], *buf = NULL;
	ssize_t n;
	int fd;

	if (!fs->posix_acl || (strcmp(name, XATTR_NAME_POSIX_ACL_ACCESS) != 0 &&
			       strcmp(name, XATTR_NAME_POSIX_ACL_DEFAULT) != 0)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (inode->is_sibling || (inode->type != S_IFDIR && inode->type != S_IFREG)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	size = size < XATTR_SIZE_MAX ? size : XATTR_SIZE_MAX;
	if (size && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = tfs_inode_fd(&fs->inodes, inode);
	if (fd < 0) {
		n = fd;
	} else {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		n = getxattr(proc, name, buf, size);
		n = n < 0 ? -errno : n;
		tfs_inode_fd_put(&fs->inodes, inode);
	}
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (!size)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void tfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino, (void)name;
	fuse_reply_err(req, EROFS);
}

const struct fuse_lowlevel_ops tfs_ops = {
	.init = tfs_op_init,
	.lookup = tfs_op_lookup,
	.forget = tfs_op_forget,
	.forget_multi = tfs_op_forget_multi,
	.getattr = tfs_op_getattr,
	.readlink = tfs_op_readlink,
	.open = tfs_op_open,
	.read = tfs_op_read,
	.release = tfs_op_release,
	.opendir = tfs_op_opendir,
	.readdir = tfs_op_readdir,
	.readdirplus = tfs_op_readdirplus,
	.releasedir = tfs_op_releasedir,
	.statfs = tfs_op_statfs,
	.setattr = tfs_op_setattr,
	.mknod = tfs_op_mknod,
	.mkdir = tfs_op_mkdir,
	.unlink = tfs_op_remove,
	.rmdir = tfs_op_remove,
	.symlink = tfs_op_symlink,
	.rename = tfs_op_rename,
	.link = tfs_op_link,
	.create = tfs_op_create,
	.write = tfs_op_write,
	.fallocate = tfs_op_fallocate,
	.setxattr = tfs_op_setxattr,
	.getxattr = tfs_op_getxattr,
	.removexattr = tfs_op_removexattr,
};
