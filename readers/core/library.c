/* SPDX-License-Identifier: MIT */
/* library.c - the library's process-wide state sized from the options and given back at exit
 * (include/tr_library.h lists what it holds). */
#include "core.h"
#include "sandbox.h"
#include "tr_library.h"
#include "util.h"

/* Idle spare mappings may hold this share of what the reads in flight may hold at once:
 * 3/16 of the default max_read_memory (256 MiB) is the 48 MiB kept before the options sized it. */
#define SPARE_SHARE_NUM 3
#define SPARE_SHARE_DEN 16

/* The replies of sandboxed reads kept for a second read may hold this share of it (docs/SPEC.md
 * §8 "Reply cache"): 64 MiB of the default, some hundred OCR'd or rendered pages. */
#define REPLY_SHARE_DEN 4

void tr_library_init(const struct tr_options *opts)
{
	struct tr_options defaults;

	if (!opts) {
		tr_options_init(&defaults);
		opts = &defaults;
	}
	tr_blob_spares_limit(opts->max_read_memory / SPARE_SHARE_DEN * SPARE_SHARE_NUM);
	tr_sandbox_cache_limit(opts->max_read_memory / REPLY_SHARE_DEN);
}

void tr_library_set_reply_cache(uint64_t bytes)
{
	tr_sandbox_cache_limit(bytes);
}

void tr_library_shutdown(void)
{
	tr_blob_spares_free();
	tr_pipe_spares_free();
	tr_sha_memo_forget();
	tr_mime_memo_forget();
	tr_magic_close_all();
	tr_sandbox_shutdown();
	tr_library_init(NULL);
}
