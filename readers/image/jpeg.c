/* SPDX-License-Identifier: MIT */
/* jpeg.c - the JPEG reader: marker segments, frame header, scans and EOI, and registration. */
#include <stdio.h>
#include <string.h>

#include "image.h"

bool tr_jpeg_signature(const unsigned char *head, size_t len)
{
	return len >= 3 && head[0] == 0xff && head[1] == 0xd8 && head[2] == 0xff;
}

/* SOF0-SOF15 are 0xC0-0xCF except DHT (C4), JPG (C8) and DAC (CC). */
static bool is_sof(unsigned m)
{
	return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc;
}

static const char *marker_name(unsigned m, char *buf, size_t size)
{
	static const char *const fixed[] = {
		[0xc4] = "DHT", [0xc8] = "JPG", [0xcc] = "DAC", [0xd8] = "SOI", [0xd9] = "EOI",
		[0xda] = "SOS", [0xdb] = "DQT", [0xdc] = "DNL", [0xdd] = "DRI", [0xde] = "DHP",
		[0xdf] = "EXP", [0xfe] = "COM", [0x01] = "TEM",
	};

	if (m < sizeof(fixed) / sizeof(fixed[0]) && fixed[m])
		snprintf(buf, size, "%s", fixed[m]);
	else if (is_sof(m))
		snprintf(buf, size, "SOF%u", m - 0xc0);
	else if (m >= 0xd0 && m <= 0xd7)
		snprintf(buf, size, "RST%u", m - 0xd0);
	else if (m >= 0xe0 && m <= 0xef)
		snprintf(buf, size, "APP%u", m - 0xe0);
	else if (m >= 0xf0 && m <= 0xfd)
		snprintf(buf, size, "JPG%u", m - 0xf0);
	else
		snprintf(buf, size, "0xFF%02X", m);
	return buf;
}

/* Frame header: s = the segment's payload (after the length field), n its size. */
static int check_sof(unsigned m, const unsigned char *s, size_t n, size_t off, char *err, size_t es)
{
	unsigned precision, components;
	uint32_t height, width;

	if (n < 6)
		return tr_image_error(err, es, "JPEG SOF%u at offset %zu is too short (length %zu)",
				      m - 0xc0, off, n + 2);
	precision = s[0];
	height = tr_be16(s + 1);
	width = tr_be16(s + 3);
	components = s[5];
	if (components < 1 || components > 4)
		return tr_image_error(err, es,
				      "JPEG SOF%u at offset %zu has invalid component count %u",
				      m - 0xc0, off, components);
	if (n != 6 + 3 * (size_t)components)
		return tr_image_error(
			err, es,
			"JPEG SOF%u at offset %zu has length %zu, expected %u for %u components",
			m - 0xc0, off, n + 2, 8 + 3 * components, components);
	if (width == 0 || height == 0)
		return tr_image_error(err, es, "JPEG SOF%u at offset %zu has zero size (%ux%u)",
				      m - 0xc0, off, width, height);
	if (precision < 2 || precision > 16)
		return tr_image_error(err, es,
				      "JPEG SOF%u at offset %zu has invalid sample precision %u",
				      m - 0xc0, off, precision);
	for (unsigned i = 0; i < components; i++) {
		unsigned h = s[6 + 3 * i + 1] >> 4, v = s[6 + 3 * i + 1] & 15;

		if (h < 1 || h > 4 || v < 1 || v > 4)
			return tr_image_error(err, es,
					      "JPEG SOF%u at offset %zu: component %u has invalid "
					      "sampling factors %ux%u",
					      m - 0xc0, off, i + 1, h, v);
	}
	return 0;
}

/* Entropy-coded data from *off: advances *off to the 0xFF of the next real marker, skipping
 * byte stuffing (FF 00), restart markers and fill bytes. */
static int skip_scan_data(const unsigned char *p, size_t len, size_t *off, char *err, size_t es)
{
	size_t start = *off, at = *off;

	for (;;) {
		const unsigned char *ff = at < len ? memchr(p + at, 0xff, len - at) : NULL;

		if (!ff || (size_t)(ff - p) + 1 >= len)
			return tr_image_error(err, es,
					      "missing EOI marker: scan data from offset %zu runs "
					      "to the end of the file at %zu",
					      start, len);
		at = (size_t)(ff - p);
		unsigned next = p[at + 1];

		if (next == 0x00 || (next >= 0xd0 && next <= 0xd7))
			at += 2;
		else if (next == 0xff)
			at += 1;
		else
			break;
	}
	*off = at;
	return 0;
}

