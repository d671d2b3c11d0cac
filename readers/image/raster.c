/* SPDX-License-Identifier: MIT */
/* raster.c - image formats vision APIs do not take (BMP, TIFF, ICO, HEIC, AVIF): converted to PNG or
 * JPEG with libvips when it loads them, unsupported (named) when it cannot. */
#include <errno.h>
#include <string.h>

#include "core.h"
#include "image.h"
#include "util.h"
struct raster_format {
	const char *name;
	const char *mime_type;
	const char *const *extensions; /* NULL-terminated */
	const char *const *loaders;    /* libvips loaders that read it, NULL-terminated */
};

static const char *const bmp_extensions[] = {"bmp", NULL};
static const char *const tiff_extensions[] = {"tif", "tiff", NULL};
static const char *const ico_extensions[] = {"ico", NULL};
static const char *const heic_extensions[] = {"heic", "heif", NULL};
static const char *const avif_extensions[] = {"avif", NULL};

/* libvips 8.14 reads BMP and ICO only through ImageMagick; TIFF and HEIF have loaders of their
 * own (libheif decodes AVIF too when it has an AV1 decoder). */
static const char *const magick_loaders[] = {"magickload_buffer", NULL};
static const char *const tiff_loaders[] = {"tiffload_buffer", "magickload_buffer", NULL};
static const char *const heif_loaders[] = {"heifload_buffer", "magickload_buffer", NULL};

enum raster_kind { RASTER_BMP, RASTER_TIFF, RASTER_ICO, RASTER_HEIC, RASTER_AVIF, RASTER_NONE };

static const struct raster_format raster_formats[] = {
	[RASTER_BMP] = {"BMP", "image/bmp", bmp_extensions, magick_loaders},
	[RASTER_TIFF] = {"TIFF", "image/tiff", tiff_extensions, tiff_loaders},
	[RASTER_ICO] = {"ICO", "image/vnd.microsoft.icon", ico_extensions, magick_loaders},
	[RASTER_HEIC] = {"HEIC", "image/heic", heic_extensions, heif_loaders},
	[RASTER_AVIF] = {"AVIF", "image/avif", avif_extensions, heif_loaders},
};

/* "BM" alone is too weak (text can start with it): also require a known DIB header size. */
static bool is_bmp(const unsigned char *h, size_t len)
{
	if (len < 18 || h[0] != 'B' || h[1] != 'M')
		return false;
	switch (tr_le32(h + 14)) {
	case 12:
	case 16:
	case 40:
	case 52:
	case 56:
	case 64:
	case 108:
	case 124: return true;
	}
	return false;
}

static bool is_tiff(const unsigned char *h, size_t len)
{
	/* Classic TIFF (42) and BigTIFF (43), either byte order. */
	return len >= 4 &&
	       ((h[0] == 'I' && h[1] == 'I' && (h[2] == 42 || h[2] == 43) && h[3] == 0) ||
		(h[0] == 'M' && h[1] == 'M' && h[2] == 0 && (h[3] == 42 || h[3] == 43)));
}

static bool is_ico(const unsigned char *h, size_t len)
{
	return len >= 6 && h[0] == 0 && h[1] == 0 && h[2] == 1 && h[3] == 0 && tr_le16(h + 4) > 0;
}

static bool brand_in(const unsigned char *brand, const char *const *set)
{
	for (; *set; set++)
		if (memcmp(brand, *set, 4) == 0)
			return true;
	return false;
}

/* ISO-BMFF: a leading "ftyp" box whose major or compatible brands name HEIF or AVIF. A generic
 * HEIF brand (mif1, msf1) defers to the others: AVIF files list mif1 too. */
static enum raster_kind heif_kind(const unsigned char *h, size_t len)
{
	static const char *const avif[] = {"avif", "avis", NULL};
	static const char *const heic[] = {"heic", "heix", "heim", "heis", "hevc", "hevx", NULL};
	static const char *const generic[] = {"mif1", "msf1", NULL};
	bool any_heif;
	size_t box;

	if (len < 16 || memcmp(h + 4, "ftyp", 4) != 0)
		return RASTER_NONE;
	box = tr_be32(h);
	if (box < 16)
		return RASTER_NONE;
	if (box > len)
		box = len;
	if (brand_in(h + 8, avif))
		return RASTER_AVIF;
	if (brand_in(h + 8, heic))
		return RASTER_HEIC;
	any_heif = brand_in(h + 8, generic);
	for (size_t at = 16; at + 4 <= box; at += 4) {
		if (brand_in(h + at, avif))
			return RASTER_AVIF;
		any_heif |= brand_in(h + at, heic) || brand_in(h + at, generic);
	}
	return any_heif ? RASTER_HEIC : RASTER_NONE;
}

