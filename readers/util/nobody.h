/* SPDX-License-Identifier: MIT */
/* nobody.h - the user a sandboxed child of root becomes. */
#ifndef TR_NOBODY_H
#define TR_NOBODY_H

#include <stdbool.h>
#include <sys/types.h>

/* The user and group nobody: no file of anyone's, no process of anyone's to signal. */
#define TR_NOBODY 65534

/* When root runs this process: no supplementary group, then group and user nobody in every id
 * (real, effective, saved). A change of user clears the parent-death signal: set it after.
 * Returns 0 (also when not root: nothing to drop), or -1 with errno. */
int tr_drop_to_nobody(void);

/* Ends a fork server that dropped to nobody, a child of this process: closes sock (its control
 * socket; the server ends when it reads the end of it), sends SIGKILL (refused without
 * CAP_KILL, as under the system unit, where the end of the socket does it) and reaps pid,
 * waiting at most 2 s. Call it only while pid is an unreaped child: its pid is no other
 * process's then. Either value may be -1 (nothing to do for it). */
void tr_nobody_server_end(pid_t pid, int sock);

/* Whether a tracer (strace) is attached to this process (/proc/self/status's TracerPid): the
 * sandboxes' profile modes, which log a forbidden call instead of stopping it, are honoured
 * only then, so that a daemon left with the test variable still stops every such call. */
bool tr_traced(void);

#endif
