/* SPDX-License-Identifier: MIT */
/* test_image.c - the image validators on handmade buffers; the image read path on temp files. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"
#include "image.h"
#include "tr_read.h"

struct buf {
	unsigned char d[8192];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void put_u8(struct buf *b, unsigned v)
{
	b->d[b->n++] = (unsigned char)v;
}

static void put_be16(struct buf *b, unsigned v)
{
	put_u8(b, v >> 8);
	put_u8(b, v);
}

static void put_be32(struct buf *b, uint32_t v)
{
	put_be16(b, v >> 16);
	put_be16(b, v & 0xffff);
}

static void put_le16(struct buf *b, unsigned v)
{
	put_u8(b, v);
	put_u8(b, v >> 8);
}

static void put_le24(struct buf *b, uint32_t v)
{
	put_le16(b, v & 0xffff);
	put_u8(b, v >> 16);
}

static void put_le32(struct buf *b, uint32_t v)
{
	put_le16(b, v & 0xffff);
	put_le16(b, v >> 16);
}

static void set_le32(struct buf *b, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b->d[at + i] = (unsigned char)(v >> (8 * i));
}

/* The validator's error, or "OK" when it accepts the buffer. */
static const char *check(tr_image_validate_fn fn, const struct buf *b, struct tr_image_info *info)
{
	static char err[256];
	struct tr_image_info scratch;

	strcpy(err, "(not written)");
	if (fn(b->d, b->n, info ? info : &scratch, err, sizeof(err)) == 0)
		return "OK";
	return err;
}

/* ---- PNG ---- */

/* Bitwise CRC-32: an oracle independent of png.c's table. */
static uint32_t crc32_bitwise(const unsigned char *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
	}
	return ~crc;
}

static void png_chunk(struct buf *b, const char *type, const void *data, size_t n)
{
	size_t start;

	put_be32(b, (uint32_t)n);
	start = b->n;
	put(b, type, 4);
	if (n)
		put(b, data, n);
	put_be32(b, crc32_bitwise(b->d + start, n + 4));
}

static void png_ihdr(struct buf *b, uint32_t w, uint32_t h, unsigned depth, unsigned colour,
		     unsigned compression, unsigned filter, unsigned interlace)
{
	struct buf d = {.n = 0};

	put_be32(&d, w);
	put_be32(&d, h);
	put_u8(&d, depth);
	put_u8(&d, colour);
	put_u8(&d, compression);
	put_u8(&d, filter);
	put_u8(&d, interlace);
	png_chunk(b, "IHDR", d.d, d.n);
}

static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
static const unsigned char idat_data[10] = {0x78, 0x9c, 0x63, 0x60, 0, 0, 0, 2, 0, 1};

/* sig (0) IHDR (8) IDAT (33) IEND (55), 67 bytes; colour type 3 adds a PLTE (33) before IDAT. */
static void png_minimal(struct buf *b, unsigned depth, unsigned colour, unsigned interlace)
{
	b->n = 0;
	put(b, png_sig, 8);
	png_ihdr(b, 3, 2, depth, colour, 0, 0, interlace);
	if (colour == 3)
		png_chunk(b, "PLTE", "\0\0\0", 3);
	png_chunk(b, "IDAT", idat_data, sizeof(idat_data));
	png_chunk(b, "IEND", NULL, 0);
}

static void test_png_valid(void)
{
	struct tr_image_info info;
	struct buf b;

	png_minimal(&b, 8, 6, 0);
	EXPECT_INT(b.n, 67);
	EXPECT_STR(check(tr_png_validate, &b, &info), "OK");
	EXPECT_INT(info.width, 3);
	EXPECT_INT(info.height, 2);
	EXPECT_INT(info.frames, 1);
	EXPECT_STR(info.summary, "8-bit RGBA, non-interlaced");
	EXPECT(tr_png_signature(b.d, b.n));
	EXPECT(!tr_png_signature(b.d, 7));

	png_minimal(&b, 16, 0, 1);
	EXPECT_STR(check(tr_png_validate, &b, &info), "OK");
	EXPECT_STR(info.summary, "16-bit grayscale, interlaced");

	/* Bytes after IEND are ignored. */
	png_minimal(&b, 8, 2, 0);
	put(&b, "trailing garbage", 16);
	EXPECT_STR(check(tr_png_validate, &b, &info), "OK");
	EXPECT_STR(info.summary, "8-bit RGB, non-interlaced");

	/* Palette image with PLTE; ancillary chunks and split IDATs. */
	b.n = 0;
	put(&b, png_sig, 8);
	png_ihdr(&b, 5, 7, 4, 3, 0, 0, 0);
	png_chunk(&b, "PLTE", "\0\0\0\xff\xff\xff", 6);
	png_chunk(&b, "tEXt", "Comment\0hi", 10);
	png_chunk(&b, "IDAT", idat_data, 4);
	png_chunk(&b, "IDAT", idat_data + 4, 6);
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, &info), "OK");
	EXPECT_STR(info.summary, "4-bit palette, non-interlaced");
	EXPECT_INT(info.width, 5);
	EXPECT_INT(info.height, 7);

	/* APNG: acTL announces the frames. */
	b.n = 0;
	put(&b, png_sig, 8);
	png_ihdr(&b, 4, 4, 8, 4, 0, 0, 0);
	png_chunk(&b, "acTL", "\0\0\0\x03\0\0\0\0", 8);
	png_chunk(&b, "IDAT", idat_data, sizeof(idat_data));
	png_chunk(&b, "fdAT", "\0\0\0\x01xx", 6);
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, &info), "OK");
	EXPECT_INT(info.frames, 3);
	EXPECT_STR(info.summary, "8-bit grayscale+alpha, non-interlaced, animated (3 frames)");
}

static void test_png_depths(void)
{
	/* The legal table of the PNG specification, 11.2.2. */
	static const char *const legal[7] = {
		[0] = ",1,2,4,8,16,", [2] = ",8,16,", [3] = ",1,2,4,8,",
		[4] = ",8,16,",       [6] = ",8,16,",
	};
	struct buf b;

	for (unsigned colour = 0; colour < 7; colour++) {
		for (unsigned depth = 0; depth <= 32; depth++) {
			char needle[8], expected[128];
			const char *got;

			snprintf(needle, sizeof(needle), ",%u,", depth);
			png_minimal(&b, depth, colour, 0);
			got = check(tr_png_validate, &b, NULL);
			if (!legal[colour])
				snprintf(expected, sizeof(expected),
					 "PNG IHDR colour type %u at offset 25 is invalid", colour);
			else if (strstr(legal[colour], needle))
				snprintf(expected, sizeof(expected), "OK");
			else
				snprintf(expected, sizeof(expected),
					 "PNG IHDR bit depth %u at offset 24 is invalid for colour "
					 "type %u",
					 depth, colour);
			EXPECT_STR(got, expected);
		}
	}
}

