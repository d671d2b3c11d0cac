/* SPDX-License-Identifier: MIT */
/* handles.h - the documents of open sibling handles, kept until the kernel releases them, and
 * what each user's handles pin. */
#ifndef TFS_HANDLES_H
#define TFS_HANDLES_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

struct tr_doc;

/* One open sibling handle: its fi->fh. */
struct tfs_handle {
	struct tr_doc *doc; /* owned reference */
	uid_t uid;          /* the user who opened it */
	struct tfs_handle *prev, *next;
};

/* What one user's open handles pin: the sizes of their documents, each counted once per
 * handle. */
struct tfs_user_pins {
	uid_t uid;
	uint64_t bytes;
	uint64_t handles;
};

/* Every handle the kernel has not released yet. An unmount drops the RELEASE requests the
 * daemon has not read by then (the kernel sends them in the background), so the daemon frees
 * what is left at exit instead of leaking it. */
struct tfs_handles {
	pthread_mutex_t lock;
	struct tfs_handle *first;
	uint64_t max_user;           /* -o max_open_memory: the most one user's handles pin */
	struct tfs_user_pins *users; /* users with open handles; owned; under the lock */
	size_t n_users, cap_users;
	uint64_t logged_ms; /* when a refusal was last logged (tfs_now_ms), 0 never */
};

/* Starts with no handle; max_user bounds what one user's handles pin (tfs_handle_open). */
void tfs_handles_init(struct tfs_handles *hs, uint64_t max_user);

/* Frees every handle left, with its document reference. */
void tfs_handles_destroy(struct tfs_handles *hs);

/* Opens a handle for user uid taking over the reference doc into *out. Returns 0; -EMFILE when
 * the documents of uid's open handles, with doc, would pass max_user (a user with no open handle
 * is never refused, so any one document can be opened), which is logged on stderr with what
 * each user pins (at most once every 10 s); -ENOMEM when out of memory. On failure doc is still
 * the caller's. */
int tfs_handle_open(struct tfs_handles *hs, struct tr_doc *doc, uid_t uid, struct tfs_handle **out);

/* Frees h and drops its document reference; NULL is a no-op. */
void tfs_handle_release(struct tfs_handles *hs, struct tfs_handle *h);

#endif
