/* SPDX-License-Identifier: MIT */
/* svg.h - the SVG reader's private parts: detection of an SVG document (plain or gzipped) from
 * its first bytes, and the render module toolfs-svg.so (librsvg + cairo). */
#ifndef TR_SVG_PRIVATE_H
#define TR_SVG_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_blob.h"
#include "tr_result.h"

/* --- svg_detect --- */
/* is this the start of an SVG document (pure string work). */

/* True when text[0..len) starts an XML document whose root element is `svg` in the SVG
 * namespace (http://www.w3.org/2000/svg, as the default namespace or through the root's
 * prefix): after an optional UTF-8 BOM, XML declaration, processing instructions, comments,
 * whitespace and a doctype (its internal subset skipped with quotes and comments respected).
 * The root's start tag must end within len bytes. */
bool tr_svg_detect(const unsigned char *text, size_t len);

/* True when data[0..len) starts with the gzip signature (1f 8b 08). */
bool tr_svg_gzip_signature(const unsigned char *data, size_t len);

/* Inflates the gzip stream data[0..len) into a new malloc'd buffer (*out, NUL-terminated;
 * *out_len bytes before the NUL), stopping at limit bytes of output. Returns 0 when the whole
 * stream (the first member) inflated; 1 when it inflates past limit (*out holds the first limit
 * bytes: enough for detection); 2 when the data is not a valid gzip stream or ends early (*out
 * holds what inflated, and err the reason); -1 when out of memory (*out NULL). */
int tr_svg_inflate(const unsigned char *data, size_t len, size_t limit, char **out, size_t *out_len,
		   char *err, size_t err_size);

/* --- the SVG module (toolfs-svg.so: svg_render.c) --- */

/* docs/SPEC.md §3: an SVG with neither an absolute width and height nor a viewBox, whose drawing
 * has no extent, is drawn on a canvas of this size (CSS's default replaced-element size is
 * 300x150: too small to read). */
#define TR_SVG_DEFAULT_WIDTH 1024
#define TR_SVG_DEFAULT_HEIGHT 768
/* The most a render is counted for against max_read_memory (svg_memory). */
#define TR_SVG_RENDER_MEMORY (1024ull * 1024 * 1024)

/* What a render is asked for. */
struct tr_svg_limits {
	uint32_t max_dim; /* long edge of the image at most (opts->image_max_dim) */
	uint64_t max_b64; /* base64 of the PNG at most (opts->image_max_b64) */
};

/* A rendered SVG. */
struct tr_svg_render {
	struct tr_blob *png;              /* owned: the PNG bytes (RGBA, 8 bits) */
	uint32_t width, height;           /* of png */
	uint32_t from_width, from_height; /* the document's own size in pixels (rounded) */
};

/* Renders the SVG document svg[0..len) in this process: parsed by librsvg from memory with no
 * base file or URL (so no external resource resolves: files, http:, XInclude, other documents'
 * elements; only data: URLs), its own size taken from absolute width and height, else its
 * viewBox, else its drawing's ink bounding box (drawn from the box's corner), else
 * TR_SVG_DEFAULT_*, scaled (down only) so the long edge is within lim->max_dim,
 * drawn straight at that size (never at the declared size first) on a transparent canvas, and
 * encoded as PNG; when the base64 would pass lim->max_b64, drawn again smaller until it fits.
 * Returns TR_OK and fills out (caller owns out->png), or an error code with one sentence in
 * err: TR_E_CORRUPT when librsvg cannot parse or draw the document (its reason quoted),
 * TR_E_TOO_LARGE when no size fits max_b64, TR_E_IO when cairo or the encoder fail. */
enum tr_error tr_svg_render_here(const unsigned char *svg, size_t len,
				 const struct tr_svg_limits *lim, struct tr_svg_render *out,
				 char *err, size_t err_size);

/* The interface table toolfs-svg.so exports (util/module.c loads it); abi first. */
#define TR_SVG_ABI 3
struct tr_svg_api {
	unsigned abi;       /* TR_SVG_ABI */
	void (*warm)(void); /* struct tr_module_head */
	/* tr_svg_render_here: the svg reader runs in the reader worker (docs/SPEC.md §8), which
	 * is killed when its read's deadline passes (librsvg cannot be interrupted) */
	enum tr_error (*render)(const unsigned char *svg, size_t len,
				const struct tr_svg_limits *lim, struct tr_svg_render *out,
				char *err, size_t err_size);
};
extern const struct tr_svg_api tr_svg_api;

#endif