static void test_png_corrupt(void)
{
	struct buf b, cut;

	/* Signature. */
	png_minimal(&b, 8, 6, 0);
	b.d[1] = 'Q';
	EXPECT_STR(check(tr_png_validate, &b, NULL), "not a PNG file: bad signature at offset 0");
	b.n = 0;
	EXPECT_STR(check(tr_png_validate, &b, NULL), "not a PNG file: bad signature at offset 0");
	put(&b, "hello world, this is text\n", 26);
	EXPECT_STR(check(tr_png_validate, &b, NULL), "not a PNG file: bad signature at offset 0");

	/* Truncation at every offset fails, with the right message at the boundaries. */
	png_minimal(&b, 8, 6, 0);
	for (size_t n = 0; n < b.n; n++) {
		cut = b;
		cut.n = n;
		EXPECT(strcmp(check(tr_png_validate, &cut, NULL), "OK") != 0);
	}
	cut = b;
	cut.n = 4;
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "PNG truncated: signature at offset 0 needs 8 bytes, file ends at 4");
	cut.n = 8;
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "missing IHDR chunk (file ends at offset 8)");
	cut.n = 12;
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "PNG truncated: chunk header at offset 8 needs 8 bytes, file ends at 12");
	cut.n = 20;
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "PNG truncated: chunk IHDR at offset 8 needs 25 bytes, file ends at 20");
	cut.n = 33;
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "missing IDAT chunk (file ends at offset 33)");
	cut.n = 50;
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "PNG truncated: chunk IDAT at offset 33 needs 22 bytes, file ends at 50");
	cut.n = 55;
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "missing IEND chunk (file ends at offset 55)");
	cut.n = 66;
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "PNG truncated: chunk IEND at offset 55 needs 12 bytes, file ends at 66");

	/* One flipped byte in each chunk's type, data or CRC. */
	static const struct {
		size_t at;
		const char *error;
	} flips[] = {
		{13, "PNG chunk IIDR CRC mismatch at offset 8"},  /* type: H -> I */
		{20, "PNG chunk IHDR CRC mismatch at offset 8"},  /* height */
		{30, "PNG chunk IHDR CRC mismatch at offset 8"},  /* CRC */
		{41, "PNG chunk IDAT CRC mismatch at offset 33"}, /* data */
		{53, "PNG chunk IDAT CRC mismatch at offset 33"}, /* CRC */
		{60, "PNG chunk IDND CRC mismatch at offset 55"}, /* type: E -> D */
		{66, "PNG chunk IEND CRC mismatch at offset 55"}, /* CRC */
	};
	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		cut = b;
		cut.d[flips[i].at] ^= 0x01;
		EXPECT_STR(check(tr_png_validate, &cut, NULL), flips[i].error);
	}
	/* A flipped length runs past the end or reads a wrong CRC. */
	cut = b;
	cut.d[35] ^= 0x01; /* IDAT length 10 -> 266 */
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "PNG truncated: chunk IDAT at offset 33 needs 278 bytes, file ends at 67");
	cut = b;
	cut.d[36] ^= 0x08; /* IDAT length 10 -> 2 */
	EXPECT_STR(check(tr_png_validate, &cut, NULL), "PNG chunk IDAT CRC mismatch at offset 33");
	cut = b;
	cut.d[33] = 0x80; /* IDAT length >= 2^31 */
	EXPECT_STR(check(tr_png_validate, &cut, NULL),
		   "PNG chunk IDAT at offset 33 has invalid length 2147483658");

	/* IHDR fields with correct CRCs. */
	static const struct {
		uint32_t w, h;
		unsigned depth, colour, compression, filter, interlace;
		const char *error;
	} ihdrs[] = {
		{0, 1, 8, 0, 0, 0, 0,
		 "PNG IHDR width 0 at offset 16 is out of range (1..2147483647)"},
		{1, 0, 8, 0, 0, 0, 0,
		 "PNG IHDR height 0 at offset 20 is out of range (1..2147483647)"},
		{0x80000000u, 1, 8, 0, 0, 0, 0,
		 "PNG IHDR width 2147483648 at offset 16 is out of range (1..2147483647)"},
		{1, 0x80000000u, 8, 0, 0, 0, 0,
		 "PNG IHDR height 2147483648 at offset 20 is out of range (1..2147483647)"},
		{1, 1, 8, 5, 0, 0, 0, "PNG IHDR colour type 5 at offset 25 is invalid"},
		{1, 1, 4, 2, 0, 0, 0,
		 "PNG IHDR bit depth 4 at offset 24 is invalid for colour type 2"},
		{1, 1, 8, 2, 1, 0, 0, "PNG IHDR compression method 1 at offset 26 is invalid"},
		{1, 1, 8, 2, 0, 1, 0, "PNG IHDR filter method 1 at offset 27 is invalid"},
		{1, 1, 8, 2, 0, 0, 2, "PNG IHDR interlace method 2 at offset 28 is invalid"},
		{0x7fffffffu, 0x7fffffffu, 8, 2, 0, 0, 0, "OK"},
	};
	for (size_t i = 0; i < sizeof(ihdrs) / sizeof(ihdrs[0]); i++) {
		b.n = 0;
		put(&b, png_sig, 8);
		png_ihdr(&b, ihdrs[i].w, ihdrs[i].h, ihdrs[i].depth, ihdrs[i].colour,
			 ihdrs[i].compression, ihdrs[i].filter, ihdrs[i].interlace);
		png_chunk(&b, "IDAT", idat_data, sizeof(idat_data));
		png_chunk(&b, "IEND", NULL, 0);
		EXPECT_STR(check(tr_png_validate, &b, NULL), ihdrs[i].error);
	}

	/* IHDR of the wrong length. */
	b.n = 0;
	put(&b, png_sig, 8);
	png_chunk(&b, "IHDR", "\0\0\0\1\0\0\0\1\x08\0\0\0", 12);
	png_chunk(&b, "IDAT", idat_data, sizeof(idat_data));
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, NULL),
		   "PNG IHDR chunk at offset 8 has length 12, expected 13");

	/* IHDR not first. */
	b.n = 0;
	put(&b, png_sig, 8);
	png_chunk(&b, "IDAT", idat_data, sizeof(idat_data));
	png_ihdr(&b, 1, 1, 8, 0, 0, 0, 0);
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, NULL),
		   "PNG first chunk at offset 8 is IDAT, expected IHDR");

	/* Duplicate IHDR. */
	b.n = 0;
	put(&b, png_sig, 8);
	png_ihdr(&b, 1, 1, 8, 0, 0, 0, 0);
	png_ihdr(&b, 1, 1, 8, 0, 0, 0, 0);
	png_chunk(&b, "IDAT", idat_data, sizeof(idat_data));
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, NULL), "PNG duplicate IHDR chunk at offset 33");

	/* Missing IDAT, missing IEND, IDAT not consecutive. */
	b.n = 0;
	put(&b, png_sig, 8);
	png_ihdr(&b, 1, 1, 8, 0, 0, 0, 0);
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, NULL), "missing IDAT chunk before IEND at offset 33");

	b.n = 0;
	put(&b, png_sig, 8);
	png_ihdr(&b, 1, 1, 8, 0, 0, 0, 0);
	png_chunk(&b, "IDAT", idat_data, sizeof(idat_data));
	png_chunk(&b, "tEXt", "a\0b", 3);
	EXPECT_STR(check(tr_png_validate, &b, NULL), "missing IEND chunk (file ends at offset 70)");

	b.n = 0;
	put(&b, png_sig, 8);
	png_ihdr(&b, 1, 1, 8, 0, 0, 0, 0);
	png_chunk(&b, "IDAT", idat_data, 5);     /* 33 */
	png_chunk(&b, "tEXt", "a\0b", 3);        /* 50 */
	png_chunk(&b, "IDAT", idat_data + 5, 5); /* 65 */
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, NULL),
		   "PNG IDAT chunk at offset 65 is not consecutive with the earlier IDAT chunks");

	/* Colour type 3 without PLTE; PLTE after IDAT. */
	b.n = 0;
	put(&b, png_sig, 8);
	png_ihdr(&b, 1, 1, 8, 3, 0, 0, 0);
	png_chunk(&b, "IDAT", idat_data, sizeof(idat_data));
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, NULL),
		   "PNG missing PLTE chunk before IDAT at offset 33 (colour type 3)");

	b.n = 0;
	put(&b, png_sig, 8);
	png_ihdr(&b, 1, 1, 8, 2, 0, 0, 0);
	png_chunk(&b, "IDAT", idat_data, sizeof(idat_data));
	png_chunk(&b, "PLTE", "\0\0\0", 3);
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, NULL),
		   "PNG PLTE chunk at offset 55 comes after IDAT");

	/* A chunk type that is not four letters, with a correct CRC. */
	b.n = 0;
	put(&b, png_sig, 8);
	png_ihdr(&b, 1, 1, 8, 0, 0, 0, 0);
	png_chunk(&b, "ID\x01T", idat_data, sizeof(idat_data));
	png_chunk(&b, "IEND", NULL, 0);
	EXPECT_STR(check(tr_png_validate, &b, NULL),
		   "PNG chunk at offset 33 has invalid type 0x49440154");
}

/* ---- JPEG ---- */

static void jpeg_segment(struct buf *b, unsigned marker, const void *payload, size_t n)
{
	put_u8(b, 0xff);
	put_u8(b, marker);
	put_be16(b, (unsigned)n + 2);
	if (n)
		put(b, payload, n);
}

static void jpeg_sof(struct buf *b, unsigned marker, unsigned precision, unsigned h, unsigned w,
		     unsigned components)
{
	struct buf p = {.n = 0};

	put_u8(&p, precision);
	put_be16(&p, h);
	put_be16(&p, w);
	put_u8(&p, components);
	for (unsigned i = 0; i < components; i++) {
		put_u8(&p, i + 1);
		put_u8(&p, i == 0 ? 0x22 : 0x11);
		put_u8(&p, i == 0 ? 0 : 1);
	}
	jpeg_segment(b, marker, p.d, p.n);
}

