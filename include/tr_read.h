/* tr_read.h - the reader core's entry points: one file in, one ToolResult out, rendered. */
#ifndef TR_READ_H
#define TR_READ_H

#include <sys/stat.h>

#include "tr_doc.h"
#include "tr_options.h"
#include "tr_result.h"
#include "tr_selector.h"

/* What the caller knows of the file being read. */
struct tr_source {
	const char *path; /* shown in the result ("path"); borrowed */
	const char *name; /* base name used to build "next" sibling names; borrowed */
};

/* Reads the regular file open for reading at fd (borrowed, not closed; read with pread, so its
 * offset is irrelevant) into res, which must be freshly initialised for src->path. The file is
 * read as one consistent version: when its size or times change while it is read, the read is
 * retried, up to 4 times in all (this is the only layer that retries). Reader failures are
 * recorded in res (success=false); never exits or prints. When shown is non-NULL it receives
 * the fstat of the version the result shows. Returns 0; 1 when no consistent version could be
 * read (the file kept changing, or fstat failed: res holds io_error and *shown the last state
 * seen, zeroed if none); -1 when out of memory (res then holds what was built and should be
 * discarded). */
int tr_read_fd(int fd, const struct tr_source *src, const struct tr_selector *sel,
	       const struct tr_options *opts, struct tr_result *res, struct stat *shown);

/* Opens path (relative to dirfd, or AT_FDCWD) without following a FIFO or blocking, and reads
 * it as tr_read_fd does. Open failures become results: not_found, permission_denied,
 * not_regular ("Not a regular file: run/ctl (fifo)"), io_error. For not_found, up to three names
 * of the same folder close to the missing one are suggested. Returns as tr_read_fd. */
int tr_read_path(int dirfd, const char *path, const struct tr_selector *sel,
		 const struct tr_options *opts, struct tr_result *res);

/* Renders res as the bytes of its virtual file in format fmt, ending in "\n". Returns a new
 * document (caller owns the reference) or NULL when out of memory. */
struct tr_doc *tr_render(const struct tr_result *res, enum tr_format fmt);

#endif
