/* vips_start.c - the process-wide libvips start-up. */
#include <pthread.h>

#include <vips/vips.h>

#include "vips_start.h"

static pthread_once_t vips_once = PTHREAD_ONCE_INIT;
static bool vips_ready;

static void drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message,
		     gpointer data)
{
	(void)domain;
	(void)level;
	(void)message;
	(void)data;
}

static void start(void)
{
	if (VIPS_INIT("toolfs") != 0)
		return;
	vips_cache_set_max(0);
	vips_cache_set_max_mem(0);
	g_log_set_handler("VIPS", G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION,
			  drop_log, NULL);
	vips_ready = true;
}

bool tr_vips_start(void)
{
	pthread_once(&vips_once, start);
	return vips_ready;
}
