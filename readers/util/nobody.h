/* SPDX-License-Identifier: MIT */
/* nobody.h - the user a sandboxed child of root becomes. */
#ifndef TR_NOBODY_H
#define TR_NOBODY_H

/* The user and group nobody: no file of anyone's, no process of anyone's to signal. */
#define TR_NOBODY 65534

/* When root runs this process: no supplementary group, then group and user nobody in every id
 * (real, effective, saved). A change of user clears the parent-death signal: set it after.
 * Returns 0 (also when not root: nothing to drop), or -1 with errno. */
int tr_drop_to_nobody(void);

#endif