static void jpeg_sos(struct buf *b)
{
	static const unsigned char sos[10] = {3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0};
	/* Entropy-coded data with a stuffed 0xFF00 and a restart marker. */
	static const unsigned char scan[9] = {0x12, 0x34, 0xff, 0x00, 0x56, 0xff, 0xd0, 0x78, 0x9a};

	jpeg_segment(b, 0xda, sos, sizeof(sos));
	put(b, scan, sizeof(scan));
}

static const unsigned char jfif[14] = {'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0};

/* SOI (0) APP0 (2) DQT (20) SOF (89) DHT (108) SOS (130) scan (144) EOI (153), 155 bytes. */
static void jpeg_minimal(struct buf *b, unsigned sof)
{
	unsigned char dqt[65] = {0}, dht[18] = {0};

	dht[2] = 1; /* one code of length 2 */
	b->n = 0;
	put_u8(b, 0xff);
	put_u8(b, 0xd8);
	jpeg_segment(b, 0xe0, jfif, sizeof(jfif));
	jpeg_segment(b, 0xdb, dqt, sizeof(dqt));
	jpeg_sof(b, sof, 8, 480, 640, 3);
	jpeg_segment(b, 0xc4, dht, sizeof(dht));
	jpeg_sos(b);
	put_u8(b, 0xff);
	put_u8(b, 0xd9);
}

static void test_jpeg_valid(void)
{
	struct tr_image_info info;
	struct buf b;

	jpeg_minimal(&b, 0xc0);
	EXPECT_INT(b.n, 155);
	EXPECT_STR(check(tr_jpeg_validate, &b, &info), "OK");
	EXPECT_INT(info.width, 640);
	EXPECT_INT(info.height, 480);
	EXPECT_STR(info.summary, "8-bit, 3 colour components, baseline");
	EXPECT(tr_jpeg_signature(b.d, b.n));

	/* Progressive: several scans, fill bytes before markers, trailing bytes after EOI. */
	jpeg_minimal(&b, 0xc2);
	b.n -= 2;
	put(&b, "\xff\xff\xff", 3);
	put_u8(&b, 0xc4);
	put_be16(&b, 2 + 18);
	memset(b.d + b.n, 0, 18);
	b.n += 18;
	jpeg_sos(&b);
	put(&b, "\xff\xd9tail", 6);
	EXPECT_STR(check(tr_jpeg_validate, &b, &info), "OK");
	EXPECT_STR(info.summary, "8-bit, 3 colour components, progressive (2 scans)");

	/* Grayscale, 12-bit extended sequential, with TEM and a COM segment. */
	b.n = 0;
	put(&b, "\xff\xd8\xff\x01", 4);
	jpeg_segment(&b, 0xfe, "comment", 7);
	jpeg_sof(&b, 0xc1, 12, 1, 1, 1);
	jpeg_segment(&b, 0xda, "\x01\x01\x00\x00\x3f\x00", 6);
	put(&b, "\x00\xff\xd9", 3);
	EXPECT_STR(check(tr_jpeg_validate, &b, &info), "OK");
	EXPECT_STR(info.summary, "12-bit, grayscale, extended sequential");
	EXPECT_INT(info.width, 1);
}

static void test_jpeg_corrupt(void)
{
	struct buf b, cut;
	unsigned char dqt[65] = {0};

	jpeg_minimal(&b, 0xc0);
	cut = b;
	cut.d[1] = 0xd9;
	EXPECT_STR(check(tr_jpeg_validate, &cut, NULL),
		   "not a JPEG file: missing SOI marker at offset 0");
	cut.n = 1;
	EXPECT_STR(check(tr_jpeg_validate, &cut, NULL),
		   "not a JPEG file: missing SOI marker at offset 0");

	/* Truncation at every offset fails. */
	for (size_t n = 0; n < b.n; n++) {
		cut = b;
		cut.n = n;
		EXPECT(strcmp(check(tr_jpeg_validate, &cut, NULL), "OK") != 0);
	}
	/* The example of the brief: a JFIF file cut inside its DQT. */
	cut = b;
	cut.n = 50;
	EXPECT_STR(check(tr_jpeg_validate, &cut, NULL),
		   "JPEG truncated: segment DQT at offset 20 needs 67 bytes, file ends at 50");
	cut.n = 22;
	EXPECT_STR(check(tr_jpeg_validate, &cut, NULL),
		   "JPEG truncated: segment DQT at offset 20 has no length field, file ends at 22");
	cut.n = 20;
	EXPECT_STR(check(tr_jpeg_validate, &cut, NULL),
		   "missing EOI marker (file ends at offset 20)");
	cut.n = 153;
	EXPECT_STR(
		check(tr_jpeg_validate, &cut, NULL),
		"missing EOI marker: scan data from offset 144 runs to the end of the file at 153");
	cut.n = 154;
	EXPECT_STR(
		check(tr_jpeg_validate, &cut, NULL),
		"missing EOI marker: scan data from offset 144 runs to the end of the file at 154");

	/* A non-marker byte where a marker must be. */
	cut = b;
	cut.d[20] = 0x12;
	EXPECT_STR(check(tr_jpeg_validate, &cut, NULL),
		   "JPEG expected a marker at offset 20, found byte 0x12");
	/* A segment length below 2, and one past the end. */
	cut = b;
	cut.d[22] = 0;
	cut.d[23] = 1;
	EXPECT_STR(check(tr_jpeg_validate, &cut, NULL),
		   "JPEG segment DQT at offset 20 has invalid length 1");
	cut = b;
	cut.d[22] = 0x10;
	EXPECT_STR(check(tr_jpeg_validate, &cut, NULL),
		   "JPEG truncated: segment DQT at offset 20 needs 4163 bytes, file ends at 155");
	/* 0xFF00 outside scan data. */
	cut = b;
	cut.d[21] = 0x00;
	EXPECT_STR(check(tr_jpeg_validate, &cut, NULL), "JPEG invalid marker 0xFF00 at offset 20");

	/* No SOF at all: DHT is not a frame header. */
	b.n = 0;
	put(&b, "\xff\xd8", 2);
	jpeg_segment(&b, 0xdb, dqt, sizeof(dqt));
	put(&b, "\xff\xd9", 2);
	EXPECT_STR(check(tr_jpeg_validate, &b, NULL),
		   "missing SOF marker: no frame header before EOI at offset 71");
	b.n = 0;
	put(&b, "\xff\xd8", 2);
	jpeg_segment(&b, 0xc4, dqt, 18);
	jpeg_sos(&b);
	put(&b, "\xff\xd9", 2);
	EXPECT_STR(check(tr_jpeg_validate, &b, NULL),
		   "JPEG SOS at offset 24 comes before any SOF frame header");

	/* SOF without SOS. */
	b.n = 0;
	put(&b, "\xff\xd8", 2);
	jpeg_sof(&b, 0xc0, 8, 10, 10, 3);
	put(&b, "\xff\xd9", 2);
	EXPECT_STR(check(tr_jpeg_validate, &b, NULL),
		   "missing SOS marker: no scan before EOI at offset 21");

	/* Bad frame headers. */
	static const struct {
		unsigned precision, h, w, components;
		const char *error;
	} sofs[] = {
		{8, 0, 640, 3, "JPEG SOF0 at offset 2 has zero size (640x0)"},
		{8, 480, 0, 3, "JPEG SOF0 at offset 2 has zero size (0x480)"},
		{8, 480, 640, 0, "JPEG SOF0 at offset 2 has invalid component count 0"},
		{8, 480, 640, 5, "JPEG SOF0 at offset 2 has invalid component count 5"},
		{0, 480, 640, 3, "JPEG SOF0 at offset 2 has invalid sample precision 0"},
		{8, 65535, 65535, 4, "OK"},
	};
	for (size_t i = 0; i < sizeof(sofs) / sizeof(sofs[0]); i++) {
		b.n = 0;
		put(&b, "\xff\xd8", 2);
		jpeg_sof(&b, 0xc0, sofs[i].precision, sofs[i].h, sofs[i].w, sofs[i].components);
		jpeg_sos(&b);
		put(&b, "\xff\xd9", 2);
		EXPECT_STR(check(tr_jpeg_validate, &b, NULL), sofs[i].error);
	}
	b.n = 0;
	put(&b, "\xff\xd8", 2);
	jpeg_segment(&b, 0xc0, "\x08\x00\x01\x00\x01\x03\x01\x11\x00", 9);
	jpeg_sos(&b);
	put(&b, "\xff\xd9", 2);
	EXPECT_STR(check(tr_jpeg_validate, &b, NULL),
		   "JPEG SOF0 at offset 2 has length 11, expected 17 for 3 components");
	b.n = 0;
	put(&b, "\xff\xd8", 2);
	jpeg_segment(&b, 0xc0, "\x08\x00\x01\x00\x01\x01\x01\x50\x00", 9);
	jpeg_sos(&b);
	put(&b, "\xff\xd9", 2);
	EXPECT_STR(check(tr_jpeg_validate, &b, NULL),
		   "JPEG SOF0 at offset 2: component 1 has invalid sampling factors 5x0");
	/* Two frame headers. */
	b.n = 0;
	put(&b, "\xff\xd8", 2);
	jpeg_sof(&b, 0xc0, 8, 1, 1, 1);
	jpeg_sof(&b, 0xc2, 8, 1, 1, 1);
	EXPECT_STR(check(tr_jpeg_validate, &b, NULL), "JPEG second frame header SOF2 at offset 15");
	/* A bad SOS header. */
	b.n = 0;
	put(&b, "\xff\xd8", 2);
	jpeg_sof(&b, 0xc0, 8, 1, 1, 1);
	jpeg_segment(&b, 0xda, "\x02\x01\x00\x00\x3f\x00", 6);
	put(&b, "\x00\xff\xd9", 3);
	EXPECT_STR(check(tr_jpeg_validate, &b, NULL),
		   "JPEG SOS at offset 15 has an invalid header (length 8)");
	/* A second SOI. */
	b.n = 0;
	put(&b, "\xff\xd8\xff\xd8", 4);
	EXPECT_STR(check(tr_jpeg_validate, &b, NULL), "JPEG unexpected SOI marker at offset 2");
}

/* ---- GIF ---- */

static void gif_header(struct buf *b, const char *version, unsigned w, unsigned h)
{
	b->n = 0;
	put(b, version, 6);
	put_le16(b, w);
	put_le16(b, h);
	put_u8(b, 0x80); /* global colour table of 2 entries */
	put_u8(b, 0);
	put_u8(b, 0);
	put(b, "\0\0\0\xff\xff\xff", 6);
}

static void gif_frame(struct buf *b, unsigned w, unsigned h)
{
	put(b, "\x21\xf9\x04\x00\x0a\x00\x00\x00", 8); /* graphic control extension */
	put_u8(b, 0x2c);
	put_le16(b, 0);
	put_le16(b, 0);
	put_le16(b, w);
	put_le16(b, h);
	put_u8(b, 0);
	put(b, "\x02\x02\x4c\x01\x00", 5); /* LZW size 2, one sub-block, terminator */
}

/* header (0) LSD (6) GCT (13) GCE (19) image (27) data (37) trailer (42), 43 bytes. */
static void gif_minimal(struct buf *b)
{
	gif_header(b, "GIF89a", 20, 10);
	gif_frame(b, 20, 10);
	put_u8(b, 0x3b);
}

static void test_gif(void)
{
	struct tr_image_info info;
	struct buf b, cut;

	gif_minimal(&b);
	EXPECT_INT(b.n, 43);
	EXPECT_STR(check(tr_gif_validate, &b, &info), "OK");
	EXPECT_INT(info.width, 20);
	EXPECT_INT(info.height, 10);
	EXPECT_INT(info.frames, 1);
	EXPECT_STR(info.summary, "GIF89a, 1 frame");
	EXPECT(tr_gif_signature(b.d, b.n));

	/* Animated, with a NETSCAPE loop extension and a local colour table. */
	gif_header(&b, "GIF89a", 8, 8);
	put(&b, "\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00", 19);
	gif_frame(&b, 8, 8);
	gif_frame(&b, 4, 4);
	put(&b, "\x2c\0\0\0\0\x01\0\x01\0\x80\0\0\0\1\1\1\x02\x01\x00\x00", 20);
	put_u8(&b, 0x3b);
	EXPECT_STR(check(tr_gif_validate, &b, &info), "OK");
	EXPECT_INT(info.frames, 3);
	EXPECT_STR(info.summary, "GIF89a, animated, 3 frames");

	/* GIF87a, no global table, logical screen 0x0 sized from the first image. */
	b.n = 0;
	put(&b, "GIF87a\0\0\0\0\0\0\0", 13);
	put(&b, "\x2c\0\0\0\0\x07\0\x05\0\0\x08\x01\x00\x00\x3b", 15);
	EXPECT_STR(check(tr_gif_validate, &b, &info), "OK");
	EXPECT_STR(info.summary, "GIF87a, 1 frame");
	EXPECT_INT(info.width, 7);
	EXPECT_INT(info.height, 5);

	gif_minimal(&b);
	cut = b;
	memcpy(cut.d, "GIF88a", 6);
	EXPECT_STR(check(tr_gif_validate, &cut, NULL), "not a GIF file: bad signature at offset 0");
	for (size_t n = 0; n < b.n; n++) {
		cut = b;
		cut.n = n;
		EXPECT(strcmp(check(tr_gif_validate, &cut, NULL), "OK") != 0);
	}
	cut = b;
	cut.n = 10;
	EXPECT_STR(check(tr_gif_validate, &cut, NULL),
		   "GIF truncated: logical screen descriptor at offset 6 needs 7 bytes, file ends "
		   "at 10");
	cut.n = 15;
	EXPECT_STR(
		check(tr_gif_validate, &cut, NULL),
		"GIF truncated: global colour table at offset 13 needs 6 bytes, file ends at 15");
	cut.n = 22;
	EXPECT_STR(check(tr_gif_validate, &cut, NULL),
		   "GIF truncated: sub-block at offset 21 needs 5 bytes, file ends at 22");
	cut.n = 26;
	EXPECT_STR(
		check(tr_gif_validate, &cut, NULL),
		"GIF truncated: extension at offset 19 has no block terminator, file ends at 26");
	cut.n = 30;
	EXPECT_STR(check(tr_gif_validate, &cut, NULL),
		   "GIF truncated: image descriptor at offset 27 needs 10 bytes, file ends at 30");
	cut.n = 37;
	EXPECT_STR(check(tr_gif_validate, &cut, NULL),
		   "GIF truncated: image at offset 27 has no image data, file ends at 37");
	cut.n = 41;
	EXPECT_STR(
		check(tr_gif_validate, &cut, NULL),
		"GIF truncated: image data at offset 27 has no block terminator, file ends at 41");
	cut.n = 42;
	EXPECT_STR(check(tr_gif_validate, &cut, NULL),
		   "missing GIF trailer (file ends at offset 42)");

	/* LZW minimum code size out of 1..11. */
	cut = b;
	cut.d[37] = 0;
	EXPECT_STR(check(tr_gif_validate, &cut, NULL),
		   "GIF image at offset 27 has invalid LZW minimum code size 0 at offset 37");
	cut.d[37] = 12;
	EXPECT_STR(check(tr_gif_validate, &cut, NULL),
		   "GIF image at offset 27 has invalid LZW minimum code size 12 at offset 37");
	cut.d[37] = 11;
	EXPECT_STR(check(tr_gif_validate, &cut, NULL), "OK");
	/* A local colour table past the end. */
	cut = b;
	cut.d[36] = 0x87;
	EXPECT_STR(
		check(tr_gif_validate, &cut, NULL),
		"GIF truncated: local colour table at offset 37 needs 768 bytes, file ends at 43");
	/* Unknown block; no image before the trailer. */
	cut = b;
	cut.d[27] = 0x00;
	EXPECT_STR(check(tr_gif_validate, &cut, NULL), "GIF unknown block 0x00 at offset 27");
	gif_header(&b, "GIF89a", 1, 1);
	put_u8(&b, 0x3b);
	EXPECT_STR(check(tr_gif_validate, &b, NULL),
		   "GIF has no image before the trailer at offset 19");
}

/* ---- WebP ---- */

static void webp_start(struct buf *b)
{
	b->n = 0;
	put(b, "RIFF\0\0\0\0WEBP", 12);
}

static void webp_finish(struct buf *b)
{
	set_le32(b, 4, (uint32_t)b->n - 8);
}

static void webp_chunk(struct buf *b, const char *fourcc, const void *data, size_t n)
{
	put(b, fourcc, 4);
	put_le32(b, (uint32_t)n);
	put(b, data, n);
	if (n & 1)
		put_u8(b, 0);
}

/* A VP8 key frame of w x h: 18 bytes, first partition of 8 bytes. */
static void webp_vp8(struct buf *b, unsigned w, unsigned h)
{
	struct buf d = {.n = 0};

	put_le24(&d, 0x10 | 8 << 5); /* key frame, version 0, shown, partition 8 */
	put(&d, "\x9d\x01\x2a", 3);
	put_le16(&d, w);
	put_le16(&d, h);
	put(&d, "\0\0\0\0\0\0\0\0", 8);
	webp_chunk(b, "VP8 ", d.d, d.n);
}

static void webp_vp8l(struct buf *b, unsigned w, unsigned h, bool alpha, size_t extra)
{
	struct buf d = {.n = 0};

	put_u8(&d, 0x2f);
	put_le32(&d, (w - 1) | (uint32_t)(h - 1) << 14 | (uint32_t)alpha << 28);
	for (size_t i = 0; i < extra; i++)
		put_u8(&d, 0);
	webp_chunk(b, "VP8L", d.d, d.n);
}

static void webp_vp8x(struct buf *b, unsigned flags, unsigned w, unsigned h)
{
	struct buf d = {.n = 0};

	put_u8(&d, flags);
	put(&d, "\0\0\0", 3);
	put_le24(&d, w - 1);
	put_le24(&d, h - 1);
	webp_chunk(b, "VP8X", d.d, d.n);
}

static void webp_anmf(struct buf *b, unsigned w, unsigned h)
{
	struct buf d = {.n = 0};

	put_le24(&d, 0);
	put_le24(&d, 0);
	put_le24(&d, w - 1);
	put_le24(&d, h - 1);
	put_le24(&d, 100);
	put_u8(&d, 0);
	webp_vp8l(&d, w, h, true, 2);
	webp_chunk(b, "ANMF", d.d, d.n);
}

static void test_webp_valid(void)
{
	struct tr_image_info info;
	struct buf b;

	webp_start(&b);
	webp_vp8(&b, 300, 200);
	webp_finish(&b);
	EXPECT_INT(b.n, 38);
	EXPECT_STR(check(tr_webp_validate, &b, &info), "OK");
	EXPECT_INT(info.width, 300);
	EXPECT_INT(info.height, 200);
	EXPECT_STR(info.summary, "lossy");
	EXPECT(tr_webp_signature(b.d, b.n));
	/* The 14-bit size ignores the 2 scale bits; bytes after the RIFF data are ignored. */
	b.d[27] |= 0x40;
	put(&b, "junk", 4);
	EXPECT_STR(check(tr_webp_validate, &b, &info), "OK");
	EXPECT_INT(info.width, 300);

	webp_start(&b);
	webp_vp8l(&b, 16384, 1, false, 0); /* odd size 5, padded */
	webp_chunk(&b, "EXIF", "abc", 3);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, &info), "OK");
	EXPECT_INT(info.width, 16384);
	EXPECT_INT(info.height, 1);
	EXPECT_STR(info.summary, "lossless");

	webp_start(&b);
	webp_vp8l(&b, 2, 3, true, 1);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, &info), "OK");
	EXPECT_STR(info.summary, "lossless with alpha");

	/* Extended still image with alpha: canvas from VP8X. */
	webp_start(&b);
	webp_vp8x(&b, 0x10, 300, 200);
	webp_chunk(&b, "ALPH", "\0\0\0", 3);
	webp_vp8(&b, 300, 200);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, &info), "OK");
	EXPECT_STR(info.summary, "lossy with alpha");
	EXPECT_INT(info.width, 300);
	EXPECT_INT(info.height, 200);

	/* Animated. */
	webp_start(&b);
	webp_vp8x(&b, 0x12, 64, 48);
	webp_chunk(&b, "ANIM", "\0\0\0\0\0\0", 6);
	webp_anmf(&b, 64, 48);
	webp_anmf(&b, 32, 16);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, &info), "OK");
	EXPECT_STR(info.summary, "lossless with alpha, animated, 2 frames");
	EXPECT_INT(info.frames, 2);
	EXPECT_INT(info.width, 64);
	EXPECT_INT(info.height, 48);
}

