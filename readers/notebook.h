/* notebook.h - the notebook reader's entry point on a buffer (shared with its unit tests). */
#ifndef TR_NOTEBOOK_H
#define TR_NOTEBOOK_H

#include <stddef.h>

#include "reader.h"
#include "tr_options.h"
#include "tr_result.h"
#include "tr_selector.h"

/* The notebook reader: probes .ipynb by name, reads it whole (up to max_notebook_size). */
extern const struct tr_reader tr_reader_notebook;

/* MIME type of a Jupyter notebook. */
#define TR_NOTEBOOK_MIME "application/x-ipynb+json"

/* Fills res (freshly initialised) from the notebook JSON text[0..len) as the notebook reader
 * does: type, mimeType, content, shortResult, range, truncated, next, images, and metadata
 * cellCount, language, nbformat (not size, modified or sha256). name is the notebook's base name
 * for next and the notes of cut outputs (borrowed). Parse errors, non-notebooks and selectors
 * past the end are recorded in res. Returns 0, or -1 when out of memory. */
int tr_notebook_read_buffer(const char *text, size_t len, const char *name,
			    const struct tr_selector *sel, const struct tr_options *opts,
			    struct tr_result *res);

#endif
