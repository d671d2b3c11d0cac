/* reader.h - the interface every format reader implements, and the list that registers them.
 *
 * Adding a format (say "foo"), complete:
 * 1. The reader: a folder readers/foo/ with foo.c (and more files as it grows), a private
 *    header foo.h for them, and a meson.build that adds them to core_sources (and any library to
 *    core_deps, with a feature option in meson_options.txt when it is optional; see
 *    readers/pdf/meson.build). foo.c defines `const struct tr_reader tr_reader_foo` below: a
 *    probe that looks at file->head (content first; TR_PROBE_EXTENSION only as a hint) and a
 *    read that fills res (tr_result_* setters; failures via tr_result_fail or
 *    tr_result_fail_too_large, never errno or exit). Reuse readers/util (util.h) for I/O,
 *    SHA-256, UTF-8 and base64, and readers/image (image.h) to attach images.
 * 2. The registry: one extern line and one entry in readers/core/registry.c, placed by probe
 *    priority (signature readers before binary and text).
 * 3. The build: `subdir('foo')` in readers/meson.build, and `'foo'` in core_private_inc there.
 * 4. The contract: docs/SPEC.md §3 (what is shown), §2/§5 for any new contentType, field or
 *    errorCode, and docs/toolresult.schema.json to match.
 * 5. A unit test: tests/unit/test_foo.c (EXPECT macros of tests/unit/expect.h) listed in
 *    tests/unit/meson.build.
 * 6. Fixtures: tests/fixtures/gen_foo.py, made by a script from an independent library, and a
 *    pytest module tests/test_foo.py that checks results against that library as an oracle.
 * 7. Fuzzing: a target in tests/fuzz (listed in tests/fuzz/meson.build) or a seed set for
 *    fuzz_read in tests/fuzz/make_seeds.py, run by tests/fuzz/run.sh. */
#ifndef TR_READER_H
#define TR_READER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tr_options.h"
#include "tr_read.h"
#include "tr_result.h"
#include "tr_selector.h"

/* Bytes of the file's start that probes see (docs/SPEC.md §3: binary detection looks at 8 KiB). */
#define TR_HEAD_SIZE 8192

/* The file being read, as the dispatcher hands it to probes and readers. All borrowed. */
struct tr_file {
	int fd;         /* open for reading; use pread */
	struct stat st; /* fstat at the start of this read */
	const struct tr_source *src;
	const unsigned char *head; /* the first head_len bytes (head_len = min(size, 8 KiB)) */
	size_t head_len;
	/* CLOCK_MONOTONIC ns (tr_deadline_after_ms) past which renders stop: max_render_ms from
	 * the start of this read; 0 for none */
	uint64_t deadline;
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
	/* Optional: the most memory a read of file may hold (bytes, beyond the process's own).
	 * The dispatcher takes it from the max_read_memory budget before read and gives it back
	 * after, so big reads in other threads wait rather than pile up. NULL: nothing taken. */
	uint64_t (*memory)(const struct tr_file *file, const struct tr_options *opts);
};

/* The registered readers in priority order, NULL-terminated (registry.c). */
extern const struct tr_reader *const tr_readers[];

#endif
