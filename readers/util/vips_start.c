/* SPDX-License-Identifier: MIT */
/* vips_start.c - the process-wide libvips start-up. */
#include <pthread.h>

#include <vips/vips.h>

#include "util.h"

static pthread_once_t vips_once = PTHREAD_ONCE_INIT;
static bool vips_ready;

static void start(void)
{
	if (VIPS_INIT("toolfs") != 0)
		return;
	vips_cache_set_max(0);
	vips_cache_set_max_mem(0);
	tr_glib_quiet_domain("VIPS");
	vips_ready = true;
}

bool tr_vips_start(void)
{
	pthread_once(&vips_once, start);
	return vips_ready;
}
