/* SPDX-License-Identifier: MIT */
/* tr_selector.h - the SEL grammar of docs/SPEC.md §4 (A, A-, A-B, A.C-, WxH+X+Y, P@WxH+X+Y) and the
 * virtual names
 * NAME[:SEL].tool[.FMT].json and NAME[:SEL].tool.txt. */
#ifndef TR_SELECTOR_H
#define TR_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A rectangle in pixels (WxH+X+Y, ImageMagick's geometry): width and height >= 1. */
struct tr_region {
	uint32_t x, y, width, height;
};

struct tr_selector {
	bool present;    /* false: the default view */
	uint64_t start;  /* 1-based first line/cell/page; 0 for a region without P@ */
	uint64_t end;    /* inclusive last; 0 when open-ended (A- and A.C-) */
	uint64_t column; /* A.C-: 1-based code point column; 0 otherwise */
	bool has_region; /* WxH+X+Y or P@WxH+X+Y: region is set, start = end = P (or 0) */
	struct tr_region region;
	/* A time selector of audio and video (T, T1-T2, T1-; seconds with decimals, MM:SS or
	 * HH:MM:SS): time is set, start/end/column are 0, t1 is -1 when open-ended and t0 for a
	 * single time. A plain A, A-B or A- is also read as seconds by the media reader. */
	bool time;
	double t0, t1;
};

/* The formats of a result (docs/SPEC.md §6): the canonical ToolResult, the provider-ready shapes, and
 * txt, the model-visible text alone (NAME.tool.txt). */
enum tr_format {
#define TR_OUTPUT_FORMAT(id, name, suffix) TR_FORMAT_##id,
#include "tr_results.def"
};

/* Parses SEL (without the colon): A, A-, A-B, A.C-, a region, else a time selector. Returns 0,
 * or -1 when it does not parse (zero, leading '+', B < A, overflow, trailing bytes; in a region:
 * W or H zero, a number over 2^32-1, leading zeros). */
int tr_selector_parse(const char *text, size_t len, struct tr_selector *sel);

/* Parses a time selector (selector_time.c): 0, or -1 when text is not one. */
int tr_selector_parse_time(const char *text, size_t len, struct tr_selector *sel);
/* Writes a time selector as seconds ("90", "1.5-600", "30-"); snprintf semantics. */
int tr_selector_format_time(const struct tr_selector *sel, char *buf, size_t size);

/* Writes SEL in canonical form (no colon) into buf; returns its length (snprintf semantics). */
int tr_selector_format(const struct tr_selector *sel, char *buf, size_t size);

/* Writes SEL as it follows "NAME:" in a virtual name: the canonical form, unless NAME:form would
 * split otherwise (a NAME ending in ":10" and the line "10", read back as the time 10:10): then
 * a single line is written N-N. snprintf semantics. */
int tr_selector_format_after(const char *name, size_t name_len, const struct tr_selector *sel,
			     char *buf, size_t size);

/* True when a and b select the same (every field, the region's included). */
bool tr_selector_equal(const struct tr_selector *a, const struct tr_selector *b);

/* Clips region r to an image of width x height pixels into *out. Returns 0, or -1 when no pixel
 * of r is inside (out untouched). Overflow-safe for any r. */
int tr_region_clip(const struct tr_region *r, uint32_t width, uint32_t height,
		   struct tr_region *out);

/* Splits a virtual name NAME[:SEL].tool[.FMT].json or NAME[:SEL].tool.txt. On success returns 0 and sets *base_len to
 * the length of NAME, *sel and *fmt. Returns -1 when name is not a virtual name or does not parse.
 * When NAME[:SEL] ends in ":SEL" that parses, it is split there (sel->present); callers must
 * first try the whole NAME[:SEL] as a file name, since real names may contain ':'. */
int tr_virtual_name_parse(const char *name, size_t *base_len, struct tr_selector *sel,
			  enum tr_format *fmt);

/* Returns the format's name ("tool", "anthropic", ...) or NULL; parses one likewise (-1: none). */
const char *tr_format_name(enum tr_format fmt);
int tr_format_parse(const char *name, enum tr_format *fmt);

/* Returns the suffix of the format's virtual files (".tool.json", ".tool.mcp.json", ".tool.txt")
 * or NULL. */
const char *tr_format_suffix(enum tr_format fmt);

#endif
