/* SPDX-License-Identifier: MIT */
/* worker.c - start and stop of a helper thread with its lock and wake-up condition. */
#include <time.h>

#include "tr_worker.h"

int tr_worker_start(struct tr_worker *w, void *(*fn)(void *), void *arg)
{
	pthread_condattr_t attr;

	w->stop = false;
	if (pthread_mutex_init(&w->lock, NULL))
		return -1;
	if (pthread_condattr_init(&attr))
		goto fail_lock;
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (pthread_cond_init(&w->wake, &attr)) {
		pthread_condattr_destroy(&attr);
		goto fail_lock;
	}
	pthread_condattr_destroy(&attr);
	if (pthread_create(&w->thread, NULL, fn, arg))
		goto fail_cond;
	return 0;
fail_cond:
	pthread_cond_destroy(&w->wake);
fail_lock:
	pthread_mutex_destroy(&w->lock);
	return -1;
}

int tr_worker_wait_ms(struct tr_worker *w, unsigned ms)
{
	struct timespec at;

	clock_gettime(CLOCK_MONOTONIC, &at);
	at.tv_sec += ms / 1000;
	at.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (at.tv_nsec >= 1000000000L) {
		at.tv_sec++;
		at.tv_nsec -= 1000000000L;
	}
	return pthread_cond_timedwait(&w->wake, &w->lock, &at);
}

void tr_worker_stop(struct tr_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
}
