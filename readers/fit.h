/* fit.h - making images fit what vision APIs accept (SPEC §3 "Images"): downscale and re-encode
 * with libvips, or convert formats the APIs do not take (BMP, TIFF, ICO, HEIC, AVIF). */
#ifndef TR_FIT_H
#define TR_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_blob.h"
#include "tr_options.h"

struct tr_fit {
	struct tr_blob *data;   /* owned: the bytes to send */
	const char *media_type; /* static: "image/png" or "image/jpeg" */
	uint32_t width, height; /* of data */
	uint32_t from_width, from_height; /* of the source (first frame) */
	double scale;           /* from long edge / to long edge (1.0 when only converted) */
};

/* True when an image of this size and byte length must be fitted: its long edge exceeds
 * opts->image_max_dim or its base64 would exceed opts->image_max_b64. */
bool tr_fit_needed(uint32_t width, uint32_t height, size_t len, const struct tr_options *opts);

/* Decodes src (any format libvips loads; the first frame of an animation), shrinks it so its
 * long edge is at most opts->image_max_dim, and encodes it as PNG when that fits in
 * opts->image_max_b64 of base64, else as JPEG with a falling quality, then smaller sizes until
 * it fits. With convert_only, an image already within the limits is only re-encoded.
 * Returns 0 and fills out (caller owns out->data), or -1 with a sentence in err. */
int tr_fit_image(const struct tr_blob *src, const struct tr_options *opts, struct tr_fit *out,
		 char *err, size_t err_size);

#endif
