/* SPDX-License-Identifier: MIT */
/* handles.c - the documents of open sibling handles, kept until the kernel releases them, and
 * what each user's handles pin. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "fdpool.h"
#include "handles.h"
#include "tr_doc.h"

enum { REFUSAL_LOG_MS = 10000 };

void tfs_handles_init(struct tfs_handles *hs, uint64_t max_user)
{
	*hs = (struct tfs_handles){.max_user = max_user};
	pthread_mutex_init(&hs->lock, NULL);
}

void tfs_handles_destroy(struct tfs_handles *hs)
{
	while (hs->first)
		tfs_handle_release(hs, hs->first);
	free(hs->users);
	pthread_mutex_destroy(&hs->lock);
}

/* uid's pins, added with none when it has no entry (NULL when out of memory); under the lock. */
static struct tfs_user_pins *user_pins(struct tfs_handles *hs, uid_t uid)
{
	for (size_t i = 0; i < hs->n_users; i++)
		if (hs->users[i].uid == uid)
			return &hs->users[i];
	if (hs->n_users == hs->cap_users) {
		size_t cap = hs->cap_users ? 2 * hs->cap_users : 8;
		struct tfs_user_pins *grown = realloc(hs->users, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		hs->users = grown;
		hs->cap_users = cap;
	}
	hs->users[hs->n_users] = (struct tfs_user_pins){.uid = uid};
	return &hs->users[hs->n_users++];
}

/* Logs a refused open with what every user's handles pin, at most once every REFUSAL_LOG_MS;
 * under the lock. */
static void log_refusal(struct tfs_handles *hs, uid_t uid, uint64_t size)
{
	uint64_t now = tfs_now_ms();

	if (hs->logged_ms && now - hs->logged_ms < REFUSAL_LOG_MS)
		return;
	hs->logged_ms = now;
	fprintf(stderr,
		"toolfs: an open of a %" PRIu64 "-byte sibling by uid %u is refused (EMFILE): it "
		"would pass max_open_memory=%" PRIu64 "; open siblings pin",
		size, (unsigned)uid, hs->max_user);
	for (size_t i = 0; i < hs->n_users; i++)
		fprintf(stderr, "%s uid %u %" PRIu64 " bytes in %" PRIu64, i ? "," : "",
			(unsigned)hs->users[i].uid, hs->users[i].bytes, hs->users[i].handles);
	fputc('\n', stderr);
}

int tfs_handle_open(struct tfs_handles *hs, struct tr_doc *doc, uid_t uid, struct tfs_handle **out)
{
	uint64_t size = tr_doc_size(doc);
	struct tfs_handle *h = malloc(sizeof(*h));
	struct tfs_user_pins *pins;
	bool over;

	if (!h)
		return -ENOMEM;
	pthread_mutex_lock(&hs->lock);
	pins = user_pins(hs, uid);
	over = pins && pins->handles &&
	       (pins->bytes >= hs->max_user || size > hs->max_user - pins->bytes);
	if (!pins || over) {
		if (over)
			log_refusal(hs, uid, size);
		pthread_mutex_unlock(&hs->lock);
		free(h);
		return over ? -EMFILE : -ENOMEM;
	}
	pins->bytes += size;
	pins->handles++;
	*h = (struct tfs_handle){.doc = doc, .uid = uid, .next = hs->first};
	if (hs->first)
		hs->first->prev = h;
	hs->first = h;
	pthread_mutex_unlock(&hs->lock);
	*out = h;
	return 0;
}

void tfs_handle_release(struct tfs_handles *hs, struct tfs_handle *h)
{
	struct tfs_user_pins *pins;

	if (!h)
		return;
	pthread_mutex_lock(&hs->lock);
	*(h->prev ? &h->prev->next : &hs->first) = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pins = user_pins(hs, h->uid);
	if (pins) {
		pins->bytes -= tr_doc_size(h->doc);
		if (--pins->handles == 0)
			*pins = hs->users[--hs->n_users]; /* the last takes its place */
	}
	pthread_mutex_unlock(&hs->lock);
	tr_doc_unref(h->doc);
	free(h);
}
