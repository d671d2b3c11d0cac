/* SPDX-License-Identifier: MIT */
/* fit.c - downscaling and conversion of images with libvips: the encodings tried at each size
 * (PNG, palette PNG, a JPEG quality ladder), then smaller sizes, and the module's interface
 * table; the source decoded at a size is fit_source.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vips/vips.h>

#include "fit.h"
#include "util.h"

/* JPEG qualities tried, best first, before the size is reduced further. */
static const int jpeg_ladder[] = {85, 75, 60, 45};
#define N_LADDER (sizeof(jpeg_ladder) / sizeof(jpeg_ladder[0]))
/* Each further size step keeps this fraction of the long edge. */
#define SHRINK_STEP 0.8
#define MAX_STEPS 16
/* PNG is skipped for JPEG when the source's own deflate saved less than half its raw bytes
 * (noise, photos) and its bytes scaled to the output's pixels exceed the limit by half again:
 * such an image does not fit as PNG at that size, and encoding it only to find out costs more
 * than the whole JPEG ladder. */
#define INCOMPRESSIBLE_RATIO 0.5
#define PNG_HOPELESS_MARGIN 1.5
/* A source whose file holds less than this fraction of its raw pixel bytes is a drawing (a plot,
 * a screenshot): flat colours and anti-aliased edges, which a 256-colour palette keeps. */
#define DRAWING_RATIO 0.125
/* The encodings tried at a size, in order: full-colour PNG, palette PNG, then the JPEG ladder
 * (attempts 0 to N_LADDER - 1). */
#define ATTEMPT_PNG (-2)
#define ATTEMPT_PALETTE (-1)

static uint64_t base64_len(size_t len)
{
	return 4 * (((uint64_t)len + 2) / 3);
}

/* The error of a fit stopped by its deadline. */
static enum tr_error timed_out(char *err, size_t err_size)
{
	vips_error_clear();
	snprintf(err, err_size, "timeout: not fitted within the time for renders (max_render_ms)");
	return TR_E_TIMEOUT;
}

static bool has_loader(const char *nickname)
{
	GType type;
	gpointer klass;
	bool blocked;

	if (!tr_vips_start())
		return false;
	type = vips_type_find("VipsOperation", nickname);
	if (!type)
		return false;
	/* An operation can be blocked (VIPS_BLOCK_UNTRUSTED=1 blocks the ImageMagick loaders). */
	klass = g_type_class_ref(type);
	blocked = (VIPS_OPERATION_CLASS(klass)->flags & VIPS_OPERATION_BLOCKED) != 0;
	g_type_class_unref(klass);
	return !blocked;
}

/* Writes "what: <libvips's reason>" into err as one line and clears libvips's error buffer. */
static void vips_reason(char *err, size_t size, const char *what)
{
	const char *detail = vips_error_buffer();
	size_t n;

	snprintf(err, size, "%s: %s", what, detail && *detail ? detail : "unknown libvips error");
	/* vips messages end in newlines; a result sentence must not. */
	n = strlen(err);
	while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '))
		err[--n] = '\0';
	for (char *p = err; *p; p++)
		if (*p == '\n')
			*p = ' ';
	vips_error_clear();
}

/* libheif reports a missing decoder (no HEVC or AV1 plugin) as an unsupported feature. */
static bool codec_missing(void)
{
	const char *detail = vips_error_buffer();

	return detail &&
	       (strstr(detail, "Unsupported feature") || strstr(detail, "Unsupported codec"));
}

static bool is_grey(VipsImage *in)
{
	VipsInterpretation interp = vips_image_get_interpretation(in);

	return interp == VIPS_INTERPRETATION_B_W || interp == VIPS_INTERPRETATION_GREY16;
}

/* Makes an 8-bit sRGB (or 8-bit grey) image; alpha is kept for PNG and flattened on white for
 * JPEG. */
static int to_8bit(VipsImage *in, bool flatten, VipsImage **out)
{
	VipsImage *conv = NULL, *flat = NULL, *cast = NULL;
	bool grey = is_grey(in);
	int rc = -1;

	if (vips_colourspace(in, &conv, grey ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB,
			     NULL))
		goto out;
	if (flatten && vips_image_hasalpha(conv)) {
		double white[3] = {255, 255, 255};
		VipsArrayDouble *bg = vips_array_double_new(white, grey ? 1 : 3);

		rc = vips_flatten(conv, &flat, "background", bg, NULL);
		vips_area_unref(VIPS_AREA(bg));
		if (rc)
			goto out;
		rc = -1;
	}
	if (vips_cast_uchar(flat ? flat : conv, &cast, NULL))
		goto out;
	*out = cast;
	cast = NULL;
	rc = 0;
out:
	if (cast)
		g_object_unref(cast);
	if (flat)
		g_object_unref(flat);
	if (conv)
		g_object_unref(conv);
	return rc;
}

