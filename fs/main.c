/* SPDX-License-Identifier: MIT */
/* main.c - the toolfs daemon: arguments, start-up checks, and the FUSE session's life cycle. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "beneath.h"
#include "creds.h"
#include "ops.h"
#include "stop.h"
#include "toolfs.h"
#include "tr_args.h"
#include "tr_library.h"

#ifndef TOOLFS_VERSION
#define TOOLFS_VERSION "0.0.0"
#endif

/* How often the heap gives its free pages back while documents are being dropped (heap.h). */
enum { TRIM_INTERVAL_MS = 1000 };

struct cmdline {
	const char *source, *mountpoint;
	bool foreground, debug, single_thread;
	bool strict;      /* -o cache=strict */
	bool relaxed;     /* -o cache=relaxed, the default */
	bool no_handles;  /* -o inode_handles=no */
	bool allow_other; /* -o allow_other: requests are served with the reader's rights */
	long watch_limit; /* -o watch_limit=N; -1: none */
	char *fuse_opts;  /* -o options that are not toolfs's, for FUSE; owned */
};

static void usage(FILE *out)
{
	struct tr_options defaults;
	char types[160];

	fputs("Usage: toolfs [options] SOURCE MOUNTPOINT\n"
	      "\n"
	      "Mounts a read-only view of the directory SOURCE at MOUNTPOINT in which every\n"
	      "regular file and symlink NAME has a virtual sibling NAME.tool.json holding its\n"
	      "ToolResult, and NAME:SEL.tool.json a selection of it (lines A, A-, A-B, A.C-;\n"
	      "cells; pages). Returns once the mount is live; SIGTERM or\n"
	      "'fusermount3 -u MOUNTPOINT' unmounts it.\n"
	      "\n"
	      "Options:\n"
	      "  -f                        stay in the foreground (default: detach once mounted)\n"
	      "  -d                        debug: foreground, log every FUSE request\n"
	      "  -s                        single-threaded (default: a thread per request)\n"
	      "  -o OPT[,OPT...]           mount options, below\n"
	      "  -h, --help                show this help and exit\n"
	      "  -V, --version             show the version and exit\n"
	      "\n"
	      "Mount options (-o; sizes take K, M, G):\n",
	      out);
	tr_options_init(&defaults);
	tr_options_print_help(out, &defaults, TR_FRONT_MOUNT);
	fputs("  cache=relaxed|watch|strict  kernel caching of plain entries (default: relaxed)\n"
	      "                            relaxed: entries, attributes and listings, fresh\n"
	      "                            within the invalidation delay (inotify); watch:\n"
	      "                            directory entries only, never stale; strict:\n"
	      "                            nothing plain cached. Siblings are never stale.\n"
	      "  watch_limit=N             watch at most N directories, serve the others\n"
	      "                            uncached (default: the kernel's limit)\n"
	      "  inode_handles=yes|no      keep inodes as file handles (default: yes)\n"
	      "  allow_other               let other users enter the mount (default: off)\n"
	      "  Other options go to FUSE (mount.fuse3(8)). The mount is always\n"
	      "  ro,nodev,nosuid,default_permissions; -o rw is refused.\n",
	      out);
	tr_content_types_list(types, sizeof(types));
	fprintf(out, "\nContent types (the result's contentType):\n  %s\n", types);
	fputs("\n"
	      "Exit status:\n"
	      "  0  the mount is live (with -f: it was unmounted cleanly); --help, --version\n"
	      "  1  SOURCE or MOUNTPOINT unusable, /dev/fuse missing, or the mount failed\n"
	      "  2  usage error\n"
	      "\n"
	      "See toolfs(1) and toolfs(7).\n",
	      out);
}

/* Takes the options of the daemon's own: -f, -d, -s, and the -o items rw (refused), allow_other
 * (noted, and passed on to FUSE), cache, watch_limit and inode_handles (tr_args.h). */