static void test_webp_corrupt(void)
{
	struct buf b, cut;

	webp_start(&b);
	webp_vp8(&b, 300, 200);
	webp_finish(&b);

	cut = b;
	cut.d[0] = 'r';
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "not a WebP file: missing RIFF header at offset 0");
	cut = b;
	cut.d[11] = 'Q';
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "not a WebP file: RIFF type at offset 8 is not WEBP");
	for (size_t n = 0; n < b.n; n++) {
		cut = b;
		cut.n = n;
		EXPECT(strcmp(check(tr_webp_validate, &cut, NULL), "OK") != 0);
	}
	cut = b;
	cut.n = 8;
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP truncated: RIFF header at offset 0 needs 12 bytes, file ends at 8");
	cut.n = 30;
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP RIFF size 30 at offset 4 needs 38 bytes, file ends at 30");

	/* RIFF size: too large, too small, shorter than the chunk. */
	cut = b;
	set_le32(&cut, 4, 1000);
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP RIFF size 1000 at offset 4 needs 1008 bytes, file ends at 38");
	set_le32(&cut, 4, 4);
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP RIFF size 4 at offset 4 is too small");
	set_le32(&cut, 4, 20);
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP truncated: chunk VP8 at offset 12 needs 26 bytes, RIFF data ends at 28");
	set_le32(&cut, 4, 14);
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP truncated: chunk VP8 at offset 12 needs 26 bytes, RIFF data ends at 22");
	cut = b;
	put(&cut, "JUNK", 4);
	webp_finish(&cut);
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP truncated: chunk header at offset 38 needs 8 bytes, RIFF data ends at 42");

	/* VP8 frame header. */
	cut = b;
	cut.d[20] |= 1;
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP VP8 frame at offset 20 is not a key frame");
	cut = b;
	cut.d[24] = 0x02;
	EXPECT_STR(check(tr_webp_validate, &cut, NULL), "WebP VP8 bad start code at offset 23");
	cut = b;
	cut.d[26] = 0;
	cut.d[27] = 0;
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP VP8 frame at offset 20 has zero size (0x200)");
	cut = b;
	cut.d[21] = 0x05; /* first partition 40 bytes, in an 18-byte chunk */
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP VP8 first partition size 40 at offset 20 exceeds the chunk");
	cut = b;
	cut.d[20] = 0x00; /* key frame, not shown */
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP VP8 frame at offset 20 is not displayable");

	/* Unknown first chunk. */
	cut = b;
	memcpy(cut.d + 12, "JUNK", 4);
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP first chunk at offset 12 is JUNK, expected VP8, VP8L or VP8X");

	/* VP8L header. */
	webp_start(&b);
	webp_vp8l(&b, 2, 3, false, 1);
	webp_finish(&b);
	cut = b;
	cut.d[20] = 0x2e;
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP VP8L bad signature 0x2e at offset 20, expected 0x2f");
	cut = b;
	cut.d[24] |= 0x20;
	EXPECT_STR(check(tr_webp_validate, &cut, NULL),
		   "WebP VP8L version 1 at offset 21, expected 0");

	/* VP8X promises. */
	webp_start(&b);
	webp_vp8x(&b, 0x02, 64, 48);
	webp_anmf(&b, 64, 48);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, NULL),
		   "WebP VP8X at offset 12 announces animation but has no ANIM chunk");
	webp_start(&b);
	webp_vp8x(&b, 0x02, 64, 48);
	webp_chunk(&b, "ANIM", "\0\0\0\0\0\0", 6);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, NULL),
		   "WebP VP8X at offset 12 announces animation but has no ANMF frame");
	webp_start(&b);
	webp_vp8x(&b, 0x10, 64, 48);
	webp_chunk(&b, "ALPH", "\0", 1);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, NULL),
		   "WebP VP8X at offset 12 is not followed by VP8 or VP8L image data");
	webp_start(&b);
	put(&b, "VP8X\x06\0\0\0\0\0\0\0\0\0", 14);
	webp_vp8(&b, 1, 1);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, NULL),
		   "WebP VP8X chunk at offset 12 is too short (6 bytes, expected 10)");
	webp_start(&b);
	webp_vp8x(&b, 0, 16777216, 16777216);
	webp_vp8(&b, 1, 1);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, NULL),
		   "WebP VP8X canvas 16777216x16777216 at offset 12 is too large");
	/* A chunk inside the RIFF data that runs past it. */
	webp_start(&b);
	webp_vp8x(&b, 0, 1, 1);
	webp_vp8(&b, 1, 1);
	put(&b, "EXIF\x40\0\0\0", 8);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, NULL),
		   "WebP truncated: chunk EXIF at offset 56 needs 72 bytes, RIFF data ends at 64");
	/* An animation frame without image data. */
	webp_start(&b);
	webp_vp8x(&b, 0x02, 1, 1);
	webp_chunk(&b, "ANIM", "\0\0\0\0\0\0", 6);
	webp_chunk(&b, "ANMF", "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	webp_finish(&b);
	EXPECT_STR(check(tr_webp_validate, &b, NULL),
		   "WebP ANMF frame at offset 44 has no VP8 or VP8L image data");
}