/* Encodes img as PNG (attempt ATTEMPT_PNG), as a PNG of 256 colours at most (ATTEMPT_PALETTE:
 * tr_png_encode_palette) or as JPEG at jpeg_ladder[attempt]; returns a blob, or NULL with the
 * libvips error set (or none, when a PNG encoder ran out of memory or the deadline passed). */
static struct tr_blob *encode(VipsImage *img, int attempt, uint64_t deadline)
{
	bool jpeg = attempt >= 0;
	/* A decoded copy in PNG's layout (into_memory) is encoded as it is: no second copy. */
	const unsigned char *filtered = g_object_get_data(G_OBJECT(img), FILTERED_ROWS);
	uint32_t w = (uint32_t)img->Xsize, h = (uint32_t)img->Ysize;
	size_t row_bytes = VIPS_IMAGE_SIZEOF_LINE(img);
	VipsImage *ready = NULL;
	void *buf = NULL;
	size_t len = 0;
	struct tr_blob *blob = NULL;

	if (filtered && attempt == ATTEMPT_PNG)
		return tr_png_encode_filtered(filtered, w, h, img->Bands);
	if (filtered && attempt == ATTEMPT_PALETTE)
		return tr_png_encode_palette(filtered + 1, row_bytes + 1, w, h, img->Bands,
					     deadline);
	if (to_8bit(img, jpeg, &ready))
		return NULL;
	tr_fit_watch_deadline(ready, deadline);
	if (jpeg) {
		if (!vips_jpegsave_buffer(ready, &buf, &len, "Q", jpeg_ladder[attempt], "strip",
					  TRUE, "optimize_coding", TRUE, NULL)) {
			blob = tr_blob_copy(buf, len);
			g_free(buf);
		}
	} else if (attempt == ATTEMPT_PALETTE) {
		if (!vips_image_wio_input(ready))
			blob = tr_png_encode_palette(VIPS_IMAGE_ADDR(ready, 0, 0),
						     VIPS_IMAGE_SIZEOF_LINE(ready),
						     (uint32_t)ready->Xsize, (uint32_t)ready->Ysize,
						     ready->Bands, deadline);
	} else if (!vips_image_wio_input(ready)) {
		/* The pixels in memory, then tr_png_encode (libdeflate) instead of libpng's zlib. */
		blob = tr_png_encode(VIPS_IMAGE_ADDR(ready, 0, 0), VIPS_IMAGE_SIZEOF_LINE(ready),
				     (uint32_t)ready->Xsize, (uint32_t)ready->Ysize, ready->Bands);
	}
	g_object_unref(ready);
	return blob;
}

/* True when a PNG source's PNG at target pixels cannot fit in opts->image_max_b64: the source
 * is nearly incompressible (its file holds at least INCOMPRESSIBLE_RATIO of its raw pixel
 * bytes) and that ratio applied to the output's 8-bit pixels is PNG_HOPELESS_MARGIN times the
 * limit. Downscaling noise or a photo does not make it compress better, so the PNG attempt
 * would be encoded only to be thrown away. */
static bool png_hopeless(const struct tr_blob *src, const char *loader, const struct source *s,
			 uint32_t target, const struct tr_options *opts)
{
	uint32_t from_long = s->width > s->height ? s->width : s->height;
	double scale, ratio, out_bytes;

	if (strcmp(loader, "pngload_buffer") != 0 || s->raw_bytes == 0 || from_long == 0)
		return false;
	ratio = (double)src->len / (double)s->raw_bytes;
	if (ratio < INCOMPRESSIBLE_RATIO)
		return false;
	scale = (double)target / from_long;
	out_bytes = ratio * s->width * scale * s->height * scale * s->bands;
	return base64_len((size_t)out_bytes) > PNG_HOPELESS_MARGIN * opts->image_max_b64;
}

/* The error of a source libvips could not decode: unsupported when its codec is missing. */
static enum tr_error decode_error(char *err, size_t err_size)
{
	bool missing = codec_missing();

	vips_reason(err, err_size, "libvips cannot decode it");
	return missing ? TR_E_UNSUPPORTED : TR_E_CORRUPT;
}

/* What a fit may take: base64 within opts->image_max_b64 and, for a source in a format the
 * providers accept, no more bytes than the source (max_bytes; else UINT64_MAX). */
struct budget {
	const struct tr_options *opts;
	uint64_t max_bytes;
	bool grew; /* an encoding within image_max_b64 was refused for max_bytes */
};

/* Encodes thumb (encode's attempt); when it is within budget, fills *out with it (the fit of
 * source s) and returns TR_OK. Returns TR_E_TOO_LARGE when it is not, TR_E_IO with err set when
 * it cannot be encoded. */
