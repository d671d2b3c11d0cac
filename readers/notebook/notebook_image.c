/* notebook_image.c - base64 image outputs of notebooks: decoding, signature and size. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "notebook.h"

/* Base64 decoding across the pieces of a multiline value. */
struct base64_state {
	unsigned char *out;
	size_t len;
	uint32_t acc;
	int chars;   /* characters of the current 4-character group */
	int padding; /* '=' seen */
	bool bad;
};

static int base64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

static void base64_feed(struct base64_state *st, const char *s, size_t len)
{
	for (size_t i = 0; i < len && !st->bad; i++) {
		unsigned char c = (unsigned char)s[i];
		int v;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
			continue;
		if (c == '=') {
			if (st->chars < 2)
				st->bad = true;
			st->padding++;
			continue;
		}
		v = base64_value(c);
		if (v < 0 || st->padding) {
			st->bad = true;
			break;
		}
		st->acc = st->acc << 6 | (uint32_t)v;
		if (++st->chars == 4) {
			st->out[st->len++] = st->acc >> 16;
			st->out[st->len++] = st->acc >> 8;
			st->out[st->len++] = st->acc;
			st->chars = 0;
			st->acc = 0;
		}
	}
}

/* Flushes a final partial group; false when it is a lone character. */
static bool base64_finish(struct base64_state *st)
{
	if (st->chars == 1)
		return false;
	if (st->chars == 2) {
		st->out[st->len++] = st->acc >> 4;
	} else if (st->chars == 3) {
		st->out[st->len++] = st->acc >> 10;
		st->out[st->len++] = st->acc >> 2;
	}
	return !st->bad;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static const char *png_size(const unsigned char *d, size_t len, uint32_t *w, uint32_t *h)
{
	if (len < 24 || be32(d + 8) != 13 || memcmp(d + 12, "IHDR", 4) != 0)
		return "PNG has no IHDR chunk";
	*w = be32(d + 16);
	*h = be32(d + 20);
	if (*w == 0 || *h == 0 || *w > 0x7fffffff || *h > 0x7fffffff)
		return "PNG width or height is invalid";
	return NULL;
}

static bool is_sof(unsigned char marker)
{
	return marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 &&
	       marker != 0xcc;
}

static const char *jpeg_size(const unsigned char *d, size_t len, uint32_t *w, uint32_t *h)
{
	size_t i = 2;

	for (;;) {
		unsigned char marker;
		size_t seg_len;

		if (i >= len || d[i] != 0xff)
			return "JPEG has no frame header (SOF) before its image data";
		while (i < len && d[i] == 0xff)
			i++;
		if (i >= len)
			return "JPEG has no frame header (SOF) before its image data";
		marker = d[i++];
		if (marker == 0x01 || (marker >= 0xd0 && marker <= 0xd8))
			continue; /* markers without a length */
		if (marker == 0xd9 || marker == 0xda || i + 2 > len)
			return "JPEG has no frame header (SOF) before its image data";
		seg_len = (size_t)d[i] << 8 | d[i + 1];
		if (seg_len < 2 || i + seg_len > len)
			return "JPEG segment overruns the data";
		if (is_sof(marker)) {
			if (seg_len < 7)
				return "JPEG frame header is too short";
			*h = (uint32_t)d[i + 3] << 8 | d[i + 4];
			*w = (uint32_t)d[i + 5] << 8 | d[i + 6];
			if (*w == 0 || *h == 0)
				return "JPEG frame has a zero width or height";
			return NULL;
		}
		i += seg_len;
	}
}

int tr_nb_image_decode(const char *value, struct tr_nb_image *image, const char **reason)
{
	static const unsigned char png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	struct base64_state st = {0};
	struct tr_buf text = {0};
	struct tr_nbv_iter it;
	const char *piece;
	const char *why;

	memset(image, 0, sizeof(*image));
	if (tr_nbv_is_string(value)) {
		if (tr_nbv_append_string(&text, value) < 0)
			goto oom;
	} else if (tr_nbv_is_array(value)) {
		tr_nbv_begin(&it, value);
		while (tr_nbv_next(&it, NULL, &piece)) {
			if (!tr_nbv_is_string(piece)) {
				tr_buf_free(&text);
				*reason = "the data is not a string";
				return 1;
			}
			if (tr_nbv_append_string(&text, piece) < 0)
				goto oom;
		}
	} else {
		*reason = "the data is not a string";
		return 1;
	}
	st.out = malloc(text.len / 4 * 3 + 3);
	if (!st.out)
		goto oom;
	base64_feed(&st, text.data, text.len);
	tr_buf_free(&text);
	if (!base64_finish(&st)) {
		why = "invalid base64 data";
		goto undecodable;
	}
	if (st.len == 0) {
		why = "no image data";
		goto undecodable;
	}
	if (st.len >= 8 && memcmp(st.out, png_signature, 8) == 0) {
		image->media_type = "image/png";
		why = png_size(st.out, st.len, &image->width, &image->height);
	} else if (st.len >= 3 && st.out[0] == 0xff && st.out[1] == 0xd8 && st.out[2] == 0xff) {
		image->media_type = "image/jpeg";
		why = jpeg_size(st.out, st.len, &image->width, &image->height);
	} else {
		why = "the data is not a PNG or JPEG image";
	}
	if (why)
		goto undecodable;
	image->blob = tr_blob_adopt(st.out, st.len);
	return image->blob ? 0 : -1;
undecodable:
	free(st.out);
	memset(image, 0, sizeof(*image));
	*reason = why;
	return 1;
oom:
	tr_buf_free(&text);
	return -1;
}
