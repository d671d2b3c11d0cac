/* SPDX-License-Identifier: MIT */
/* creds.c - a request's accesses to SOURCE made with the rights of the process that asked. */
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "creds.h"

/* Supplementary groups taken from a caller; more are left out (less access, never more). */
enum { MAX_GROUPS = 256 };

static struct {
	bool enabled;    /* allow_other */
	bool can_switch; /* setfsuid and setgroups work (CAP_SETUID, CAP_SETGID) */
	uid_t uid;
	gid_t gid;
	int n_groups;
	gid_t groups[MAX_GROUPS];
} daemon_ids;

static __thread struct {
	bool set;
	uid_t uid;
	gid_t gid;
	fuse_req_t req;
} caller;

/* The raw system calls act on this thread only; glibc's setgroups changes every thread. The
 * set-fsuid calls return the previous id, never an error: the id is read back to check. */
static long set_fsuid(uid_t uid)
{
	return syscall(SYS_setfsuid, uid);
}

static long set_fsgid(gid_t gid)
{
	return syscall(SYS_setfsgid, gid);
}

static long set_groups(int n, const gid_t *groups)
{
	return syscall(SYS_setgroups, (size_t)n, groups);
}

void tfs_creds_init(bool allow_other)
{
	int n = getgroups(MAX_GROUPS, daemon_ids.groups);

	daemon_ids.enabled = allow_other;
	daemon_ids.uid = geteuid();
	daemon_ids.gid = getegid();
	daemon_ids.n_groups = n < 0 ? 0 : n;
	if (!allow_other)
		return;
	/* Probe on this thread, and back: 65534 is only a test value. */
	set_fsuid(65534);
	daemon_ids.can_switch = set_fsuid(daemon_ids.uid) == 65534 &&
				set_groups(daemon_ids.n_groups, daemon_ids.groups) == 0;
	set_fsuid(daemon_ids.uid);
}

bool tfs_creds_others(void)
{
	return daemon_ids.enabled;
}

void tfs_creds_set_caller(fuse_req_t req)
{
	const struct fuse_ctx *ctx;

	if (!daemon_ids.enabled)
		return;
	ctx = fuse_req_ctx(req);
	caller.set = true;
	caller.uid = ctx->uid;
	caller.gid = ctx->gid;
	caller.req = req;
}

void tfs_creds_clear_caller(void)
{
	caller.set = false;
	caller.req = NULL;
}

enum tfs_rights tfs_creds_begin(void)
{
	gid_t groups[MAX_GROUPS];
	int n;

	if (!daemon_ids.enabled || !caller.set || caller.uid == daemon_ids.uid)
		return TFS_RIGHTS_OWN;
	if (!daemon_ids.can_switch)
		return TFS_RIGHTS_UNCHECKED;
	/* The groups come from /proc/PID/task/PID/status; a caller gone meanwhile keeps none. */
	n = fuse_req_getgroups(caller.req, MAX_GROUPS, groups);
	if (n < 0)
		n = 0;
	if (n > MAX_GROUPS)
		n = MAX_GROUPS;
	if (set_groups(n, groups) != 0)
		set_groups(0, NULL);
	set_fsgid(caller.gid);
	set_fsuid(caller.uid);
	return TFS_RIGHTS_CALLER;
}

void tfs_creds_end(enum tfs_rights rights)
{
	if (rights != TFS_RIGHTS_CALLER)
		return;
	/* The uid first: back at 0 it gives the thread its capabilities again (setfsuid(2)). */
	set_fsuid(daemon_ids.uid);
	set_fsgid(daemon_ids.gid);
	set_groups(daemon_ids.n_groups, daemon_ids.groups);
}