static enum tr_error try_encoding(VipsImage *thumb, int attempt, const struct source *s,
				  struct budget *budget, uint64_t deadline, struct tr_fit *out,
				  char *err, size_t err_size)
{
	bool jpeg = attempt >= 0;
	struct tr_blob *blob = encode(thumb, attempt, deadline);
	uint32_t to_w, to_h, to_long, from_long;

	if (!blob && tr_deadline_passed(deadline))
		return timed_out(err, err_size);
	if (!blob && attempt == ATTEMPT_PALETTE) {
		/* No palette (libimagequant failed, no memory): the next encoding instead. */
		vips_error_clear();
		return TR_E_TOO_LARGE;
	}
	if (!blob) {
		vips_reason(err, err_size, "libvips cannot encode it");
		return TR_E_IO;
	}
	if (base64_len(blob->len) > budget->opts->image_max_b64 || blob->len > budget->max_bytes) {
		if (base64_len(blob->len) <= budget->opts->image_max_b64)
			budget->grew = true;
		tr_blob_unref(blob);
		return TR_E_TOO_LARGE;
	}
	to_w = (uint32_t)vips_image_get_width(thumb);
	to_h = (uint32_t)vips_image_get_height(thumb);
	to_long = to_w > to_h ? to_w : to_h;
	from_long = s->width > s->height ? s->width : s->height;
	*out = (struct tr_fit){
		.data = blob,
		.media_type = jpeg ? "image/jpeg" : "image/png",
		.width = to_w,
		.height = to_h,
		.from_width = s->width,
		.from_height = s->height,
		.frames = s->frames,
		.largest = s->largest,
		.scale = (double)from_long / (double)to_long,
		.saving = !budget->grew                ? NULL
			  : attempt == ATTEMPT_PALETTE ? "palette"
						       : "jpeg",
	};
	return TR_OK;
}

/* True for the loaders of the formats the providers accept as they are (PNG, JPEG, GIF, WebP). */
static bool accepted_source(const char *loader)
{
	static const char *const accepted[] = {"pngload_buffer", "jpegload_buffer",
					       "gifload_buffer", "webpload_buffer"};

	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
		if (strcmp(loader, accepted[i]) == 0)
			return true;
	return false;
}

/* Finds the loader of src (*loader: its nickname, static) and fills *source from its headers,
 * the region's rectangle when region is not NULL. Returns TR_OK, or the error with err. */
static enum tr_error open_source(const struct tr_blob *src, const struct tr_region *region,
				 const char **loader, struct source *source, char *err,
				 size_t err_size)
{
	*loader = vips_foreign_find_load_buffer(src->data, src->len);
	if (!*loader) {
		vips_reason(err, err_size, "libvips cannot decode it");
		return TR_E_CORRUPT;
	}
	/* find_load gives the class name ("VipsForeignLoadJpegBuffer"); the nickname is stable. */
	*loader = vips_nickname_find(g_type_from_name(*loader));
	if (!*loader)
		*loader = "";
	if (tr_fit_source_header(src, *loader, source) < 0 || source->width == 0 ||
	    source->height == 0)
		return decode_error(err, err_size);
	if (tr_fit_too_many_pixels(source->width, source->height, err, err_size))
		return TR_E_TOO_LARGE;
	if (region) {
		if (tr_region_clip(region, source->width, source->height, &source->region) < 0) {
			snprintf(err, err_size, "the region is outside the %ux%u image",
				 source->width, source->height);
			return TR_E_CORRUPT;
		}
		/* From here on the source is the region; png_hopeless has no ratio for it. */
		source->crop = true;
		source->width = source->region.width;
		source->height = source->region.height;
		source->raw_bytes = 0;
	}
	return TR_OK;
}

