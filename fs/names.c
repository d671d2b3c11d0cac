/* SPDX-License-Identifier: MIT */
/* names.c - the virtual name grammar of docs/SPEC.md §4 on top of tr_virtual_name_parse. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

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
	struct stat st;
	bool has;

	if (!entry)
		return false;
	has = fstatat(dirfd, entry, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	      tfs_name_has_sibling(st.st_mode, opts);
	free(entry);
	return has;
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
	if (base_len == 0 || !entry_has_sibling(dirfd, name, base_len, opts))
		return -ENOENT;
	out->base_len = base_len;
	out->sel = sel;
	out->fmt = fmt;
	return 0;
}
