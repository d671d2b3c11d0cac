/* SPDX-License-Identifier: MIT */
/* png.c - the PNG reader: signature, structural validation (chunks, CRCs, IHDR), registration. */
#include <stdio.h>
#include <string.h>

#include "image.h"
#include "util.h"

static const unsigned char png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

#define PNG_MAX_DIM 0x7fffffffu

bool tr_png_signature(const unsigned char *head, size_t len)
{
	return len >= sizeof(png_magic) && memcmp(head, png_magic, sizeof(png_magic)) == 0;
}

static bool is_letter(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/* The chunk type as text ("IDAT"), or in hex when it is not four letters. */
static const char *chunk_name(const unsigned char *type, char *buf, size_t size)
{
	if (is_letter(type[0]) && is_letter(type[1]) && is_letter(type[2]) && is_letter(type[3]))
		snprintf(buf, size, "%.4s", (const char *)type);
	else
		snprintf(buf, size, "0x%02x%02x%02x%02x", type[0], type[1], type[2], type[3]);
	return buf;
}

static const char *colour_name(unsigned colour_type)
{
	switch (colour_type) {
	case 0: return "grayscale";
	case 2: return "RGB";
	case 3: return "palette";
	case 4: return "grayscale+alpha";
	case 6: return "RGBA";
	}
	return NULL;
}

static bool legal_depth(unsigned colour_type, unsigned depth)
{
	switch (colour_type) {
	case 0: return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
	case 3: return depth == 1 || depth == 2 || depth == 4 || depth == 8;
	case 2:
	case 4:
	case 6: return depth == 8 || depth == 16;
	}
	return false;
}

/* IHDR fields at data[16..29); off is the chunk's offset (8). */
static int check_ihdr(const unsigned char *p, size_t off, uint32_t length, char *err, size_t es)
{
	const unsigned char *d = p + off + 8;
	uint32_t width, height;

	/* The length first: the fields exist only when it is 13 (the caller checked the chunk's
	 * length + 12 bytes are there, not that it is 13). */
	if (length != 13)
		return tr_image_error(err, es,
				      "PNG IHDR chunk at offset %zu has length %u, expected 13",
				      off, length);
	width = tr_be32(d);
	height = tr_be32(d + 4);
	if (width == 0 || width > PNG_MAX_DIM)
		return tr_image_error(
			err, es, "PNG IHDR width %u at offset %zu is out of range (1..2147483647)",
			width, off + 8);
	if (height == 0 || height > PNG_MAX_DIM)
		return tr_image_error(
			err, es, "PNG IHDR height %u at offset %zu is out of range (1..2147483647)",
			height, off + 12);
	if (!colour_name(d[9]))
		return tr_image_error(err, es, "PNG IHDR colour type %u at offset %zu is invalid",
				      d[9], off + 17);
	if (!legal_depth(d[9], d[8]))
		return tr_image_error(
			err, es,
			"PNG IHDR bit depth %u at offset %zu is invalid for colour type %u", d[8],
			off + 16, d[9]);
	if (d[10] != 0)
		return tr_image_error(err, es,
				      "PNG IHDR compression method %u at offset %zu is invalid",
				      d[10], off + 18);
	if (d[11] != 0)
		return tr_image_error(err, es, "PNG IHDR filter method %u at offset %zu is invalid",
				      d[11], off + 19);
	if (d[12] > 1)
		return tr_image_error(err, es,
				      "PNG IHDR interlace method %u at offset %zu is invalid",
				      d[12], off + 20);
	return 0;
}

int tr_png_validate(const unsigned char *p, size_t len, struct tr_image_info *info, char *err,
		    size_t es)
{
	size_t sig_len = len < sizeof(png_magic) ? len : sizeof(png_magic);
	bool seen_plte = false, seen_idat = false, idat_closed = false;
	unsigned colour_type = 0, depth = 0, interlace = 0;
	uint32_t frames = 0;
	char name[16];
	size_t off = 8;

	if (len == 0 || memcmp(p, png_magic, sig_len) != 0)
		return tr_image_error(err, es, "not a PNG file: bad signature at offset 0");
	if (len < sizeof(png_magic))
		return tr_image_error(
			err, es,
			"PNG truncated: signature at offset 0 needs 8 bytes, file ends at %zu",
			len);
	for (unsigned index = 0;; index++) {
		if (off == len) {
			if (index == 0)
				return tr_image_error(
					err, es, "missing IHDR chunk (file ends at offset %zu)",
					len);
			if (!seen_idat)
				return tr_image_error(
					err, es, "missing IDAT chunk (file ends at offset %zu)",
					len);
			return tr_image_error(err, es,
					      "missing IEND chunk (file ends at offset %zu)", len);
		}
		if (len - off < 8)
			return tr_image_error(err, es,
					      "PNG truncated: chunk header at offset %zu needs 8 "
					      "bytes, file ends at %zu",
					      off, len);
		const unsigned char *type = p + off + 4;
		uint32_t length = tr_be32(p + off);

		chunk_name(type, name, sizeof(name));
		if (length > PNG_MAX_DIM)
			return tr_image_error(err, es,
					      "PNG chunk %s at offset %zu has invalid length %u",
					      name, off, length);
		if ((uint64_t)length + 12 > len - off)
			return tr_image_error(err, es,
					      "PNG truncated: chunk %s at offset %zu needs %llu "
					      "bytes, file ends at %zu",
					      name, off, (unsigned long long)length + 12, len);
		if (tr_crc32(0, type, (size_t)length + 4) != tr_be32(type + 4 + length))
			return tr_image_error(err, es, "PNG chunk %s CRC mismatch at offset %zu",
					      name, off);
		if (!is_letter(type[0]) || !is_letter(type[1]) || !is_letter(type[2]) ||
		    !is_letter(type[3]))
			return tr_image_error(
				err, es, "PNG chunk at offset %zu has invalid type %s", off, name);

		bool is_idat = memcmp(type, "IDAT", 4) == 0;

		if (index == 0 && memcmp(type, "IHDR", 4) != 0)
			return tr_image_error(err, es,
					      "PNG first chunk at offset %zu is %s, expected IHDR",
					      off, name);
		if (seen_idat && !is_idat)
			idat_closed = true;
		if (memcmp(type, "IHDR", 4) == 0) {
			if (index != 0)
				return tr_image_error(
					err, es, "PNG duplicate IHDR chunk at offset %zu", off);
			if (check_ihdr(p, off, length, err, es) < 0)
				return -1;
			info->width = tr_be32(p + off + 8);
			info->height = tr_be32(p + off + 12);
			depth = p[off + 16];
			colour_type = p[off + 17];
			interlace = p[off + 20];
		} else if (memcmp(type, "PLTE", 4) == 0) {
			if (seen_idat)
				return tr_image_error(
					err, es, "PNG PLTE chunk at offset %zu comes after IDAT",
					off);
			seen_plte = true;
		} else if (is_idat) {
			if (colour_type == 3 && !seen_plte)
				return tr_image_error(err, es,
						      "PNG missing PLTE chunk before IDAT at "
						      "offset %zu (colour type 3)",
						      off);
			if (idat_closed)
				return tr_image_error(err, es,
						      "PNG IDAT chunk at offset %zu is not "
						      "consecutive with the earlier IDAT chunks",
						      off);
			seen_idat = true;
		} else if (memcmp(type, "acTL", 4) == 0) {
			if (length >= 4)
				frames = tr_be32(p + off + 8);
		} else if (memcmp(type, "IEND", 4) == 0) {
			if (!seen_idat)
				return tr_image_error(
					err, es, "missing IDAT chunk before IEND at offset %zu",
					off);
			break;
		}
		off += (size_t)length + 12;
	}

	info->frames = frames > 1 ? frames : 1;
	if (frames > 1)
		snprintf(info->summary, sizeof(info->summary),
			 "%u-bit %s, %s, animated (%u frames)", depth, colour_name(colour_type),
			 interlace ? "interlaced" : "non-interlaced", frames);
	else
		snprintf(info->summary, sizeof(info->summary), "%u-bit %s, %s", depth,
			 colour_name(colour_type), interlace ? "interlaced" : "non-interlaced");
	return 0;
}

static const char *const png_extensions[] = {"png", NULL};

const struct tr_image_format tr_image_png = {
	.name = "PNG",
	.mime_type = "image/png",
	.extensions = png_extensions,
	.signature = tr_png_signature,
	.validate = tr_png_validate,
};
