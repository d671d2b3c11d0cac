/* registry.c - the list of format readers, in probe priority order. Adding a format = one new
 * file + one line here. */
#include "reader.h"

extern const struct tr_reader tr_reader_png;
extern const struct tr_reader tr_reader_jpeg;
extern const struct tr_reader tr_reader_gif;
extern const struct tr_reader tr_reader_webp;
extern const struct tr_reader tr_reader_raster;
extern const struct tr_reader tr_reader_pdf;
extern const struct tr_reader tr_reader_notebook;
extern const struct tr_reader tr_reader_office;
extern const struct tr_reader tr_reader_binary;
extern const struct tr_reader tr_reader_text;

const struct tr_reader *const tr_readers[] = {
	&tr_reader_png,    &tr_reader_jpeg,     &tr_reader_gif, &tr_reader_webp, &tr_reader_raster,
	&tr_reader_pdf,    &tr_reader_notebook,
#if defined(TR_HAVE_OFFICE)
	&tr_reader_office,
#endif
	&tr_reader_binary, &tr_reader_text,     NULL,
};