static int take_option(const struct tr_args *args, const char *item, const char *value)
{
	struct cmdline *cmd = args->ctx;
	char *end;

	if (strcmp(item, "-f") == 0) {
		cmd->foreground = true;
	} else if (strcmp(item, "-d") == 0) {
		cmd->debug = cmd->foreground = true;
	} else if (strcmp(item, "-s") == 0) {
		cmd->single_thread = true;
	} else if (strcmp(item, "rw") == 0) {
		return tr_args_error(args, "the mount is read-only: -o %s is not supported", item);
	} else if (strcmp(item, "allow_other") == 0) {
		cmd->allow_other = true; /* and FUSE's */
		return TR_ARG_NOT_MINE;
	} else if (strcmp(item, "cache") == 0) {
		if (!value || (strcmp(value, "strict") != 0 && strcmp(value, "watch") != 0 &&
			       strcmp(value, "relaxed") != 0))
			return TR_ARG_INVALID;
		cmd->strict = strcmp(value, "strict") == 0;
		cmd->relaxed = strcmp(value, "relaxed") == 0;
	} else if (strcmp(item, "inode_handles") == 0) {
		if (!value || (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0))
			return TR_ARG_INVALID;
		cmd->no_handles = strcmp(value, "no") == 0;
	} else if (strcmp(item, "watch_limit") == 0) {
		if (!value || !*value)
			return TR_ARG_INVALID;
		errno = 0;
		cmd->watch_limit = strtol(value, &end, 10);
		if (*end || errno || cmd->watch_limit < 0)
			return TR_ARG_INVALID;
	} else {
		return TR_ARG_NOT_MINE;
	}
	return TR_ARG_TAKEN;
}

/* An -o item toolfs does not know goes to FUSE. */
static int take_fuse_option(const struct tr_args *args, const char *item)
{
	struct cmdline *cmd = args->ctx;

	return fuse_opt_add_opt(&cmd->fuse_opts, item) < 0 ? EXIT_FAILURE : 0;
}

/* SOURCE, then MOUNTPOINT. */
static int take_operand(const struct tr_args *args, const char *arg)
{
	struct cmdline *cmd = args->ctx;

	if (!cmd->source)
		cmd->source = arg;
	else if (!cmd->mountpoint)
		cmd->mountpoint = arg;
	else
		return tr_args_error(args, "unexpected argument: %s", arg);
	return 0;
}

/* Opens /dev/null on any of fds 0-2 that is closed, so that no descriptor the daemon keeps gets
 * one of those numbers (fuse_daemonize points them at /dev/null). */
static void ensure_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
			return;
	}
}

/* The bytes of documents that sibling inodes may hold from a lookup to its open beyond what the
 * cache keeps: a quarter of the cache, and at least room for the lookups of every worker thread
 * at once, so a burst of lookups does not push out the holds of the opens about to follow. */
static uint64_t held_budget(const struct tr_options *opts)
{
	enum { HELD_BUDGET_MIN = 8 << 20 };

	return opts->cache_size / 4 > HELD_BUDGET_MIN ? opts->cache_size / 4 : HELD_BUDGET_MIN;
}

/* Raises the soft descriptor limit to the hard one and returns the limit in force: the inode
 * table's descriptor pool is sized from it (inode.h), so the inodes the kernel remembers are
 * not bounded by it. */
static uint64_t raise_fd_limit(void)
{
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
		return 1024;
	if (lim.rlim_cur < lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
			getrlimit(RLIMIT_NOFILE, &lim);
	}
	return lim.rlim_cur;
}

/* Parses argv. Returns -1 to go on, or an exit status (0 after --help / --version). */
static int parse_args(int argc, char **argv, struct tr_options *opts, struct cmdline *cmd)
{
	const struct tr_args args = {
		.program = "toolfs",
		.front = TR_FRONT_MOUNT,
		.usage = usage,
		.operand = take_operand,
		.option = take_option,
		.extra = take_fuse_option,
		.ctx = cmd,
	};
	int rc = tr_args_parse(&args, argc, argv, opts);

	if (rc >= 0)
		return rc;
	if (!cmd->source || !cmd->mountpoint)
		return tr_args_error(&args, "%s", "SOURCE and MOUNTPOINT are required");
	return -1;
}

/* True when path (a realpath) is a mount point in this namespace; the device of the topmost
 * mount there ("MAJOR:MINOR", field 3 of mountinfo) goes into dev when it is non-NULL. */
static bool find_mount(const char *path, char *dev, size_t dev_size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		char point[PATH_MAX * 4], *o = point;
		const char *p = line, *dev_field = NULL;

		/* Field 5 is the mount point, with ' ', '\t', '\n' and '\\' octal-escaped. */
		for (int field = 1; field < 5 && p; field++) {
			p = strchr(p, ' ');
			if (p)
				p++;
			if (field == 2)
				dev_field = p;
		}
		if (!p)
			continue;
		for (; *p && *p != ' ' && o < point + sizeof(point) - 1; p++) {
			if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] && p[3]) {
				*o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
				p += 3;
			} else {
				*o++ = *p;
			}
		}
		*o = '\0';
		if (strcmp(point, path) != 0)
			continue;
		found = true; /* later lines are mounts on top: the last one is what path shows */
		if (dev)
			snprintf(dev, dev_size, "%.*s", (int)strcspn(dev_field, " "), dev_field);
	}
	free(line);
	fclose(f);
	return found;
}

