/* heap.h - the daemon's heap policy: few malloc arenas, and free pages given back to the kernel
 * while the daemon works. */
#ifndef TFS_HEAP_H
#define TFS_HEAP_H

struct tfs_trimmer;

/* Caps glibc's malloc arenas at the number of online CPUs (glibc's default is eight per CPU):
 * only that many worker threads run at once, and every arena keeps the free pages of its own
 * holes, so more arenas mean more resident memory for no speed. Call before any thread starts. */
void tfs_heap_limit_arenas(void);

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
