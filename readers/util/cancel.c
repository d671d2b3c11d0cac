/* SPDX-License-Identifier: MIT */
/* cancel.c - a read's cancellation (struct tr_cancel, include/tr_read.h): an eventfd that
 * another thread makes readable, so that a wait in poll(2) on a worker's socket sees it. */
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tr_read.h"

int tr_cancel_init(struct tr_cancel *c)
{
	c->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return c->fd < 0 ? -1 : 0;
}

void tr_cancel_fire(struct tr_cancel *c)
{
	if (c->fd >= 0)
		(void)eventfd_write(c->fd, 1); /* only fails when the counter would overflow */
}

bool tr_cancel_fired(const struct tr_cancel *c)
{
	struct pollfd p = {.fd = c ? c->fd : -1, .events = POLLIN};

	return p.fd >= 0 && poll(&p, 1, 0) == 1;
}

void tr_cancel_destroy(struct tr_cancel *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
