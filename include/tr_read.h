/* SPDX-License-Identifier: MIT */
/* tr_read.h - the reader core's entry points: one file in, one ToolResult out, rendered. */
#ifndef TR_READ_H
#define TR_READ_H

#include <sys/stat.h>

#include "tr_doc.h"
#include "tr_options.h"
#include "tr_result.h"
#include "tr_selector.h"

/* A read's cancellation, fired by another thread of the caller's (toolfs-mcp's
 * notifications/cancelled, docs/SPEC.md §7): the read's sandboxed worker is ended at once
 * (killed and reaped through its fork server) and a read waiting for a worker stops waiting;
 * the read is then io_error, "The read of PATH was cancelled". A read past that point, or one
 * run in the reading process, finishes as usual. The caller owns it. */
struct tr_cancel {
	int fd; /* an eventfd, readable once fired; -1: it never fires */
};

/* Makes c, not fired. Returns 0, or -1 with c->fd -1 (a cancel that never fires). */
int tr_cancel_init(struct tr_cancel *c);

/* Fires c, from any thread; once fired it stays so. */
void tr_cancel_fire(struct tr_cancel *c);

/* True once c (NULL: never) has been fired. */
bool tr_cancel_fired(const struct tr_cancel *c);

/* Releases c; a read it was given to has returned. */
void tr_cancel_destroy(struct tr_cancel *c);

/* What the caller knows of the file being read. */
struct tr_source {
	const char *path; /* shown in the result ("path"); borrowed */
	const char *name; /* base name used to build "next" sibling names; borrowed; NULL: the
			   * last component of path */
	const struct tr_cancel *cancel; /* borrowed; NULL: the read is never cancelled */
};

/* Reads the regular file open for reading at fd (borrowed, not closed; read with pread, so its
 * offset is irrelevant) into res, which must be freshly initialised for src->path. The file is
 * read as one consistent version: when its size or times change while it is read, the read is
 * retried, up to 12 times with short pauses after the fourth (this is the only layer that
 * retries). Reader failures are recorded in res (success=false); never exits or prints. When shown is non-NULL it receives
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

/* Renders res as the bytes of its virtual file in format fmt, ending in "\n", with the default
 * style (tr_render_style_init with default options). Returns a new document (caller owns the
 * reference) or NULL when out of memory. */
struct tr_doc *tr_render(const struct tr_result *res, enum tr_format fmt);

/* Writes into buf (NUL-terminated, cut to size) the words that tell a model how to get the rest
 * of a truncated result, e.g. "call read with offset 2001, limit 2000". name is NAME, the base
 * name the reader gave res->next (borrowed, name_len bytes, not NUL-terminated), next its parsed
 * selector (A-B, A- or A.C-), fmt the format being rendered. */
typedef void (*tr_continuation_fn)(const char *name, size_t name_len,
				   const struct tr_selector *next, enum tr_format fmt, char *buf,
				   size_t size, void *arg);

/* What a front end decides in a rendering beyond the format (docs/SPEC.md §6, §7). */
struct tr_render_style {
	bool mcp_structured; /* mcp: structuredContent (the ToolResult without payloads) */
	bool mcp_documents;  /* mcp: PDFs attached as resource blocks */
	/* The continuation phrase; NULL: the sibling in the same format,
	 * "read main.c:2001-4000.tool.mcp.json" (the mount and the CLI). */
	tr_continuation_fn continuation;
	void *continuation_arg; /* passed to continuation, borrowed */
	/* txt footers name the sibling holding the images, NAME[:SEL].tool.json: NAME is the base
	 * name of res->path, SEL this selector (borrowed; NULL: none). */
	const struct tr_selector *sel;
};

/* Fills style from opts (mcp_structured, mcp_documents), with the default continuation. */
void tr_render_style_init(struct tr_render_style *style, const struct tr_options *opts);

/* tr_render in a given style (NULL: the default). */
struct tr_doc *tr_render_ex(const struct tr_result *res, enum tr_format fmt,
			    const struct tr_render_style *style);

#endif
