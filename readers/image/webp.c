/* SPDX-License-Identifier: MIT */
/* webp.c - the WebP reader: RIFF container, VP8/VP8L/VP8X headers, chunk bounds, registration. */
#include <stdio.h>
#include <string.h>

#include "image.h"

#define VP8X_ANIMATION 0x02
#define VP8X_ALPHA 0x10

struct webp_chunk {
	size_t off; /* of the chunk header */
	uint32_t size;
	const unsigned char *data;
	char name[16]; /* fourcc without trailing blanks ("VP8"), or hex */
};

bool tr_webp_signature(const unsigned char *head, size_t len)
{
	return len >= 12 && memcmp(head, "RIFF", 4) == 0 && memcmp(head + 8, "WEBP", 4) == 0;
}

static bool is_fourcc(const struct webp_chunk *c, const char *fourcc)
{
	return memcmp(c->data - 8, fourcc, 4) == 0;
}

static void fourcc_name(const unsigned char *t, char *buf, size_t size)
{
	int n = 4;

	for (int i = 0; i < 4; i++)
		if (t[i] < 0x20 || t[i] > 0x7e) {
			snprintf(buf, size, "0x%02x%02x%02x%02x", t[0], t[1], t[2], t[3]);
			return;
		}
	while (n > 0 && t[n - 1] == ' ')
		n--;
	snprintf(buf, size, "%.*s", n, (const char *)t);
}

/* Reads the chunk at *off, which must end by end (what names the container), and moves *off
 * past it and its padding byte. */
static int next_chunk(const unsigned char *p, size_t end, size_t *off, const char *what,
		      struct webp_chunk *c, char *err, size_t es)
{
	size_t at = *off;

	if (end - at < 8)
		return tr_image_error(
			err, es,
			"WebP truncated: chunk header at offset %zu needs 8 bytes, %s ends at %zu",
			at, what, end);
	c->off = at;
	c->size = tr_le32(p + at + 4);
	c->data = p + at + 8;
	fourcc_name(p + at, c->name, sizeof(c->name));
	if (c->size > end - at - 8)
		return tr_image_error(
			err, es,
			"WebP truncated: chunk %s at offset %zu needs %llu bytes, %s ends at %zu",
			c->name, at, (unsigned long long)c->size + 8, what, end);
	at += 8 + (size_t)c->size;
	/* Odd sizes are padded to even; tolerate a missing pad byte at the very end. */
	if ((c->size & 1) && at < end)
		at++;
	*off = at;
	return 0;
}

static int check_vp8(const struct webp_chunk *c, uint32_t *width, uint32_t *height, char *err,
		     size_t es)
{
	const unsigned char *d = c->data;
	uint32_t tag, first_partition;

	if (c->size < 10)
		return tr_image_error(err, es,
				      "WebP VP8 chunk at offset %zu is too short (%u bytes)",
				      c->off, c->size);
	tag = tr_le24(d);
	first_partition = tag >> 5;
	if (tag & 1)
		return tr_image_error(err, es, "WebP VP8 frame at offset %zu is not a key frame",
				      c->off + 8);
	if (((tag >> 1) & 7) > 3)
		return tr_image_error(err, es,
				      "WebP VP8 frame at offset %zu has invalid version %u",
				      c->off + 8, (tag >> 1) & 7);
	if (!((tag >> 4) & 1))
		return tr_image_error(err, es, "WebP VP8 frame at offset %zu is not displayable",
				      c->off + 8);
	if (first_partition > c->size - 10)
		return tr_image_error(
			err, es, "WebP VP8 first partition size %u at offset %zu exceeds the chunk",
			first_partition, c->off + 8);
	if (d[3] != 0x9d || d[4] != 0x01 || d[5] != 0x2a)
		return tr_image_error(err, es, "WebP VP8 bad start code at offset %zu",
				      c->off + 11);
	*width = tr_le16(d + 6) & 0x3fff;
	*height = tr_le16(d + 8) & 0x3fff;
	if (*width == 0 || *height == 0)
		return tr_image_error(err, es, "WebP VP8 frame at offset %zu has zero size (%ux%u)",
				      c->off + 8, *width, *height);
	return 0;
}