static bool is_mount_point(const char *path)
{
	return find_mount(path, NULL, 0);
}

/* Lets the kernel read siblings ahead 1 MiB at a time (max_readahead) instead of its default
 * 128 KiB: a FUSE mount's readahead window is the smaller of the two, so without this a `cat`
 * of a 25 MB sibling takes about 100 READ requests of 256 KiB; with it, 30 of up to 1 MiB, and
 * 3.4 ms less of 27 ms on the 2-core bench machine. Only root may write the setting; elsewhere
 * the mount keeps the default. The kernel lowers the setting to the max_readahead of the INIT
 * reply, which comes after this. Returns true when it was raised. */
static bool raise_readahead(const char *mountpoint)
{
	char dev[32], path[96];
	bool raised;
	int fd;

	if (!find_mount(mountpoint, dev, sizeof(dev)))
		return false;
	snprintf(path, sizeof(path), "/sys/class/bdi/%s/read_ahead_kb", dev);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	raised = write(fd, "1024", 4) == 4;
	close(fd);
	return raised;
}

/* True when a is b or lies under it. */
static bool path_within(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strcmp(b, "/") == 0)
		return true;
	return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

/* Returns 0 when /dev/fuse can be used, else an errno. Non-root mounts go through the setuid
 * fusermount3, which opens the device itself: for them it need only exist. */
static int dev_fuse_error(void)
{
	struct stat st;
	int fd;

	if (stat("/dev/fuse", &st) < 0)
		return errno;
	if (!S_ISCHR(st.st_mode))
		return ENODEV;
	if (geteuid() != 0)
		return 0;
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Whether err is what a mount whose daemon died answers: ECONNABORTED to a request caught in
 * flight by the abort, ENOTCONN from then on. */
static bool is_dead_mount_errno(int err)
{
	return err == ENOTCONN || err == ECONNABORTED;
}

static void dead_mount_message(const char *mountpoint, int err)
{
	fprintf(stderr,
		"toolfs: mountpoint %s: %s (a dead mount: unmount it with 'fusermount3 -u %s')\n",
		mountpoint, strerror(err), mountpoint);
}

/* Checks what the kernel and libfuse would otherwise report obscurely. Fills the root of fs and
 * the mountpoint's real path. Returns 0, or prints the reason and returns 1. */
static int check_startup(const struct cmdline *cmd, struct tfs_fs *fs, int *root_fd,
			 struct stat *root_st, char **mnt_real)
{
	struct stat st;
	int fd, err;

	if (stat(cmd->source, &st) < 0) {
		fprintf(stderr, "toolfs: source %s: %s\n", cmd->source, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "toolfs: source %s is not a directory\n", cmd->source);
		return 1;
	}
	fd = open(cmd->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "toolfs: source %s: %s\n", cmd->source, strerror(errno));
		return 1;
	}
	close(fd);
	if (stat(cmd->mountpoint, &st) < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "toolfs: mountpoint %s does not exist\n", cmd->mountpoint);
		else if (is_dead_mount_errno(errno))
			dead_mount_message(cmd->mountpoint, errno);
		else
			fprintf(stderr, "toolfs: mountpoint %s: %s\n", cmd->mountpoint,
				strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "toolfs: mountpoint %s is not a directory\n", cmd->mountpoint);
		return 1;
	}
	err = tr_root_open(&fs->root, cmd->source);
	if (err < 0) {
		fprintf(stderr, "toolfs: source %s: %s\n", cmd->source, strerror(-err));
		return 1;
	}
	*mnt_real = realpath(cmd->mountpoint, NULL);
	if (!*mnt_real) {
		fprintf(stderr, "toolfs: mountpoint %s: %s\n", cmd->mountpoint, strerror(errno));
		return 1;
	}
	if (is_mount_point(*mnt_real)) {
		/* A stat of a FUSE mount may be answered from the kernel's cache (cache=relaxed
		 * caches the root's attributes); statfs always asks the daemon. */
		struct statvfs vfs;

		if (statvfs(*mnt_real, &vfs) < 0 && is_dead_mount_errno(errno)) {
			dead_mount_message(cmd->mountpoint, errno);
			return 1;
		}
		fprintf(stderr,
			"toolfs: mountpoint %s is busy: something is already mounted there\n",
			cmd->mountpoint);
		return 1;
	}
	/* The daemon must never walk into its own mount (a symlink could then make it wait on
	 * itself), so the two trees may not overlap. */
	if (path_within(*mnt_real, fs->root.path) || path_within(fs->root.path, *mnt_real)) {
		fprintf(stderr, "toolfs: mountpoint %s and source %s overlap; mount it outside\n",
			cmd->mountpoint, cmd->source);
		return 1;
	}
	err = dev_fuse_error();
	if (err) {
		fprintf(stderr,
			"toolfs: /dev/fuse is unavailable: %s (load the fuse module, or give the "
			"container the device)\n",
			strerror(err));
		return 1;
	}
	/* The inode table's own descriptor of the root. */
	*root_fd = fcntl(fs->root.fd, F_DUPFD_CLOEXEC, 0);
	if (*root_fd < 0 || fstat(*root_fd, root_st) < 0) {
		fprintf(stderr, "toolfs: source %s: %s\n", cmd->source, strerror(errno));
		return 1;
	}
	return 0;
}

