/* SPDX-License-Identifier: MIT */
/* names.h - the names of docs/SPEC.md §4 in a directory: which virtual names exist, which are listed. */
#ifndef TFS_NAMES_H
#define TFS_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "tr_options.h"
#include "tr_selector.h"

/* A virtual name split into its source entry, selector and format. */
struct tfs_sibling_name {
	size_t base_len; /* the source's name is the first base_len bytes of the virtual name */
	struct tr_selector sel;
	enum tr_format fmt;
};

/* The suffix of default siblings, as listed by readdir. */
#define TFS_SIBLING_SUFFIX ".tool.json"

/* True when an entry of type mode (S_IFMT bits) gets a sibling under opts: regular files, and
 * symbolic links unless symlinks=none. */
bool tfs_name_has_sibling(mode_t mode, const struct tr_options *opts);

/* Resolves name, which is not a real entry of directory dirfd (O_PATH), as a virtual name:
 * NAME[:SEL].tool[.FMT].json or NAME[:SEL].tool.txt where NAME is an entry of dirfd that has a sibling. The whole
 * NAME[:SEL] is tried as an entry before NAME with the selector, since real names may hold ':'.
 * A NAME without a selector is not looked at: the caller's resolve of it says whether it is one.
 * Returns 0 and fills out, or -ENOENT (no such virtual name, or a format not served yet). */
int tfs_name_parse_sibling(int dirfd, const char *name, const struct tr_options *opts,
			   struct tfs_sibling_name *out);

#endif
