/* fit.h - making images fit what vision APIs accept (SPEC §3 "Images"): downscale and re-encode
 * with libvips, or convert formats the APIs do not take (BMP, TIFF, ICO, HEIC, AVIF). */
#ifndef TR_FIT_H
#define TR_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_blob.h"
#include "tr_options.h"
#include "tr_result.h"

struct tr_fit {
	struct tr_blob *data;   /* owned: the bytes to send */
	const char *media_type; /* static: "image/png" or "image/jpeg" */
	uint32_t width, height; /* of data */
	uint32_t from_width, from_height; /* of the source (first frame) */
	uint32_t frames;        /* frames (pages, icon sizes) of the source; one is in data */
	bool largest;           /* data shows the largest of the frames (icons), not the first */
	double scale;           /* from long edge / to long edge (1.0 when only converted) */
};

/* True when an image of this size and byte length must be fitted: its long edge exceeds
 * opts->image_max_dim or its base64 would exceed opts->image_max_b64. */
bool tr_fit_needed(uint32_t width, uint32_t height, size_t len, const struct tr_options *opts);

/* True when this libvips has a loader of the given nickname, e.g. "heifload_buffer", and it is
 * not blocked (VIPS_BLOCK_UNTRUSTED=1 blocks ImageMagick's). Starts libvips if needed. */
bool tr_fit_has_loader(const char *nickname);

/* Decodes src (any format libvips loads; the first frame of an animation or the first page; of
 * an icon holding several sizes, the largest),
 * shrinks it (on load where the format allows) so its long edge is at most opts->image_max_dim,
 * keeping the aspect ratio, and encodes it without metadata: a JPEG source as JPEG, any other as
 * PNG when that fits in opts->image_max_b64 of base64, else as JPEG with falling qualities (alpha
 * flattened on white), then at smaller sizes until it fits. An image already within the limits
 * is only re-encoded at its own size. The pixel grid is kept as stored (EXIF orientation is not
 * applied), so coordinates map back by scale alone.
 * Returns TR_OK and fills out (caller owns out->data), or an error code with one sentence in
 * err (out->data NULL): TR_E_CORRUPT when libvips cannot decode the bytes (its reason quoted),
 * TR_E_UNSUPPORTED when its loader lacks the codec (e.g. HEIC without an HEVC decoder),
 * TR_E_TOO_LARGE when the source has more pixels than toolfs decodes or no size fits,
 * TR_E_IO when libvips cannot start or encode. */
enum tr_error tr_fit_image(const struct tr_blob *src, const struct tr_options *opts,
			   struct tr_fit *out, char *err, size_t err_size);

#endif
