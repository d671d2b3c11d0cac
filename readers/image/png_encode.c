/* SPDX-License-Identifier: MIT */
/* png_encode.c - 8-bit pixels to a PNG without ancillary chunks, deflated by libdeflate. */
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

#include "image.h"
#include "util.h"

/* The level libvips' pngsave was asked for before (zlib's 6): libdeflate's 6 is about as small
 * (smaller on screenshots) in 60% of the time. */
#define DEFLATE_LEVEL 6
/* The signature, IHDR (12 + 13), IDAT's length and type, its CRC, IEND. */
#define PNG_OVERHEAD (8 + 25 + 8 + 4 + 12)

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* Writes the chunk of type and length len whose body is already at p + 8; returns its end. */
static unsigned char *seal_chunk(unsigned char *p, const char *type, size_t len)
{
	put_be32(p, (uint32_t)len);
	memcpy(p + 4, type, 4);
	put_be32(p + 8 + len, tr_crc32(0, p + 4, len + 4));
	return p + 12 + len;
}

/* PNG's colour type by number of bands: grey, grey + alpha, RGB, RGBA. */
static const unsigned char color_type[5] = {0, 0, 4, 2, 6};

/* An indexed PNG's palette: n colours, RGBA. */
struct palette {
	const unsigned char (*rgba)[4];
	unsigned n;
};

/* The PNG of height rows of row_bytes samples (stride apart) of colour type color_type, with
 * PLTE and tRNS chunks from pal when it is not NULL; pixels NULL: the rows are in prefiltered,
 * each after its filter type byte. */
static struct tr_blob *png_write(const unsigned char *pixels, size_t stride, uint32_t width,
				 uint32_t height, size_t row_bytes, unsigned char color_type,
				 const struct palette *pal, const unsigned char *prefiltered)
{
	size_t filtered_len = (row_bytes + 1) * height, extra = 0;
	struct libdeflate_compressor *deflater = NULL;
	unsigned char *filtered = NULL, *png = NULL, *p, *fitted;
	struct tr_blob *blob = NULL;
	size_t bound, deflated, png_len;
	unsigned n_trns = 0;

	if (pal) {
		/* tRNS lists alpha up to the last colour that is not opaque. */
		for (unsigned i = 0; i < pal->n; i++)
			if (pal->rgba[i][3] != 255)
				n_trns = i + 1;
		extra = 12 + 3 * (size_t)pal->n + (n_trns ? 12 + n_trns : 0);
	}
	deflater = libdeflate_alloc_compressor(DEFLATE_LEVEL);
	if (!deflater || (!prefiltered && !(filtered = malloc(filtered_len))))
		goto out;
	/* Filter type 0 on every row, as libvips' pngsave chose by default: on screenshots and
	 * drawings, what PNG is kept for, it deflates smallest. */
	for (uint32_t y = 0; !prefiltered && y < height; y++) {
		filtered[y * (row_bytes + 1)] = 0;
		memcpy(filtered + y * (row_bytes + 1) + 1, pixels + y * stride, row_bytes);
	}
	bound = libdeflate_zlib_compress_bound(deflater, filtered_len);
	if (bound > INT32_MAX) /* one IDAT chunk holds it */
		goto out;
	/* malloc'd, not a blob of the bound: only the pages deflate writes are touched. */
	png = malloc(PNG_OVERHEAD + extra + bound);
	if (!png)
		goto out;
	p = png;
	memcpy(p, "\x89PNG\r\n\x1a\n", 8);
	p += 8;
	put_be32(p + 8, width);
	put_be32(p + 12, height);
	p[16] = 8;                 /* bits per sample (an index) */
	p[17] = color_type;        /* grey, grey + alpha, RGB, RGBA, indexed */
	p[18] = p[19] = p[20] = 0; /* deflate, adaptive filters, not interlaced */
	p = seal_chunk(p, "IHDR", 13);
	if (pal) {
		for (unsigned i = 0; i < pal->n; i++)
			memcpy(p + 8 + 3 * i, pal->rgba[i], 3);
		p = seal_chunk(p, "PLTE", 3 * (size_t)pal->n);
		if (n_trns) {
			for (unsigned i = 0; i < n_trns; i++)
				p[8 + i] = pal->rgba[i][3];
			p = seal_chunk(p, "tRNS", n_trns);
		}
	}
	deflated = libdeflate_zlib_compress(deflater, prefiltered ? prefiltered : filtered,
					    filtered_len, p + 8, bound);
	if (deflated == 0)
		goto out;
	p = seal_chunk(p, "IDAT", deflated);
	p = seal_chunk(p, "IEND", 0);
	png_len = (size_t)(p - png);
	fitted = realloc(png, png_len);
	blob = tr_blob_adopt(fitted ? fitted : png, png_len);
	png = NULL; /* adopted, or freed by tr_blob_adopt */
out:
	free(png);
	libdeflate_free_compressor(deflater);
	free(filtered);
	return blob;
}

struct tr_blob *tr_png_encode(const unsigned char *pixels, size_t stride, uint32_t width,
			      uint32_t height, int bands)
{
	if (bands < 1 || bands > 4 || width == 0 || height == 0)
		return NULL;
	return png_write(pixels, stride, width, height, (size_t)width * bands, color_type[bands],
			 NULL, NULL);
}

struct tr_blob *tr_png_encode_filtered(const unsigned char *filtered, uint32_t width,
				       uint32_t height, int bands)
{
	if (bands < 1 || bands > 4 || width == 0 || height == 0)
		return NULL;
	return png_write(NULL, 0, width, height, (size_t)width * bands, color_type[bands], NULL,
			 filtered);
}

struct tr_blob *tr_png_encode_indexed(const unsigned char *indices, size_t stride, uint32_t width,
				      uint32_t height, const unsigned char (*rgba)[4],
				      unsigned n_colours)
{
	struct palette pal = {rgba, n_colours};

	if (width == 0 || height == 0 || n_colours < 1 || n_colours > 256)
		return NULL;
	return png_write(indices, stride, width, height, width, 3, &pal, NULL);
}
