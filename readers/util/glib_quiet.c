/* SPDX-License-Identifier: MIT */
/* glib_quiet.c - a g_log handler that drops the messages of the GLib-based libraries. */
#include <glib.h>

#include "util.h"

static void drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
	(void)domain;
	(void)level;
	(void)message;
	(void)data;
}

void tr_glib_quiet_domain(const char *domain)
{
	g_log_set_handler(domain, G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION,
			  drop_log, NULL);
}
