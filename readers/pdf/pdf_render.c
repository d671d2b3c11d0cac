/* SPDX-License-Identifier: MIT */
/* pdf_render.c - page renders with cairo, encoded as PNG (cairo) or, for photos, JPEG (libvips). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#include <poppler.h>
#if defined(TR_HAVE_VIPS)
#include <pthread.h>
#include <vips/vips.h>
#endif

#include "ocr.h"
#include "pdf.h"
#include "tr_result.h"
#include "util.h"
#if defined(TR_HAVE_VIPS)
#include "image.h"
#include "tr_options.h"
#endif

/* A side of the render: side * scale rounded, at least 1 and at most long_edge. */
static uint32_t scaled_side(double side, double scale, uint32_t long_edge)
{
	double px = floor(side * scale + 0.5);

	if (!(px >= 1))
		return 1;
	return px > long_edge ? long_edge : (uint32_t)px;
}

void tr_pdf_render_size(PopplerPage *page, uint32_t long_edge, uint32_t *width, uint32_t *height)
{
	double w = 0, h = 0;

	/* The size poppler reports is the crop box with the page's /Rotate applied. */
	poppler_page_get_size(page, &w, &h);
	if (!(w > 0) || !(h > 0) || !isfinite(w) || !isfinite(h))
		w = h = 1;
	if (w >= h) {
		*width = long_edge;
		*height = scaled_side(h, long_edge / w, long_edge);
	} else {
		*height = long_edge;
		*width = scaled_side(w, long_edge / h, long_edge);
	}
}

static cairo_status_t png_append(void *closure, const unsigned char *data, unsigned int len)
{
	return tr_buf_append(closure, data, len) == 0 ? CAIRO_STATUS_SUCCESS
						      : CAIRO_STATUS_WRITE_ERROR;
}

/* Encodes surface as PNG into a new blob. Returns 0, 1 on a cairo error, -1 out of memory. */
static int encode_png(cairo_surface_t *surface, struct tr_blob **out, char *err, size_t err_size)
{
	struct tr_buf png = {0};
	cairo_status_t status = cairo_surface_write_to_png_stream(surface, png_append, &png);

	if (png.oom || status == CAIRO_STATUS_NO_MEMORY) {
		tr_buf_free(&png);
		return -1;
	}
	if (status != CAIRO_STATUS_SUCCESS) {
		snprintf(err, err_size, "PNG encoding failed: %s", cairo_status_to_string(status));
		tr_buf_free(&png);
		return 1;
	}
	*out = tr_blob_adopt(png.data, png.len);
	return *out ? 0 : -1;
}

#if defined(TR_HAVE_VIPS)
static uint64_t base64_len(size_t n)
{
	return 4 * (((uint64_t)n + 2) / 3);
}

/* JPEG qualities tried in turn until the base64 fits. */
static const int jpeg_qualities[] = {85, 75, 60, 45};

/* Encodes an opaque RGB24 surface as JPEG, lowering the quality until its base64 is within
 * max_b64 (the last try is kept even when larger). Returns 0, 1 when libvips fails, -1 out of
 * memory. */
static int encode_jpeg(cairo_surface_t *surface, uint64_t max_b64, struct tr_blob **out, char *err,
		       size_t err_size)
{
	int w = cairo_image_surface_get_width(surface);
	int h = cairo_image_surface_get_height(surface);
	int stride = cairo_image_surface_get_stride(surface);
	const unsigned char *pixels = cairo_image_surface_get_data(surface);
	unsigned char *rgb;
	VipsImage *image;
	void *jpeg = NULL;
	size_t jpeg_len = 0;
	int rc = 1;

	if (!tr_vips_start()) {
		snprintf(err, err_size, "libvips failed to start");
		return 1;
	}
	rgb = malloc((size_t)w * (size_t)h * 3);
	if (!rgb)
		return -1;
	/* RGB24 pixels are native-endian 32-bit words 0x00RRGGBB. */
	for (int y = 0; y < h; y++) {
		const uint32_t *row = (const uint32_t *)(const void *)(pixels + (size_t)y * stride);
		unsigned char *dst = rgb + (size_t)y * (size_t)w * 3;

		for (int x = 0; x < w; x++) {
			dst[3 * x] = (unsigned char)(row[x] >> 16);
			dst[3 * x + 1] = (unsigned char)(row[x] >> 8);
			dst[3 * x + 2] = (unsigned char)row[x];
		}
	}
	/* A copy, not a wrapper: libvips may keep the image alive (its operation cache) after we
	 * are done with the pixels. */
	image = vips_image_new_from_memory_copy(rgb, (size_t)w * (size_t)h * 3, w, h, 3,
						VIPS_FORMAT_UCHAR);
	free(rgb);
	if (!image) {
		snprintf(err, err_size, "libvips could not take the page pixels");
		vips_error_clear();
		return 1;
	}
	for (size_t i = 0; i < sizeof(jpeg_qualities) / sizeof(jpeg_qualities[0]); i++) {
		g_free(jpeg);
		jpeg = NULL;
		if (vips_jpegsave_buffer(image, &jpeg, &jpeg_len, "Q", jpeg_qualities[i], "strip",
					 TRUE, NULL) != 0) {
			snprintf(err, err_size, "JPEG encoding failed");
			vips_error_clear();
			goto out_image;
		}
		if (base64_len(jpeg_len) <= max_b64)
			break;
	}
	*out = tr_blob_copy(jpeg, jpeg_len);
	rc = *out ? 0 : -1;
out_image:
	g_free(jpeg);
	g_object_unref(image);
	return rc;
}
#endif

