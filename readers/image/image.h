/* SPDX-License-Identifier: MIT */
/* image.h - the image readers' shared part (private to readers/): structural validators, the
 * common read path, and fitting images to what vision APIs accept (libvips). */
#ifndef TR_IMAGE_PRIVATE_H
#define TR_IMAGE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reader.h"
#include "tr_blob.h"
#include "tr_options.h"
#include "tr_result.h"

/* --- image --- */
/* the image readers' shared part: structural validators and the common read path. */

/* What a validator learns of a well-formed image. */
struct tr_image_info {
	uint32_t width, height; /* pixels (GIF, animated WebP: the canvas) */
	uint32_t frames;        /* 1 for a still image */
	char summary[96]; /* format details for the description, e.g. "8-bit RGBA, non-interlaced" */
};

/* A validator checks the structure of data[0..len) without decoding pixels. On success it fills
 * *info and returns 0. On failure it writes into err (always NUL-terminated, truncated to
 * err_size) one sentence saying what is wrong and at which byte offset, e.g. "PNG chunk IDAT CRC
 * mismatch at offset 8123", and returns -1; *info is then unspecified. Pure: no I/O, no
 * allocation, thread-safe. */
typedef int (*tr_image_validate_fn)(const unsigned char *data, size_t len,
				    struct tr_image_info *info, char *err, size_t err_size);

/* Checks docs/SPEC.md §3: signature; IHDR first (length 13, width and height 1..2^31-1, bit depth legal
 * for the colour type, compression 0, filter 0, interlace 0/1); every chunk inside the file with
 * a correct CRC; PLTE before IDAT for colour type 3; one or more consecutive IDATs; IEND (bytes
 * after it are ignored). "Truncated" errors give the whole chunk's size (12 + length). */
int tr_png_validate(const unsigned char *data, size_t len, struct tr_image_info *info, char *err,
		    size_t err_size);

/* Checks SOI; every segment's length (fill bytes and standalone markers allowed); one SOF0-15
 * frame header (not DHT/DAC/JPG) with non-zero width and height and 1-4 components; SOS after
 * it, scanning entropy-coded data (0xFF00 stuffing, RSTn) to the next marker, several scans
 * allowed; EOI. "Truncated" errors give the segment's length field, e.g. "JPEG truncated:
 * segment DQT at offset 20 needs 67 bytes, file ends at 50". */
int tr_jpeg_validate(const unsigned char *data, size_t len, struct tr_image_info *info, char *err,
		     size_t err_size);

/* Checks GIF87a/GIF89a, the logical screen descriptor, the global colour table, then image
 * descriptors (local colour table, LZW minimum code size 1..11, data sub-blocks to the
 * terminator) and extensions (sub-blocks) up to the 0x3B trailer; at least one image. Counts the
 * images as frames. */
int tr_gif_validate(const unsigned char *data, size_t len, struct tr_image_info *info, char *err,
		    size_t err_size);

/* Checks the RIFF header (RIFF size + 8 within the file; bytes after it are ignored), "WEBP", a
 * first chunk VP8 (key frame, start code 9d 01 2a, non-zero 14-bit size), VP8L (signature 0x2f,
 * version 0) or VP8X (canvas size, and the chunks its flags announce: ANIM and ANMF frames when
 * animated, otherwise a VP8/VP8L image), and every chunk's length within the RIFF data (odd
 * lengths padded). */
int tr_webp_validate(const unsigned char *data, size_t len, struct tr_image_info *info, char *err,
		     size_t err_size);

/* Signature tests over the first len bytes of a file (a probe's head). */
bool tr_png_signature(const unsigned char *head, size_t len);
bool tr_jpeg_signature(const unsigned char *head, size_t len);
bool tr_gif_signature(const unsigned char *head, size_t len);
bool tr_webp_signature(const unsigned char *head, size_t len);

