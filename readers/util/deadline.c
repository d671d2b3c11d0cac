/* SPDX-License-Identifier: MIT */
/* deadline.c - the time budget of one result's renders (max_render_ms), on the monotonic clock. */
#include <stdint.h>
#include <time.h>

#include "util.h"

uint64_t tr_deadline_after_ms(uint64_t ms)
{
	struct timespec ts;
	uint64_t now;

	if (ms == 0 || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return ms > (UINT64_MAX - now) / 1000000u ? 0 : now + ms * 1000000u;
}

bool tr_deadline_passed(uint64_t deadline)
{
	struct timespec ts;

	if (deadline == 0 || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return false;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec >= deadline;
}

int tr_deadline_wait_ms(uint64_t deadline, int cap_ms)
{
	struct timespec ts;
	uint64_t now, ms;

	if (deadline == 0 || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return cap_ms;
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (now >= deadline)
		return 0;
	ms = (deadline - now + 999999) / 1000000u;
	return cap_ms >= 0 && ms > (uint64_t)cap_ms ? cap_ms : ms > INT32_MAX ? INT32_MAX : (int)ms;
}
