/* SPDX-License-Identifier: MIT */
/* vips_start.c - the process-wide libvips start-up. */
#include <malloc.h>
#include <pthread.h>

#include <vips/vips.h>

#include "util.h"

/* Blocks of at least this many bytes are mapped on their own (mallopt M_MMAP_THRESHOLD). */
#define TR_VIPS_MMAP_THRESHOLD (4 << 20)

static pthread_once_t vips_once = PTHREAD_ONCE_INIT;
static bool vips_ready;

static void start(void)
{
	if (VIPS_INIT("toolfs") != 0)
		return;
	vips_cache_set_max(0);
	vips_cache_set_max_mem(0);
	/* Pixel buffers (a fit's decoded copy: 11 MB for 2000x1400 RGBA) mapped and unmapped
	 * whole: glibc raises its threshold for mapping to the size of each large block freed, so
	 * later ones were carved from the arenas and stayed there, and a notebook's third plot
	 * peaked 10 MB above its first (docs/SPEC.md §3 "Notebooks": 3 times the size + 64 MiB). A
	 * fixed threshold keeps glibc from moving it. */
	mallopt(M_MMAP_THRESHOLD, TR_VIPS_MMAP_THRESHOLD);
	tr_glib_quiet_domain("VIPS");
	vips_ready = true;
}

bool tr_vips_start(void)
{
	pthread_once(&vips_once, start);
	return vips_ready;
}