static enum raster_kind content_kind(const unsigned char *h, size_t len)
{
	if (is_bmp(h, len))
		return RASTER_BMP;
	if (is_tiff(h, len))
		return RASTER_TIFF;
	if (is_ico(h, len))
		return RASTER_ICO;
	return heif_kind(h, len);
}

static enum raster_kind extension_kind(const struct tr_file *file)
{
	const char *name = file->src ? file->src->name : NULL;

	if (!name)
		return RASTER_NONE;
	for (enum raster_kind k = RASTER_BMP; k < RASTER_NONE; k++)
		for (const char *const *ext = raster_formats[k].extensions; *ext; ext++)
			if (tr_has_extension(name, *ext))
				return k;
	return RASTER_NONE;
}

static enum tr_probe raster_probe(const struct tr_file *file)
{
	if (content_kind(file->head, file->head_len) != RASTER_NONE)
		return TR_PROBE_CONTENT;
	if (extension_kind(file) != RASTER_NONE)
		return TR_PROBE_EXTENSION;
	return TR_PROBE_NO;
}

/* True when this build can decode fmt at all (libvips is in and has one of its loaders). */
static bool can_load(const struct raster_format *fmt)
{
#if defined(TR_HAVE_VIPS)
	for (const char *const *loader = fmt->loaders; *loader; loader++)
		if (tr_fit_has_loader(*loader))
			return true;
#else
	(void)fmt;
#endif
	return false;
}

/* Loads the file and converts it to PNG (or JPEG, by the fit rule) with libvips. */
static int convert(const struct tr_file *file, const struct tr_options *opts, struct tr_result *res,
		   const struct raster_format *fmt)
{
	uint64_t size = (uint64_t)file->st.st_size;
	uint64_t limit = opts->max_image_size;
	struct tr_blob *blob = NULL;
	struct tr_image_shown shown = {
		.format = fmt->name,
		.media_type = fmt->mime_type,
		.must_convert = true,
		.deadline = file->deadline,
	};

	if (size > limit) {
		tr_result_fail_too_large(res, "Image", size, limit, NULL);
		return 0;
	}
	if (tr_load_file(file->fd, size, &blob, &res->meta) < 0)
		return tr_result_fail_load(res, errno);
	return tr_image_attach(res, blob, &shown, opts);
}

static int raster_read(const struct tr_file *file, const struct tr_selector *sel,
		       const struct tr_options *opts, struct tr_result *res)
{
	enum raster_kind kind = content_kind(file->head, file->head_len);

	res->type = TR_TYPE_IMAGE;
	if (kind == RASTER_NONE) {
		/* Chosen by its extension alone: the bytes are not that format. */
		kind = extension_kind(file);
		if (file->st.st_size == 0)
			tr_result_fail(res, TR_E_CORRUPT,
				       "Failed to process image file: empty file (0 bytes)");
		else
			tr_result_fail(res, TR_E_CORRUPT,
				       "Failed to process image file: not a %s file: bad signature "
				       "at offset 0",
				       kind == RASTER_NONE ? "known image"
							   : raster_formats[kind].name);
		return 0;
	}
	res->mime_type = strdup(raster_formats[kind].mime_type);
	if (!res->mime_type)
		return -1;
	if (tr_image_selector_past_end(res, sel))
		return 0;
	if (!can_load(&raster_formats[kind])) {
		tr_result_fail(
			res, TR_E_UNSUPPORTED,
#if defined(TR_HAVE_VIPS)
			"Unsupported image format: %s (no libvips loader for it is available)",
#else
			"Unsupported image format: %s (this build has no libvips to convert it)",
#endif
			raster_formats[kind].name);
		return 0;
	}
	return convert(file, opts, res, &raster_formats[kind]);
}

const struct tr_reader tr_reader_raster = {
	.name = "raster",
	.probe = raster_probe,
	.read = raster_read,
#if defined(TR_HAVE_VIPS)
	.caps = TR_CAP_UNTRUSTED | TR_CAP_THREADS, /* libvips and its decoders convert */
	.module = "toolfs-vips.so",
#endif
};
