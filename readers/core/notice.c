/* SPDX-License-Identifier: MIT */
/* notice.c - the library's notices to the front end's log (tr_library_set_log): facts about the
 * whole process a user should know once. Its own file: the sandbox gives notices and the
 * library's shutdown calls the sandbox. */
#include <stdarg.h>
#include <stdio.h>

#include "core.h"
#include "tr_library.h"

static tr_log_fn log_to;

void tr_library_set_log(tr_log_fn log)
{
	log_to = log;
}

void tr_notice(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!log_to)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_to(line);
}