/* ---- the read path, on temp files ---- */

static char tmpdir[64];
static char written[16][128]; /* files to remove at the end */
static size_t n_written;

static void remember(const char *path)
{
	for (size_t i = 0; i < n_written; i++)
		if (strcmp(written[i], path) == 0)
			return;
	if (n_written < sizeof(written) / sizeof(written[0]))
		snprintf(written[n_written++], sizeof(written[0]), "%s", path);
}

static const char *write_file(const char *name, const void *data, size_t n)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	remember(path);
	f = fopen(path, "wb");
	if (f) {
		if (n)
			fwrite(data, 1, n, f);
		fclose(f);
	}
	return path;
}

static void read_file(const char *name, const void *data, size_t n, const struct tr_options *opts,
		      const struct tr_selector *sel, struct tr_result *res)
{
	const char *path = write_file(name, data, n);

	tr_result_init(res, path);
	EXPECT_INT(tr_read_path(AT_FDCWD, path, sel, opts, res), 0);
}

static void test_read(void)
{
	struct tr_options opts;
	struct tr_result res;
	struct buf b;

	tr_options_init(&opts);
	png_minimal(&b, 8, 6, 0);
	read_file("a.png", b.d, b.n, &opts, NULL, &res);
	EXPECT(res.success);
	EXPECT_INT(res.type, TR_TYPE_IMAGE);
	EXPECT_STR(res.mime_type, "image/png");
	EXPECT_STR(res.short_result, "Read PNG image 3x2 (67 bytes)");
	EXPECT_STR(res.content.data, "PNG image, 3x2 pixels, 8-bit RGBA, non-interlaced, 67 bytes. "
				     "The image is attached.");
	EXPECT_INT(res.n_images, 1);
	if (res.n_images == 1) {
		EXPECT_INT(res.images[0].data->len, b.n);
		EXPECT(memcmp(res.images[0].data->data, b.d, b.n) == 0);
		EXPECT_STR(res.images[0].media_type, "image/png");
		EXPECT_INT(res.images[0].width, 3);
	}
	EXPECT(res.meta.has_dimensions);
	EXPECT_INT(res.meta.width, 3);
	EXPECT_INT(res.meta.height, 2);
	EXPECT(res.meta.has_sha256);
	tr_result_destroy(&res);

	/* The limit: not read at all, exact sentence, in the limit's unit (bytes under 1 KiB). */
	opts.max_image_size = 66;
	read_file("a.png", b.d, b.n, &opts, NULL, &res);
	EXPECT(!res.success);
	EXPECT_INT(res.error, TR_E_TOO_LARGE);
	EXPECT_STR(res.error_text, "Image file exceeds 66 bytes limit (actual: 67 bytes)");
	EXPECT_INT(res.n_images, 0);
	tr_result_destroy(&res);
	tr_options_init(&opts);

	/* A selector beyond the image. */
	struct tr_selector sel = {.present = true, .start = 2, .end = 2};

	read_file("a.png", b.d, b.n, &opts, &sel, &res);
	EXPECT_INT(res.error, TR_E_OUT_OF_RANGE);
	EXPECT_STR(res.error_text,
		   "Part 2 is past the end of the image (an image is read whole: 1 part)");
	tr_result_destroy(&res);

	/* Empty, and text under .png. */
	read_file("empty.png", "", 0, &opts, NULL, &res);
	EXPECT_INT(res.type, TR_TYPE_IMAGE);
	EXPECT_INT(res.error, TR_E_CORRUPT);
	EXPECT_STR(res.error_text, "Failed to process image file: empty file (0 bytes)");
	tr_result_destroy(&res);
	read_file("text.png", "just some text\n", 15, &opts, NULL, &res);
	EXPECT_INT(res.type, TR_TYPE_IMAGE);
	EXPECT_INT(res.error, TR_E_CORRUPT);
	EXPECT(res.mime_type == NULL);
	EXPECT_STR(res.error_text,
		   "Failed to process image file: not a PNG file: bad signature at offset 0");
	tr_result_destroy(&res);

	/* A JPEG named .png is read as a JPEG. */
	jpeg_minimal(&b, 0xc0);
	read_file("photo.png", b.d, b.n, &opts, NULL, &res);
	EXPECT(res.success);
	EXPECT_STR(res.mime_type, "image/jpeg");
	EXPECT_STR(res.short_result, "Read JPEG image 640x480 (155 bytes)");
	tr_result_destroy(&res);

	/* Corrupt GIF without a name's help. */
	gif_minimal(&b);
	read_file("noext", b.d, b.n - 1, &opts, NULL, &res);
	EXPECT_INT(res.error, TR_E_CORRUPT);
	EXPECT_STR(res.mime_type, "image/gif");
	EXPECT_STR(res.error_text,
		   "Failed to process image file: missing GIF trailer (file ends at offset 42)");
	tr_result_destroy(&res);

	/* An ISO-BMFF file that is not an image (MP4) is not HEIC; text named .tiff is corrupt. */
	read_file("x.bin",
		  "\0\0\0\x18"
		  "ftypisom\0\0\0\0isomavc1",
		  24, &opts, NULL, &res);
#if defined(TR_HAVE_MEDIA)
	EXPECT(res.type == TR_TYPE_VIDEO); /* the media reader's; FFmpeg finds no moov */
#else
	EXPECT(res.error != TR_E_UNSUPPORTED && res.error != TR_E_CORRUPT);
#endif
	EXPECT(res.type != TR_TYPE_IMAGE);
	tr_result_destroy(&res);
	read_file("notes.TIFF", "hello\n", 6, &opts, NULL, &res);
	EXPECT_INT(res.type, TR_TYPE_IMAGE);
	EXPECT_INT(res.error, TR_E_CORRUPT);
	EXPECT_STR(res.error_text,
		   "Failed to process image file: not a TIFF file: bad signature at offset 0");
	tr_result_destroy(&res);
}