static const char *components_name(unsigned n)
{
	switch (n) {
	case 1: return "grayscale";
	case 3: return "3 colour components";
	case 4: return "4 components (CMYK)";
	}
	return "2 components";
}

static const char *coding_name(unsigned sof)
{
	if (sof == 0xc0)
		return "baseline";
	switch (sof & 3) {
	case 2: return "progressive";
	case 3: return "lossless";
	}
	return "extended sequential";
}

int tr_jpeg_validate(const unsigned char *p, size_t len, struct tr_image_info *info, char *err,
		     size_t es)
{
	unsigned sof = 0, precision = 0, components = 0, scans = 0;
	char name[16];
	size_t off = 2;

	if (len < 2 || p[0] != 0xff || p[1] != 0xd8)
		return tr_image_error(err, es, "not a JPEG file: missing SOI marker at offset 0");
	for (;;) {
		if (off >= len)
			return tr_image_error(err, es,
					      "missing EOI marker (file ends at offset %zu)", len);
		if (p[off] != 0xff)
			return tr_image_error(
				err, es, "JPEG expected a marker at offset %zu, found byte 0x%02X",
				off, p[off]);
		while (off < len && p[off] == 0xff)
			off++;
		if (off >= len)
			return tr_image_error(err, es,
					      "missing EOI marker (file ends at offset %zu)", len);

		unsigned m = p[off];
		size_t moff = off - 1; /* the 0xFF right before the code; earlier ones are fill */

		off++;
		marker_name(m, name, sizeof(name));
		if (m == 0x00)
			return tr_image_error(err, es, "JPEG invalid marker 0xFF00 at offset %zu",
					      moff);
		if (m == 0xd9) {
			if (!sof)
				return tr_image_error(err, es,
						      "missing SOF marker: no frame header before "
						      "EOI at offset %zu",
						      moff);
			if (!scans)
				return tr_image_error(
					err, es,
					"missing SOS marker: no scan before EOI at offset %zu",
					moff);
			break;
		}
		if (m == 0xd8)
			return tr_image_error(err, es, "JPEG unexpected SOI marker at offset %zu",
					      moff);
		if (m == 0x01 || (m >= 0xd0 && m <= 0xd7))
			continue; /* TEM, RSTn: no length */
		if (len - off < 2)
			return tr_image_error(err, es,
					      "JPEG truncated: segment %s at offset %zu has no "
					      "length field, file ends at %zu",
					      name, moff, len);

		uint32_t seglen = tr_be16(p + off);

		if (seglen < 2)
			return tr_image_error(err, es,
					      "JPEG segment %s at offset %zu has invalid length %u",
					      name, moff, seglen);
		if (seglen > len - off)
			return tr_image_error(err, es,
					      "JPEG truncated: segment %s at offset %zu needs %u "
					      "bytes, file ends at %zu",
					      name, moff, seglen, len);

		const unsigned char *s = p + off + 2;
		size_t n = seglen - 2;

		off += seglen;
		if (is_sof(m)) {
			if (sof)
				return tr_image_error(err, es,
						      "JPEG second frame header %s at offset %zu",
						      name, moff);
			if (check_sof(m, s, n, moff, err, es) < 0)
				return -1;
			sof = m;
			precision = s[0];
			info->height = tr_be16(s + 1);
			info->width = tr_be16(s + 3);
			components = s[5];
		} else if (m == 0xda) {
			if (!sof)
				return tr_image_error(
					err, es,
					"JPEG SOS at offset %zu comes before any SOF frame header",
					moff);
			if (n < 1 || s[0] < 1 || s[0] > 4 || n != 4 + 2 * (size_t)s[0])
				return tr_image_error(
					err, es,
					"JPEG SOS at offset %zu has an invalid header (length %u)",
					moff, seglen);
			scans++;
			if (skip_scan_data(p, len, &off, err, es) < 0)
				return -1;
		}
	}

	info->frames = 1;
	if ((sof & 3) == 2 && scans > 1) /* progressive: the interesting number is the scans */
		snprintf(info->summary, sizeof(info->summary), "%u-bit, %s, progressive (%u scans)",
			 precision, components_name(components), scans);
	else
		snprintf(info->summary, sizeof(info->summary), "%u-bit, %s, %s", precision,
			 components_name(components), coding_name(sof));
	return 0;
}

static const char *const jpeg_extensions[] = {"jpg", "jpeg", "jpe", NULL};

const struct tr_image_format tr_image_jpeg = {
	.name = "JPEG",
	.mime_type = "image/jpeg",
	.extensions = jpeg_extensions,
	.signature = tr_jpeg_signature,
	.validate = tr_jpeg_validate,
};
