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
#include "startup.h"
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
	enum tfs_cache_mode mode; /* -o cache=relaxed (the default), watch or strict */
	bool no_handles;          /* -o inode_handles=no */
	bool allow_other;         /* -o allow_other: requests are served with the reader's rights */
	long watch_limit;         /* -o watch_limit=N; -1: none */
	char *fuse_opts;          /* -o options that are not toolfs's, for FUSE; owned */
};

/* The --help rows of the daemon's own -o options: "NAME=VALUE" and its words. */
static void print_mount_options(FILE *out)
{
	for (size_t i = 0; i < tr_mount_options_count; i++) {
		const struct tr_mount_option_doc *doc = &tr_mount_options[i];
		char tag[64];

		snprintf(tag, sizeof(tag), "%s%s%s", doc->name, doc->value ? "=" : "",
			 doc->value ? doc->value : "");
		tr_args_print_row(out, tag, doc->help, doc->deflt);
	}
}

static void usage(FILE *out)
{
	struct tr_options defaults;
	char types[160];

	fputs("Usage: toolfs [options] SOURCE MOUNTPOINT\n"
	      "\n"
	      "Mounts a read-only view of the directory SOURCE at MOUNTPOINT in which every\n"
	      "regular file and symlink NAME has a virtual sibling NAME.tool.json holding its\n"
	      "ToolResult, and NAME:SEL.tool.json a selection of it (lines A, A-, A-B, A.C-;\n"
	      "cells; pages; sheets; slides; regions WxH+X+Y, P@WxH+X+Y; times T, T1-T2, T1-\n"
	      "of audio and video). Returns once the mount is live;\n"
	      "SIGTERM or 'fusermount3 -u MOUNTPOINT' unmounts it.\n"
	      "\n"
	      "Options:\n",
	      out);
	tr_args_print_front_options(out, TR_FRONT_MOUNT);
	fputs("\nMount options (-o; sizes take K, M, G):\n", out);
	tr_options_init(&defaults);
	tr_options_print_help(out, &defaults, TR_FRONT_MOUNT);
	print_mount_options(out);
	fputs("  Other options go to FUSE (mount.fuse3(8)). The mount is always\n"
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

/* Takes -o item option with value (NULL without '='). A TR_MOUNT_OPTION row with no case here
 * does not compile: -Wswitch is an error in this function. */
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
static int take_mount_option(struct cmdline *cmd, enum tr_mount_option option, const char *value)
{
	char *end;

	switch (option) {
	case TR_MOUNT_OPTION_cache:
		if (!value)
			return TR_ARG_INVALID;
		if (strcmp(value, "relaxed") == 0)
			cmd->mode = TFS_CACHE_RELAXED;
		else if (strcmp(value, "watch") == 0)
			cmd->mode = TFS_CACHE_WATCH;
		else if (strcmp(value, "strict") == 0)
			cmd->mode = TFS_CACHE_STRICT;
		else
			return TR_ARG_INVALID;
		break;
	case TR_MOUNT_OPTION_watch_limit:
		if (!value || !*value)
			return TR_ARG_INVALID;
		errno = 0;
		cmd->watch_limit = strtol(value, &end, 10);
		if (*end || errno || cmd->watch_limit < 0)
			return TR_ARG_INVALID;
		break;
	case TR_MOUNT_OPTION_inode_handles:
		if (!value || (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0))
			return TR_ARG_INVALID;
		cmd->no_handles = strcmp(value, "no") == 0;
		break;
	case TR_MOUNT_OPTION_allow_other:
		cmd->allow_other = true;
		return TR_ARG_NOT_MINE; /* FUSE's too */
	}
	return TR_ARG_TAKEN;
}
#pragma GCC diagnostic pop

/* Takes the options of the daemon's own: -f, -d, -s, -o rw (refused) and the -o items of
 * tr_mount_options (tr_args.h). */
static int take_option(const struct tr_args *args, const char *item, const char *value)
{
	struct cmdline *cmd = args->ctx;

	if (strcmp(item, "-f") == 0) {
		cmd->foreground = true;
	} else if (strcmp(item, "-d") == 0) {
		cmd->debug = cmd->foreground = true;
	} else if (strcmp(item, "-s") == 0) {
		cmd->single_thread = true;
	} else if (strcmp(item, "rw") == 0) {
		return tr_args_error(args, "the mount is read-only: -o %s is not supported", item);
	} else {
		for (size_t i = 0; i < tr_mount_options_count; i++) {
			if (strcmp(item, tr_mount_options[i].name) == 0)
				return take_mount_option(cmd, (enum tr_mount_option)i, value);
		}
		return TR_ARG_NOT_MINE;
	}
	return TR_ARG_TAKEN;
}

/* libfuse's own line for an option it refuses: the usage error below names the item instead. */
static void quiet_fuse_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
}

/* Whether FUSE takes "-o ITEM": a session is made with it alone (no mount, no /dev/fuse). */
static bool fuse_knows_option(const char *item)
{
	static const struct fuse_lowlevel_ops no_ops;
	char *argv[] = {"toolfs", "-o", (char *)item, NULL};
	struct fuse_args probe = FUSE_ARGS_INIT(3, argv);
	struct fuse_session *se;

	fuse_set_log_func(quiet_fuse_log);
	se = fuse_session_new(&probe, &no_ops, sizeof(no_ops), NULL);
	fuse_set_log_func(NULL);
	fuse_opt_free_args(&probe); /* the parse may have copied them */
	if (se)
		fuse_session_destroy(se);
	return se != NULL;
}

/* An -o item toolfs does not know goes to FUSE; one FUSE does not know either is a usage error
 * here, before any check of SOURCE or MOUNTPOINT. */
static int take_fuse_option(const struct tr_args *args, const char *item)
{
	struct cmdline *cmd = args->ctx;

	if (!fuse_knows_option(item))
		return tr_args_error(args, "unknown option: -o %s (neither toolfs nor FUSE has it)",
				     item);
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

/* The bytes of cache entries that sibling inodes may pin from a lookup to its open beyond what
 * the cache keeps resident: a quarter of the cache, and at least room for the lookups of every
 * worker thread at once, so a burst of lookups does not push out the holds of the opens about to
 * follow. */
static uint64_t held_budget(const struct tr_options *opts)
{
	enum { HELD_BUDGET_MIN = 8 << 20 };

	return opts->cache_size / 4 > HELD_BUDGET_MIN ? opts->cache_size / 4 : HELD_BUDGET_MIN;
}

/* Raises the soft descriptor limit to the hard one and returns the limit in force: the inode
 * table's descriptor pool is sized from it (fdpool.h), so the inodes the kernel remembers are
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

/* The reader library's notices (tr_library_set_log), on stderr as this program logs. */
static void log_notice(const char *message)
{
	fprintf(stderr, "toolfs: %s\n", message);
}

int main(int argc, char **argv)
{
	struct cmdline cmd = {.mode = TFS_CACHE_RELAXED, .watch_limit = -1};
	struct tfs_fs fs;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se = NULL;
	struct tfs_stop stop;
	struct stat root_st;
	struct tfs_fs_setup setup;
	char *mnt_real = NULL;
	int root_fd = -1, status = EXIT_FAILURE, rc;
	uint64_t nofile;

	ensure_std_fds();
	memset(&fs, 0, sizeof(fs));
	tr_options_init(&fs.opts);
	rc = parse_args(argc, argv, &fs.opts, &cmd);
	if (rc >= 0) {
		free(cmd.fuse_opts);
		return rc;
	}
	tr_library_init(&fs.opts);
	/* The sibling cache (cache_size) holds whole documents already: a second copy of their
	 * replies would only double the memory. */
	tr_library_set_reply_cache(0);
	tr_library_set_log(log_notice);
	if (tfs_check_startup(cmd.source, cmd.mountpoint, &fs, &root_fd, &root_st, &mnt_real) != 0)
		goto out_paths;
	nofile = raise_fd_limit();
	tfs_heap_set_policy();
	setup = (struct tfs_fs_setup){
		.root_fd = root_fd,
		.root_st = &root_st,
		.held_budget = held_budget(&fs.opts),
		.nofile = nofile,
		.no_handles = cmd.no_handles,
		.mode = cmd.mode,
		.watch_limit = cmd.watch_limit,
	};
	root_fd = -1; /* taken by tfs_fs_init */
	rc = tfs_fs_init(&fs, &setup);
	if (rc == -ENOMEM) {
		fprintf(stderr, "toolfs: out of memory\n");
		goto out_paths;
	} else if (rc < 0) {
		fprintf(stderr, "toolfs: source %s: cannot read its path in /proc/self/fd: %s\n",
			cmd.source, strerror(-rc));
		goto out_paths;
	}
	tfs_creds_init(cmd.allow_other);
	fs.root_mask = cmd.allow_other ? tfs_ancestors_mask(&fs.root, &root_st) : 0777;

	if (session_args(&cmd, &fs, &args) < 0) {
		fprintf(stderr, "toolfs: out of memory\n");
		goto out_state;
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
	tfs_raise_readahead(mnt_real); /* best effort */
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
out_state:
	tfs_fs_destroy(&fs);
out_paths:
	if (root_fd >= 0)
		close(root_fd);
	free(mnt_real);
	tr_root_close(&fs.root);
	free(cmd.fuse_opts);
	tr_library_shutdown();
	return status;
}
