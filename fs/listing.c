/* SPDX-License-Identifier: MIT */
/* listing.c - directory listings: snapshots of a directory with its siblings, and the store that
 * keeps them between the requests of a listing served without a directory handle. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "listing.h"
#include "names.h"
#include "sibling.h"
#include "toolfs.h"

static void listing_clear(struct tfs_listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->entries[i].name);
	l->n = 0;
}

void tfs_listing_destroy(struct tfs_listing *l)
{
	listing_clear(l);
	free(l->entries);
	l->entries = NULL;
	l->cap = 0;
}

/* Makes room for n entries in all. Returns 0 or -1 (out of memory). */
static int listing_reserve(struct tfs_listing *l, size_t n)
{
	struct tfs_listing_entry *grown;
	size_t cap = l->cap ? l->cap : 64;

	if (n <= l->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	grown = realloc(l->entries, cap * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	l->entries = grown;
	l->cap = cap;
	return 0;
}

/* Appends an entry that takes name. Returns 0 or -1 (out of memory; name freed). */
static int listing_push(struct tfs_listing *l, char *name, ino_t ino, mode_t type, bool sibling)
{
	if (listing_reserve(l, l->n + 1) < 0) {
		free(name);
		return -ENOMEM;
	}
	l->entries[l->n++] = (struct tfs_listing_entry){name, ino, type, sibling};
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the sibling of real entry e (in dir) unless hidden, unnamable or shadowed by a real
 * entry of that name (real_names: sorted, n_real). Returns 0 or -1 (out of memory). */
static int push_sibling(struct tfs_fs *fs, struct tfs_inode *dir, struct tfs_listing *l,
			const struct tfs_listing_entry *e, char **real_names, size_t n_real)
{
	static const struct tr_selector no_sel = {.present = false};
	char *name;

	if (fs->opts.hide_siblings || !e->type || !tfs_name_has_sibling(e->type, &fs->opts))
		return 0;
	if (asprintf(&name, "%s" TFS_SIBLING_SUFFIX, e->name) < 0)
		return -ENOMEM;
	/* Longer names stay resolvable (docs/SPEC.md §4) but are not listed: a struct dirent holds
	 * 255 bytes, and most tools cannot list a longer entry. */
	if (strlen(name) > NAME_MAX ||
	    bsearch(&name, real_names, n_real, sizeof(*real_names), compare_names)) {
		free(name);
		return 0;
	}
	return listing_push(l, name,
			    tfs_sibling_ino(dir->dev, dir->ino, e->name, &no_sel, TR_FORMAT_TOOL),
			    S_IFREG, true);
}

int tfs_listing_build(struct tfs_fs *fs, struct tfs_inode *dir, DIR *dp, struct tfs_listing *l)
{
	char **real_names = NULL;
	size_t n_real;
	int err = -ENOMEM;

	listing_clear(l);
	l->version = tfs_watch_listing_version(fs->watch, dir);
	rewinddir(dp);
	for (;;) {
		struct dirent *de;
		mode_t type;
		char *name;

		errno = 0;
		de = readdir(dp);
		if (!de) {
			if (errno) {
				err = -errno;
				goto fail;
			}
			break;
		}
		type = de->d_type == DT_UNKNOWN ? 0 : DTTOIF(de->d_type);
		if (!type) {
			struct stat st;

			if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				type = st.st_mode & S_IFMT;
		}
		name = strdup(de->d_name);
		if (!name || listing_push(l, name, de->d_ino, type, false) < 0)
			goto fail;
	}
	n_real = l->n;
	real_names = malloc((n_real ? n_real : 1) * sizeof(*real_names));
	if (!real_names)
		goto fail;
	for (size_t i = 0; i < n_real; i++)
		real_names[i] = l->entries[i].name;
	qsort(real_names, n_real, sizeof(*real_names), compare_names);

	/* The siblings follow the real entries; room for all is made first, so that pushing never
	 * moves the entry it reads from. */
	if (listing_reserve(l, 2 * n_real) < 0)
		goto fail;
	for (size_t i = 0; i < n_real; i++) {
		if (push_sibling(fs, dir, l, &l->entries[i], real_names, n_real) < 0)
			goto fail;
	}
	free(real_names);
	return 0;
fail:
	free(real_names);
	listing_clear(l);
	return err;
}

void tfs_listing_store_init(struct tfs_listing_store *store)
{
	*store = (struct tfs_listing_store){.head = NULL};
	pthread_mutex_init(&store->lock, NULL);
}

static void kept_free(struct tfs_kept_listing *kept)
{
	tfs_listing_destroy(&kept->listing);
	free(kept);
}

void tfs_listing_store_destroy(struct tfs_listing_store *store)
{
	while (store->head) {
		struct tfs_kept_listing *next = store->head->next;

		kept_free(store->head);
		store->head = next;
	}
	store->n = 0;
	pthread_mutex_destroy(&store->lock);
}

/* Unlinks and frees kept, whose predecessor is *link; under the lock. */
static void kept_unlink(struct tfs_listing_store *store, struct tfs_kept_listing **link)
{
	struct tfs_kept_listing *kept = *link;

	*link = kept->next;
	store->n--;
	kept_free(kept);
}

/* Drops the idle listings past TFS_LISTING_IDLE_MS, and the oldest idle ones past
 * TFS_LISTING_KEPT; under the lock. */
static void store_trim(struct tfs_listing_store *store)
{
	uint64_t now = tfs_now_ms();
	size_t idle = 0;

	for (struct tfs_kept_listing **link = &store->head; *link;) {
		struct tfs_kept_listing *kept = *link;

		if (kept->users == 0 &&
		    (idle >= TFS_LISTING_KEPT || now - kept->used_ms > TFS_LISTING_IDLE_MS)) {
			kept_unlink(store, link);
			continue;
		}
		if (kept->users == 0)
			idle++;
		link = &kept->next;
	}
}

struct tfs_kept_listing *tfs_listing_find(struct tfs_listing_store *store, uint64_t dir,
					  uint32_t gen)
{
	struct tfs_kept_listing *kept;

	pthread_mutex_lock(&store->lock);
	for (kept = store->head; kept; kept = kept->next) {
		if (kept->dir == dir && kept->gen == gen && !kept->done) {
			kept->users++;
			break;
		}
	}
	pthread_mutex_unlock(&store->lock);
	return kept;
}

struct tfs_kept_listing *tfs_listing_keep(struct tfs_listing_store *store, uint64_t dir,
					  struct tfs_listing *listing)
{
	struct tfs_kept_listing *kept = calloc(1, sizeof(*kept));

	if (!kept) {
		tfs_listing_destroy(listing);
		return NULL;
	}
	kept->listing = *listing;
	*listing = (struct tfs_listing){.entries = NULL};
	kept->dir = dir;
	kept->users = 1;
	pthread_mutex_lock(&store->lock);
	store_trim(store);
	kept->gen = store->next_gen++ & 0x7fffffffu;
	kept->next = store->head;
	store->head = kept;
	store->n++;
	pthread_mutex_unlock(&store->lock);
	return kept;
}

void tfs_listing_put(struct tfs_listing_store *store, struct tfs_kept_listing *kept, bool done)
{
	pthread_mutex_lock(&store->lock);
	kept->users--;
	kept->used_ms = tfs_now_ms();
	if (done)
		kept->done = true;
	if (kept->done && kept->users == 0) {
		for (struct tfs_kept_listing **link = &store->head; *link; link = &(*link)->next) {
			if (*link == kept) {
				kept_unlink(store, link);
				break;
			}
		}
	}
	pthread_mutex_unlock(&store->lock);
}
