/* SPDX-License-Identifier: MIT */
/* text.h - the text reader's private parts: the line machine that counts lines and line endings
 * of a UTF-8 stream fed in pieces and formats one window of it as cat -n does. */
#ifndef TR_TEXT_PRIVATE_H
#define TR_TEXT_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_options.h"
#include "tr_result.h"
#include "tr_selector.h"
#include "util.h"

/* --- line_scan --- */
/* the text reader's line machine: counts lines and line endings of a UTF-8 stream fed in pieces,
 * and formats one window of it as cat -n does. */

/* Which lines to show and the limits of docs/SPEC.md §3. */
struct tr_line_window {
	uint64_t first;          /* first line shown, 1-based */
	uint64_t last;           /* last line shown at most (inclusive, >= first) */
	uint64_t column;         /* 1-based code point column where line `first` starts (>= 1) */
	uint64_t max_line_chars; /* code points shown of one line (>= 1) */
	uint64_t max_output;     /* content byte cap; the first line shown always fits */
	uint64_t max_tokens;     /* content token cap (estimated; 0: none); the first line fits */
};

/* Bits of tr_line_scan.endings. */
#define TR_EOL_LF 1u
#define TR_EOL_CRLF 2u
#define TR_EOL_CR 4u

struct tr_line_scan {
	struct tr_line_window win;

	/* The whole stream. */
	uint64_t terminators; /* "\n", "\r\n" and lone "\r" seen */
	bool open_line;       /* bytes follow the last terminator */
	bool pending_cr;      /* the last byte fed was "\r": "\r\n" or lone "\r" not yet known */
	unsigned endings;     /* TR_EOL_* kinds seen */

	/* The window. */
	struct tr_buf content; /* owned: the formatted lines */
	uint64_t shown_last;   /* last line in content; 0 when none */
	uint64_t cut_line;     /* first line shown cut at max_line_chars; 0 when none */
	uint64_t cut_column;   /* the first column of cut_line not shown */
	bool capped;           /* max_output or max_tokens ended the window before win.last */
	uint64_t milli_tokens; /* content's estimated tokens, in thousandths (tr_tokens_weigh) */
	bool column_past_end;  /* line `first` has fewer than win.column code points */
	uint64_t first_chars;  /* code points of line `first` (valid once it has ended) */

	/* The window line being read. */
	bool in_line;
	struct tr_utf8_repair repair;
	struct tr_buf line;             /* owned: its shown text */
	uint64_t skip_left;             /* code points still to drop before the shown text */
	uint64_t skipped, stored, rest; /* code points dropped, kept and counted past the cut */
};

/* Prepares ls for a stream, showing win. Never fails. */
void tr_line_scan_init(struct tr_line_scan *ls, const struct tr_line_window *win);

/* Scans the next piece of the stream. Returns 0, or -1 when out of memory. */
int tr_line_scan_feed(struct tr_line_scan *ls, const void *data, size_t len);

/* Ends the stream (a last line without terminator counts). Returns 0, or -1 when out of
 * memory at any point of the scan. */
int tr_line_scan_finish(struct tr_line_scan *ls);

/* Lines in the stream: terminators, plus one for bytes after the last. Valid after finish. */
uint64_t tr_line_scan_total(const struct tr_line_scan *ls);

/* metadata.lineEnding for what was seen: "lf", "crlf", "cr", "mixed" or "none" (static). */
const char *tr_line_scan_ending(const struct tr_line_scan *ls);

/* Frees what ls owns (content too, unless the caller took it and zeroed it). */
void tr_line_scan_destroy(struct tr_line_scan *ls);

/* --- text --- */
/* the text reader; its window formatting is shared with readers that render to text. */

/* Formats text[0..len) (UTF-8; invalid sequences become U+FFFD) exactly as the text reader
 * formats a file: the line window of sel within opts' limits, numbered as cat -n; fills
 * content, range (unit line), lineCount, truncated, next ("<name>:SEL.tool.json", name
 * borrowed), shortResult and success, or records out_of_range. Type, mimeType and metadata are
 * left to the caller. Returns 0, or -1 when out of memory. */
int tr_text_window_buffer(const char *text, size_t len, const char *name,
			  const struct tr_selector *sel, const struct tr_options *opts,
			  struct tr_result *res);

#endif
