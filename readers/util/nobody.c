/* SPDX-License-Identifier: MIT */
/* nobody.c - the user a sandboxed child of root becomes (the reader worker's fork server). */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nobody.h"

int tr_drop_to_nobody(void)
{
	if (geteuid() != 0)
		return 0;
	if (setgroups(0, NULL) || setresgid(TR_NOBODY, TR_NOBODY, TR_NOBODY) ||
	    setresuid(TR_NOBODY, TR_NOBODY, TR_NOBODY))
		return -1;
	return 0;
}

void tr_nobody_server_end(pid_t pid, int sock)
{
	enum { STEP_MS = 5, WAIT_MS = 2000 };
	struct timespec step = {0, STEP_MS * 1000000L};

	if (sock >= 0)
		close(sock);
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	for (int waited = 0; waited < WAIT_MS; waited += STEP_MS) {
		pid_t done = waitpid(pid, NULL, WNOHANG);

		if (done == pid || (done < 0 && errno != EINTR))
			return;
		nanosleep(&step, NULL);
	}
}

bool tr_traced(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strncmp(line, "TracerPid:", 10) == 0 && atoi(line + 10) > 0;
	if (f)
		fclose(f);
	return found;
}
