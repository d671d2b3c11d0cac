/* glib_quiet.h - keeps the GLib-based libraries (poppler-glib, libvips) from printing. */
#ifndef TR_GLIB_QUIET_H
#define TR_GLIB_QUIET_H

/* Drops every g_log message of domain (borrowed; GLib copies it),
 * fatal ones included: the core never prints, and a library's complaint about a damaged file
 * is already reported in the result. Call once per domain, before the library's first use. */
void tr_glib_quiet_domain(const char *domain);

#endif
