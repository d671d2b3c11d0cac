/* budget.c - the process's read memory budget: big reads wait for one another instead of all
 * holding their documents at once (max_read_memory, docs/SPEC.md §4). */
#include <pthread.h>

#include "core.h"

/* Lock order: budget_lock is a leaf; nothing else is taken while it is held. */
static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t budget_freed = PTHREAD_COND_INITIALIZER;
static uint64_t budget_used;  /* bytes taken by the reads in flight */
static uint64_t budget_reads; /* reads in flight that took a share */

void tr_budget_take(uint64_t cost, uint64_t limit)
{
	if (cost == 0)
		return;
	pthread_mutex_lock(&budget_lock);
	/* A read alone always proceeds, however big: waiting could then never end. */
	while (budget_reads > 0 && (budget_used + cost > limit || budget_used + cost < cost))
		pthread_cond_wait(&budget_freed, &budget_lock);
	budget_used += cost;
	budget_reads++;
	pthread_mutex_unlock(&budget_lock);
}

void tr_budget_give(uint64_t cost)
{
	if (cost == 0)
		return;
	pthread_mutex_lock(&budget_lock);
	budget_used -= cost;
	budget_reads--;
	pthread_cond_broadcast(&budget_freed);
	pthread_mutex_unlock(&budget_lock);
}

uint64_t tr_budget_in_use(void)
{
	uint64_t used;

	pthread_mutex_lock(&budget_lock);
	used = budget_used;
	pthread_mutex_unlock(&budget_lock);
	return used;
}