/* One displayable image format, as png.c, jpeg.c, gif.c and webp.c describe theirs. */
struct tr_image_format {
	const char *name;              /* "PNG", as shown in sentences */
	const char *mime_type;         /* static, e.g. "image/png" */
	const char *const *extensions; /* NULL-terminated, without the dot */
	bool (*signature)(const unsigned char *head, size_t len);
	tr_image_validate_fn validate;
};

/* The formats of png.c, jpeg.c, gif.c and webp.c, which the one image reader (formats.c:
 * tr_reader_image) serves, in probe priority order. */
extern const struct tr_image_format tr_image_png, tr_image_jpeg, tr_image_gif, tr_image_webp;

/* The read of docs/SPEC.md §3 "Images" for fmt: empty file -> corrupt; over
 * opts->max_image_size -> too_large (without reading); otherwise loads the file once (setting
 * sha256), validates it, and on success attaches it as images[0] with dimensions, mimeType,
 * shortResult and a one-paragraph content. A selector beyond part 1 is out_of_range. Failures go
 * into res. Returns 0, or -1 when out of memory. */
int tr_image_read(const struct tr_file *file, const struct tr_selector *sel,
		  const struct tr_options *opts, struct tr_result *res,
		  const struct tr_image_format *fmt);

/* What tr_image_attach shows of an image. */
struct tr_image_shown {
	const char *format;     /* "PNG" */
	const char *media_type; /* of the file's bytes */
	uint32_t width, height;
	const char *summary; /* details for the description, or NULL */
	bool must_convert;   /* a format vision APIs do not take (BMP, TIFF ...): always convert */
	uint64_t deadline;   /* the read's tr_file.deadline: a fit still running then is stopped */
	const struct tr_region *region; /* borrowed or NULL: show this rectangle (clipped to the
					 * image) through tr_fit_region */
};

/* Attaches blob (the whole file; the reference is taken over) as images[0] of res and fills
 * dimensions, content, shortResult and success. An image over opts->image_max_dim or
 * opts->image_max_b64, or one that must be converted, goes through tr_fit_image (libvips):
 * metadata.resized and content then give the scale factor. A fit that fails takes its error
 * code (corrupt, unsupported, too_large, io_error, timeout); without libvips, must_convert ->
 * unsupported and oversized images are attached as they are.
 * Returns 0, or -1 when out of memory. */
int tr_image_attach(struct tr_result *res, struct tr_blob *blob, const struct tr_image_shown *img,
		    const struct tr_options *opts);

/* For a region selector (sel->has_region): clips it to width x height into *clipped and returns
 * false, or records out_of_range in res and returns true when none of it is inside. */
bool tr_image_region_outside(struct tr_result *res, const struct tr_selector *sel, uint32_t width,
			     uint32_t height, struct tr_region *clipped);

/* An image is one part: a selector starting past 1 records out_of_range and returns true. */
bool tr_image_selector_past_end(struct tr_result *res, const struct tr_selector *sel);

