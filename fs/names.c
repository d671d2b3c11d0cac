/* SPDX-License-Identifier: MIT */
/* names.c - the virtual name grammar of docs/SPEC.md §4 on top of tr_virtual_name_parse. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "names.h"

bool tfs_name_has_sibling(mode_t mode, const struct tr_options *opts)
{
	if (S_ISREG(mode))
		return true;
	return S_ISLNK(mode) && opts->symlinks != TR_SYMLINKS_NONE;
}

/* Every format of docs/SPEC.md §6 is served (one place to hold one back). */
static bool format_served(enum tr_format fmt)
{
	return tr_format_name(fmt) != NULL;
}

/* True when the first len bytes of name are an entry of dirfd that has a sibling. */
static bool entry_has_sibling(int dirfd, const char *name, size_t len,
			      const struct tr_options *opts)
{
	char *entry = strndup(name, len);
	struct statx stx;
	bool has;

	if (!entry)
		return false;
	/* Only the type, which an inode never changes: asked without syncing, so an entry that is
	 * the daemon's own mount sends it no request (SPEC §4). */
	has = statx(dirfd, entry, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_TYPE, &stx) ==
		      0 &&
	      (stx.stx_mask & STATX_TYPE) && tfs_name_has_sibling(stx.stx_mode, opts);
	free(entry);
	return has;
}

/* A time with a colon split off a NAME that is not there: the selector after the last colon
 * instead, when it parses and leaves a NAME that is (lines 30-40 of "a:1" where there is no
 * "a"). Returns whether it did, with *base_len and *sel set. */
static bool split_at_last_colon(int dirfd, const char *name, enum tr_format fmt,
				const struct tr_options *opts, size_t *base_len,
				struct tr_selector *sel)
{
	size_t stem = strlen(name) - strlen(tr_format_suffix(fmt)), last = stem;
	struct tr_selector other;

	while (last > 0 && name[last - 1] != ':')
		last--;
	if (last < 2 || last - 1 == *base_len ||
	    tr_selector_parse(name + last, stem - last, &other) < 0 ||
	    !entry_has_sibling(dirfd, name, last - 1, opts))
		return false;
	*base_len = last - 1;
	*sel = other;
	return true;
}

int tfs_name_parse_sibling(int dirfd, const char *name, const struct tr_options *opts,
			   struct tfs_sibling_name *out)
{
	size_t base_len;
	struct tr_selector sel;
	enum tr_format fmt;

	if (tr_virtual_name_parse(name, &base_len, &sel, &fmt) < 0 || !format_served(fmt))
		return -ENOENT;
	if (sel.present) {
		/* NAME[:SEL] ends where the format's suffix begins. */
		size_t whole_len = strlen(name) - strlen(tr_format_suffix(fmt));

		if (entry_has_sibling(dirfd, name, whole_len, opts)) {
			out->base_len = whole_len;
			out->sel = (struct tr_selector){.present = false};
			out->fmt = fmt;
			return 0;
		}
	}
	if (base_len == 0)
		return -ENOENT;
	/* Without a selector there is one way to split: NAME is checked by the caller's stat of it
	 * (tfs_sibling_make), not twice. */
	if (sel.present && !entry_has_sibling(dirfd, name, base_len, opts) &&
	    (!sel.time || !split_at_last_colon(dirfd, name, fmt, opts, &base_len, &sel)))
		return -ENOENT;
	out->base_len = base_len;
	out->sel = sel;
	out->fmt = fmt;
	return 0;
}
