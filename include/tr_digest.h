/* SPDX-License-Identifier: MIT */
/* tr_digest.h - a SHA-256 computed in a thread of its own, waited for where its hex is needed. */
#ifndef TR_DIGEST_H
#define TR_DIGEST_H

#include "tr_blob.h"

struct tr_digest;

/* Starts hashing blob (a reference is taken) in a detached thread. Returns the digest (caller
 * owns one reference), or NULL when no thread or memory could be had: hash inline then. */
struct tr_digest *tr_digest_start(struct tr_blob *blob);

/* Waits until the digest is known; returns its 64 lowercase hex digits (NUL-terminated), valid
 * while the caller holds a reference. Safe from several threads at once. */
const char *tr_digest_hex(struct tr_digest *digest);

/* Reference counting; tr_digest_unref(NULL) is a no-op. Dropping the last reference before the
 * thread is done is fine: the thread finishes and frees it. */
struct tr_digest *tr_digest_ref(struct tr_digest *digest);
void tr_digest_unref(struct tr_digest *digest);

#endif