/* ---- decodable images built by hand, for the conversions and the fit (libvips) ---- */

/* The colour of pixel (x, y) in every image below. */
static void pixel(uint32_t x, uint32_t y, unsigned char rgb[3])
{
	rgb[0] = (unsigned char)(40 * x);
	rgb[1] = (unsigned char)(60 * y);
	rgb[2] = (unsigned char)(255 - 20 * (x + y));
}

static uint32_t adler32(const unsigned char *p, size_t n)
{
	uint32_t a = 1, b = 0;

	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

/* A w x h 8-bit RGB PNG that really decodes: rows with filter 0 in one stored deflate block. */
static void png_rgb(struct buf *b, uint32_t w, uint32_t h)
{
	struct buf raw = {.n = 0}, z = {.n = 0};
	unsigned char rgb[3];

	for (uint32_t y = 0; y < h; y++) {
		put_u8(&raw, 0);
		for (uint32_t x = 0; x < w; x++) {
			pixel(x, y, rgb);
			put(&raw, rgb, 3);
		}
	}
	put_u8(&z, 0x78);
	put_u8(&z, 0x01);
	put_u8(&z, 0x01); /* final stored block */
	put_le16(&z, (unsigned)raw.n);
	put_le16(&z, (unsigned)(~raw.n & 0xffff));
	put(&z, raw.d, raw.n);
	put_be32(&z, adler32(raw.d, raw.n));
	b->n = 0;
	put(b, png_sig, 8);
	png_ihdr(b, w, h, 8, 2, 0, 0, 0);
	png_chunk(b, "IDAT", z.d, z.n);
	png_chunk(b, "IEND", NULL, 0);
}

/* A w x h 24-bit BMP (BITMAPINFOHEADER, bottom-up rows padded to 4 bytes). */
static void bmp_rgb(struct buf *b, uint32_t w, uint32_t h)
{
	uint32_t row = (3 * w + 3) & ~3u;
	unsigned char rgb[3];

	b->n = 0;
	put(b, "BM", 2);
	put_le32(b, 54 + row * h);
	put_le32(b, 0);
	put_le32(b, 54);
	put_le32(b, 40);
	put_le32(b, w);
	put_le32(b, h);
	put_le16(b, 1);
	put_le16(b, 24);
	put_le32(b, 0);
	put_le32(b, row * h);
	put_le32(b, 2835);
	put_le32(b, 2835);
	put_le32(b, 0);
	put_le32(b, 0);
	for (uint32_t y = h; y-- > 0;) {
		size_t start = b->n;

		for (uint32_t x = 0; x < w; x++) {
			pixel(x, y, rgb);
			put_u8(b, rgb[2]);
			put_u8(b, rgb[1]);
			put_u8(b, rgb[0]);
		}
		while (b->n - start < row)
			put_u8(b, 0);
	}
}

static void put_u16_order(struct buf *b, unsigned v, bool big)
{
	if (big)
		put_be16(b, v);
	else
		put_le16(b, v);
}

static void put_u32_order(struct buf *b, uint32_t v, bool big)
{
	if (big)
		put_be32(b, v);
	else
		put_le32(b, v);
}

/* A w x h baseline TIFF: uncompressed 8-bit RGB in one strip, either byte order. */
static void tiff_rgb(struct buf *b, uint32_t w, uint32_t h, bool big)
{
	/* tag, type (3 SHORT, 4 LONG), value; BitsPerSample points at three SHORTs. */
	const uint32_t n_entries = 10, ifd = 8, ifd_size = 2 + 12 * n_entries + 4;
	const uint32_t bits_at = ifd + ifd_size, pixels_at = bits_at + 6;
	const uint32_t entries[10][3] = {
		{256, 4, w},         {257, 4, h},         {258, 3, bits_at}, {259, 3, 1},
		{262, 3, 2},         {273, 4, pixels_at}, {277, 3, 3},       {278, 4, h},
		{279, 4, 3 * w * h}, {284, 3, 1},
	};
	unsigned char rgb[3];

	b->n = 0;
	put(b, big ? "MM" : "II", 2);
	put_u16_order(b, 42, big);
	put_u32_order(b, ifd, big);
	put_u16_order(b, n_entries, big);
	for (uint32_t i = 0; i < n_entries; i++) {
		uint32_t tag = entries[i][0], type = entries[i][1], value = entries[i][2];
		bool bits = tag == 258;

		put_u16_order(b, tag, big);
		put_u16_order(b, type, big);
		put_u32_order(b, bits ? 3 : 1, big);
		if (type == 3 && !bits) {
			put_u16_order(b, value, big); /* a SHORT sits left-justified in the field */
			put_u16_order(b, 0, big);
		} else {
			put_u32_order(b, value, big);
		}
	}
	put_u32_order(b, 0, big);
	for (int i = 0; i < 3; i++)
		put_u16_order(b, 8, big);
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			pixel(x, y, rgb);
			put(b, rgb, 3);
		}
}

