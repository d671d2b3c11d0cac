/* reader.h - the interface every format reader implements, and the list that registers them. */
#ifndef TR_READER_H
#define TR_READER_H

#include <stddef.h>
#include <sys/stat.h>

#include "tr_options.h"
#include "tr_read.h"
#include "tr_result.h"
#include "tr_selector.h"

/* Bytes of the file's start that probes see (SPEC §3: binary detection looks at 8 KiB). */
#define TR_HEAD_SIZE 8192

/* The file being read, as the dispatcher hands it to probes and readers. All borrowed. */
struct tr_file {
	int fd;         /* open for reading; use pread */
	struct stat st; /* fstat at the start of this read */
	const struct tr_source *src;
	const unsigned char *head; /* the first head_len bytes (head_len = min(size, 8 KiB)) */
	size_t head_len;
};

/* How sure a probe is; the highest wins, ties go to the earlier reader in the list. */
enum tr_probe {
	TR_PROBE_NO = 0,
	TR_PROBE_FALLBACK = 1,  /* text or binary, decided from content */
	TR_PROBE_EXTENSION = 2, /* the name says this format */
	TR_PROBE_CONTENT = 3,   /* the bytes carry this format's signature */
};

struct tr_reader {
	const char *name;
	enum tr_probe (*probe)(const struct tr_file *file);
	/* Fills res (already holding path; type still unknown) from file. Sets type, mimeType,
	 * content, shortResult, range, images, metadata (size/modified are preset; sha256 may be
	 * set by the reader when it reads the whole file anyway, otherwise the dispatcher computes
	 * it). Failures go into res via tr_result_fail. Returns 0, or -1 when out of memory. */
	int (*read)(const struct tr_file *file, const struct tr_selector *sel,
		    const struct tr_options *opts, struct tr_result *res);
};

/* The registered readers in priority order, NULL-terminated (registry.c). */
extern const struct tr_reader *const tr_readers[];

#endif
