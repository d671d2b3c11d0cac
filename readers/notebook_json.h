/* notebook_json.h - locates a JSON syntax error where Python's json module reports it. */
#ifndef TR_NOTEBOOK_JSON_H
#define TR_NOTEBOOK_JSON_H

#include <stddef.h>
#include <stdint.h>

/* Scans text[0..len) as Python's json.loads does (NaN and Infinity accepted, control characters
 * in strings rejected, trailing data rejected). Returns 1 and sets *offset to the byte offset of
 * the first error, at the character JSONDecodeError.pos names; 0 when the text is valid; -1 when
 * out of memory (*offset untouched). */
int tr_json_find_error(const char *text, size_t len, size_t *offset);

/* Converts a byte offset in text into Python's 1-based lineno (1 + newlines before it) and colno
 * (1 + code points since the last newline). */
void tr_json_line_column(const char *text, size_t offset, uint64_t *line, uint64_t *column);

#endif
