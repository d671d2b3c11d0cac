/* SPDX-License-Identifier: MIT */
/* formats.c - the image reader: PNG, JPEG, GIF and WebP as one table of formats, the best
 * probing one read by tr_image_read. */
#include "image.h"
#include "util.h"

static const struct tr_image_format *const image_formats[] = {
	&tr_image_png,
	&tr_image_jpeg,
	&tr_image_gif,
	&tr_image_webp,
};

/* TR_PROBE_CONTENT when file->head carries fmt's signature, TR_PROBE_EXTENSION when the file's
 * name has one of fmt's extensions, otherwise TR_PROBE_NO. */
static enum tr_probe format_probe(const struct tr_file *file, const struct tr_image_format *fmt)
{
	if (fmt->signature(file->head, file->head_len))
		return TR_PROBE_CONTENT;
	for (const char *const *ext = fmt->extensions; *ext; ext++)
		if (file->src && file->src->name && tr_has_extension(file->src->name, *ext))
			return TR_PROBE_EXTENSION;
	return TR_PROBE_NO;
}

/* The format that probes best for file (ties: the earlier one), or NULL; *score gets its score. */
static const struct tr_image_format *best_format(const struct tr_file *file, enum tr_probe *score)
{
	const struct tr_image_format *best = NULL;

	*score = TR_PROBE_NO;
	for (size_t i = 0; i < sizeof(image_formats) / sizeof(image_formats[0]); i++) {
		enum tr_probe s = format_probe(file, image_formats[i]);

		if (s > *score) {
			best = image_formats[i];
			*score = s;
		}
	}
	return best;
}

static enum tr_probe image_probe(const struct tr_file *file)
{
	enum tr_probe score;

	best_format(file, &score);
	return score;
}

static int image_read(const struct tr_file *file, const struct tr_selector *sel,
		      const struct tr_options *opts, struct tr_result *res)
{
	enum tr_probe score;
	const struct tr_image_format *fmt = best_format(file, &score);

	return tr_image_read(file, sel, opts, res, fmt ? fmt : &tr_image_png);
}

/* PNG, JPEG, GIF and WebP: one reader over the format table. */
const struct tr_reader tr_reader_image = {
	.name = "image",
	.probe = image_probe,
	.read = image_read,
#if defined(TR_HAVE_VIPS)
	.caps = TR_CAP_REGIONS | TR_CAP_UNTRUSTED | TR_CAP_THREADS, /* libvips, its decoders */
	.module = "toolfs-vips.so",
#endif
};
