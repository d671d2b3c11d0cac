/* notebook_text.h - text helpers of the notebook reader: terminal escapes, carriage returns,
 * UTF-8 code point counting and cutting. */
#ifndef TR_NOTEBOOK_TEXT_H
#define TR_NOTEBOOK_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_result.h"

/* Appends s[0..len) to buf without terminal escape sequences: CSI (ESC '[', parameter and
 * intermediate bytes, a final byte 0x40-0x7E), OSC (ESC ']' up to BEL or ESC '\'), and any other
 * ESC byte alone. When overwrite is set, carriage returns act as on a terminal (and in Jupyter):
 * CR LF is LF, a trailing CR is dropped, and text after a CR overwrites its line from the start
 * ("50%\r100%" shows "100%"). Returns 0, or -1 when out of memory (buf->oom set). */
int tr_nb_append_clean(struct tr_buf *buf, const char *s, size_t len, bool overwrite);

/* Number of UTF-8 code points in s[0..len): bytes that do not continue a sequence. */
uint64_t tr_nb_utf8_count(const char *s, size_t len);

/* Length in bytes of the longest prefix of s[0..len) holding at most max_chars code points and
 * at most max_bytes bytes, never ending inside a UTF-8 sequence. */
size_t tr_nb_utf8_prefix(const char *s, size_t len, uint64_t max_chars, uint64_t max_bytes);

/* Formats a size limit and a size over it as SPEC's too_large messages do, both in the limit's
 * unit: "64MB" and "70.12MB"; under 1 MiB "2KB" and "4.23KB"; under 1 KiB "10 bytes" and
 * "33 bytes". Writes NUL-terminated texts of at most size bytes into limit_text, actual_text. */
void tr_nb_format_limit(uint64_t limit, uint64_t actual, char *limit_text, char *actual_text,
			size_t size);

#endif
