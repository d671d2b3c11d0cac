/* SPDX-License-Identifier: MIT */
/* fit.c - downscaling and conversion of images with libvips (shrink-on-load, PNG or a JPEG
 * quality ladder, then smaller sizes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vips/vips.h>

#include "image.h"
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

/* libvips' own cancellation: a pipeline being computed emits "eval" as its tiles are done, and
 * a killed image makes the computation fail at the next tile. */
static void on_eval(VipsImage *image, VipsProgress *progress, void *deadline)
{
	(void)progress;
	if (tr_deadline_passed(*(const uint64_t *)deadline))
		vips_image_set_kill(image, TRUE);
}

/* Kills the computation of image when deadline (0: none) passes while it runs. */
static void watch_deadline(VipsImage *image, uint64_t deadline)
{
	uint64_t *copy;

	if (deadline == 0 || !(copy = g_try_new(uint64_t, 1)))
		return;
	*copy = deadline;
	vips_image_set_progress(image, TRUE);
	g_signal_connect_data(image, "eval", G_CALLBACK(on_eval), copy,
			      (GClosureNotify)(void (*)(void))g_free, 0);
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

/* The key under which a decoded image (into_memory) holds its rows in PNG's layout. */
#define FILTERED_ROWS "toolfs-filtered-rows"

/* True when img's pixels are already what a PNG holds: 8-bit sRGB or grey. */
static bool png_pixels(VipsImage *img)
{
	VipsInterpretation interp = vips_image_get_interpretation(img);

	return vips_image_get_format(img) == VIPS_FORMAT_UCHAR &&
	       ((interp == VIPS_INTERPRETATION_sRGB && (img->Bands == 3 || img->Bands == 4)) ||
		(interp == VIPS_INTERPRETATION_B_W && (img->Bands == 1 || img->Bands == 2)));
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
	watch_deadline(ready, deadline);
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

/* What is decoded of the source: its frame count and the frame shown. */
struct source {
	uint32_t width, height; /* of the frame shown */
	uint64_t raw_bytes;     /* of its decoded pixels (bands x bytes per sample) */
	int bands;
	uint32_t frames;
	int page; /* the frame shown, 0-based */
	bool largest;
	bool crop; /* only region of the frame is shown: width and height are its size */
	struct tr_region region;
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

/* The factor a PNG is box-shrunk by as it is decoded (tr_png_shrink): as many whole times as
 * target goes into the long edge, so the long edge stays at least target and libvips' Lanczos
 * reduce is left less than a factor of two, where it would otherwise decode every pixel through
 * libpng and filter them all. */
static uint32_t png_shrink_factor(const struct source *s, uint32_t target)
{
	uint32_t from_long = s->width > s->height ? s->width : s->height;

	return target ? from_long / target : 1;
}

static void free_pixels(VipsImage *image, void *pixels)
{
	(void)image;
	free(pixels);
}

/* The PNG in src (of it, region when not NULL) decoded by tr_png_shrink_region at 1/factor of its
 * size, as a libvips image that owns the pixels; NULL when tr_png_shrink does not take it
 * (libvips decodes it then). */
static VipsImage *png_shrunk_on_load(const struct tr_blob *src, uint32_t factor,
				     const struct tr_region *region)
{
	struct tr_png_shrunk png;
	VipsImage *img;

	if (tr_png_shrink_region(src->data, src->len, factor, region, &png) < 0)
		return NULL;
	img = vips_image_new_from_memory(png.pixels, (size_t)png.width * png.height * png.bands,
					 (int)png.width, (int)png.height, png.bands,
					 VIPS_FORMAT_UCHAR);
	if (!img) {
		vips_error_clear();
		free(png.pixels);
		return NULL;
	}
	img->Type = png.bands < 3 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB;
	g_signal_connect(img, "postclose", G_CALLBACK(free_pixels), png.pixels);
	return img;
}

/* s->region of frame s->page, shrunk to fit a target x target box: a JPEG shrunk on load by the
 * factor the region's own fit allows (the rectangle scaled with it), every source decoded
 * sequentially so that the rows below the region are never decoded. */
static VipsImage *cropped(const struct tr_blob *src, const struct source *s, uint32_t target,
			  const char *loader)
{
	const struct tr_region *r = &s->region;
	int k = strcmp(loader, "jpegload_buffer") == 0 ? jpeg_shrink(s, target) : 1;
	VipsImage *in = NULL, *area = NULL, *thumb = NULL;
	uint64_t left, top, right, bottom;
	int rc;

	/* A PNG: the region's rows and columns alone, box-shrunk as they inflate (png_shrink.c). */
	if (strcmp(loader, "pngload_buffer") == 0 && s->page == 0) {
		uint32_t factor = png_shrink_factor(s, target);

		in = png_shrunk_on_load(src, factor ? factor : 1, r);
		if (in) {
			rc = vips_thumbnail_image(in, &thumb, (int)target, "height", (int)target,
						  "size", VIPS_SIZE_DOWN, "no_rotate", TRUE, NULL);
			g_object_unref(in);
			return rc ? NULL : thumb;
		}
	}
	if (k > 1)
		rc = vips_jpegload_buffer(src->data, src->len, &in, "shrink", k, "access",
					  VIPS_ACCESS_SEQUENTIAL, NULL);
	else
		rc = !(in = header(src, s->page > 0 ? s->page : -1));
	if (rc)
		return NULL;
	/* The rectangle in the loaded grid, rounded outward to whole pixels and kept inside it
	 * (the decoder may round the shrunk size down). */
	left = r->x / (unsigned)k;
	top = r->y / (unsigned)k;
	right = ((uint64_t)r->x + r->width + (unsigned)k - 1) / (unsigned)k;
	bottom = ((uint64_t)r->y + r->height + (unsigned)k - 1) / (unsigned)k;
	if (right > (uint64_t)in->Xsize)
		right = (uint64_t)in->Xsize;
	if (bottom > (uint64_t)in->Ysize)
		bottom = (uint64_t)in->Ysize;
	if (left >= right || top >= bottom) {
		g_object_unref(in);
		vips_error("toolfs", "the region is outside the decoded image");
		return NULL;
	}
	rc = vips_extract_area(in, &area, (int)left, (int)top, (int)(right - left),
			       (int)(bottom - top), NULL);
	g_object_unref(in);
	if (rc)
		return NULL;
	rc = vips_thumbnail_image(area, &thumb, (int)target, "height", (int)target, "size",
				  VIPS_SIZE_DOWN, "no_rotate", TRUE, NULL);
	g_object_unref(area);
	return rc ? NULL : thumb;
}

/* Where libvips' sink writes a fit's rows: rows of row_bytes + 1, each after its filter byte. */
struct filling {
	unsigned char *rows;
	size_t row_bytes;
};

static int fill_strip(VipsRegion *region, VipsRect *area, void *data)
{
	struct filling *f = data;

	for (int y = area->top; y < VIPS_RECT_BOTTOM(area); y++) {
		unsigned char *row = f->rows + (size_t)y * (f->row_bytes + 1);

		row[0] = 0;
		memcpy(row + 1, VIPS_REGION_ADDR(region, area->left, y), f->row_bytes);
	}
	return 0;
}

/* Rows of thumb computed into memory in PNG's layout, each after its filter type byte (0), as
 * libvips' own write to memory computes them (its sink, in strips, killed at deadline); NULL
 * when it fails (libvips' error set) or out of memory. */
static unsigned char *filtered_rows(VipsImage *thumb, uint64_t deadline)
{
	struct filling f = {NULL, VIPS_IMAGE_SIZEOF_LINE(thumb)};

	f.rows = malloc((f.row_bytes + 1) * (size_t)thumb->Ysize);
	if (!f.rows)
		return NULL;
	watch_deadline(thumb, deadline);
	/* One worker: each of libvips' workers holds its own strips of every stage of the
	 * pipeline, and a notebook's fits must stay in its memory bound (docs/SPEC.md §3). */
	vips_image_set_int(thumb, "concurrency", 1);
	if (vips_sink_disc(thumb, fill_strip, &f)) {
		free(f.rows);
		return NULL;
	}
	return f.rows;
}

/* thumb (taken over) decoded into memory, so that several encodings decode it once. Pixels a
 * PNG holds as they are (png_pixels) are computed into PNG's own layout (filtered_rows), which
 * the image returned views (FILTERED_ROWS): the PNG encodings deflate them without a copy. */
static VipsImage *into_memory(VipsImage *thumb, uint64_t deadline)
{
	VipsImage *mem = NULL, *area = NULL, *folded = NULL, *view = NULL;
	VipsInterpretation interp = vips_image_get_interpretation(thumb);
	size_t row_bytes = VIPS_IMAGE_SIZEOF_LINE(thumb);
	int height = thumb->Ysize, bands = thumb->Bands;
	unsigned char *rows;

	if (!png_pixels(thumb)) {
		watch_deadline(thumb, deadline);
		mem = vips_image_copy_memory(thumb);
		g_object_unref(thumb);
		return mem;
	}
	rows = filtered_rows(thumb, deadline);
	g_object_unref(thumb);
	if (!rows)
		return NULL;
	/* One band of row_bytes + 1 samples a row, its first column cut and the rest folded back
	 * into pixels: a view of rows that libvips encodes (JPEG) like any image. */
	mem = vips_image_new_from_memory(rows, (row_bytes + 1) * (size_t)height, (int)row_bytes + 1,
					 height, 1, VIPS_FORMAT_UCHAR);
	if (!mem) {
		free(rows);
		return NULL;
	}
	g_signal_connect(mem, "postclose", G_CALLBACK(free_pixels), rows);
	if (!vips_extract_area(mem, &area, 1, 0, (int)row_bytes, height, NULL) &&
	    !vips_bandfold(area, &folded, "factor", bands, NULL))
		vips_copy(folded, &view, "interpretation", interp, NULL);
	if (view)
		g_object_set_data(G_OBJECT(view), FILTERED_ROWS, rows);
	if (folded)
		g_object_unref(folded);
	if (area)
		g_object_unref(area);
	g_object_unref(mem);
	return view;
}

/* True when every alpha sample of the 8-bit PNG in src is opaque (or it has no alpha): a full
 * sequential decode of its own. */
static bool png_opaque(const struct tr_blob *src, uint64_t deadline)
{
	VipsImage *in = NULL, *alpha = NULL;
	double min = 0;
	bool opaque = false;

	if (vips_pngload_buffer(src->data, src->len, &in, "access", VIPS_ACCESS_SEQUENTIAL, NULL))
		return false;
	if (!vips_image_hasalpha(in))
		opaque = true;
	else if (!vips_extract_band(in, &alpha, in->Bands - 1, NULL)) {
		watch_deadline(alpha, deadline);
		opaque = !vips_min(alpha, &min, NULL) && min >= 255;
	}
	if (alpha)
		g_object_unref(alpha);
	g_object_unref(in);
	vips_error_clear();
	return opaque;
}

/* An 8-bit PNG without transparency resized by libvips' Lanczos reduce straight on its 8-bit
 * samples, decoded sequentially, its alpha (all opaque) left out: what vips_thumbnail does with
 * premultiplied floats (alpha weighting that changes nothing where all is opaque) in four times
 * the buffers (a plot of 2014x1406 fitted to 2000: 30 MB against 4). NULL when the PNG is of
 * another kind or has transparency (vips_thumbnail then). */
static VipsImage *png_resized(const struct tr_blob *src, const struct source *s, uint32_t target,
			      uint64_t deadline)
{
	uint32_t from_long = s->width > s->height ? s->width : s->height;
	VipsImage *in = NULL, *colour = NULL, *out = NULL;

	if (from_long <= target || !png_opaque(src, deadline))
		return NULL;
	if (vips_pngload_buffer(src->data, src->len, &in, "access", VIPS_ACCESS_SEQUENTIAL, NULL))
		return NULL;
	if (vips_image_get_format(in) == VIPS_FORMAT_UCHAR &&
	    (!vips_image_hasalpha(in)
		     ? !vips_copy(in, &colour, NULL)
		     : !vips_extract_band(in, &colour, 0, "n", in->Bands - 1, NULL)))
		vips_resize(colour, &out, (double)target / from_long, "kernel",
			    VIPS_KERNEL_LANCZOS3, NULL);
	if (colour)
		g_object_unref(colour);
	g_object_unref(in);
	vips_error_clear();
	return out;
}

/* Frame s->page shrunk to fit a target x target box. Shrunk on load first where toolfs can: a
 * JPEG in its decoder (jpeg_shrink), sequentially; a PNG by whole factors as it inflates
 * (png_shrink_factor). With in_memory, decoded into memory once so that several encodings do
 * not decode the source again; else a sequential pipeline that one encoding pulls through. */
static VipsImage *shrunk(const struct tr_blob *src, const struct source *s, uint32_t target,
			 const char *loader, bool in_memory, uint64_t deadline)
{
	VipsImage *thumb = NULL, *pre = NULL;
	char loader_options[32] = "";
	int rc;

	if (s->crop) {
		thumb = cropped(src, s, target, loader);
		return thumb && in_memory ? into_memory(thumb, deadline) : thumb;
	}
	if (strcmp(loader, "jpegload_buffer") == 0 && jpeg_shrink(s, target) > 1) {
		if (vips_jpegload_buffer(src->data, src->len, &pre, "shrink",
					 jpeg_shrink(s, target), "access", VIPS_ACCESS_SEQUENTIAL,
					 NULL))
			return NULL;
	} else if (strcmp(loader, "pngload_buffer") == 0 && s->page == 0 &&
		   png_shrink_factor(s, target) > 1) {
		pre = png_shrunk_on_load(src, png_shrink_factor(s, target), NULL);
	} else if (strcmp(loader, "pngload_buffer") == 0 && s->page == 0 &&
		   (thumb = png_resized(src, s, target, deadline))) {
		return in_memory ? into_memory(thumb, deadline) : thumb;
	}
	if (pre) {
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
	return in_memory ? into_memory(thumb, deadline) : thumb;
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

/* fit_image, of the rectangle region of the source when region is not NULL. */
static enum tr_error fit(const struct tr_blob *src, const struct tr_region *region,
			 const struct tr_options *opts, uint64_t deadline, struct tr_fit *out,
			 char *err, size_t err_size)
{
	struct source source = {.crop = false};
	uint32_t from_long, target;
	const char *loader;
	bool jpeg_source;

	memset(out, 0, sizeof(*out));
	if (!tr_vips_start()) {
		snprintf(err, err_size, "libvips could not start");
		return TR_E_IO;
	}
	if (tr_deadline_passed(deadline))
		return timed_out(err, err_size);
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
	if (source_header(src, loader, &source) < 0 || source.width == 0 || source.height == 0)
		return decode_error(err, err_size);
	if (tr_fit_too_many_pixels(source.width, source.height, err, err_size))
		return TR_E_TOO_LARGE;
	if (region) {
		if (tr_region_clip(region, source.width, source.height, &source.region) < 0) {
			snprintf(err, err_size, "the region is outside the %ux%u image",
				 source.width, source.height);
			return TR_E_CORRUPT;
		}
		/* From here on the source is the region; png_hopeless has no ratio for it. */
		source.crop = true;
		source.width = source.region.width;
		source.height = source.region.height;
		source.raw_bytes = 0;
	}
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
		VipsImage *streamed = shrunk(src, &source, target, loader, false, deadline);
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
		VipsImage *thumb = shrunk(src, &source, target, loader, true, deadline);
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
