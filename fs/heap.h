/* SPDX-License-Identifier: MIT */
/* heap.h - the daemon's heap policy: few malloc arenas, large blocks mapped on their own, and
 * free pages given back to the kernel while the daemon works. */
#ifndef TFS_HEAP_H
#define TFS_HEAP_H

struct tfs_trimmer;

/* Blocks of this size and more are mapped on their own, whatever their lifetime. */
#define TFS_HEAP_MMAP_THRESHOLD (64 * 1024)

/* Sets glibc's malloc policy for the daemon. Call before any thread starts.
 * - Arenas capped at the number of online CPUs (glibc's default is eight per CPU): only that
 *   many worker threads run at once, and every arena keeps the free pages of its own holes, so
 *   more arenas mean more resident memory for no speed.
 * - Blocks of TFS_HEAP_MMAP_THRESHOLD and more mapped on their own, at a fixed threshold. By
 *   default glibc raises the threshold to the size of each mapped block freed, so after a few
 *   requests every render buffer (file chunks, growing JSON runs, sealed documents) comes from
 *   the heap; long-lived documents then sit between freed transient buffers and the heap's
 *   resident pages creep up under a steady load (issue 7's load test: +3-10% after warm-up).
 *   A mapped block goes back to the kernel whole when freed, and realloc grows it by mremap. */
void tfs_heap_set_policy(void);

/* Starts a thread that, every interval_ms while documents were dropped since its last turn,
 * calls malloc_trim(0). Under a steady load the glibc arenas of the worker threads otherwise
 * keep every page they ever held (freed documents leave holes between live ones), so the
 * daemon's RSS creeps up long after its live heap stopped growing. Returns the trimmer, or NULL
 * when the thread cannot start (the daemon then runs without it). Call after fuse_daemonize:
 * threads do not survive its fork. */
struct tfs_trimmer *tfs_trimmer_start(unsigned interval_ms);

/* Notes that memory was freed since the last turn (cheap: one relaxed atomic add). NULL is a
 * no-op. */
void tfs_trimmer_note(struct tfs_trimmer *trimmer);

/* Stops and joins the thread and frees the trimmer. NULL is a no-op. */
void tfs_trimmer_stop(struct tfs_trimmer *trimmer);

#endif
