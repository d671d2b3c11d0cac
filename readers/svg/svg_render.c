/* SPDX-License-Identifier: MIT */
/* svg_render.c - an SVG document drawn by librsvg from memory at the fitted size and encoded as
 * PNG (part of toolfs-svg.so). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <librsvg/rsvg.h>

#include "image.h"
#include "svg.h"
#include "util.h"

/* Smaller sizes tried when the PNG's base64 is over max_b64: each 0.7 of the last edge. */
#define SVG_SHRINK_TRIES 8

/* Writes "what: reason" into err, the reason (librsvg's, ending in a newline) trimmed. */
static void reason(char *err, size_t err_size, const char *what, GError *gerr)
{
	size_t n;

	snprintf(err, err_size, "%s: %s", what, gerr ? gerr->message : "librsvg gave no reason");
	n = strlen(err);
	while (n && (err[n - 1] == '\n' || err[n - 1] == ' ' || err[n - 1] == '\r'))
		err[--n] = '\0';
}

/* The document's own size in pixels: absolute width and height, else the viewBox, else (as
 * rsvg-convert) the drawing's ink bounding box, whole pixels from its corner (*box, the area of
 * the document shown; left zero otherwise), else the default canvas for a drawing with no extent.
 * */
static void natural_size(RsvgHandle *h, double *w, double *h_out, RsvgRectangle *box)
{
	static const RsvgRectangle unit = {0, 0, 1, 1};
	gboolean has_w, has_h, has_vb;
	RsvgLength lw, lh;
	RsvgRectangle vb, ink, logical;

	memset(box, 0, sizeof(*box));
	if (rsvg_handle_get_intrinsic_size_in_pixels(h, w, h_out) && *w >= 1 && *h_out >= 1 &&
	    isfinite(*w) && isfinite(*h_out))
		return;
	rsvg_handle_get_intrinsic_dimensions(h, &has_w, &lw, &has_h, &lh, &has_vb, &vb);
	if (has_vb && vb.width > 0 && vb.height > 0 && isfinite(vb.width) && isfinite(vb.height)) {
		*w = vb.width;
		*h_out = vb.height;
		return;
	}
	/* Measured as a layout in a 1x1 viewport, as rsvg-convert's legacy_layer_geometry: with
	 * no viewBox the user space is not scaled, so the ink rectangle is in pixels. */
	if (rsvg_handle_get_geometry_for_layer(h, NULL, &unit, &ink, &logical, NULL) &&
	    ink.width > 0 && ink.height > 0 && isfinite(ink.x) && isfinite(ink.y) &&
	    isfinite(ink.width) && isfinite(ink.height)) {
		*box = (RsvgRectangle){ink.x, ink.y, ceil(ink.width), ceil(ink.height)};
		*w = box->width;
		*h_out = box->height;
		return;
	}
	*w = TR_SVG_DEFAULT_WIDTH;
	*h_out = TR_SVG_DEFAULT_HEIGHT;
}

/* The pixel size: w x h scaled down (aspect kept) so the long edge is at most max_dim; each
 * side at least 1. */
static void fitted_size(double w, double h, uint32_t max_dim, uint32_t *out_w, uint32_t *out_h)
{
	double long_edge = w > h ? w : h, scale = 1.0;

	if (max_dim == 0)
		max_dim = 1;
	if (long_edge > max_dim)
		scale = max_dim / long_edge;
	w = round(w * scale);
	h = round(h * scale);
	*out_w = w < 1 ? 1 : w > max_dim ? max_dim : (uint32_t)w;
	*out_h = h < 1 ? 1 : h > max_dim ? max_dim : (uint32_t)h;
}

/* Cairo's premultiplied native-endian ARGB32 rows to straight RGBA, in place. */
static void unpremultiply(unsigned char *data, int stride, uint32_t w, uint32_t h)
{
	for (uint32_t y = 0; y < h; y++) {
		uint32_t *row = (uint32_t *)(data + (size_t)y * (size_t)stride);

		for (uint32_t x = 0; x < w; x++) {
			uint32_t px = row[x], a = px >> 24;
			unsigned char *o = (unsigned char *)&row[x];
			uint32_t r = (px >> 16) & 0xff, g = (px >> 8) & 0xff, b = px & 0xff;

			if (a != 0 && a != 255) { /* as cairo's PNG writer rounds */
				r = (r * 255 + a / 2) / a;
				g = (g * 255 + a / 2) / a;
				b = (b * 255 + a / 2) / a;
			}
			o[0] = (unsigned char)r;
			o[1] = (unsigned char)g;
			o[2] = (unsigned char)b;
			o[3] = (unsigned char)a;
		}
	}
}

