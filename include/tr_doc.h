/* SPDX-License-Identifier: MIT */
/* tr_doc.h - an immutable output document: literal bytes interleaved with base64 of blobs,
 * sized exactly without encoding and readable at any offset. */
#ifndef TR_DOC_H
#define TR_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "tr_blob.h"
#include "tr_digest.h"

struct tr_doc;

/* Returns an empty document (refcount 1), or NULL when out of memory. */
struct tr_doc *tr_doc_new(void);

/* Appends a copy of bytes. Returns 0, or -1 when out of memory (the document is then unusable:
 * tr_doc_failed() reports it and further appends are ignored). */
int tr_doc_append(struct tr_doc *doc, const void *bytes, size_t len);

/* Appends the padded standard base64 of blob (no quotes, no line breaks); takes a new reference
 * on blob, the caller keeps its own. Returns 0 or -1 as tr_doc_append. */
int tr_doc_append_base64(struct tr_doc *doc, struct tr_blob *blob);

/* Appends the 64 hex digits of digest (no quotes), taking a reference on it. Reads that reach
 * them wait until the digest is known. Returns 0 or -1 as tr_doc_append. */
int tr_doc_append_digest(struct tr_doc *doc, struct tr_digest *digest);

/* True when an append ran out of memory. */
int tr_doc_failed(const struct tr_doc *doc);

/* Exact byte length of the document. O(1). */
uint64_t tr_doc_size(const struct tr_doc *doc);

/* Copies up to len bytes starting at offset into buf; returns the count (0 at or past the end).
 * Encodes only the base64 groups that the range covers. Safe from several threads at once. */
size_t tr_doc_read(const struct tr_doc *doc, uint64_t offset, void *buf, size_t len);

/* Returns a pointer to the len bytes at offset when they are literal bytes held in one piece
 * (no base64 or digest to produce, no run boundary crossed), valid while doc lives; else NULL.
 * Lets a reader reply without copying. */
const void *tr_doc_span(const struct tr_doc *doc, uint64_t offset, size_t len);

/* Receives the next piece of a document being written (bytes borrowed for the call); returns 0,
 * or -1 to stop the write. */
typedef int (*tr_doc_sink_fn)(void *arg, const void *bytes, size_t len);

/* Passes the first len bytes of doc (len <= tr_doc_size) to sink, in order and in pieces: literal
 * runs as they are held (never copied whole), base64 encoded in chunks of 64 KiB on the stack,
 * so that a write begun never fails for memory. Returns 0, or -1 when sink stopped. */
int tr_doc_write_to(const struct tr_doc *doc, uint64_t len, tr_doc_sink_fn sink, void *arg);

/* Writes the whole document to fd, retrying short writes and EINTR. Returns 0, or -1 with errno. */
int tr_doc_write_fd(const struct tr_doc *doc, int fd);

/* Completes doc: its segment table and every literal run (built by doubling) move into
 * one exact-size block, so a cached document is two allocations holding about tr_doc_size()
 * bytes (what the daemon's cache counts), made once it is whole instead of left where its
 * growing buffers happened to be. Appends after it fail. The bytes are unchanged; out of memory
 * leaves doc as it was built. */
void tr_doc_seal(struct tr_doc *doc);

/* Reference counting; tr_doc_unref(NULL) is a no-op. */
struct tr_doc *tr_doc_ref(struct tr_doc *doc);
void tr_doc_unref(struct tr_doc *doc);

#endif
