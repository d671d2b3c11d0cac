/* core.h - the reader core's private parts: the read memory budget, and "Did you mean ...?" for a
 * path that does not exist. */
#ifndef TR_CORE_PRIVATE_H
#define TR_CORE_PRIVATE_H

#include <stdint.h>

#include "tr_result.h"

/* --- budget --- */
/* the process's read memory budget (max_read_memory): reads that may hold much memory take a
 * share of it first, so N threads never hold N big documents at once. */

/* Waits until cost more bytes fit within limit beside the reads in flight, then takes them. A
 * read alone proceeds whatever its cost (never a deadlock); cost 0 returns at once. Every take
 * must be followed by tr_budget_give(cost) on the same cost. */
void tr_budget_take(uint64_t cost, uint64_t limit);

/* Gives back what tr_budget_take(cost) took and wakes the reads waiting for it. */
void tr_budget_give(uint64_t cost);

/* Bytes taken by the reads in flight (for tests). */
uint64_t tr_budget_in_use(void);

/* --- suggest --- */
/* "Did you mean ...?" for a path that does not exist. */

/* Lists the folder of path (relative to dirfd) and, when up to three names are close to the
 * missing one, rewrites res's not_found error as "File not found: P. Did you mean A, B or C?"
 * with each name shown in path's folder. Leaves res unchanged when none is close. */
void tr_suggest_similar(struct tr_result *res, int dirfd, const char *path);

#endif
