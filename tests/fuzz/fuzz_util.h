/* SPDX-License-Identifier: MIT */
/* fuzz_util.h - shared helpers of the libFuzzer targets: taking parameters from the input, an
 * in-memory file, and the oracle every rendered ToolResult must pass. */
#ifndef TR_FUZZ_UTIL_H
#define TR_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_doc.h"
#include "tr_options.h"
#include "tr_result.h"
#include "tr_selector.h"

/* The input being consumed: parameters are taken from its front, the rest is the payload. */
struct fuzz_input {
	const uint8_t *data;
	size_t len;
};

/* Bytes of parameters at the front of an input that has any (a fixed size, so that mutating them
 * never shifts the payload). */
#define FUZZ_PARAMS 12

/* Splits data into the parameter header (up to FUZZ_PARAMS bytes; missing ones read as 0) and
 * the payload after it. */
void fuzz_split(const uint8_t *data, size_t size, struct fuzz_input *params,
		struct fuzz_input *payload);

/* Takes one byte (0 once the input is used up). */
uint8_t fuzz_byte(struct fuzz_input *in);

/* Takes a little-endian 32-bit value (missing bytes are 0). */
uint32_t fuzz_u32(struct fuzz_input *in);

/* Takes up to n bytes; *got gets how many. Returns a pointer into the input. */
const uint8_t *fuzz_bytes(struct fuzz_input *in, size_t n, size_t *got);

/* Fills sel from one parameter byte and two numbers: the default view, A, A-, A-B or A.C-, with
 * small numbers mostly (so they hit real lines, cells and pages) and big ones sometimes. */
void fuzz_selector(struct fuzz_input *in, struct tr_selector *sel);

/* Fills opts from the defaults with small limits chosen from one byte, so that windows, caps and
 * cuts are reached by small inputs. */
void fuzz_options(struct fuzz_input *in, struct tr_options *opts);

/* Returns a memfd holding data[0..len) (the caller closes it). Aborts on failure. */
int fuzz_memfd(const void *data, size_t len);

/* Fails (aborts with a message on stderr) unless s[0..len) is valid UTF-8 (checked here
 * independently of the core's own validator: no overlong forms, no surrogates, <= U+10FFFF). */
void fuzz_check_utf8(const char *what, const unsigned char *s, size_t len);

/* Checks doc as the bytes of a virtual file: its size matches the bytes read, reads at odd
 * offsets agree with the whole, it is valid UTF-8, ends in exactly one "\n", and cJSON parses
 * it as one JSON object. Returns the parsed tree's copy of the whole text (malloc'd) so callers
 * can check more, or aborts. */
char *fuzz_check_doc(const struct tr_doc *doc, uint64_t *size);

/* Renders res in every format and checks each with fuzz_check_doc; for the canonical format
 * also checks the keys every ToolResult has and the success/error pairing. */
void fuzz_check_result(const struct tr_result *res);

/* Prints what failed and aborts (a crash libFuzzer records), or in a child that called
 * fuzz_fail_by_exit exits with FUZZ_FAILED_STATUS. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The exit status of a forked check that failed (fuzz_fail, or a sanitizer's report). */
#define FUZZ_FAILED_STATUS 86

/* In a forked child: fuzz_fail and a sanitizer's report exit with FUZZ_FAILED_STATUS, so that
 * the parent tells them from a library's own abort(). */
void fuzz_fail_by_exit(void);

#endif
