/* SPDX-License-Identifier: MIT */
/* registry.c - the list of format readers, in probe priority order, and of the shared modules
 * they load. Adding a format: see the recipe in reader.h. */
#include "reader.h"

extern const struct tr_reader tr_reader_image;    /* image/: PNG, JPEG, GIF, WebP */
extern const struct tr_reader tr_reader_raster;   /* image/: BMP, TIFF, ICO, HEIC, AVIF */
extern const struct tr_reader tr_reader_pdf;      /* pdf/ */
extern const struct tr_reader tr_reader_notebook; /* notebook/ */
extern const struct tr_reader tr_reader_office;   /* office/: OOXML and ODF, legacy OLE2 */
extern const struct tr_reader tr_reader_svg;      /* svg/: SVG, SVGZ */
extern const struct tr_reader tr_reader_media;    /* media/: audio and video (FFmpeg worker) */
extern const struct tr_reader tr_reader_binary;   /* text/: binary detection */
extern const struct tr_reader tr_reader_text;     /* text/: any encoding */

const struct tr_reader *const tr_readers[] = {
	&tr_reader_image,    /* signatures first */
	&tr_reader_raster,   /* converted to PNG */
	&tr_reader_pdf,      /* "%PDF-" within 1 KiB */
	&tr_reader_notebook, /* .ipynb */
#if defined(TR_HAVE_OFFICE)
	&tr_reader_office, /* zip with Office or ODF parts; OLE2 */
#endif
#if defined(TR_HAVE_SVG)
	&tr_reader_svg, /* an svg root element in the SVG namespace; gzip holding one */
#endif
#if defined(TR_HAVE_MEDIA)
	&tr_reader_media, /* containers by signature */
#endif
	&tr_reader_binary, /* binary and text last: decided from content */
	&tr_reader_text,   /* the fallback */
	NULL,
};

extern struct tr_module tr_module_vips;   /* image/: libvips and its decoders */
extern struct tr_module tr_module_pdf;    /* pdf/: poppler and cairo */
extern struct tr_module tr_module_ocr;    /* ocr/: Tesseract */
extern struct tr_module tr_module_office; /* office/: libzip and libxml2 */
extern struct tr_module tr_module_svg;    /* svg/: librsvg */
extern struct tr_module tr_module_media;  /* media/: FFmpeg */

struct tr_module *const tr_modules[] = {
#if defined(TR_HAVE_VIPS)
	&tr_module_vips,
#endif
#if defined(TR_HAVE_POPPLER)
	&tr_module_pdf,
#endif
	&tr_module_ocr,
#if defined(TR_HAVE_OFFICE)
	&tr_module_office,
#endif
#if defined(TR_HAVE_SVG)
	&tr_module_svg,
#endif
#if defined(TR_HAVE_MEDIA)
	&tr_module_media,
#endif
	NULL,
};
