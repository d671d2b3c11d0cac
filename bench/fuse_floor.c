/* SPDX-License-Identifier: MIT */
/* fuse_floor.c - the round trips alone: a libfuse low-level server that renders nothing, so that
 * bench/first_reads can time the very commands it times on toolfs against a FUSE file system
 * whose every answer is ready. It asks the kernel for what toolfs asks (the same multi-threaded
 * loop, 1 MiB reads, no flush, pages kept, cached listings) and gives toolfs's timeouts: plain
 * entries 300 s, siblings an entry timeout of 0 (a LOOKUP at every path walk, as toolfs's
 * freshness needs) and attributes for a day.
 *
 * The tree, made up from names alone:
 *   /flat/             N plain files f%06d.txt (13 bytes) and their siblings f%06d.txt.tool.json
 *                      (600 bytes), listed in that order
 *   /h/I-SIZE.tool.json  any such name: a sibling of SIZE bytes (I < 1,000,000)
 *
 * Usage: fuse_floor MOUNTPOINT N (foreground; unmount with fusermount3 -u). Built by
 * bench/first_reads with cc; not part of toolfs. */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROOT = 1, FLAT = 2, H = 3, FLAT_BASE = 1000000, SIB_BASE = 3000000, H_BASE = 5000000 };
enum { MAX_FLAT = 1000000, MAX_H = 1000000, PLAIN_SIZE = 13, SIB_SIZE = 600 };

static const double plain_timeout = 300.0, sibling_attr_timeout = 86400.0;
static unsigned flat_count;
static off_t h_size[MAX_H];

static void fill_attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_nlink = 1;
	if (ino <= H) {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0444;
		st->st_size = ino >= H_BASE     ? h_size[ino - H_BASE]
			      : ino >= SIB_BASE ? SIB_SIZE
						: PLAIN_SIZE;
	}
}

/* The inode of name in parent, or 0. */
static fuse_ino_t name_ino(fuse_ino_t parent, const char *name)
{
	unsigned i;
	long long size;
	int used = 0;

	if (parent == ROOT)
		return strcmp(name, "flat") == 0 ? FLAT : strcmp(name, "h") == 0 ? H : 0;
	if (parent == FLAT && sscanf(name, "f%6u.txt%n", &i, &used) == 1 && i < flat_count) {
		if (name[used] == '\0')
			return FLAT_BASE + i;
		if (strcmp(name + used, ".tool.json") == 0)
			return SIB_BASE + i;
	}
	if (parent == H && sscanf(name, "%u-%lld.tool.json%n", &i, &size, &used) == 2 &&
	    name[used] == '\0' && i < MAX_H && size >= 0) {
		h_size[i] = size;
		return H_BASE + i;
	}
	return 0;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	fuse_ino_t ino = name_ino(parent, name);

	if (!ino) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = ino;
	fill_attr(ino, &e.attr);
	/* Siblings: entry timeout 0; the rest: toolfs's plain timeout. */
	e.entry_timeout = ino >= SIB_BASE ? 0.0 : plain_timeout;
	e.attr_timeout = ino >= SIB_BASE ? sibling_attr_timeout : plain_timeout;
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	fill_attr(ino, &st);
	fuse_reply_attr(req, &st, ino >= SIB_BASE ? sibling_attr_timeout : plain_timeout);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fi->keep_cache = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	static const char page[1 << 20] = {'x'};
	struct stat st;

	(void)fi;
	fill_attr(ino, &st);
	if (off >= st.st_size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if ((off_t)size > st.st_size - off)
		size = (size_t)(st.st_size - off);
	if (size > sizeof(page))
		size = sizeof(page);
	fuse_reply_buf(req, page, size);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fi->keep_cache = 1;
	fi->cache_readdir = 1;
	fuse_reply_open(req, fi);
}

/* Entry k of /flat: the plain files and their siblings, in turn. */
static void flat_entry(unsigned k, char *name, size_t len, fuse_ino_t *ino)
{
	snprintf(name, len, "f%06u.txt%s", k / 2, k % 2 ? ".tool.json" : "");
	*ino = (k % 2 ? SIB_BASE : FLAT_BASE) + k / 2;
}

/* readdir(plus): with plus, plain entries described in full with their timeouts and siblings
 * with node id 0 (looked up at their use), as toolfs lists them. */
static void list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	char *buf = malloc(size), name[64];
	size_t used = 0;
	unsigned total = ino == FLAT ? 2 * flat_count : ino == ROOT ? 2 : 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (unsigned k = (unsigned)off; k < total; k++) {
		struct stat st;
		fuse_ino_t child;
		size_t need;

		if (ino == ROOT) {
			snprintf(name, sizeof(name), "%s", k ? "h" : "flat");
			child = k ? H : FLAT;
		} else {
			flat_entry(k, name, sizeof(name), &child);
		}
		if (plus) {
			struct fuse_entry_param e = {.attr.st_ino = child};

			fill_attr(child, &e.attr);
			if (child < SIB_BASE) {
				e.ino = child;
				e.entry_timeout = e.attr_timeout = plain_timeout;
			}
			need = fuse_add_direntry_plus(req, buf + used, size - used, name, &e,
						      k + 1);
		} else {
			fill_attr(child, &st);
			need = fuse_add_direntry(req, buf + used, size - used, name, &st, k + 1);
		}
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	list(req, ino, size, off, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	(void)fi;
	list(req, ino, size, off, true);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	(void)ino, (void)name, (void)size;
	fuse_reply_err(req, EOPNOTSUPP); /* as toolfs: `ls -l` then stops asking */
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->max_write = 1U << 20;
	conn->max_readahead = 1U << 20;
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.open = op_open,
	.read = op_read,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.getxattr = op_getxattr,
};

int main(int argc, char **argv)
{
	char *fuse_argv[] = {argv[0], "-o", "ro,nodev,nosuid,default_permissions", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fuse_argv);
	struct fuse_loop_config *cfg;
	struct fuse_session *se;
	int rc;

	if (argc < 3 || argc > 4 || atoi(argv[2]) < 0 || atoi(argv[2]) > MAX_FLAT) {
		fprintf(stderr, "usage: fuse_floor MOUNTPOINT N [single]\n");
		return 2;
	}
	flat_count = (unsigned)atoi(argv[2]);
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se || fuse_session_mount(se, argv[1]) != 0)
		return 1;
	if (argc == 4) {
		rc = fuse_session_loop(se);
		goto out;
	}
	cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	fuse_loop_cfg_set_idle_threads(cfg, 4);
	fuse_loop_cfg_set_max_threads(cfg, 8);
	rc = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
out:
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	return rc ? 1 : 0;
}
