/* SPDX-License-Identifier: MIT */
/* fit_source.c - the source image decoded at a size with libvips: its headers, shrink-on-load
 * (JPEG in its decoder, PNG by whole factors as it inflates), the region cropped, and a copy in
 * memory in PNG's row layout that several encodings share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vips/vips.h>

#include "fit.h"
#include "util.h"

/* libvips' own cancellation: a pipeline being computed emits "eval" as its tiles are done, and
 * a killed image makes the computation fail at the next tile. */
static void on_eval(VipsImage *image, VipsProgress *progress, void *deadline)
{
	(void)progress;
	if (tr_deadline_passed(*(const uint64_t *)deadline))
		vips_image_set_kill(image, TRUE);
}

/* Kills the computation of image when deadline (0: none) passes while it runs. */
void tr_fit_watch_deadline(VipsImage *image, uint64_t deadline)
{
	uint64_t *copy;

	if (deadline == 0 || !(copy = g_try_new(uint64_t, 1)))
		return;
	*copy = deadline;
	vips_image_set_progress(image, TRUE);
	g_signal_connect_data(image, "eval", G_CALLBACK(on_eval), copy,
			      (GClosureNotify)(void (*)(void))g_free, 0);
}

/* True when img's pixels are already what a PNG holds: 8-bit sRGB or grey. */
bool tr_fit_png_pixels(VipsImage *img)
{
	VipsInterpretation interp = vips_image_get_interpretation(img);

	return vips_image_get_format(img) == VIPS_FORMAT_UCHAR &&
	       ((interp == VIPS_INTERPRETATION_sRGB && (img->Bands == 3 || img->Bands == 4)) ||
		(interp == VIPS_INTERPRETATION_B_W && (img->Bands == 1 || img->Bands == 2)));
}

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
int tr_fit_source_header(const struct tr_blob *src, const char *loader, struct source *s)
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
	tr_fit_watch_deadline(thumb, deadline);
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

	if (!tr_fit_png_pixels(thumb)) {
		tr_fit_watch_deadline(thumb, deadline);
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
		tr_fit_watch_deadline(alpha, deadline);
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
VipsImage *tr_fit_shrunk(const struct tr_blob *src, const struct source *s, uint32_t target,
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
