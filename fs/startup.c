/* SPDX-License-Identifier: MIT */
/* startup.c - the daemon's start-up checks: SOURCE and MOUNTPOINT usable, /dev/fuse there,
 * the mount's readahead raised. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "startup.h"
#include "toolfs.h"

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
 * 3.4 ms less of 27 ms on the 2-core bench machine. */
bool tfs_raise_readahead(const char *mountpoint)
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

/* The classes of st's file (owner, group, others: 0700, 0070, 0007) that may search the directory
 * a, by a's mode; with an ACL (acl), whose named entries may keep out anyone but a's owner, only
 * st's owner when that is a's owner with u+x. */
static mode_t searchers(const struct stat *a, const struct stat *st, bool acl)
{
	mode_t classes = 0;

	if (acl)
		return a->st_uid == st->st_uid && (a->st_mode & S_IXUSR) ? 0700 : 0;
	if (a->st_uid == st->st_uid   ? a->st_mode & S_IXUSR
	    : a->st_gid == st->st_gid ? a->st_mode & S_IXGRP
				      : a->st_mode & S_IXOTH)
		classes |= 0700;
	if (a->st_gid == st->st_gid ? a->st_mode & S_IXGRP : a->st_mode & S_IXOTH)
		classes |= 0070;
	if (a->st_mode & S_IXOTH)
		classes |= 0007;
	return classes;
}

/* Whether the directory path has an access ACL beyond its mode. */
static bool has_acl(const char *path)
{
	return getxattr(path, "system.posix_acl_access", NULL, 0) > 0;
}

/* Narrows *mask by the ancestors of path (absolute); the first that narrows it goes into *who
 * (owned) when *who is NULL. */
static void narrow_by_ancestors(const char *path, const struct stat *st, mode_t *mask, char **who)
{
	char *up = strdup(path), *slash;
	mode_t classes;
	struct stat a;

	if (!up || strcmp(up, "/") == 0) {
		free(up);
		return;
	}
	while ((slash = strrchr(up, '/')) != NULL) {
		slash[slash == up] = '\0'; /* "/x" becomes "/", "/" ends the walk */
		classes = stat(up, &a) < 0 ? 0 : searchers(&a, st, has_acl(up));
		if ((classes & *mask) != *mask) {
			*mask &= classes;
			if (!*who)
				*who = strdup(up);
		}
		if (slash == up)
			break;
	}
	free(up);
}

mode_t tfs_ancestors_mask(const struct tr_root *root, const struct stat *st)
{
	mode_t mask = 0777;
	char *who = NULL;

	narrow_by_ancestors(root->path, st, &mask, &who);
	narrow_by_ancestors(root->given, st, &mask, &who);
	if (mask != 0777)
		fprintf(stderr,
			"toolfs: warning: %s does not let every user reach source %s; with "
			"allow_other the mount's root shows mode %04o instead of %04o, so that "
			"the mount lets in no one whom that directory keeps out\n",
			who ? who : "an ancestor", root->path,
			(unsigned)(st->st_mode & (mask | 07000) & 07777),
			(unsigned)(st->st_mode & 07777));
	free(who);
	return mask;
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

int tfs_check_startup(const char *source, const char *mountpoint, struct tfs_fs *fs, int *root_fd,
		      struct stat *root_st, char **mnt_real)
{
	struct stat st;
	int fd, err;

	if (stat(source, &st) < 0) {
		fprintf(stderr, "toolfs: source %s: %s\n", source, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "toolfs: source %s is not a directory\n", source);
		return 1;
	}
	fd = open(source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "toolfs: source %s: %s\n", source, strerror(errno));
		return 1;
	}
	close(fd);
	if (stat(mountpoint, &st) < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "toolfs: mountpoint %s does not exist\n", mountpoint);
		else if (is_dead_mount_errno(errno))
			dead_mount_message(mountpoint, errno);
		else
			fprintf(stderr, "toolfs: mountpoint %s: %s\n", mountpoint, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "toolfs: mountpoint %s is not a directory\n", mountpoint);
		return 1;
	}
	err = tr_root_open(&fs->root, source);
	if (err < 0) {
		fprintf(stderr, "toolfs: source %s: %s\n", source, strerror(-err));
		return 1;
	}
	*mnt_real = realpath(mountpoint, NULL);
	if (!*mnt_real) {
		fprintf(stderr, "toolfs: mountpoint %s: %s\n", mountpoint, strerror(errno));
		return 1;
	}
	if (is_mount_point(*mnt_real)) {
		/* A stat of a FUSE mount may be answered from the kernel's cache (cache=relaxed
		 * caches the root's attributes); statfs always asks the daemon. */
		struct statvfs vfs;

		if (statvfs(*mnt_real, &vfs) < 0 && is_dead_mount_errno(errno)) {
			dead_mount_message(mountpoint, errno);
			return 1;
		}
		fprintf(stderr,
			"toolfs: mountpoint %s is busy: something is already mounted there\n",
			mountpoint);
		return 1;
	}
	/* The daemon must never walk into its own mount (a symlink could then make it wait on
	 * itself), so the two trees may not overlap. */
	if (path_within(*mnt_real, fs->root.path) || path_within(fs->root.path, *mnt_real)) {
		fprintf(stderr, "toolfs: mountpoint %s and source %s overlap; mount it outside\n",
			mountpoint, source);
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
		fprintf(stderr, "toolfs: source %s: %s\n", source, strerror(errno));
		return 1;
	}
	return 0;
}
