/* SPDX-License-Identifier: MIT */
/* handles.h - the documents of open sibling handles, kept until the kernel releases them. */
#ifndef TFS_HANDLES_H
#define TFS_HANDLES_H

#include <pthread.h>

struct tr_doc;

/* One open sibling handle: its fi->fh. */
struct tfs_handle {
	struct tr_doc *doc; /* owned reference */
	struct tfs_handle *prev, *next;
};

/* Every handle the kernel has not released yet. An unmount drops the RELEASE requests the
 * daemon has not read by then (the kernel sends them in the background), so the daemon frees
 * what is left at exit instead of leaking it. */
struct tfs_handles {
	pthread_mutex_t lock;
	struct tfs_handle *first;
};

void tfs_handles_init(struct tfs_handles *hs);

/* Frees every handle left, with its document reference. */
void tfs_handles_destroy(struct tfs_handles *hs);

/* A new handle taking over the reference doc, or NULL when out of memory (doc then still the
 * caller's). */
struct tfs_handle *tfs_handle_open(struct tfs_handles *hs, struct tr_doc *doc);

/* Frees h and drops its document reference; NULL is a no-op. */
void tfs_handle_release(struct tfs_handles *hs, struct tfs_handle *h);

#endif
