/* SPDX-License-Identifier: MIT */
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
 *    SHA-256, UTF-8 and base64, and readers/image (image.h) to attach images. A reader that
 *    shows a window of its units (lines, cells, pages, sheets, slides) records it with
 *    tr_result_set_window. Its size limit, or any option, is one row of include/tr_options.def
 *    (then `build/docs/man/options-doc --write .` writes the man pages' and SPEC's lines).
 * 2. The registry: one extern line and one entry in readers/core/registry.c, placed by probe
 *    priority (signature readers before binary and text). A reader built only when its library
 *    is found sits inside `#if defined(TR_HAVE_FOO)`, which readers/foo/meson.build defines
 *    (core_args) in that case alone (see readers/office/meson.build).
 * 3. The build: `subdir('foo')` in readers/meson.build, and `'foo'` in core_private_inc there.
 *    A heavy library (one that costs tens of milliseconds or megabytes to load, as poppler and
 *    libvips do) is not linked into the programs: its dependency goes into a *_module_deps list
 *    and a shared_module of readers/meson.build, and the reader reaches it through a struct
 *    tr_module loaded on first use (util/module.c; see readers/pdf/pdf.c), so that toolfs-read
 *    and toolfs-mcp start without it.
 * 4. Packaging: every dependency() has its -dev package in debian/control's Build-Depends and
 *    in .ci/packages (the runtime package follows from ${shlibs:Depends}).
 * 5. The contract: docs/SPEC.md §3 (what is shown), §2/§5 for any new contentType, field or
 *    errorCode, and docs/toolresult.schema.json to match. A new contentType or errorCode is a
 *    row of include/tr_results.def (the enum and tr_content_type_name in core/result.c come from
 *    it; tests/frontends/test_cli_help.py checks the docs against it), from which the
 *    three programs' --help and the MCP read description list them, and a value of the
 *    contentType enum of the MCP outputSchema (tool_result_schema in mcp/mcp_tools.c).
 * 6. The words: the manual pages (docs/man/toolfs.7.in says what is shown of the format; every
 *    page names every contentType; the options sections are generated, step 1) and the MCP read
 *    description (read_description in mcp/mcp_tools.c names the formats read).
 * 7. A unit test: tests/unit/test_foo.c (EXPECT macros of tests/unit/expect.h) listed in
 *    tests/unit/meson.build.
 * 8. Fixtures: tests/fixtures/gen_foo.py, made by a script from an independent library, and a
 *    pytest module tests/readers/test_foo.py (listed in tests/readers/meson.build, the readers
 *    suite) that checks results against that library as an oracle.
 * 9. Fuzzing: a target in tests/fuzz (listed in tests/fuzz/meson.build) or a seed set for
 *    fuzz_read in tests/fuzz/make_seeds.py, run by tests/fuzz/run.sh.
 * 10. Isolation: a reader whose read runs a third-party parser on the file's bytes (anything
 *    reached through a module of step 3, or any library not written for toolfs) sets
 *    `.caps = TR_CAP_UNTRUSTED` and `.module = "toolfs-foo.so"` in its row: the dispatcher then
 *    runs it in toolfs-reader-worker, one sandboxed process per read (readers/sandbox,
 *    docs/SPEC.md §8), whose fork server loads that module once. Its read must work there:
 *    no fork or exec, files opened read-only beneath the folders Landlock allows
 *    (readers/sandbox/sandbox_confine.c, which also holds the seccomp list), state kept
 *    between reads is lost with the worker; a read that starts threads (its own or a
 *    library's) adds TR_CAP_THREADS, else its worker may start no task (RLIMIT_NPROC 0); add
 *    the family to tests/sandbox/test_sandbox.py and to tests/seccomp_profile.py --reader.
 * tests/tree/test_layout.py and tests/frontends/test_cli_help.py check steps 2 to 6 and 10 wherever
 * a script can: a reader missing from the registry or the build, a guard nothing defines, a module
 * library linked into a program, a reader reaching a module without the worker, a package
 * line missing, a contentType or option missing from a list, a page or the MCP description. */
#ifndef TR_READER_H
#define TR_READER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tr_options.h"
#include "tr_read.h"
#include "tr_result.h"
#include "tr_selector.h"

/* Bytes of the file's start that probes see (docs/SPEC.md §3: binary detection looks at 8 KiB). */
#define TR_HEAD_SIZE 8192

/* A read that can answer without its reader's return (docs/SPEC.md §8 "Failures cost one
 * read"): toolfs-reader-worker holds lock for the reader while it runs and a watchdog thread
 * takes it at the deadline (plus SANDBOX_ANSWER_MS). A reader that calls a third-party function
 * taking no cancel hook (poppler's text extraction, a cairo drawing operation) names, once, how
 * to finish its result without that call (tr_watch_set) and leaves the lock for the call's
 * length (tr_watch_leave, tr_watch_enter): when the watchdog gets the lock, it runs finish on
 * its own thread, answers that result and ends the worker, the call still running. Owned by
 * the worker; NULL outside it. */
struct tr_watch {
	pthread_mutex_t lock;
	/* Fills the read's result (its tr_result) from the reader's state alone: no third-party
	 * call (one is running on the reader's thread). Returns 0, or -1 when out of memory. */
	int (*finish)(void *ctx);
	void *ctx;
};

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
	struct tr_watch *watch; /* borrowed; NULL but in toolfs-reader-worker with a deadline */
};

