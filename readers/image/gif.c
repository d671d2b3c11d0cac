/* SPDX-License-Identifier: MIT */
/* gif.c - the GIF reader: header, colour tables and block structure to the trailer, frame count. */
#include <stdio.h>
#include <string.h>

#include "image.h"

bool tr_gif_signature(const unsigned char *head, size_t len)
{
	return len >= 6 && (memcmp(head, "GIF87a", 6) == 0 || memcmp(head, "GIF89a", 6) == 0);
}

/* Data sub-blocks from *off up to and including the 0 terminator; what names the block that
 * owns them and start its offset, for messages. */
static int skip_sub_blocks(const unsigned char *p, size_t len, size_t *off, const char *what,
			   size_t start, char *err, size_t es)
{
	size_t at = *off;

	for (;;) {
		if (at >= len)
			return tr_image_error(err, es,
					      "GIF truncated: %s at offset %zu has no block "
					      "terminator, file ends at %zu",
					      what, start, len);
		unsigned size = p[at];

		if (size == 0)
			break;
		if (size + 1 > len - at)
			return tr_image_error(err, es,
					      "GIF truncated: sub-block at offset %zu needs %u "
					      "bytes, file ends at %zu",
					      at, size + 1, len);
		at += size + 1;
	}
	*off = at + 1;
	return 0;
}

/* Size in bytes of the colour table a packed field announces (bit 7 set), or 0. */
static size_t colour_table_size(unsigned packed)
{
	return packed & 0x80 ? 3u << ((packed & 7) + 1) : 0;
}

static int check_image(const unsigned char *p, size_t len, size_t *off, uint32_t *width,
		       uint32_t *height, char *err, size_t es)
{
	size_t start = *off, at = *off;
	size_t table;
	unsigned min_code;

	if (len - at < 10)
		return tr_image_error(err, es,
				      "GIF truncated: image descriptor at offset %zu needs 10 "
				      "bytes, file ends at %zu",
				      start, len);
	*width = tr_le16(p + at + 5);
	*height = tr_le16(p + at + 7);
	table = colour_table_size(p[at + 9]);
	at += 10;
	if (table > len - at)
		return tr_image_error(err, es,
				      "GIF truncated: local colour table at offset %zu needs %zu "
				      "bytes, file ends at %zu",
				      at, table, len);
	at += table;
	if (at >= len)
		return tr_image_error(
			err, es,
			"GIF truncated: image at offset %zu has no image data, file ends at %zu",
			start, len);
	/* The format says 2..8; decoders accept 1..11, and so do we. */
	min_code = p[at];
	if (min_code < 1 || min_code > 11)
		return tr_image_error(
			err,
			es, "GIF image at offset %zu has invalid LZW minimum code size %u at offset %zu",
			start, min_code, at);
	at++;
	if (skip_sub_blocks(p, len, &at, "image data", start, err, es) < 0)
		return -1;
	*off = at;
	return 0;
}

int tr_gif_validate(const unsigned char *p, size_t len, struct tr_image_info *info, char *err,
		    size_t es)
{
	uint32_t frames = 0, first_width = 0, first_height = 0;
	bool trailer = false;
	size_t off, table, first_at = 0;

	if (!tr_gif_signature(p, len))
		return tr_image_error(err, es, "not a GIF file: bad signature at offset 0");
	if (len < 13)
		return tr_image_error(err, es,
				      "GIF truncated: logical screen descriptor at offset 6 needs "
				      "7 bytes, file ends at %zu",
				      len);
	info->width = tr_le16(p + 6);
	info->height = tr_le16(p + 8);
	table = colour_table_size(p[10]);
	off = 13;
	if (table > len - off)
		return tr_image_error(err, es,
				      "GIF truncated: global colour table at offset 13 needs %zu "
				      "bytes, file ends at %zu",
				      table, len);
	off += table;
	while (!trailer) {
		if (off >= len)
			return tr_image_error(err, es,
					      "missing GIF trailer (file ends at offset %zu)", len);
		size_t start = off;

		switch (p[off]) {
		case 0x2c: {
			uint32_t width = 0, height = 0;

			if (check_image(p, len, &off, &width, &height, err, es) < 0)
				return -1;
			if (frames++ == 0) {
				first_width = width;
				first_height = height;
				first_at = start;
			}
			break;
		}
		case 0x21:
			if (len - off < 2)
				return tr_image_error(err, es,
						      "GIF truncated: extension at offset %zu has "
						      "no label, file ends at %zu",
						      off, len);
			off += 2;
			if (skip_sub_blocks(p, len, &off, "extension", start, err, es) < 0)
				return -1;
			break;
		case 0x3b:
			if (frames == 0)
				return tr_image_error(
					err, es,
					"GIF has no image before the trailer at offset %zu", off);
			trailer = true;
			break;
		default:
			return tr_image_error(err, es, "GIF unknown block 0x%02X at offset %zu",
					      p[off], off);
		}
	}
	/* Decoders size a 0x0 logical screen from the first image. */
	if (info->width == 0 || info->height == 0) {
		info->width = first_width;
		info->height = first_height;
	}
	if (info->width == 0 || info->height == 0)
		return tr_image_error(err, es, "GIF image at offset %zu has zero size (%ux%u)",
				      first_at, info->width, info->height);
	info->frames = frames;
	if (frames > 1)
		snprintf(info->summary, sizeof(info->summary), "%.6s, animated, %u frames",
			 (const char *)p, frames);
	else
		snprintf(info->summary, sizeof(info->summary), "%.6s, 1 frame", (const char *)p);
	return 0;
}

static const char *const gif_extensions[] = {"gif", NULL};

const struct tr_image_format tr_image_gif = {
	.name = "GIF",
	.mime_type = "image/gif",
	.extensions = gif_extensions,
	.signature = tr_gif_signature,
	.validate = tr_gif_validate,
};
