/* SPDX-License-Identifier: MIT */
/* fit.h - what fit.c (the encodings tried) and fit_source.c (the source decoded at a size) share
 * inside the libvips module toolfs-vips.so; nothing outside it includes this. */
#ifndef TR_FIT_PRIVATE_H
#define TR_FIT_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <vips/vips.h>

#include "image.h"

/* The key under which a decoded image (into_memory) holds its rows in PNG's layout. */
#define FILTERED_ROWS "toolfs-filtered-rows"

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

/* Kills the computation of image when deadline (0: none) passes while it runs. */
void tr_fit_watch_deadline(VipsImage *image, uint64_t deadline);
/* True when img's pixels are already what a PNG holds: 8-bit sRGB or grey. */
bool tr_fit_png_pixels(VipsImage *img);
/* Fills *s from the headers alone: the first frame, or for ImageMagick's loader (icons: one
 * image per size, smallest often first) the largest of the frames. Returns 0, or -1 with the
 * libvips error set. */
int tr_fit_source_header(const struct tr_blob *src, const char *loader, struct source *s);
/* Frame s->page shrunk to fit a target x target box (decoded into memory when in_memory, else a
 * sequential pipeline); a new reference, or NULL with the libvips error set. */
VipsImage *tr_fit_shrunk(const struct tr_blob *src, const struct source *s, uint32_t target,
			 const char *loader, bool in_memory, uint64_t deadline);

#endif
