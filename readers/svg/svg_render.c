/* SPDX-License-Identifier: MIT */
/* svg_render.c - an SVG document drawn by librsvg from memory at the fitted size and encoded as
 * PNG (part of toolfs-svg.so). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <librsvg/rsvg.h>

#include "image.h"
#include "svg.h"
#include "util.h"

/* Smaller sizes tried when the PNG's base64 is over max_b64: each 0.7 of the last edge. */
#define SVG_SHRINK_TRIES 8
/* Canvases of this many pixels and more are drawn in two halves at once when lim->split. */
#define SVG_SPLIT_PIXELS (1024 * 1024)

/* Writes "what: reason" into err, the reason (librsvg's, ending in a newline) trimmed. */
static void reason(char *err, size_t err_size, const char *what, GError *gerr)
{
	size_t n;

	snprintf(err, err_size, "%s: %s", what, gerr ? gerr->message : "librsvg gave no reason");
	n = strlen(err);
	while (n && (err[n - 1] == '\n' || err[n - 1] == ' ' || err[n - 1] == '\r'))
		err[--n] = '\0';
}

/* The document's own size in pixels: absolute width and height, else the viewBox, else the
 * default. */
static void natural_size(RsvgHandle *h, double *w, double *h_out)
{
	gboolean has_w, has_h, has_vb;
	RsvgLength lw, lh;
	RsvgRectangle vb;

	if (rsvg_handle_get_intrinsic_size_in_pixels(h, w, h_out) && *w >= 1 && *h_out >= 1 &&
	    isfinite(*w) && isfinite(*h_out))
		return;
	rsvg_handle_get_intrinsic_dimensions(h, &has_w, &lw, &has_h, &lh, &has_vb, &vb);
	if (has_vb && vb.width > 0 && vb.height > 0 && isfinite(vb.width) && isfinite(vb.height)) {
		*w = vb.width;
		*h_out = vb.height;
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

/* Draws rows [y0, y0 + rows) of the document's w x hgt render into data (ARGB32, rows stride
 * bytes apart, row y0 first). */
static enum tr_error draw_rows(RsvgHandle *h, unsigned char *data, int stride, uint32_t w,
			       uint32_t hgt, uint32_t y0, uint32_t rows, char *err, size_t err_size)
{
	cairo_surface_t *surface = cairo_image_surface_create_for_data(data, CAIRO_FORMAT_ARGB32,
								       (int)w, (int)rows, stride);
	RsvgRectangle viewport = {0, 0, w, hgt};
	enum tr_error code = TR_OK;
	GError *gerr = NULL;
	cairo_t *cr;

	if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
		snprintf(err, err_size, "cairo cannot make a %ux%u canvas: %s", w, rows,
			 cairo_status_to_string(cairo_surface_status(surface)));
		cairo_surface_destroy(surface);
		return TR_E_IO;
	}
	cr = cairo_create(surface);
	cairo_translate(cr, 0, -(double)y0);
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
	cairo_surface_destroy(surface);
	return code;
}

/* Forks a helper that draws rows [y0, hgt) into data (a shared mapping) and exits 0 when it
 * did; it dies with this process. Returns its pid, or -1. */
static pid_t start_helper(RsvgHandle *h, unsigned char *data, int stride, uint32_t w, uint32_t hgt,
			  uint32_t y0)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		char err[8];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		_exit(draw_rows(h, data + (size_t)y0 * (size_t)stride, stride, w, hgt, y0, hgt - y0,
				err, sizeof(err)) == TR_OK
			      ? 0
			      : 1);
	}
	return pid;
}

static bool helper_done(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Draws the document into a w x hgt canvas and encodes it; *png NULL on failure (err says).
 * split: a helper process draws the bottom half at the same time (a large canvas only). */
static enum tr_error draw(RsvgHandle *h, uint32_t w, uint32_t hgt, bool split, struct tr_blob **png,
			  char *err, size_t err_size)
{
	int stride = cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, (int)w);
	size_t size = (size_t)stride * hgt;
	uint32_t top = split && (uint64_t)w * hgt >= SVG_SPLIT_PIXELS ? hgt / 2 : hgt;
	/* Zeroed: a transparent canvas; shared with the helper when there is one. */
	unsigned char *data = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   (top < hgt ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	enum tr_error code;
	pid_t helper = -1;

	*png = NULL;
	if (stride <= 0 || data == MAP_FAILED) {
		snprintf(err, err_size, "no memory for a %ux%u canvas", w, hgt);
		return TR_E_TOO_LARGE;
	}
	if (top < hgt)
		helper = start_helper(h, data, stride, w, hgt, top);
	code = draw_rows(h, data, stride, w, hgt, 0, top, err, err_size);
	if (top < hgt && !(helper > 0 && helper_done(helper)) && code == TR_OK)
		code = draw_rows(h, data + (size_t)top * (size_t)stride, stride, w, hgt, top,
				 hgt - top, err, err_size);
	if (code == TR_OK) {
		unpremultiply(data, stride, w, hgt);
		*png = tr_png_encode(data, (size_t)stride, w, hgt, 4);
		if (!*png) {
			snprintf(err, err_size, "the %ux%u render could not be encoded as PNG", w,
				 hgt);
			code = TR_E_IO;
		}
	}
	munmap(data, size);
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
	uint32_t max_dim = lim->max_dim;
	/* Filters read beyond each pixel, and librsvg clips their regions to the canvas: halves
	 * drawn apart would differ at the seam. */
	bool split = lim->split && !memmem(svg, len, "filter", 6);

	memset(out, 0, sizeof(*out));
	if (!h) {
		reason(err, err_size, "Failed to parse SVG", gerr);
		g_clear_error(&gerr);
		return TR_E_CORRUPT;
	}
	rsvg_handle_set_dpi(h, 96);
	natural_size(h, &w, &hgt);
	out->from_width = w > UINT32_MAX ? UINT32_MAX : (uint32_t)fmax(1, round(w));
	out->from_height = hgt > UINT32_MAX ? UINT32_MAX : (uint32_t)fmax(1, round(hgt));
	for (int tries = 0;; tries++) {
		fitted_size(w, hgt, max_dim, &out->width, &out->height);
		code = draw(h, out->width, out->height, split, &out->png, err, err_size);
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