/* A render's deadline. poppler-glib's poppler_page_render passes no abort callback to poppler's
 * Page::displaySlice (and the headers that would reach it are not packaged), so the page is drawn
 * through a cairo observer surface instead: cairo calls back after every paint, mask, fill,
 * stroke and run of glyphs on the page's surface, and once the deadline has passed the callback
 * finishes the target surface. Every later drawing operation then fails at once
 * (CAIRO_STATUS_SURFACE_FINISHED puts the context in error, where cairo ignores all drawing),
 * and poppler only parses what is left of the content stream. Operations inside a transparency
 * group land on a surface of their own and are counted when the group is painted.
 * The price: an observer logs every operation (freed with it), and cairo 1.16 never frees its
 * callback list, 160 bytes per render (tests/lsan.supp). An observer kept across renders would
 * not leak those but would grow its log without end, so each render has its own. */
struct render_watch {
	uint64_t deadline;
	bool stopped;
};

static void on_operation(cairo_surface_t *observer, cairo_surface_t *target, void *data)
{
	struct render_watch *watch = data;

	(void)observer;
	if (!watch->stopped && tr_deadline_passed(watch->deadline)) {
		watch->stopped = true;
		cairo_surface_finish(target);
	}
}

/* The surface poppler draws on: target itself without a deadline, else an observer of it
 * calling on_operation (a new reference either way). */
static cairo_surface_t *watched(cairo_surface_t *target, struct render_watch *watch)
{
	cairo_surface_t *observer;

	if (watch->deadline == 0)
		return cairo_surface_reference(target);
	observer = cairo_surface_create_observer(target, CAIRO_SURFACE_OBSERVER_NORMAL);
	if (cairo_surface_status(observer) != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(observer);
		return cairo_surface_reference(target);
	}
	cairo_surface_observer_add_paint_callback(observer, on_operation, watch);
	cairo_surface_observer_add_mask_callback(observer, on_operation, watch);
	cairo_surface_observer_add_fill_callback(observer, on_operation, watch);
	cairo_surface_observer_add_stroke_callback(observer, on_operation, watch);
	cairo_surface_observer_add_glyphs_callback(observer, on_operation, watch);
	return observer;
}

/* The size of region of a page image scaled so that its long edge is long_edge, and that zoom. */
static double region_size(const struct tr_region *r, uint32_t long_edge, uint32_t *width,
			  uint32_t *height)
{
	uint32_t from_long = r->width > r->height ? r->width : r->height;
	double zoom = (double)long_edge / from_long;

	*width = scaled_side(r->width, zoom, long_edge);
	*height = scaled_side(r->height, zoom, long_edge);
	return zoom;
}

#if defined(TR_HAVE_VIPS)
/* Brings the encoded page img (owned; replaced in place) within max_b64 bytes of base64 where
 * libvips can: as JPEG, else fitted at smaller sizes. Returns 0 (img may still be over: the
 * caller checks), 2 when deadline passed while fitting, -1 when out of memory. */
