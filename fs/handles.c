/* SPDX-License-Identifier: MIT */
/* handles.c - the documents of open sibling handles, kept until the kernel releases them. */
#include <stdlib.h>

#include "handles.h"
#include "tr_doc.h"

void tfs_handles_init(struct tfs_handles *hs)
{
	pthread_mutex_init(&hs->lock, NULL);
	hs->first = NULL;
}

void tfs_handles_destroy(struct tfs_handles *hs)
{
	while (hs->first)
		tfs_handle_release(hs, hs->first);
	pthread_mutex_destroy(&hs->lock);
}

struct tfs_handle *tfs_handle_open(struct tfs_handles *hs, struct tr_doc *doc)
{
	struct tfs_handle *h = malloc(sizeof(*h));

	if (!h)
		return NULL;
	h->doc = doc;
	h->prev = NULL;
	pthread_mutex_lock(&hs->lock);
	h->next = hs->first;
	if (hs->first)
		hs->first->prev = h;
	hs->first = h;
	pthread_mutex_unlock(&hs->lock);
	return h;
}

void tfs_handle_release(struct tfs_handles *hs, struct tfs_handle *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&hs->lock);
	*(h->prev ? &h->prev->next : &hs->first) = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pthread_mutex_unlock(&hs->lock);
	tr_doc_unref(h->doc);
	free(h);
}
