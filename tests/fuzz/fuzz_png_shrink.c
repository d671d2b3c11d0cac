/* SPDX-License-Identifier: MIT */
/* fuzz_png_shrink.c - libFuzzer target for the PNG shrink-on-load of image fitting
 * (tr_png_shrink, and tr_png_shrink_region for regions): the first byte picks the factor (low 7
 * bits) and whether a region is decoded (high bit: the rectangle of the declared size's middle
 * half, partly outside on the right and bottom), the rest is the PNG. Any bytes, never a crash or
 * a read outside them, and a result of the size the contract gives. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "image.h"

/* Declared sizes past these would only make the fuzzer slow (the fit refuses over 2^28). */
#define MAX_SOURCE_PIXELS (1u << 18)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_png_shrunk out;
	struct tr_region region, shown;
	uint32_t factor, width, height;
	bool in_region;
	unsigned sum = 0;

	if (size < 1 + 24)
		return 0;
	factor = 1 + (data[0] & 0x7f) % 9;
	in_region = data[0] & 0x80;
	data++;
	size--;
	width = tr_be32(data + 16);
	height = tr_be32(data + 20);
	if ((uint64_t)width * height > MAX_SOURCE_PIXELS)
		return 0;
	region = (struct tr_region){width / 3, height / 4, width / 2 + 7, height};
	if (tr_region_clip(&region, width, height, &shown) < 0)
		shown = (struct tr_region){0, 0, 0, 0}; /* declined below: nothing is inside */
	if (!in_region)
		shown = (struct tr_region){0, 0, width, height};
	if ((in_region ? tr_png_shrink_region(data, size, factor, &region, &out)
		       : tr_png_shrink(data, size, factor, &out)) < 0) {
		if (out.pixels)
			fuzz_fail("a declined PNG left pixels behind");
		return 0;
	}
	if (out.bands < 1 || out.bands > 4 || !out.pixels)
		fuzz_fail("shrunk to %d bands, pixels %p", out.bands, (void *)out.pixels);
	/* IHDR is the first chunk of anything taken, so its size is the one declared above. */
	if (out.width != (shown.width + factor - 1) / factor ||
	    out.height != (shown.height + factor - 1) / factor)
		fuzz_fail("%ux%u by %u gave %ux%u", shown.width, shown.height, factor, out.width,
			  out.height);
	for (size_t i = 0; i < (size_t)out.width * out.height * out.bands; i++)
		sum += out.pixels[i]; /* every byte inside the allocation (ASan) */
	free(out.pixels);
	return sum == 0xffffffffu; /* keep the loop */
}
