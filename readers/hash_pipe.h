/* hash_pipe.h - SHA-256 of a file's chunks in a helper thread, while the caller scans them. */
#ifndef TR_HASH_PIPE_H
#define TR_HASH_PIPE_H

#include <stddef.h>

struct tr_hash_pipe;

/* Starts a hashing thread that owns n_slots buffers of slot_size bytes, used in turn. Returns
 * NULL when memory or the thread cannot be had (the caller then hashes inline). */
struct tr_hash_pipe *tr_hash_pipe_new(size_t n_slots, size_t slot_size);

/* Returns the next buffer to fill (slot_size bytes), waiting until the thread has hashed what
 * it held before. Borrowed: valid until n_slots further acquires. */
unsigned char *tr_hash_pipe_acquire(struct tr_hash_pipe *pipe);

/* Queues the first len bytes of the last acquired buffer for hashing. The caller may go on
 * reading them (not writing) while they are hashed. */
void tr_hash_pipe_submit(struct tr_hash_pipe *pipe, size_t len);

/* Waits for everything submitted to be hashed, writes the hex digest (65 bytes with NUL) when
 * hex is non-NULL, stops the thread and frees pipe. NULL is a no-op. */
void tr_hash_pipe_finish(struct tr_hash_pipe *pipe, char *hex);

#endif
