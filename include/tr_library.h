/* SPDX-License-Identifier: MIT */
/* tr_library.h - the reader library's process-wide state, set up and given back in one place.
 *
 * Every front end (fs/main.c, cli/, mcp/) calls tr_library_init once its options are parsed and
 * before the first read, and tr_library_shutdown once the last read has finished (its threads
 * joined); shutdown gives back all the memory the state below holds, so valgrind and LSan see
 * none of it at exit. A program that never calls init (a unit test, a fuzzer) gets the defaults.
 *
 * The state the library keeps between reads, each with its bound:
 * - spare blob mappings (core/blob.c): the anonymous mappings of freed large blobs, kept for the
 *   next one so the kernel does not zero the pages again; at most 2 of them, holding at most
 *   3/16 of max_read_memory together (48 MiB at its default of 256 MiB).
 * - spare pipe rings (util/pipe.c): the buffer rings of finished pipes (a file's SHA-256 beside
 *   its scan, a PNG's rows beside their inflate), kept for the next pipe of the same size; at
 *   most 2 (text keeps 4 MiB rings, png_shrink smaller ones).
 * - the SHA-256 memo (util/sha_memo.c): a file's digest by version, 512 fixed slots (about
 *   50 KiB, no heap); shutdown forgets it.
 * - libmagic's cookies (util/magic.c): one for descriptions and up to two for mime types, each
 *   mapping the compiled database (about 6 MB resident), loaded on first use; shutdown closes
 *   them.
 * - the mime memo (util/mime_memo.c): mime types by a file's head digest, TR_MIME_MEMO_SLOTS
 *   fixed slots and at most 1,024 interned type strings; shutdown forgets them.
 * - the reply cache (sandbox/sandbox_cache.c): the wire bytes of sandboxed reads' results, by
 *   file version, reader, selector and options, so that a second read (an OCR'd page) needs no
 *   worker; LRU, at most 1/4 of max_read_memory (64 MiB at its default), none in the mount
 *   (tr_library_set_reply_cache); shutdown drops them.
 * - the read memory budget (core/budget.c): the bytes the reads in flight hold against
 *   max_read_memory (passed with each read); counters only.
 * - set-once facts: base64's tables and the vector path the CPU allows (util/base64.c), whether
 *   the kernel lacks openat2 (util/confine.c), whether the CPU has the SHA extensions
 *   (util/sha256.c); no memory.
 * Not given back: the loaded modules and the libraries they start (unloading glib, libvips or
 * poppler while their threads and caches live is not safe), kept for the life of the process (util/module.c, util/vips_start.c, util/charset.c's uchardet,
 * image/image.c, pdf/pdf.c, pdf/pdf_poppler.c, office/office_xml.c). */
#ifndef TR_LIBRARY_H
#define TR_LIBRARY_H

#include <stdint.h>

#include "tr_options.h"

/* Sizes the state above from opts (NULL: the defaults of tr_options_init). Call it before the
 * first read, from one thread; calling it again resizes (spares beyond the new bound are given
 * back). Never fails: the state grows lazily, and a spare that cannot be had is not kept. */
void tr_library_init(const struct tr_options *opts);

/* Bounds the replies of sandboxed reads (a PDF, an image, ...) kept in this process for a second
 * read of the same file version, selector and options (docs/SPEC.md §8 "Reply cache") to bytes;
 * tr_library_init sets a quarter of max_read_memory. 0 keeps none: the mount sets it, its own
 * result cache (cache_size) holding the documents already. Thread-safe. */
void tr_library_set_reply_cache(uint64_t bytes);

/* Gives back every spare the library keeps and forgets the memo; the state returns to its
 * defaults. Call it after the last read has finished, from one thread; reads may start again
 * afterwards (they build the state anew). */
void tr_library_shutdown(void);

/* Where the library's notices go: a fact about the whole process that a user should know once
 * (a confinement this kernel lacks, docs/SPEC.md §8), given to log as one line of text without
 * its newline. NULL (the default) drops them: the library never prints. Set it before the first
 * read; log may be called from any reading thread, at most once per notice and process. */
typedef void (*tr_log_fn)(const char *message);
void tr_library_set_log(tr_log_fn log);

#endif