/* An icon directory holding one PNG image. */
static void ico_with_png(struct buf *b, const struct buf *png, uint32_t w, uint32_t h)
{
	b->n = 0;
	put_le16(b, 0);
	put_le16(b, 1);
	put_le16(b, 1);
	put_u8(b, w & 0xff);
	put_u8(b, h & 0xff);
	put_u8(b, 0);
	put_u8(b, 0);
	put_le16(b, 1);
	put_le16(b, 32);
	put_le32(b, (uint32_t)png->n);
	put_le32(b, 22);
	put(b, png->d, png->n);
}

/* Width and height from the IHDR of an attached PNG (0x0 when it is not a PNG). */
static void attached_png_size(const struct tr_result *res, uint32_t *w, uint32_t *h)
{
	const unsigned char *d = res->n_images ? res->images[0].data->data : NULL;

	*w = *h = 0;
	if (d && res->images[0].data->len >= 24 && memcmp(d, png_sig, 8) == 0 &&
	    memcmp(d + 12, "IHDR", 4) == 0) {
		*w = tr_be32(d + 16);
		*h = tr_be32(d + 20);
	}
}

/* Whether this core was built with libvips: a BMP converts, or says there is no libvips. */
static bool core_has_vips(void)
{
	struct tr_options opts;
	struct tr_result res;
	struct buf b;
	bool have;

	tr_options_init(&opts);
	bmp_rgb(&b, 2, 2);
	read_file("probe.bmp", b.d, b.n, &opts, NULL, &res);
	have = !(res.error == TR_E_UNSUPPORTED && res.error_text &&
		 strstr(res.error_text, "no libvips"));
	tr_result_destroy(&res);
	return have;
}

static void test_raster_without_vips(void)
{
	struct tr_options opts;
	struct tr_result res;
	struct buf b;

	tr_options_init(&opts);
	bmp_rgb(&b, 5, 3);
	read_file("a.bmp", b.d, b.n, &opts, NULL, &res);
	EXPECT_INT(res.error, TR_E_UNSUPPORTED);
	EXPECT_STR(res.error_text,
		   "Unsupported image format: BMP (this build has no libvips to convert it)");
	tr_result_destroy(&res);
}

