/* SPDX-License-Identifier: MIT */
/* creds.h - a request's accesses to SOURCE made with the rights of the process that asked. */
#ifndef TFS_CREDS_H
#define TFS_CREDS_H

#include <stdbool.h>

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

/* Under allow_other, other users' requests reach the daemon, which reads SOURCE with its own
 * rights (root under the system unit). The kernel checks the path a reader walked in the mount
 * against the modes shown (default_permissions), but not what the daemon resolves for it: the
 * directories on a symbolic link's way, ACLs, a document cached for another reader. Between
 * tfs_creds_begin and tfs_creds_end this thread's file-system uid, gid and supplementary groups
 * are the caller's, so the kernel checks those as it would for `cat SOURCE/...`.
 *
 * The process-wide part is set once by tfs_creds_init before any request; the caller is per
 * thread, set by a handler for its own duration. */

/* Which rights an access between begin and end is made with. */
enum tfs_rights {
	TFS_RIGHTS_OWN,       /* the daemon's: no allow_other, no caller, or the daemon's user */
	TFS_RIGHTS_CALLER,    /* the caller's */
	TFS_RIGHTS_UNCHECKED, /* another user's request that the daemon cannot take the rights of
			       * (it lacks CAP_SETUID/CAP_SETGID): only what the kernel checked in
			       * the mount may be shown */
};

/* Records whether other users may enter the mount, and whether the daemon can take their
 * rights (a probe of setfsuid). */
void tfs_creds_init(bool allow_other);

/* Whether other users may enter the mount (allow_other), as tfs_creds_init recorded. */
bool tfs_creds_others(void);

/* The process that made req is this thread's caller until tfs_creds_clear_caller. */
void tfs_creds_set_caller(fuse_req_t req);
void tfs_creds_clear_caller(void);

/* Takes the caller's rights for this thread when they differ from the daemon's. Returns which
 * rights are in effect; pass it to tfs_creds_end. */
enum tfs_rights tfs_creds_begin(void);
void tfs_creds_end(enum tfs_rights rights);

#endif