static int shrink_to_b64(cairo_surface_t *surface, uint32_t long_edge, uint64_t max_b64,
			 uint64_t deadline, struct tr_pdf_render *img, char *err, size_t err_size)
{
	int rc = 0;

	/* A photo (a scan in colour) compresses badly as PNG: trade it for JPEG when the PNG would
	 * break the provider's base64 limit. */
	if (rc == 0 && base64_len(img->data->len) > max_b64) {
		struct tr_blob *jpeg = NULL;
		char jpeg_err[128];

		rc = encode_jpeg(surface, max_b64, &jpeg, jpeg_err, sizeof(jpeg_err));
		if (rc == 0) {
			tr_blob_unref(img->data);
			img->data = jpeg;
			img->media_type = "image/jpeg";
		} else if (rc == 1) {
			rc = 0; /* keep the PNG */
		}
	}
	/* Still over (a tiny image_max_b64): the fit of every other image, at smaller sizes. */
	if (rc == 0 && base64_len(img->data->len) > max_b64) {
		struct tr_options fit_opts;
		struct tr_fit fit;
		char fit_err[128];

		tr_options_init(&fit_opts);
		fit_opts.image_max_dim = long_edge;
		fit_opts.image_max_b64 = max_b64;
		enum tr_error fitted = tr_fit_image(img->data, &fit_opts, deadline, &fit, fit_err,
						    sizeof(fit_err));

		if (fitted == TR_OK) {
			tr_blob_unref(img->data);
			img->data = fit.data;
			img->media_type = fit.media_type;
			img->width = fit.width;
			img->height = fit.height;
		} else if (fitted == TR_E_TIMEOUT) {
			snprintf(err, err_size,
				 "its image was not fitted to image_max_b64 in time");
			rc = 2;
		}
	}
	return rc;
}
#endif

/* tr_pdf_render_page, or with region (not NULL) tr_pdf_render_region. */
static int render_view(PopplerPage *page, const struct tr_region *region, uint32_t long_edge,
		       uint64_t max_b64, uint64_t deadline, struct tr_pdf_render *out, char *err,
		       size_t err_size)
{
	uint32_t width, height, grid_w, grid_h;
	double zoom = 1, page_w = 0, page_h = 0;
	cairo_surface_t *surface, *drawn;
	cairo_status_t status;
	struct tr_blob *blob = NULL;
	const char *media_type = "image/png";
	struct render_watch watch = {.deadline = deadline};
	cairo_t *cr;
	int rc;

	if (tr_deadline_passed(deadline)) {
		snprintf(err, err_size, "%s", TR_PDF_NOT_STARTED);
		return 2;
	}
	/* The page image's grid: the page at long_edge; a region is a rectangle of it, zoomed. */
	tr_pdf_render_size(page, long_edge, &grid_w, &grid_h);
	width = grid_w;
	height = grid_h;
	if (region)
		zoom = region_size(region, long_edge, &width, &height);
	poppler_page_get_size(page, &page_w, &page_h);
	/* RGB24: pages are painted on white, so no alpha channel is needed in the PNG. */
	surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)width, (int)height);
	status = cairo_surface_status(surface);
	if (status != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(surface);
		if (status == CAIRO_STATUS_NO_MEMORY)
			return -1;
		snprintf(err, err_size, "%s", cairo_status_to_string(status));
		return 1;
	}
	drawn = watched(surface, &watch);
	cr = cairo_create(drawn);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	if (region) {
		cairo_scale(cr, zoom, zoom);
		cairo_translate(cr, -(double)region->x, -(double)region->y);
	}
	if (page_w > 0 && page_h > 0 && isfinite(page_w) && isfinite(page_h))
		cairo_scale(cr, grid_w / page_w, grid_h / page_h);
	poppler_page_render(page, cr);
	status = cairo_status(cr);
	cairo_destroy(cr);
	cairo_surface_destroy(drawn);
	if (watch.stopped) {
		snprintf(err, err_size, "%s", TR_PDF_DRAWING_STOPPED);
		rc = 2;
		goto out_surface;
	}
	if (status != CAIRO_STATUS_SUCCESS) {
		rc = status == CAIRO_STATUS_NO_MEMORY ? -1 : 1;
		snprintf(err, err_size, "%s", cairo_status_to_string(status));
		goto out_surface;
	}
	cairo_surface_flush(surface);
	rc = encode_png(surface, &blob, err, err_size);
#if defined(TR_HAVE_VIPS)
	if (rc == 0) {
		struct tr_pdf_render img = {blob, media_type, width, height};

		rc = shrink_to_b64(surface, long_edge, max_b64, deadline, &img, err, err_size);
		blob = img.data;
		media_type = img.media_type;
		width = img.width;
		height = img.height;
	}
#endif
	/* Never an image past image_max_b64, whatever could not shrink it. */
	if (rc == 0 && base64_len(blob->len) > max_b64) {
		snprintf(err, err_size, "no image of it fits image_max_b64 (%llu bytes of base64)",
			 (unsigned long long)max_b64);
		rc = 1;
	}
	if (rc == 0) {
		out->data = blob;
		out->media_type = media_type;
		out->width = width;
		out->height = height;
		blob = NULL;
	}
	tr_blob_unref(blob);