/* Writes a printf-formatted sentence into err (err_size > 0) and returns -1, for validators. */
int tr_image_error(char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Big- and little-endian loads for validators; p must hold the bytes. */
static inline uint32_t tr_be16(const unsigned char *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t tr_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint32_t tr_le16(const unsigned char *p)
{
	return (uint32_t)p[1] << 8 | p[0];
}

static inline uint32_t tr_le24(const unsigned char *p)
{
	return (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline uint32_t tr_le32(const unsigned char *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* --- fit --- */
/* making images fit what vision APIs accept (docs/SPEC.md §3 "Images"): downscale and re-encode with
 * libvips, or convert formats the APIs do not take (BMP, TIFF, ICO, HEIC, AVIF). */

struct tr_fit {
	struct tr_blob *data;             /* owned: the bytes to send */
	const char *media_type;           /* static: "image/png" or "image/jpeg" */
	uint32_t width, height;           /* of data */
	uint32_t from_width, from_height; /* of the source (first frame) */
	uint32_t frames; /* frames (pages, icon sizes) of the source; one is in data */
	bool largest;    /* data shows the largest of the frames (icons), not the first */
	double scale;    /* from long edge / to long edge (1.0 when only converted) */
	/* static, or NULL: how the fit was kept from growing past the source's bytes (its
	 * full-colour encoding at this size within image_max_b64 was larger): "palette" (a PNG of
	 * 256 colours), "jpeg" (a JPEG quality), "size" (a smaller size). */
	const char *saving;
};

/* The words that say why a fit is what tr_fit.saving names, e.g. for "palette": "encoded with
 * 256 colours, as the full-colour PNG at this size was larger than the source". */
const char *tr_fit_saving_text(const char *saving);

/* True when an image of this size and byte length must be fitted: its long edge exceeds
 * opts->image_max_dim or its base64 would exceed opts->image_max_b64. */
bool tr_fit_needed(uint32_t width, uint32_t height, size_t len, const struct tr_options *opts);

/* Sources with more pixels are refused before anything is decoded (docs/SPEC.md §3): a 20 MiB
 * PNG can declare billions of pixels of one colour, and inflating them holds a read (and a
 * daemon thread) for seconds per gigapixel. 2^28 is 16384x16384; decoding that many to
 * downscale takes about a second and, with libvips' sequential access, memory of a few
 * hundred rows plus the output. */
#define TR_FIT_MAX_PIXELS (1ULL << 28)

/* True when width x height is over TR_FIT_MAX_PIXELS; then writes the reason into err, e.g.
 * "32000x32000 is 1024000000 pixels, more than the 268435456 (16384x16384) toolfs decodes to
 * downscale". */
static inline bool tr_fit_too_many_pixels(uint32_t width, uint32_t height, char *err,
					  size_t err_size)
{
	uint64_t pixels = (uint64_t)width * height;

	if (pixels <= TR_FIT_MAX_PIXELS)
		return false;
	/* Inline: both the core (before loading libvips) and the libvips module (fit.c) ask. */
	snprintf(err, err_size,
		 "%ux%u is %llu pixels, more than the %llu (16384x16384) toolfs decodes to "
		 "downscale",
		 width, height, (unsigned long long)pixels, (unsigned long long)TR_FIT_MAX_PIXELS);
	return true;
}

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
 * TR_E_IO when libvips cannot start or encode, TR_E_UNSUPPORTED when the module toolfs-vips.so
 * cannot be loaded (err names it), TR_E_TIMEOUT when deadline (tr_deadline_after_ms; 0: none)
 * passes first: libvips' computation is killed from its "eval" signal (err starts "timeout"). */
enum tr_error tr_fit_image(const struct tr_blob *src, const struct tr_options *opts,
			   uint64_t deadline, struct tr_fit *out, char *err, size_t err_size);

/* tr_fit_image of the rectangle region of src (within the source: tr_region_clip it first),
 * cropped from the full-resolution source before it is shrunk: a JPEG shrinks on load by as
 * much as the region's fit allows, and every format is decoded sequentially, so rows below the
 * region are not decoded. Always encodes, even a region within the limits; out->from_width and
 * out->from_height are the region's size and out->scale maps it. Same errors as tr_fit_image;
 * TR_E_CORRUPT when region is not inside the decoded image. */
enum tr_error tr_fit_region(const struct tr_blob *src, const struct tr_region *region,
			    const struct tr_options *opts, uint64_t deadline, struct tr_fit *out,
			    char *err, size_t err_size);

/* A PNG decoded at a fraction of its size (tr_png_shrink). */
struct tr_png_shrunk {
	unsigned char *pixels; /* owned (malloc): height rows of width x bands 8-bit samples */
	uint32_t width, height;
	int bands; /* 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA */
};

/* Decodes the PNG data[0..len) and averages each factor x factor block of its pixels as they
 * are inflated (alpha-weighted where there is alpha; the blocks at the right and bottom edges
 * are partial), so width and height are the source's divided by factor, rounded up. Takes 8-bit
 * grey, grey + alpha, RGB and RGBA, and palettes of 1 to 8 bits (expanded to RGB, or RGBA when
 * there is a tRNS chunk, as libvips loads them), not interlaced, IHDR first, rows of at most
 * 2^22 pixels, factor 1 to 4096; chunk CRCs are not checked (the validator did). Returns 0 and fills out (caller frees out->pixels), or -1 with nothing
 * allocated for any other kind of PNG, damaged or short pixel data, or no memory: the caller
 * then decodes it with libvips, which says what is wrong. Part of toolfs-vips.so. */
int tr_png_shrink(const unsigned char *data, size_t len, uint32_t factor,
		  struct tr_png_shrunk *out);

/* tr_png_shrink of the rectangle region alone (clipped to the image; -1 when none of it is
 * inside): out is its size divided by factor, rounded up. Rows below the region are not
 * inflated; rows above it are inflated and unfiltered (the filters chain) but not summed.
 * region NULL: the whole image. Part of toolfs-vips.so. */
int tr_png_shrink_region(const unsigned char *data, size_t len, uint32_t factor,
			 const struct tr_region *region, struct tr_png_shrunk *out);

/* Encodes height rows of width x bands 8-bit samples (rows stride bytes apart; bands 1 grey,
 * 2 grey + alpha, 3 RGB, 4 RGBA) as a PNG with IHDR, one IDAT and IEND only: filter type 0,
 * deflated by libdeflate at level 6. Returns a new blob (caller owns), or NULL when out of
 * memory or the arguments are out of range. In the core (libdeflate only). */
struct tr_blob *tr_png_encode(const unsigned char *pixels, size_t stride, uint32_t width,
			      uint32_t height, int bands);

/* tr_png_encode of rows already in PNG's layout: height rows of 1 + width x bands bytes, each
 * a filter type byte (0) and its samples, deflated as they are (no copy). */
struct tr_blob *tr_png_encode_filtered(const unsigned char *filtered, uint32_t width,
				       uint32_t height, int bands);

/* Encodes height rows of width palette indices (rows stride bytes apart, each below n_colours)
 * as a PNG of colour type 3: IHDR, PLTE of the n_colours (1 to 256) colours of rgba, tRNS when
 * one is not opaque (up to the last such), one IDAT (filter type 0, libdeflate level 6) and
 * IEND. Returns a new blob (caller owns), or NULL when out of memory or the arguments are out
 * of range. In the core (libdeflate only). */
struct tr_blob *tr_png_encode_indexed(const unsigned char *indices, size_t stride, uint32_t width,
				      uint32_t height, const unsigned char (*rgba)[4],
				      unsigned n_colours);

/* Encodes height rows of width x bands 8-bit samples (rows stride bytes apart; bands 3 RGB or
 * 4 RGBA) as a PNG of at most 256 colours chosen by libimagequant, each pixel its nearest
 * colour, not dithered (tr_png_encode_indexed). The colour histogram is built a strip of rows at
 * a time, so memory is the indices (width x height bytes) plus the histogram of distinct colours,
 * never a copy of the pixels. Returns a new blob (caller owns), or NULL when out of memory,
 * libimagequant fails, deadline (tr_deadline_after_ms; 0: none) passes or the arguments are out
 * of range. Part of toolfs-vips.so. */
struct tr_blob *tr_png_encode_palette(const unsigned char *pixels, size_t stride, uint32_t width,
				      uint32_t height, int bands, uint64_t deadline);

/* The interface table toolfs-vips.so (fit.c) exports (util/module.c loads it); abi first.
 * tr_fit_has_loader and tr_fit_image call through it. */
#define TR_VIPS_ABI 4
struct tr_vips_api {
	unsigned abi;       /* TR_VIPS_ABI */
	void (*warm)(void); /* struct tr_module_head */
	bool (*has_loader)(const char *nickname);
	enum tr_error (*fit_image)(const struct tr_blob *src, const struct tr_options *opts,
				   uint64_t deadline, struct tr_fit *out, char *err,
				   size_t err_size);
	enum tr_error (*fit_region)(const struct tr_blob *src, const struct tr_region *region,
				    const struct tr_options *opts, uint64_t deadline,
				    struct tr_fit *out, char *err, size_t err_size);
};
extern const struct tr_vips_api tr_vips_api;

#endif