/* Sets (finish not NULL) or clears how file's read finishes without its reader (struct
 * tr_watch); call with the lock held, i.e. outside tr_watch_leave/enter. No-op without a
 * watch. */
static inline void tr_watch_set(const struct tr_file *file, int (*finish)(void *ctx), void *ctx)
{
	if (file->watch) {
		file->watch->finish = finish;
		file->watch->ctx = ctx;
	}
}

/* Before a call that may not return by the deadline: from here until tr_watch_enter, the
 * watchdog may finish the read (the reader's state must be whole). No-op without a finish. */
static inline void tr_watch_leave(const struct tr_file *file)
{
	if (file->watch && file->watch->finish)
		pthread_mutex_unlock(&file->watch->lock);
}

/* After that call: the reader's state is its own again. When the watchdog finished the read
 * meanwhile, never returns (the worker ends). */
static inline void tr_watch_enter(const struct tr_file *file)
{
	if (file->watch && file->watch->finish)
		pthread_mutex_lock(&file->watch->lock);
}

/* How sure a probe is; the highest wins, ties go to the earlier reader in the list. */
enum tr_probe {
	TR_PROBE_NO = 0,
	TR_PROBE_FALLBACK = 1,  /* text or binary, decided from content */
	TR_PROBE_EXTENSION = 2, /* the name says this format */
	TR_PROBE_CONTENT = 3,   /* the bytes carry this format's signature */
};

/* A reader's capabilities (struct tr_reader.caps). */
enum tr_reader_cap {
	/* Its read runs third-party parsers (poppler, libvips, librsvg, libxml2, ...) on the file's
	 * bytes: the dispatcher runs it in a sandboxed worker process, one per read (readers/
	 * sandbox, docs/SPEC.md §8), never in the programs themselves. */
	TR_CAP_UNTRUSTED = 1u << 0,
	/* Its read starts threads (libvips's pool, GLib's, toolfs's own page and render threads):
	 * its worker keeps RLIMIT_NPROC as it was, which counts threads; every other worker has
	 * RLIMIT_NPROC 0, no new task at all (docs/SPEC.md §8). */
	TR_CAP_THREADS = 1u << 1,
	/* Takes region selectors (WxH+X+Y, P@WxH+X+Y); the dispatcher fails a region on any
	 * other reader with out_of_range before read is called. */
	TR_CAP_REGIONS = 1u << 2,
	/* Takes time selectors (T, T1-T2: audio and video); others fail them with out_of_range. */
	TR_CAP_TIMES = 1u << 3,
	/* Weighs its own lines in tokens under max_tokens; the dispatcher bounds every other
	 * reader's max_output at 2 bytes a token, dense text's worst (docs/SPEC.md §4). */
	TR_CAP_TOKENS = 1u << 4,
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
	/* enum tr_reader_cap bits: the selectors it takes, whether it weighs tokens, and what the
	 * isolation layer must know of it. */
	unsigned caps;
	/* The shared module its read loads (util/module.c), e.g. "toolfs-pdf.so", or NULL: the
	 * reader worker's fork server loads it once, before it forks the read's worker. */
	const char *module;
};

/* The registered readers in priority order, NULL-terminated (registry.c). */
extern const struct tr_reader *const tr_readers[];

/* The shared modules (util.h struct tr_module), NULL-terminated, at most 32 (registry.c): bit
 * i of a mask of modules (tr_module_loaded, tr_module_warm) is tr_modules[i]. */
struct tr_module;
extern struct tr_module *const tr_modules[];

#endif