static int check_vp8l(const struct webp_chunk *c, uint32_t *width, uint32_t *height, bool *alpha,
		      char *err, size_t es)
{
	const unsigned char *d = c->data;
	uint32_t bits;

	if (c->size < 5)
		return tr_image_error(err, es,
				      "WebP VP8L chunk at offset %zu is too short (%u bytes)",
				      c->off, c->size);
	if (d[0] != 0x2f)
		return tr_image_error(err, es,
				      "WebP VP8L bad signature 0x%02x at offset %zu, expected 0x2f",
				      d[0], c->off + 8);
	bits = tr_le32(d + 1);
	*width = (bits & 0x3fff) + 1;
	*height = ((bits >> 14) & 0x3fff) + 1;
	*alpha = (bits >> 28) & 1;
	if (bits >> 29)
		return tr_image_error(err, es, "WebP VP8L version %u at offset %zu, expected 0",
				      bits >> 29, c->off + 9);
	return 0;
}

/* Validates a VP8 or VP8L chunk; *lossless says which. */
static int check_image_chunk(const struct webp_chunk *c, uint32_t *width, uint32_t *height,
			     bool *lossless, bool *alpha, char *err, size_t es)
{
	*lossless = is_fourcc(c, "VP8L");
	*alpha = false;
	if (*lossless)
		return check_vp8l(c, width, height, alpha, err, es);
	return check_vp8(c, width, height, err, es);
}

/* The image data inside an ANMF frame: 16 bytes of frame header, then chunks. */
static int check_frame(const unsigned char *p, const struct webp_chunk *anmf, bool *lossless,
		       char *err, size_t es)
{
	size_t off, end = anmf->off + 8 + anmf->size;
	struct webp_chunk c;
	uint32_t width, height;
	bool alpha;

	if (anmf->size < 16)
		return tr_image_error(err, es,
				      "WebP ANMF chunk at offset %zu is too short (%u bytes)",
				      anmf->off, anmf->size);
	for (off = anmf->off + 8 + 16; off < end;) {
		if (next_chunk(p, end, &off, "ANMF frame", &c, err, es) < 0)
			return -1;
		if (is_fourcc(&c, "VP8 ") || is_fourcc(&c, "VP8L"))
			return check_image_chunk(&c, &width, &height, lossless, &alpha, err, es);
	}
	return tr_image_error(
		err, es, "WebP ANMF frame at offset %zu has no VP8 or VP8L image data", anmf->off);
}

/* The extended format: canvas from VP8X, then the chunks its flags announce. */
static int check_extended(const unsigned char *p, size_t end, size_t off,
			  const struct webp_chunk *vp8x, struct tr_image_info *info, bool *lossless,
			  char *err, size_t es)
{
	const unsigned char *d = vp8x->data;
	unsigned flags;
	bool has_anim = false, has_image = false;
	uint32_t frames = 0;
	struct webp_chunk c;

	if (vp8x->size < 10)
		return tr_image_error(
			err, es,
			"WebP VP8X chunk at offset %zu is too short (%u bytes, expected 10)",
			vp8x->off, vp8x->size);
	flags = d[0];
	info->width = tr_le24(d + 4) + 1;
	info->height = tr_le24(d + 7) + 1;
	if ((uint64_t)info->width * info->height > 0xffffffffu)
		return tr_image_error(err, es, "WebP VP8X canvas %ux%u at offset %zu is too large",
				      info->width, info->height, vp8x->off);
	while (off < end) {
		if (next_chunk(p, end, &off, "RIFF data", &c, err, es) < 0)
			return -1;
		if (is_fourcc(&c, "ANIM")) {
			if (c.size < 6)
				return tr_image_error(
					err, es,
					"WebP ANIM chunk at offset %zu is too short (%u bytes)",
					c.off, c.size);
			has_anim = true;
		} else if (is_fourcc(&c, "ANMF") && (flags & VP8X_ANIMATION)) {
			bool frame_lossless;

			if (check_frame(p, &c, &frame_lossless, err, es) < 0)
				return -1;
			if (frames++ == 0)
				*lossless = frame_lossless;
		} else if ((is_fourcc(&c, "VP8 ") || is_fourcc(&c, "VP8L")) && !has_image &&
			   !(flags & VP8X_ANIMATION)) {
			uint32_t width, height;
			bool alpha;

			if (check_image_chunk(&c, &width, &height, lossless, &alpha, err, es) < 0)
				return -1;
			has_image = true;
		}
	}
	if (flags & VP8X_ANIMATION) {
		if (!has_anim)
			return tr_image_error(
				err, es,
				"WebP VP8X at offset %zu announces animation but has no ANIM chunk",
				vp8x->off);
		if (frames == 0)
			return tr_image_error(
				err, es,
				"WebP VP8X at offset %zu announces animation but has no ANMF frame",
				vp8x->off);
	} else if (!has_image) {
		return tr_image_error(
			err, es,
			"WebP VP8X at offset %zu is not followed by VP8 or VP8L image data",
			vp8x->off);
	}
	info->frames = frames ? frames : 1;
	return 0;
}

