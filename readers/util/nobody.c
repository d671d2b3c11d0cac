/* SPDX-License-Identifier: MIT */
/* nobody.c - the user a sandboxed child of root becomes (the SVG render, the media worker). */
#include <grp.h>
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
