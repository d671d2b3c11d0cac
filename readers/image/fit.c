/* fit.c - downscaling and conversion of images with libvips (shrink-on-load, PNG or a JPEG
 * quality ladder, then smaller sizes). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <vips/vips.h>

#include "image.h"
#include "util.h"

/* JPEG qualities tried, best first, before the size is reduced further. */
static const int jpeg_ladder[] = {85, 75, 60, 45};
/* Each further size step keeps this fraction of the long edge. */
#define SHRINK_STEP 0.8
#define MAX_STEPS 16
/* PNG is skipped for JPEG when the source's own deflate saved less than half its raw bytes
 * (noise, photos) and its bytes scaled to the output's pixels exceed the limit by half again:
 * such an image does not fit as PNG at that size, and encoding it only to find out costs more
 * than the whole JPEG ladder. */
#define INCOMPRESSIBLE_RATIO 0.5
#define PNG_HOPELESS_MARGIN 1.5

static uint64_t base64_len(size_t len)
{
	return 4 * (((uint64_t)len + 2) / 3);
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

/* Encodes img as PNG or JPEG (quality q); returns a blob, or NULL with the libvips error set. */
static struct tr_blob *encode(VipsImage *img, bool jpeg, int quality)
{
	VipsImage *ready = NULL;
	void *buf = NULL;
	size_t len = 0;
	struct tr_blob *blob = NULL;

	if (to_8bit(img, jpeg, &ready))
		return NULL;
	if (jpeg ? vips_jpegsave_buffer(ready, &buf, &len, "Q", quality, "strip", TRUE,
					"optimize_coding", TRUE, NULL)
		 : vips_pngsave_buffer(ready, &buf, &len, "compression", 6, "strip", TRUE, NULL)) {
		g_object_unref(ready);
		return NULL;
	}
	g_object_unref(ready);
	blob = tr_blob_copy(buf, len);
	g_free(buf);
	return blob;
}

/* What is decoded of the source: its frame count and the frame shown. */
struct source {
	uint32_t width, height; /* of the frame shown */
	uint64_t raw_bytes;     /* of its decoded pixels (bands x bytes per sample) */
	int bands;
	uint32_t frames;
	int page; /* the frame shown, 0-based */
	bool largest;
};

/* Reads the header of frame page (the loader's default when page < 0) without decoding. */
static VipsImage *header(const struct tr_blob *src, int page)
{
	if (page < 0)
		return vips_image_new_from_buffer(src->data, src->len, "", "access",
						  VIPS_ACCESS_SEQUENTIAL, NULL);
	return vips_image_new_from_buffer(src->data, src->len, "", "access", VIPS_ACCESS_SEQUENTIAL,
					  "page", page, NULL);
}

/* Fills *s from the headers alone: the first frame, or for ImageMagick's loader (icons: one
 * image per size, smallest often first) the largest of the frames. */
static int source_header(const struct tr_blob *src, const char *loader, struct source *s)
{
	VipsImage *head = header(src, -1);
	int n;

	if (!head)
		return -1;
	/* Loaders report one frame's height unless asked for more ("n"). */
	s->width = (uint32_t)vips_image_get_width(head);
	s->height = (uint32_t)vips_image_get_height(head);
	s->bands = vips_image_get_bands(head);
	s->raw_bytes = (uint64_t)s->width * s->height * (uint64_t)s->bands *
		       vips_format_sizeof(vips_image_get_format(head));
	n = vips_image_get_n_pages(head);
	s->frames = n > 0 ? (uint32_t)n : 1;
	s->page = 0;
	s->largest = false;
	g_object_unref(head);
	if (strcmp(loader, "magickload_buffer") != 0 || s->frames < 2)
		return 0;
	s->largest = true;
	for (int page = 1; page < (int)s->frames && page < 64; page++) {
		VipsImage *frame = header(src, page);
		uint32_t w, h;

		if (!frame) {
			vips_error_clear();
			continue;
		}
		w = (uint32_t)vips_image_get_width(frame);
		h = (uint32_t)vips_image_get_height(frame);
		g_object_unref(frame);
		if ((uint64_t)w * h > (uint64_t)s->width * s->height) {
			s->width = w;
			s->height = h;
			s->page = page;
		}
	}
	return 0;
}

/* The JPEG decoder's own shrink (1, 2, 4 or 8, in the DCT) that keeps the long edge at least
 * target and the short edge at least 1 pixel: libvips' thumbnail leaves a factor of two for its
 * Lanczos reduce, which for a 2x fit means decoding every pixel and filtering them all; the DCT
 * halves in a fraction of that, as sharp's default shrink-on-load does. libvips 8.14's jpegload
 * divides each edge by the shrink rounding down and aborts the process on a 0-pixel edge (a
 * 7x16000 JPEG at shrink 8), so the short edge bounds the shrink too. */
static int jpeg_shrink(const struct source *s, uint32_t target)
{
	uint64_t from_long = s->width > s->height ? s->width : s->height;
	uint64_t from_short = s->width > s->height ? s->height : s->width;
	int shrink = 1;

	while (shrink < 8 && from_long >= (uint64_t)target * (uint64_t)shrink * 2 &&
	       from_short >= (uint64_t)shrink * 2)
		shrink *= 2;
	return shrink;
}

/* Frame s->page shrunk to fit a target x target box, decoded into memory once so that the
 * encoding attempts do not decode the source again. A JPEG is shrunk in its decoder first
 * (jpeg_shrink), sequentially. */
static VipsImage *shrunk(const struct tr_blob *src, const struct source *s, uint32_t target,
			 bool jpeg_source)
{
	VipsImage *thumb = NULL, *mem;
	char loader_options[32] = "";
	int shrink = jpeg_source ? jpeg_shrink(s, target) : 1;
	int rc;

	if (shrink > 1) {
		VipsImage *pre = NULL;

		if (vips_jpegload_buffer(src->data, src->len, &pre, "shrink", shrink, "access",
					 VIPS_ACCESS_SEQUENTIAL, NULL))
			return NULL;
		rc = vips_thumbnail_image(pre, &thumb, (int)target, "height", (int)target, "size",
					  VIPS_SIZE_DOWN, "no_rotate", TRUE, NULL);
		g_object_unref(pre);
	} else {
		if (s->page > 0)
			snprintf(loader_options, sizeof(loader_options), "page=%d", s->page);
		/* thumbnail_buffer shrinks on load (WebP, HEIF) and takes the first frame. */
		rc = vips_thumbnail_buffer(src->data, src->len, &thumb, (int)target, "height",
					   (int)target, "size", VIPS_SIZE_DOWN, "no_rotate", TRUE,
					   "option_string", loader_options, NULL);
	}
	if (rc)
		return NULL;
	mem = vips_image_copy_memory(thumb);
	g_object_unref(thumb);
	return mem;
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

static enum tr_error fit_image(const struct tr_blob *src, const struct tr_options *opts,
			       struct tr_fit *out, char *err, size_t err_size)
{
	struct source source;
	uint32_t from_w, from_h, from_long, target;
	const char *loader;
	bool jpeg_source;

	memset(out, 0, sizeof(*out));
	if (!tr_vips_start()) {
		snprintf(err, err_size, "libvips could not start");
		return TR_E_IO;
	}
	loader = vips_foreign_find_load_buffer(src->data, src->len);
	if (!loader) {
		vips_reason(err, err_size, "libvips cannot decode it");
		return TR_E_CORRUPT;
	}
	/* find_load gives the class name ("VipsForeignLoadJpegBuffer"); the nickname is stable. */
	loader = vips_nickname_find(g_type_from_name(loader));
	if (!loader)
		loader = "";
	jpeg_source = strcmp(loader, "jpegload_buffer") == 0;
	if (source_header(src, loader, &source) < 0 || source.width == 0 || source.height == 0) {
		bool missing = codec_missing();

		vips_reason(err, err_size, "libvips cannot decode it");
		return missing ? TR_E_UNSUPPORTED : TR_E_CORRUPT;
	}
	from_w = source.width;
	from_h = source.height;
	if (tr_fit_too_many_pixels(from_w, from_h, err, err_size))
		return TR_E_TOO_LARGE;
	from_long = from_w > from_h ? from_w : from_h;
	target = from_long < opts->image_max_dim ? from_long : (uint32_t)opts->image_max_dim;

	bool skip_png = jpeg_source || png_hopeless(src, loader, &source, target, opts);

	for (int step = 0; step < MAX_STEPS && target >= 1; step++) {
		VipsImage *thumb = shrunk(src, &source, target, jpeg_source);
		/* PNG stays PNG when it fits; a photo (JPEG source) goes straight to JPEG, and so does
		 * anything that did not fit as PNG at a larger size or cannot (png_hopeless). */
		int first = skip_png || step > 0 ? 0 : -1;
		int n_ladder = (int)(sizeof(jpeg_ladder) / sizeof(jpeg_ladder[0]));

		if (!thumb) {
			bool missing = codec_missing();

			vips_reason(err, err_size, "libvips cannot decode it");
			return missing ? TR_E_UNSUPPORTED : TR_E_CORRUPT;
		}
		for (int attempt = first; attempt < n_ladder; attempt++) {
			bool jpeg = attempt >= 0;
			struct tr_blob *blob = encode(thumb, jpeg, jpeg ? jpeg_ladder[attempt] : 0);

			if (!blob) {
				g_object_unref(thumb);
				vips_reason(err, err_size, "libvips cannot encode it");
				return TR_E_IO;
			}
			if (base64_len(blob->len) <= opts->image_max_b64) {
				uint32_t to_w = (uint32_t)vips_image_get_width(thumb);
				uint32_t to_h = (uint32_t)vips_image_get_height(thumb);
				uint32_t to_long = to_w > to_h ? to_w : to_h;

				*out = (struct tr_fit){
					.data = blob,
					.media_type = jpeg ? "image/jpeg" : "image/png",
					.width = to_w,
					.height = to_h,
					.from_width = from_w,
					.from_height = from_h,
					.frames = source.frames,
					.largest = source.largest,
					.scale = (double)from_long / (double)to_long,
				};
				g_object_unref(thumb);
				return TR_OK;
			}
			tr_blob_unref(blob);
		}
		g_object_unref(thumb);
		target = (uint32_t)floor(target * SHRINK_STEP);
	}
	snprintf(err, err_size, "no size of it fits in %llu bytes of base64 (image_max_b64)",
		 (unsigned long long)opts->image_max_b64);
	return TR_E_TOO_LARGE;
}

const struct tr_vips_api tr_vips_api = {
	.abi = TR_VIPS_ABI,
	.has_loader = has_loader,
	.fit_image = fit_image,
};
