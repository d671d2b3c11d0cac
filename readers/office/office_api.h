/* SPDX-License-Identifier: MIT */
/* office_api.h - what the Office reader's core part (office.c) and its module toolfs-office.so
 * (office_package.c and the renderers, linked with libzip and libxml2) share: the module's
 * interface table and the ODF head test. Free of libzip's and libxml2's headers. */
#ifndef TR_OFFICE_API_H
#define TR_OFFICE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "reader.h"
#include "tr_options.h"
#include "tr_result.h"
#include "tr_selector.h"

/* The interface table toolfs-office.so exports (util/module.c loads it); abi first. */
#define TR_OFFICE_ABI 2
struct tr_office_api {
	unsigned abi;       /* TR_OFFICE_ABI */
	void (*warm)(void); /* struct tr_module_head */
	/* The read of an OOXML or ODF package (the tr_reader.read contract; type is set, the size
	 * already checked against opts->max_office_size): mimeType, content and images of its
	 * kind, or a failure (corrupt, too_large, encrypted, unsupported, timeout) in res.
	 * Returns 0, or -1 when out of memory. */
	int (*read)(const struct tr_file *file, const struct tr_selector *sel,
		    const struct tr_options *opts, struct tr_result *res);
};
extern const struct tr_office_api tr_office_api;

/* True when head[0..len) starts an ODF package: its first entry is "mimetype", stored, holding
 * an OpenDocument type. */
static inline bool tr_office_is_odf(const unsigned char *head, size_t len)
{
	static const char prefix[] = "application/vnd.oasis.opendocument.";

	return len >= 38 + sizeof(prefix) - 1 && memcmp(head + 30, "mimetype", 8) == 0 &&
	       memcmp(head + 38, prefix, sizeof(prefix) - 1) == 0;
}

#endif