/* Draws the document into a w x hgt canvas, box (when its size is not zero) scaled to fill it,
 * and encodes it; *png NULL on failure (err says). */
static enum tr_error draw(RsvgHandle *h, uint32_t w, uint32_t hgt, const RsvgRectangle *box,
			  struct tr_blob **png, char *err, size_t err_size)
{
	/* Zeroed: a transparent canvas. */
	cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)w,
							      (int)hgt);
	RsvgRectangle viewport = {0, 0, w, hgt};
	enum tr_error code = TR_OK;
	GError *gerr = NULL;
	cairo_t *cr;

	*png = NULL;
	if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
		snprintf(err, err_size, "no memory for a %ux%u canvas: %s", w, hgt,
			 cairo_status_to_string(cairo_surface_status(surface)));
		cairo_surface_destroy(surface);
		return TR_E_TOO_LARGE;
	}
	cr = cairo_create(surface);
	if (box->width > 0 && box->height > 0) {
		/* rsvg-convert's way: the viewport at the box's corner, the scale on the context. */
		cairo_scale(cr, w / box->width, hgt / box->height);
		viewport = (RsvgRectangle){-box->x, -box->y, box->width, box->height};
	}
	if (!rsvg_handle_render_document(h, cr, &viewport, &gerr)) {
		/* librsvg's RenderingError::OutOfMemory: cairo could not make a surface. */
		bool memory = gerr && strstr(gerr->message, "NoMemory");

		reason(err, err_size,
		       memory ? "the SVG's render ran out of memory" : "Failed to render SVG",
		       gerr);
		g_clear_error(&gerr);
		code = memory ? TR_E_TOO_LARGE : TR_E_CORRUPT;
	}
	cairo_destroy(cr);
	cairo_surface_flush(surface);
	if (code == TR_OK) {
		unsigned char *data = cairo_image_surface_get_data(surface);
		int stride = cairo_image_surface_get_stride(surface);

		unpremultiply(data, stride, w, hgt);
		*png = tr_png_encode(data, (size_t)stride, w, hgt, 4);
		if (!*png) {
			snprintf(err, err_size, "the %ux%u render could not be encoded as PNG", w,
				 hgt);
			code = TR_E_IO;
		}
	}
	cairo_surface_destroy(surface);
	return code;
}

enum tr_error tr_svg_render_here(const unsigned char *svg, size_t len,
				 const struct tr_svg_limits *lim, struct tr_svg_render *out,
				 char *err, size_t err_size)
{
	GError *gerr = NULL;
	/* No base file or URL: librsvg then resolves no reference but data: URLs. */
	RsvgHandle *h = rsvg_handle_new_from_data(svg, len, &gerr);
	enum tr_error code;
	double w, hgt;
	RsvgRectangle box;
	uint32_t max_dim = lim->max_dim;

	memset(out, 0, sizeof(*out));
	if (!h) {
		reason(err, err_size, "Failed to parse SVG", gerr);
		g_clear_error(&gerr);
		return TR_E_CORRUPT;
	}
	rsvg_handle_set_dpi(h, 96);
	natural_size(h, &w, &hgt, &box);
	out->from_width = w > UINT32_MAX ? UINT32_MAX : (uint32_t)fmax(1, round(w));
	out->from_height = hgt > UINT32_MAX ? UINT32_MAX : (uint32_t)fmax(1, round(hgt));
	for (int tries = 0;; tries++) {
		fitted_size(w, hgt, max_dim, &out->width, &out->height);
		code = draw(h, out->width, out->height, &box, &out->png, err, err_size);
		if (code != TR_OK)
			break;
		if (4 * ((out->png->len + 2) / 3) <= lim->max_b64)
			break;
		tr_blob_unref(out->png);
		out->png = NULL;
		uint32_t long_edge = out->width > out->height ? out->width : out->height;

		if (tries == SVG_SHRINK_TRIES || long_edge <= 16) {
			snprintf(err, err_size,
				 "Image cannot be made to fit: the SVG's render at %ux%u is still "
				 "over the %llu bytes of base64 allowed",
				 out->width, out->height, (unsigned long long)lim->max_b64);
			code = TR_E_TOO_LARGE;
			break;
		}
		max_dim = (uint32_t)(long_edge * 0.7);
	}
	g_object_unref(h);
	return code;
}

const struct tr_svg_api tr_svg_api = {
	.abi = TR_SVG_ABI,
	.render = tr_svg_render_here,
};