int tr_webp_validate(const unsigned char *p, size_t len, struct tr_image_info *info, char *err,
		     size_t es)
{
	bool lossless = false, alpha = false, animated = false;
	struct webp_chunk first;
	uint32_t riff_size;
	size_t end, off = 12;

	if (len < 4 || memcmp(p, "RIFF", 4) != 0)
		return tr_image_error(err, es, "not a WebP file: missing RIFF header at offset 0");
	if (len < 12)
		return tr_image_error(
			err, es,
			"WebP truncated: RIFF header at offset 0 needs 12 bytes, file ends at %zu",
			len);
	if (memcmp(p + 8, "WEBP", 4) != 0)
		return tr_image_error(err, es,
				      "not a WebP file: RIFF type at offset 8 is not WEBP");
	riff_size = tr_le32(p + 4);
	if ((uint64_t)riff_size + 8 > len)
		return tr_image_error(
			err, es, "WebP RIFF size %u at offset 4 needs %llu bytes, file ends at %zu",
			riff_size, (unsigned long long)riff_size + 8, len);
	if (riff_size < 12)
		return tr_image_error(err, es, "WebP RIFF size %u at offset 4 is too small",
				      riff_size);
	end = (size_t)riff_size + 8;

	if (next_chunk(p, end, &off, "RIFF data", &first, err, es) < 0)
		return -1;
	info->frames = 1;
	if (is_fourcc(&first, "VP8 ") || is_fourcc(&first, "VP8L")) {
		if (check_image_chunk(&first, &info->width, &info->height, &lossless, &alpha, err,
				      es) < 0)
			return -1;
		/* Simple format: later chunks (EXIF, XMP) only need to fit in the RIFF data. */
		while (off < end) {
			struct webp_chunk c;

			if (next_chunk(p, end, &off, "RIFF data", &c, err, es) < 0)
				return -1;
		}
	} else if (is_fourcc(&first, "VP8X")) {
		if (check_extended(p, end, off, &first, info, &lossless, err, es) < 0)
			return -1;
		alpha = first.data[0] & VP8X_ALPHA;
		animated = first.data[0] & VP8X_ANIMATION;
	} else {
		return tr_image_error(
			err, es, "WebP first chunk at offset 12 is %s, expected VP8, VP8L or VP8X",
			first.name);
	}
	if (animated)
		snprintf(info->summary, sizeof(info->summary), "%s%s, animated, %u frames",
			 lossless ? "lossless" : "lossy", alpha ? " with alpha" : "", info->frames);
	else
		snprintf(info->summary, sizeof(info->summary), "%s%s",
			 lossless ? "lossless" : "lossy", alpha ? " with alpha" : "");
	return 0;
}

static const char *const webp_extensions[] = {"webp", NULL};

const struct tr_image_format tr_image_webp = {
	.name = "WebP",
	.mime_type = "image/webp",
	.extensions = webp_extensions,
	.signature = tr_webp_signature,
	.validate = tr_webp_validate,
};