/* The arguments for fuse_session_new: the mount's fixed options after the user's. */
static int session_args(const struct cmdline *cmd, const struct tfs_fs *fs, struct fuse_args *args)
{
	char *fsname = NULL, *opts = NULL;
	int rc = -1;

	if (asprintf(&fsname, "fsname=toolfs:%s", fs->root.path) < 0) {
		fsname = NULL;
		goto out;
	}
	if (fuse_opt_add_arg(args, "toolfs") < 0 ||
	    (cmd->debug && fuse_opt_add_arg(args, "-d") < 0) ||
	    fuse_opt_add_opt_escaped(&opts, fsname) < 0 ||
	    fuse_opt_add_opt(&opts, "subtype=toolfs") < 0 ||
	    (cmd->fuse_opts && fuse_opt_add_opt(&opts, cmd->fuse_opts) < 0) ||
	    fuse_opt_add_opt(&opts, "ro,nodev,nosuid,default_permissions") < 0 ||
	    fuse_opt_add_arg(args, "-o") < 0 || fuse_opt_add_arg(args, opts) < 0)
		goto out;
	rc = 0;
out:
	free(fsname);
	free(opts);
	return rc;
}

static int run_session(struct fuse_session *se, const struct cmdline *cmd)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned cpus = online > 0 ? (unsigned)online : 1;
	struct fuse_loop_config *cfg;
	int rc;

	if (cmd->single_thread)
		return fuse_session_loop(se);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	/* Threads by CPUs: two kept idle per CPU, and up to four per CPU at once, for requests that
	 * wait on the disk or a long render. Measured on 2 CPUs (stat of a plain file in
	 * cache=strict, 5 requests each; median of runs): 10 idle 113-125 us, 6 idle 111-114 us,
	 * 4 idle 93-96 us, 2 idle 134-170 us (with as many idle threads as requests in flight, libfuse
	 * starts a thread for the next request and ends one after it, at every overlap). */
	fuse_loop_cfg_set_idle_threads(cfg, 2 * cpus);
	fuse_loop_cfg_set_max_threads(cfg, cpus * 4 > 8 ? cpus * 4 : 8);
	rc = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return rc;
}