static void test_raster(void)
{
	struct tr_options opts;
	struct tr_result res;
	struct buf b, png;
	uint32_t w, h;
	char expected[160];

	tr_options_init(&opts);

	/* Decodable BMP, TIFF (both byte orders) and ICO: converted to PNG at their own size. */
	static const struct {
		const char *name, *format, *mime;
		int kind; /* 0 BMP, 1 TIFF little-endian, 2 TIFF big-endian, 3 ICO */
	} good[] = {
		{"a.bmp", "BMP", "image/bmp", 0},
		{"bmp_without_extension", "BMP", "image/bmp", 0},
		{"a.tif", "TIFF", "image/tiff", 1},
		{"b.tiff", "TIFF", "image/tiff", 2},
		{"tiff_named.png", "TIFF", "image/tiff", 1},
		{"a.ico", "ICO", "image/vnd.microsoft.icon", 3},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char size_text[32];

		switch (good[i].kind) {
		case 0: bmp_rgb(&b, 5, 3); break;
		case 1: tiff_rgb(&b, 5, 3, false); break;
		case 2: tiff_rgb(&b, 5, 3, true); break;
		default: png_rgb(&png, 5, 3); ico_with_png(&b, &png, 5, 3);
		}
		read_file(good[i].name, b.d, b.n, &opts, NULL, &res);
		EXPECT(res.success);
		EXPECT_INT(res.type, TR_TYPE_IMAGE);
		EXPECT_STR(res.mime_type, good[i].mime);
		EXPECT(res.meta.has_dimensions && res.meta.width == 5 && res.meta.height == 3);
		EXPECT(!res.meta.has_resized);
		EXPECT_INT(res.n_images, 1);
		attached_png_size(&res, &w, &h);
		EXPECT(w == 5 && h == 3);
		if (res.n_images == 1) {
			EXPECT_STR(res.images[0].media_type, "image/png");
			EXPECT(res.images[0].width == 5 && res.images[0].height == 3);
		}
		tr_format_size(b.n, size_text, sizeof(size_text));
		snprintf(expected, sizeof(expected), "Read %s image 5x3 (%s), converted to PNG",
			 good[i].format, size_text);
		EXPECT_STR(res.short_result, expected);
		snprintf(expected, sizeof(expected),
			 "%s image, 5x3 pixels, %s. Converted to PNG for viewing. The image is "
			 "attached.",
			 good[i].format, size_text);
		EXPECT_STR(res.content.data, expected);
		tr_result_destroy(&res);
	}

	/* Headers alone do not decode: corrupt, with libvips's reason; the type from the bytes. */
	static const struct {
		const char *name;
		const char *bytes;
		size_t n;
		const char *mime;
	} headers[] = {
		{"x.bin", "BM\x46\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0\1\0\0\0\1\0\0\0", 26,
		 "image/bmp"},
		{"x.bin", "II*\0\x08\0\0\0", 8, "image/tiff"},
		{"x.bin", "MM\0*\0\0\0\x08", 8, "image/tiff"},
		{"x.bin", "\0\0\1\0\1\0\x10\x10", 8, "image/vnd.microsoft.icon"},
		{"x.bin",
		 "\0\0\0\x18"
		 "ftypheic\0\0\0\0mif1heic",
		 24, "image/heic"},
		{"x.bin",
		 "\0\0\0\x1c"
		 "ftypmif1\0\0\0\0mif1avifmiaf",
		 28, "image/avif"},
		{"x.bin",
		 "\0\0\0\x18"
		 "ftypmif1\0\0\0\0mif1miaf",
		 24, "image/heic"},
		{"x.png", "II*\0\x08\0\0\0", 8, "image/tiff"},
	};
	static const char prefix[] = "Failed to process image file: libvips cannot decode it: ";
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		read_file(headers[i].name, headers[i].bytes, headers[i].n, &opts, NULL, &res);
		EXPECT_INT(res.type, TR_TYPE_IMAGE);
		EXPECT_INT(res.error, TR_E_CORRUPT);
		EXPECT(res.error_text && strncmp(res.error_text, prefix, sizeof(prefix) - 1) == 0 &&
		       strlen(res.error_text) > sizeof(prefix) + 4 &&
		       !strchr(res.error_text, '\n'));
		EXPECT_STR(res.mime_type, headers[i].mime);
		EXPECT_INT(res.n_images, 0);
		tr_result_destroy(&res);
	}

	/* A selector past the image, and the size limit, before any decoding. */
	struct tr_selector sel = {.present = true, .start = 2, .end = 2};

	bmp_rgb(&b, 5, 3);
	read_file("a.bmp", b.d, b.n, &opts, &sel, &res);
	EXPECT_INT(res.error, TR_E_OUT_OF_RANGE);
	tr_result_destroy(&res);
	bmp_rgb(&b, 40, 40);
	opts.max_image_size = 100;
	read_file("a.bmp", b.d, b.n, &opts, NULL, &res);
	EXPECT_INT(res.error, TR_E_TOO_LARGE);
	EXPECT_STR(res.error_text, "Image file exceeds 100 bytes limit (actual: 4854 bytes)");
	tr_result_destroy(&res);
	tr_options_init(&opts);
}

/* Over image_max_dim: downscaled, with metadata.resized and the scale in content; within it,
 * the very bytes. */
static void test_fit(void)
{
	struct tr_options opts;
	struct tr_result res;
	struct buf b;
	uint32_t w, h;

	tr_options_init(&opts);
	png_rgb(&b, 30, 20);
	read_file("fit.png", b.d, b.n, &opts, NULL, &res);
	EXPECT(res.success && !res.meta.has_resized);
	EXPECT(res.n_images == 1 && res.images[0].data->len == b.n &&
	       memcmp(res.images[0].data->data, b.d, b.n) == 0);
	tr_result_destroy(&res);

	opts.image_max_dim = 30; /* the long edge may equal the limit */
	read_file("fit.png", b.d, b.n, &opts, NULL, &res);
	EXPECT(res.success && !res.meta.has_resized && res.images[0].data->len == b.n);
	tr_result_destroy(&res);

	opts.image_max_dim = 12;
	read_file("fit.png", b.d, b.n, &opts, NULL, &res);
	EXPECT(res.success);
	EXPECT(res.meta.has_resized);
	EXPECT(res.meta.from_width == 30 && res.meta.from_height == 20);
	EXPECT(res.meta.to_width == 12 && res.meta.to_height == 8);
	EXPECT(res.meta.scale == 2.5);
	EXPECT(res.meta.width == 30 && res.meta.height == 20);
	attached_png_size(&res, &w, &h);
	EXPECT(w == 12 && h == 8);
	EXPECT(res.n_images == 1 && res.images[0].width == 12 && res.images[0].height == 8);
	EXPECT(strstr(res.content.data,
		      " [Image: original 30x20, shown at 12x8; multiply coordinates"
		      " by 2.500 to map back] ") != NULL);
	EXPECT_STR(res.short_result, "Read PNG image 30x20 (1.8 KB), shown at 12x8");
	tr_result_destroy(&res);

	/* Over image_max_b64 alone: the same size, re-encoded (a JPEG is far smaller). */
	tr_options_init(&opts);
	opts.image_max_b64 = b.n; /* base64 is 4/3 of the bytes: this PNG is over */
	read_file("fit.png", b.d, b.n, &opts, NULL, &res);
	EXPECT(res.success);
	EXPECT(!res.meta.has_resized);
	EXPECT(res.n_images == 1 && res.images[0].width == 30 && res.images[0].height == 20);
	EXPECT(res.n_images == 1 && 4 * ((res.images[0].data->len + 2) / 3) <= b.n);
	tr_result_destroy(&res);

	/* No size fits in 8 bytes of base64. */
	opts.image_max_b64 = 8;
	read_file("fit.png", b.d, b.n, &opts, NULL, &res);
	EXPECT_INT(res.error, TR_E_TOO_LARGE);
	EXPECT_INT(res.n_images, 0);
	tr_result_destroy(&res);
}

/* In a child process started before libvips: with ImageMagick's loaders blocked
 * (VIPS_BLOCK_UNTRUSTED), BMP and ICO have no loader left and are unsupported, by name. */
static void test_blocked_loader(void)
{
	pid_t pid = fork();
	int status = 0;

	if (pid == 0) {
		struct tr_options opts;
		struct tr_result res;
		struct buf b, png;

		setenv("VIPS_BLOCK_UNTRUSTED", "1", 1);
		expect_failures = expect_checks = 0;
		tr_options_init(&opts);
		/* TIFF has a loader of its own. */
		tiff_rgb(&b, 5, 3, false);
		read_file("blocked.tif", b.d, b.n, &opts, NULL, &res);
		bool no_vips = res.error == TR_E_UNSUPPORTED &&
			       strstr(res.error_text, "no libvips");

		EXPECT(res.success || no_vips);
		tr_result_destroy(&res);
		bmp_rgb(&b, 5, 3);
		read_file("blocked.bmp", b.d, b.n, &opts, NULL, &res);
		EXPECT_INT(res.error, TR_E_UNSUPPORTED);
		if (!no_vips)
			EXPECT_STR(res.error_text,
				   "Unsupported image format: BMP (no libvips loader"
				   " for it is available)");
		EXPECT_STR(res.mime_type, "image/bmp");
		tr_result_destroy(&res);
		png_rgb(&png, 5, 3);
		ico_with_png(&b, &png, 5, 3);
		read_file("blocked.ico", b.d, b.n, &opts, NULL, &res);
		EXPECT_INT(res.error, TR_E_UNSUPPORTED);
		EXPECT_STR(res.mime_type, "image/vnd.microsoft.icon");
		tr_result_destroy(&res);
		for (size_t i = 0; i < n_written; i++)
			EXPECT_INT(unlink(written[i]), 0);
		_exit(expect_failures ? 1 : 0);
	}
	EXPECT(pid > 0);
	EXPECT(pid > 0 && waitpid(pid, &status, 0) == pid);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	char dir[] = "/tmp/toolfs-test-image-XXXXXX";

	test_png_valid();
	test_png_depths();
	test_png_corrupt();
	test_jpeg_valid();
	test_jpeg_corrupt();
	test_gif();
	test_webp_valid();
	test_webp_corrupt();
	if (mkdtemp(dir)) {
		snprintf(tmpdir, sizeof(tmpdir), "%s", dir);
		/* First: its child must be the one to start libvips, with its own environment. */
		test_blocked_loader();
		bool vips = core_has_vips();

		test_read();
		if (vips) {
			test_raster();
			test_fit();
		} else {
			test_raster_without_vips();
		}
		for (size_t i = 0; i < n_written; i++)
			EXPECT_INT(unlink(written[i]), 0);
		EXPECT_INT(rmdir(dir), 0);
	} else {
		EXPECT(!"mkdtemp failed");
	}
	return EXPECT_DONE();
}