out_surface:
	cairo_surface_destroy(surface);
	return rc;
}

int tr_pdf_render_page(PopplerPage *page, uint32_t long_edge, uint64_t max_b64, uint64_t deadline,
		       struct tr_pdf_render *out, char *err, size_t err_size)
{
	return render_view(page, NULL, long_edge, max_b64, deadline, out, err, err_size);
}

int tr_pdf_render_region(PopplerPage *page, const struct tr_region *region, uint32_t long_edge,
			 uint64_t max_b64, uint64_t deadline, struct tr_pdf_render *out, char *err,
			 size_t err_size)
{
	return render_view(page, region, long_edge, max_b64, deadline, out, err, err_size);
}

/* The OCR size of a page of w x h points at dpi: the long edge at most TR_OCR_MAX_EDGE and the
 * area at most TR_OCR_MAX_PIXELS. */
static double grey_scale(double w, double h, uint32_t dpi)
{
	double scale = dpi / 72.0;

	if ((w > h ? w : h) * scale > TR_OCR_MAX_EDGE)
		scale = TR_OCR_MAX_EDGE / (w > h ? w : h);
	if (w * h * scale * scale > TR_OCR_MAX_PIXELS)
		scale = sqrt(TR_OCR_MAX_PIXELS / (w * h));
	return scale;
}

int tr_pdf_render_grey(PopplerPage *page, uint32_t dpi, uint64_t deadline, unsigned char **grey,
		       uint32_t *width, uint32_t *height, char *err, size_t err_size)
{
	double page_w = 0, page_h = 0, scale;
	struct render_watch watch = {.deadline = deadline};
	cairo_surface_t *surface, *drawn;
	cairo_status_t status;
	cairo_t *cr;
	int w, h, stride;
	const unsigned char *pixels;

	if (tr_deadline_passed(deadline)) {
		snprintf(err, err_size, "%s", TR_PDF_NOT_STARTED);
		return 2;
	}
	poppler_page_get_size(page, &page_w, &page_h);
	if (!(page_w > 0) || !(page_h > 0) || !isfinite(page_w) || !isfinite(page_h)) {
		snprintf(err, err_size, "the page has no size");
		return 1;
	}
	scale = grey_scale(page_w, page_h, dpi);
	w = (int)scaled_side(page_w, scale, TR_OCR_MAX_EDGE);
	h = (int)scaled_side(page_h, scale, TR_OCR_MAX_EDGE);
	surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
	status = cairo_surface_status(surface);
	if (status != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(surface);
		snprintf(err, err_size, "%s", cairo_status_to_string(status));
		return status == CAIRO_STATUS_NO_MEMORY ? -1 : 1;
	}
	drawn = watched(surface, &watch);
	cr = cairo_create(drawn);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_scale(cr, w / page_w, h / page_h);
	poppler_page_render(page, cr);
	status = cairo_status(cr);
	cairo_destroy(cr);
	cairo_surface_destroy(drawn);
	if (watch.stopped || status != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(surface);
		snprintf(err, err_size, "%s",
			 watch.stopped ? TR_PDF_DRAWING_STOPPED : cairo_status_to_string(status));
		return watch.stopped ? 2 : status == CAIRO_STATUS_NO_MEMORY ? -1 : 1;
	}
	cairo_surface_flush(surface);
	stride = cairo_image_surface_get_stride(surface);
	pixels = cairo_image_surface_get_data(surface);
	*grey = malloc((size_t)w * (size_t)h);
	if (!*grey) {
		cairo_surface_destroy(surface);
		return -1;
	}
	/* RGB24 words 0x00RRGGBB to luma (ITU-R BT.601 weights, as Tesseract's own conversion). */
	for (int y = 0; y < h; y++) {
		const uint32_t *row = (const uint32_t *)(const void *)(pixels + (size_t)y * stride);
		unsigned char *dst = *grey + (size_t)y * (size_t)w;

		for (int x = 0; x < w; x++) {
			uint32_t px = row[x];

			dst[x] = (unsigned char)((((px >> 16) & 0xff) * 299 +
						  ((px >> 8) & 0xff) * 587 + (px & 0xff) * 114 +
						  500) /
						 1000);
		}
	}
	cairo_surface_destroy(surface);
	*width = (uint32_t)w;
	*height = (uint32_t)h;
	return 0;
}
