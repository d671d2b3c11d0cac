/* SPDX-License-Identifier: MIT */
/* mcp_calls.c - toolfs-mcp's read calls: a queue served by a small pool of workers, cancellation
 * (notifications/cancelled), and each answer streamed to the wire. */
#include <cjson/cJSON.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_internal.h"
#include "tr_doc.h"

/* One tools/call of the read tool, queued or running. */
struct mcp_call {
	struct mcp_call *next;
	char *id;      /* the request id as sent (its raw JSON text); owned */
	char *key;     /* the id as cJSON prints it, which cancellation matches; owned */
	cJSON *args;   /* owned, may be NULL */
	bool path_nul; /* file_path held a NUL */
	bool modern;   /* a 2026-07-28 request: the result says resultType */
	bool cancelled;
	struct tr_cancel cancel; /* fired with cancelled: ends the read's sandboxed worker */
};

/* Runs a read call and answers it unless it was cancelled meanwhile. */
static void run_call(struct mcp_calls *calls, struct mcp_call *c)
{
	struct mcp_roots *roots = mcp_session_roots_get(calls->roots);
	struct tr_doc *result = mcp_read_tool(roots, calls->opts, c->args, c->path_nul, &c->cancel);
	bool cancelled;

	mcp_roots_unref(roots);
	pthread_mutex_lock(&calls->lock);
	cancelled = c->cancelled;
	pthread_mutex_unlock(&calls->lock);
	if (cancelled)
		; /* the client gave up on it: no answer (MCP cancellation) */
	else if (result)
		mcp_wire_result_doc(calls->wire, c->id, result, c->modern);
	else
		mcp_wire_error(calls->wire, c->id, RPC_INTERNAL_ERROR,
			       "Internal error: out of memory");
	tr_doc_unref(result);
}

static void call_free(struct mcp_call *c)
{
	if (!c)
		return;
	free(c->id);
	free(c->key);
	cJSON_Delete(c->args);
	tr_cancel_destroy(&c->cancel);
	free(c);
}

static void unlink_call(struct mcp_call **list, struct mcp_call *c)
{
	for (; *list; list = &(*list)->next) {
		if (*list == c) {
			*list = c->next;
			return;
		}
	}
}

static void *worker_main(void *arg)
{
	struct mcp_calls *calls = arg;

	pthread_mutex_lock(&calls->lock);
	for (;;) {
		struct mcp_call *c;

		while (!calls->queue && !calls->stopping)
			pthread_cond_wait(&calls->work, &calls->lock);
		if (!calls->queue)
			break;
		c = calls->queue;
		calls->queue = c->next;
		if (!calls->queue)
			calls->queue_tail = NULL;
		c->next = calls->running;
		calls->running = c;
		/* under the lock: mcp_calls_cancel fires only what it finds running */
		(void)tr_cancel_init(&c->cancel); /* when it fails: a cancel that never fires */
		pthread_mutex_unlock(&calls->lock);
		run_call(calls, c);
		pthread_mutex_lock(&calls->lock);
		unlink_call(&calls->running, c);
		call_free(c);
		if (--calls->in_flight == 0) {
			pthread_cond_broadcast(&calls->idle);
			/* Idle: give the pages of the reads just done back to the kernel. The worker
			 * arenas otherwise keep every page they held (an image decode, a PDF page
			 * render), and the server's RSS stays at its peak between calls. */
			pthread_mutex_unlock(&calls->lock);
			malloc_trim(0);
			pthread_mutex_lock(&calls->lock);
		}
	}
	pthread_mutex_unlock(&calls->lock);
	return NULL;
}

void mcp_calls_start(struct mcp_calls *calls, const struct mcp_request_id *id, const cJSON *args,
		     bool path_nul, bool modern)
{
	struct mcp_call *c = calloc(1, sizeof(*c));

	if (c)
		c->cancel.fd =
			-1; /* its eventfd is made when it runs: a queue holds no descriptor */
	if (!c || !(c->id = strdup(id->raw)) || !(c->key = strdup(id->key)) ||
	    (args && !(c->args = cJSON_Duplicate(args, true)))) {
		call_free(c);
		mcp_wire_error(calls->wire, id->raw, RPC_INTERNAL_ERROR,
			       "Internal error: out of memory");
		return;
	}
	c->path_nul = path_nul;
	c->modern = modern;
	if (!calls->n_workers) {
		(void)tr_cancel_init(&c->cancel); /* when it fails: a cancel that never fires */
		run_call(calls, c);
		call_free(c);
		return;
	}
	pthread_mutex_lock(&calls->lock);
	if (calls->queue_tail)
		calls->queue_tail->next = c;
	else
		calls->queue = c;
	calls->queue_tail = c;
	calls->in_flight++;
	pthread_cond_signal(&calls->work);
	pthread_mutex_unlock(&calls->lock);
}

void mcp_calls_cancel(struct mcp_calls *calls, const cJSON *params)
{
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(params, "requestId");
	char *id = req && (cJSON_IsString(req) || cJSON_IsNumber(req)) ? cJSON_PrintUnformatted(req)
								       : NULL;

	if (!id)
		return;
	pthread_mutex_lock(&calls->lock);
	for (struct mcp_call *c = calls->running; c; c = c->next)
		if (strcmp(c->key, id) == 0) {
			c->cancelled = true;
			tr_cancel_fire(&c->cancel);
		}
	for (struct mcp_call *c = calls->queue, *prev = NULL; c; prev = c, c = c->next) {
		if (strcmp(c->key, id) != 0)
			continue;
		if (prev)
			prev->next = c->next;
		else
			calls->queue = c->next;
		if (calls->queue_tail == c)
			calls->queue_tail = prev;
		call_free(c);
		if (--calls->in_flight == 0)
			pthread_cond_broadcast(&calls->idle);
		break;
	}
	pthread_mutex_unlock(&calls->lock);
	free(id);
}

int mcp_calls_init(struct mcp_calls *calls, const struct tr_options *opts,
		   struct mcp_session_roots *roots, struct mcp_wire *wire, unsigned threads)
{
	memset(calls, 0, sizeof(*calls));
	calls->opts = opts;
	calls->roots = roots;
	calls->wire = wire;
	pthread_mutex_init(&calls->lock, NULL);
	pthread_cond_init(&calls->work, NULL);
	pthread_cond_init(&calls->idle, NULL);
	calls->workers = threads ? calloc(threads, sizeof(*calls->workers)) : NULL;
	for (unsigned i = 0; calls->workers && i < threads; i++) {
		if (pthread_create(&calls->workers[i], NULL, worker_main, calls) != 0)
			break;
		calls->n_workers++;
	}
	if (threads && !calls->n_workers) {
		mcp_calls_destroy(calls);
		return -1;
	}
	return 0;
}

void mcp_calls_drain(struct mcp_calls *calls)
{
	pthread_mutex_lock(&calls->lock);
	while (calls->in_flight)
		pthread_cond_wait(&calls->idle, &calls->lock);
	pthread_mutex_unlock(&calls->lock);
}

void mcp_calls_destroy(struct mcp_calls *calls)
{
	mcp_calls_drain(calls);
	pthread_mutex_lock(&calls->lock);
	calls->stopping = true;
	pthread_cond_broadcast(&calls->work);
	pthread_mutex_unlock(&calls->lock);
	for (unsigned i = 0; i < calls->n_workers; i++)
		pthread_join(calls->workers[i], NULL);
	free(calls->workers);
	pthread_cond_destroy(&calls->work);
	pthread_cond_destroy(&calls->idle);
	pthread_mutex_destroy(&calls->lock);
}
