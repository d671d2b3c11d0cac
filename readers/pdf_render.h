/* pdf_render.h - renders one PDF page (poppler + cairo) into an encoded image for images[]. */
#ifndef TR_PDF_RENDER_H
#define TR_PDF_RENDER_H

#include <stdint.h>

#include <poppler.h>

#include "tr_blob.h"

/* SPEC §3: page renders have this long edge in pixels. */
#define TR_PDF_RENDER_LONG_EDGE 1568

/* An encoded page image. */
struct tr_pdf_render {
	struct tr_blob *data;   /* owned reference: PNG or JPEG bytes */
	const char *media_type; /* static: "image/png" or "image/jpeg" */
	uint32_t width, height; /* pixels */
};

/* Pixel size of page (its rotation applied) scaled so that the long edge is long_edge: the long
 * side gets exactly long_edge, the other side its rounded share (at least 1). */
void tr_pdf_render_size(PopplerPage *page, uint32_t long_edge, uint32_t *width, uint32_t *height);

/* Renders page with its rotation on white at long_edge pixels (tr_pdf_render_size) and encodes
 * it as PNG; when the PNG's base64 would exceed max_b64 bytes and libvips is built in, as JPEG
 * instead (quality lowered until it fits, down to a floor). The pixel surface is freed before
 * returning, so only one page's pixels exist at a time. On success fills *out (the caller owns
 * out->data) and returns 0. Returns 1 when cairo cannot render or encode the page (*out
 * untouched; err gets a short reason, NUL-terminated), -1 when out of memory. */
int tr_pdf_render_page(PopplerPage *page, uint32_t long_edge, uint64_t max_b64,
		       struct tr_pdf_render *out, char *err, size_t err_size);

#endif
