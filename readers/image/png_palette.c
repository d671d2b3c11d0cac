/* SPDX-License-Identifier: MIT */
/* png_palette.c - 8-bit RGB(A) pixels to a PNG of at most 256 colours chosen by libimagequant:
 * the fit of a drawing that must not grow past its source's bytes (part of toolfs-vips.so). */
#include <limits.h>
#include <stdlib.h>

#include <libimagequant.h>

#include "image.h"
#include "util.h"

/* Rows added to the histogram at a time: libimagequant sizes an image's colour hash from its
 * pixel count (44 MB for 2000x1400 rows at once), and a strip's stays small; the histogram then
 * holds the distinct colours alone. */
#define STRIP_ROWS 64
/* Slots of the cache of colours already mapped (direct-mapped, 8 bytes each). */
#define CACHE_BITS 16

/* Rows of 8-bit RGB or RGBA pixels that libimagequant reads one at a time (no copy). */
struct rows {
	const unsigned char *pixels;
	size_t stride;
	uint32_t first; /* the liq image's row 0 is this row of pixels */
	int bands;
};

static void get_row(liq_color row_out[], int row, int width, void *user_info)
{
	const struct rows *r = user_info;
	const unsigned char *px = r->pixels + (size_t)(r->first + (uint32_t)row) * r->stride;

	for (int x = 0; x < width; x++, px += r->bands)
		row_out[x] = (liq_color){px[0], px[1], px[2], r->bands == 4 ? px[3] : 255};
}

/* Adds every row of the pixels to hist, STRIP_ROWS at a time; false on failure. */
static bool add_strips(liq_histogram *hist, const liq_attr *attr, const unsigned char *pixels,
		       size_t stride, uint32_t width, uint32_t height, int bands)
{
	for (uint32_t y = 0; y < height; y += STRIP_ROWS) {
		struct rows strip = {pixels, stride, y, bands};
		uint32_t n = height - y < STRIP_ROWS ? height - y : STRIP_ROWS;
		liq_image *img = liq_image_create_custom(attr, get_row, &strip, (int)width, (int)n,
							 0);
		liq_error rc;

		if (!img)
			return false;
		rc = liq_histogram_add_image(hist, attr, img);
		liq_image_destroy(img);
		if (rc != LIQ_OK)
			return false;
	}
	return true;
}

/* A colour already mapped to its palette index. */
struct cached {
	uint32_t rgba;
	int16_t index; /* -1: empty */
};

/* The index of the palette colour nearest to px (squared distance over R, G, B and A). */
static unsigned nearest(const liq_palette *pal, const unsigned char px[4])
{
	unsigned best = 0;
	uint32_t best_d = UINT32_MAX;

	for (unsigned i = 0; i < pal->count; i++) {
		const liq_color *c = &pal->entries[i];
		int dr = c->r - px[0], dg = c->g - px[1], db = c->b - px[2], da = c->a - px[3];
		uint32_t d = (uint32_t)(dr * dr + dg * dg + db * db + da * da);

		if (d < best_d) {
			best_d = d;
			best = i;
		}
	}
	return best;
}

/* Maps every pixel to its nearest palette colour, without dithering: libimagequant's own
 * remapping converts the whole image to floats first (16 bytes a pixel, 45 MB for 2000x1400)
 * and dithers noise into flat colours; a drawing has few distinct colours, each searched once
 * (the cache). False when deadline passes (checked every row) or out of memory. */
static bool remap(const liq_palette *pal, const unsigned char *pixels, size_t stride,
		  uint32_t width, uint32_t height, int bands, unsigned char *indices,
		  uint64_t deadline)
{
	struct cached *cache = malloc(sizeof(*cache) << CACHE_BITS);

	if (!cache)
		return false;
	for (size_t i = 0; i < (size_t)1 << CACHE_BITS; i++)
		cache[i].index = -1;
	for (uint32_t y = 0; y < height; y++) {
		const unsigned char *px = pixels + (size_t)y * stride;

		if (tr_deadline_passed(deadline)) {
			free(cache);
			return false;
		}
		for (uint32_t x = 0; x < width; x++, px += bands) {
			unsigned char c[4] = {px[0], px[1], px[2], bands == 4 ? px[3] : 255};
			uint32_t key = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 |
				       (uint32_t)c[2] << 8 | c[3];
			struct cached *slot = &cache[(key * 2654435761u) >> (32 - CACHE_BITS)];

			if (slot->index < 0 || slot->rgba != key)
				*slot = (struct cached){key, (int16_t)nearest(pal, c)};
			indices[(size_t)y * width + x] = (unsigned char)slot->index;
		}
	}
	free(cache);
	return true;
}

struct tr_blob *tr_png_encode_palette(const unsigned char *pixels, size_t stride, uint32_t width,
				      uint32_t height, int bands, uint64_t deadline)
{
	liq_attr *attr = NULL;
	liq_histogram *hist = NULL;
	liq_result *result = NULL;
	unsigned char *indices = NULL, rgba[256][4];
	struct tr_blob *blob = NULL;
	const liq_palette *pal;

	if ((bands != 3 && bands != 4) || width == 0 || height == 0 || width > INT_MAX ||
	    height > INT_MAX)
		return NULL;
	attr = liq_attr_create();
	hist = attr ? liq_histogram_create(attr) : NULL;
	if (!hist || !add_strips(hist, attr, pixels, stride, width, height, bands) ||
	    liq_histogram_quantize(hist, attr, &result) != LIQ_OK)
		goto out;
	pal = liq_get_palette(result);
	indices = malloc((size_t)width * height);
	if (!indices || !remap(pal, pixels, stride, width, height, bands, indices, deadline))
		goto out;
	for (unsigned i = 0; i < pal->count && i < 256; i++) {
		rgba[i][0] = pal->entries[i].r;
		rgba[i][1] = pal->entries[i].g;
		rgba[i][2] = pal->entries[i].b;
		rgba[i][3] = pal->entries[i].a;
	}
	blob = tr_png_encode_indexed(indices, width, width, height, (const unsigned char(*)[4])rgba,
				     pal->count);
out:
	free(indices);
	if (result)
		liq_result_destroy(result);
	if (hist)
		liq_histogram_destroy(hist);
	if (attr)
		liq_attr_destroy(attr);
	return blob;
}