int main(int argc, char **argv)
{
	struct cmdline cmd = {.watch_limit = -1, .relaxed = true};
	struct tfs_fs fs;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se = NULL;
	struct tfs_stop stop;
	struct stat root_st;
	char *mnt_real = NULL;
	int root_fd = -1, status = EXIT_FAILURE, rc;
	uint64_t nofile;

	ensure_std_fds();
	memset(&fs, 0, sizeof(fs));
	tr_options_init(&fs.opts);
	tfs_listing_store_init(&fs.listings);
	tfs_handles_init(&fs.handles);
	rc = parse_args(argc, argv, &fs.opts, &cmd);
	if (rc >= 0) {
		free(cmd.fuse_opts);
		tfs_handles_destroy(&fs.handles);
		tfs_listing_store_destroy(&fs.listings);
		return rc;
	}
	tr_library_init(&fs.opts);
	if (check_startup(&cmd, &fs, &root_fd, &root_st, &mnt_real) != 0)
		goto out_paths;
	nofile = raise_fd_limit();
	tfs_heap_set_policy();
	fs.cache = tfs_cache_new(fs.opts.cache_size);
	if (!fs.cache ||
	    tfs_inodes_init(&fs.inodes, root_fd, &root_st, held_budget(&fs.opts)) < 0) {
		fprintf(stderr, "toolfs: out of memory\n");
		goto out_cache;
	}
	root_fd = -1; /* owned by the root inode */
	if (tfs_beneath_init(&fs) < 0) {
		fprintf(stderr, "toolfs: source %s: cannot read its path in /proc/self/fd: %s\n",
			cmd.source, strerror(errno));
		goto out_inodes;
	}
	tfs_creds_init(cmd.allow_other);
	fs.inodes.fd_cap = tfs_inodes_fd_cap(nofile);
	if (cmd.no_handles)
		fs.inodes.use_handles = false;
	if (!cmd.strict) {
		fs.cache_attrs = cmd.relaxed;
		fs.watch = tfs_watch_new(&fs.inodes, cmd.watch_limit, cmd.relaxed);
		tfs_watch_dir(fs.watch, &fs.inodes.root, fs.root.fd);
	}

	if (session_args(&cmd, &fs, &args) < 0) {
		fprintf(stderr, "toolfs: out of memory\n");
		goto out_inodes;
	}
	se = fuse_session_new(&args, &tfs_ops, sizeof(tfs_ops), &fs);
	if (!se) {
		fprintf(stderr, "toolfs: cannot start a FUSE session (see above)\n");
		goto out_args;
	}
	fs.se = se;
	if (tfs_stop_init(&stop) != 0) {
		fprintf(stderr, "toolfs: cannot set signal handlers: %s\n", strerror(errno));
		goto out_session;
	}
	if (fuse_session_mount(se, mnt_real) != 0) {
		fprintf(stderr, "toolfs: cannot mount %s (see above)\n", cmd.mountpoint);
		goto out_signals;
	}
	raise_readahead(mnt_real); /* best effort */
	if (tfs_beneath_set_own_mount(&fs, mnt_real) < 0) {
		fprintf(stderr, "toolfs: cannot stat the new mount %s: %s\n", cmd.mountpoint,
			strerror(errno));
		goto out_unmount;
	}
	/* Mounted before forking: the parent returns only once the mount is live (requests made
	 * meanwhile wait for the child's loop). */
	if (fuse_daemonize(cmd.foreground) != 0) {
		fprintf(stderr, "toolfs: cannot go to the background\n");
		goto out_unmount;
	}
	/* From here a stop signal or an unmount ends the process within a second, even while a
	 * render goes on (stop.h); main's teardown below is what runs when nothing holds it up. */
	if (tfs_stop_start(&stop, se, mnt_real) != 0) {
		fprintf(stderr, "toolfs: cannot start the stop thread: %s\n", strerror(errno));
		goto out_unmount;
	}
	/* The trimmer is best effort: without its thread the daemon only keeps more pages. */
	fs.trimmer = tfs_trimmer_start(TRIM_INTERVAL_MS);
	if (tfs_watch_start(fs.watch, se) < 0) {
		fprintf(stderr, "toolfs: cannot start the change notification thread\n");
		goto out_unmount;
	}
	/* Best effort too, and useless where siblings are not listed. */
	if (!fs.opts.hide_siblings)
		fs.readahead = tfs_readahead_start(&fs);
	rc = run_session(se, &cmd);
	tfs_readahead_stop(fs.readahead);
	fs.readahead = NULL;
	tfs_watch_free(fs.watch);
	fs.watch = NULL;
	tfs_trimmer_stop(fs.trimmer);
	fs.trimmer = NULL;
	/* The loop ends when the connection does (an unmount, or the detach of a stop signal): a
	 * clean stop. */
	status = rc < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
out_unmount:
	fuse_session_unmount(se);
out_signals:
	tfs_stop_destroy(&stop);
out_session:
	fuse_session_destroy(se);
out_args:
	fuse_opt_free_args(&args);
out_inodes:
	tfs_watch_free(fs.watch);
	tfs_beneath_destroy(&fs);
	tfs_inodes_destroy(&fs.inodes);
out_cache:
	tfs_handles_destroy(&fs.handles);
	tfs_cache_free(fs.cache);
out_paths:
	tfs_listing_store_destroy(&fs.listings);
	if (root_fd >= 0)
		close(root_fd);
	free(mnt_real);
	tr_root_close(&fs.root);
	free(cmd.fuse_opts);
	tr_library_shutdown();
	return status;
}