/* fit_image, of the rectangle region of the source when region is not NULL. */
static enum tr_error fit(const struct tr_blob *src, const struct tr_region *region,
			 const struct tr_options *opts, uint64_t deadline, struct tr_fit *out,
			 char *err, size_t err_size)
{
	struct source source = {.crop = false};
	uint32_t from_long, target;
	const char *loader;
	bool jpeg_source;
	enum tr_error opened;

	memset(out, 0, sizeof(*out));
	if (!tr_vips_start()) {
		snprintf(err, err_size, "libvips could not start");
		return TR_E_IO;
	}
	if (tr_deadline_passed(deadline))
		return timed_out(err, err_size);
	opened = open_source(src, region, &loader, &source, err, err_size);
	if (opened != TR_OK)
		return opened;
	jpeg_source = strcmp(loader, "jpegload_buffer") == 0;
	from_long = source.width > source.height ? source.width : source.height;
	target = from_long < opts->image_max_dim ? from_long : (uint32_t)opts->image_max_dim;

	bool skip_png = jpeg_source || png_hopeless(src, loader, &source, target, opts);
	struct budget budget = {.opts = opts, .max_bytes = UINT64_MAX};

	/* A fit by less than half never takes more bytes than a source the providers would take
	 * as it is (docs/SPEC.md §3): resampling a plot's flat colours and anti-aliased lines by a
	 * few percent gives every pixel a colour of its own, and its PNG grows 1.5 to 2.5 times.
	 * (Shrunk further, a source is no measure: a 300x9000 screenshot of 40 KB in 3 colours
	 * takes 130 KB as a PNG at 67x2000, and the rule would make it a JPEG at 53x1600.) */
	if (!region && accepted_source(loader) && from_long < 2 * (uint64_t)target)
		budget.max_bytes = src->len;
	/* A drawing's 256-colour palette PNG is tried after its full-colour PNG. */
	bool palette = budget.max_bytes != UINT64_MAX && !jpeg_source && source.raw_bytes &&
		       (double)src->len < DRAWING_RATIO * (double)source.raw_bytes;
	/* A photo nearly always fits at the first quality: that encoding pulls the pixels straight
	 * from the decoder (libvips decodes and encodes on two cores at once) instead of from a
	 * decoded copy, which only the rest of the ladder needs. */
	int done_at_full_size = -1; /* the last attempt already made at the first size */

	if (jpeg_source) {
		VipsImage *streamed = tr_fit_shrunk(src, &source, target, loader, false, deadline);
		enum tr_error rc;

		if (!streamed)
			return decode_error(err, err_size);
		/* One worker decoding (the loader is sequential anyway) while libvips' write-behind
		 * thread encodes: a worker per core on top of the writer only adds task switches
		 * (4000x3000 at Q85: 20 ms against 25 ms). A region's Lanczos reduce, without the
		 * DCT's shrink, is the heavy part: it keeps a worker per core. */
		if (!source.crop)
			vips_image_set_int(streamed, "concurrency", 1);
		rc = try_encoding(streamed, 0, &source, &budget, deadline, out, err, err_size);
		g_object_unref(streamed);
		if (rc == TR_OK || rc == TR_E_TIMEOUT)
			return rc;
		if (rc == TR_E_TOO_LARGE)
			done_at_full_size = 0;
		/* Else the pixels failed on their way through: decoding into memory below tells a
		 * damaged source (corrupt) from a failed encoding, as it did before. */
	}
	for (int step = 0; step < MAX_STEPS && target >= 1; step++) {
		VipsImage *thumb = tr_fit_shrunk(src, &source, target, loader, true, deadline);
		/* PNG stays PNG when it fits; a photo (JPEG source) goes straight to JPEG, and so does
		 * anything that did not fit as PNG at a larger size or cannot (png_hopeless). */
		int first = step > 0 ? 0 : skip_png ? done_at_full_size + 1 : ATTEMPT_PNG;

		if (!thumb && tr_deadline_passed(deadline))
			return timed_out(err, err_size);
		if (!thumb)
			return decode_error(err, err_size);
		for (int attempt = first; attempt < (int)N_LADDER; attempt++) {
			if (attempt == ATTEMPT_PALETTE &&
			    (!palette || !budget.grew || is_grey(thumb)))
				continue;
			enum tr_error rc = try_encoding(thumb, attempt, &source, &budget, deadline,
							out, err, err_size);

			if (rc != TR_E_TOO_LARGE) {
				if (rc == TR_OK && step > 0 && budget.grew)
					out->saving = "size";
				g_object_unref(thumb);
				return rc;
			}
		}
		g_object_unref(thumb);
		target = (uint32_t)floor(target * SHRINK_STEP);
	}
	snprintf(err, err_size, "no size of it fits in %llu bytes of base64 (image_max_b64)",
		 (unsigned long long)opts->image_max_b64);
	return TR_E_TOO_LARGE;
}

static enum tr_error fit_image(const struct tr_blob *src, const struct tr_options *opts,
			       uint64_t deadline, struct tr_fit *out, char *err, size_t err_size)
{
	return fit(src, NULL, opts, deadline, out, err, err_size);
}

static enum tr_error fit_region(const struct tr_blob *src, const struct tr_region *region,
				const struct tr_options *opts, uint64_t deadline,
				struct tr_fit *out, char *err, size_t err_size)
{
	return fit(src, region, opts, deadline, out, err, err_size);
}

/* struct tr_module_head: libvips and its plug-ins (40-50 ms). */
static void vips_warm(void)
{
	(void)tr_vips_start();
}

const struct tr_vips_api tr_vips_api = {
	.abi = TR_VIPS_ABI,
	.warm = vips_warm,
	.has_loader = has_loader,
	.fit_image = fit_image,
	.fit_region = fit_region,
};
