/* pdf_text.h - tidying of the text poppler extracts from a PDF page (pure string work). */
#ifndef TR_PDF_TEXT_H
#define TR_PDF_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "tr_result.h"

/* True when text (NUL-terminated, may be NULL) holds nothing but ASCII whitespace and Unicode
 * bidi embedding marks (U+202A-U+202E): a page without a text layer. */
bool tr_pdf_text_is_blank(const char *text);

/* Appends text[0..len) to out as the page text a model reads: poppler wraps each right-to-left
 * word in U+202B ... U+202C and sometimes drops the space between two such words, so a space
 * is put back wherever one embedding closes and the next opens (U+202C then U+202A/U+202B);
 * trailing whitespace is dropped. Returns 0, or -1 when out of memory (out->oom). */
int tr_pdf_text_append(struct tr_buf *out, const char *text, size_t len);

#endif
