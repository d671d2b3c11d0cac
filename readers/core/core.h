/* core.h - the reader core's private parts: "Did you mean ...?" for a path that does not exist. */
#ifndef TR_CORE_PRIVATE_H
#define TR_CORE_PRIVATE_H

#include "tr_result.h"

/* --- suggest --- */
/* "Did you mean ...?" for a path that does not exist. */

/* Lists the folder of path (relative to dirfd) and, when up to three names are close to the
 * missing one, rewrites res's not_found error as "File not found: P. Did you mean A, B or C?"
 * with each name shown in path's folder. Leaves res unchanged when none is close. */
void tr_suggest_similar(struct tr_result *res, int dirfd, const char *path);

#endif
