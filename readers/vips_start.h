/* vips_start.h - one start-up of libvips for the whole process, shared by every reader. */
#ifndef TR_VIPS_START_H
#define TR_VIPS_START_H

#include <stdbool.h>

/* Starts libvips once (thread-safe), with its operation cache off (toolfs caches results
 * itself) and its log messages dropped (the core never prints). Returns true when it is usable. */
bool tr_vips_start(void);

#endif
