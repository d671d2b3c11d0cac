/* pdf_poppler.h - the PDF read on poppler-glib + cairo (built only when both are available). */
#ifndef TR_PDF_POPPLER_H
#define TR_PDF_POPPLER_H

#include "reader.h"

/* The read of SPEC §3 "PDFs" (the tr_reader.read contract; type and mimeType are already set):
 * the default view (pages 1-10 as text, renders of pages without a text layer, the whole file
 * as documents[0] when within 100 pages and opts->max_pdf_size) or a page selector (text and a
 * render of each page, at most opts->max_pdf_pages pages). Sets metadata.pageCount whenever the
 * document opens. Failures (encrypted, corrupt, too_large, out_of_range, io_error) go into res.
 * Returns 0, or -1 when out of memory. */
int tr_pdf_read_poppler(const struct tr_file *file, const struct tr_selector *sel,
			const struct tr_options *opts, struct tr_result *res);

#endif
