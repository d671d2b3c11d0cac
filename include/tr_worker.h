/* SPDX-License-Identifier: MIT */
/* tr_worker.h - a helper thread with its lock, its wake-up condition and a stop flag, started
 * and stopped (flagged, woken, joined) in one place. */
#ifndef TR_WORKER_H
#define TR_WORKER_H

#include <pthread.h>
#include <stdbool.h>

struct tr_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* on CLOCK_MONOTONIC, for pthread_cond_timedwait */
	bool stop;           /* under lock: set by tr_worker_stop, the thread's cue to return */
};

/* Initialises w's lock and condition (stop false) and runs fn(arg) on a new thread; fn waits on
 * w->wake under w->lock and returns once it sees w->stop. Returns 0, or -1 when the thread or
 * its lock cannot be made (w then holds nothing to release). */
int tr_worker_start(struct tr_worker *w, void *(*fn)(void *), void *arg);

/* Waits on w->wake, with w->lock held, for at most ms milliseconds. Returns 0 when woken
 * (perhaps spuriously), ETIMEDOUT when the time ran out. */
int tr_worker_wait_ms(struct tr_worker *w, unsigned ms);

/* Sets stop under the lock, wakes the thread, joins it and destroys the lock and condition. */
void tr_worker_stop(struct tr_worker *w);

#endif
