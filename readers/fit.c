/* fit.c - downscaling and conversion of images with libvips, initialised once per process. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <vips/vips.h>

#include "fit.h"
#include "vips_start.h"

/* JPEG qualities tried, best first, before the size is reduced further. */
static const int jpeg_ladder[] = {85, 75, 60, 45};
/* Each further size step keeps this fraction of the long edge. */
#define SHRINK_STEP 0.8

static uint64_t base64_len(size_t len)
{
	return 4 * (((uint64_t)len + 2) / 3);
}

bool tr_fit_needed(uint32_t width, uint32_t height, size_t len, const struct tr_options *opts)
{
	uint32_t long_edge = width > height ? width : height;

	return long_edge > opts->image_max_dim || base64_len(len) > opts->image_max_b64;
}

static void vips_reason(char *err, size_t size, const char *what)
{
	const char *detail = vips_error_buffer();
	size_t n;

	snprintf(err, size, "%s: %s", what, detail && *detail ? detail : "unknown libvips error");
	/* vips messages end in newlines; a result sentence must not. */
	n = strlen(err);
	while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '))
		err[--n] = '\0';
	for (char *p = err; *p; p++)
		if (*p == '\n')
			*p = ' ';
	vips_error_clear();
}

/* Makes an 8-bit sRGB image (with alpha kept for PNG, flattened on white for JPEG). */
static int to_srgb8(VipsImage *in, bool flatten, VipsImage **out)
{
	VipsImage *rgb = NULL, *flat = NULL, *cast = NULL;
	int rc = -1;

	if (vips_colourspace(in, &rgb, VIPS_INTERPRETATION_sRGB, NULL))
		goto out;
	if (flatten && vips_image_hasalpha(rgb)) {
		double white[3] = {255, 255, 255};
		VipsArrayDouble *bg = vips_array_double_new(white, 3);

		rc = vips_flatten(rgb, &flat, "background", bg, NULL);
		vips_area_unref(VIPS_AREA(bg));
		if (rc)
			goto out;
		rc = -1;
	}
	if (vips_cast_uchar(flat ? flat : rgb, &cast, NULL))
		goto out;
	*out = cast;
	cast = NULL;
	rc = 0;
out:
	if (cast)
		g_object_unref(cast);
	if (flat)
		g_object_unref(flat);
	if (rgb)
		g_object_unref(rgb);
	return rc;
}

/* Encodes img as PNG or JPEG (quality q); returns a blob or NULL. */
static struct tr_blob *encode(VipsImage *img, bool jpeg, int quality)
{
	VipsImage *ready = NULL;
	void *buf = NULL;
	size_t len = 0;
	struct tr_blob *blob = NULL;

	if (to_srgb8(img, jpeg, &ready))
		return NULL;
	if (jpeg ? vips_jpegsave_buffer(ready, &buf, &len, "Q", quality, "strip", TRUE,
					"optimize_coding", TRUE, NULL)
		 : vips_pngsave_buffer(ready, &buf, &len, "compression", 6, "strip", TRUE, NULL)) {
		g_object_unref(ready);
		return NULL;
	}
	g_object_unref(ready);
	blob = tr_blob_copy(buf, len);
	g_free(buf);
	return blob;
}

static bool is_jpeg(const struct tr_blob *src)
{
	return src->len >= 3 && src->data[0] == 0xff && src->data[1] == 0xd8 && src->data[2] == 0xff;
}

static int source_size(const struct tr_blob *src, uint32_t *w, uint32_t *h)
{
	VipsImage *head = vips_image_new_from_buffer(src->data, src->len, "", "access",
						     VIPS_ACCESS_SEQUENTIAL, NULL);

	if (!head)
		return -1;
	*w = (uint32_t)vips_image_get_width(head);
	*h = (uint32_t)vips_image_get_height(head);
	g_object_unref(head);
	return 0;
}

int tr_fit_image(const struct tr_blob *src, const struct tr_options *opts, struct tr_fit *out,
		 char *err, size_t err_size)
{
	uint32_t from_w, from_h, from_long, target;

	if (!tr_vips_start()) {
		snprintf(err, err_size, "libvips could not start");
		return -1;
	}
	memset(out, 0, sizeof(*out));
	if (source_size(src, &from_w, &from_h) < 0 || from_w == 0 || from_h == 0) {
		vips_reason(err, err_size, "cannot decode image");
		return -1;
	}
	from_long = from_w > from_h ? from_w : from_h;
	target = from_long < opts->image_max_dim ? from_long : (uint32_t)opts->image_max_dim;

	for (int step = 0; step < 12 && target >= 1; step++) {
		VipsImage *thumb = NULL;

		/* thumbnail_buffer shrinks on load (JPEG, WebP) and takes the first frame. */
		if (vips_thumbnail_buffer(src->data, src->len, &thumb, (int)target, "height",
					  (int)target, "size", VIPS_SIZE_DOWN, NULL)) {
			vips_reason(err, err_size, "cannot decode image");
			return -1;
		}
		/* PNG stays PNG when it fits; a photo (JPEG source) goes straight to JPEG. */
		int first = is_jpeg(src) ? 0 : -1;

		for (int attempt = first; attempt < (int)(sizeof(jpeg_ladder) / sizeof(int)); attempt++) {
			bool jpeg = attempt >= 0;
			struct tr_blob *blob = encode(thumb, jpeg, jpeg ? jpeg_ladder[attempt] : 0);

			if (!blob) {
				g_object_unref(thumb);
				vips_reason(err, err_size, "cannot encode image");
				return -1;
			}
			if (base64_len(blob->len) <= opts->image_max_b64) {
				uint32_t to_w = (uint32_t)vips_image_get_width(thumb);
				uint32_t to_h = (uint32_t)vips_image_get_height(thumb);
				uint32_t to_long = to_w > to_h ? to_w : to_h;

				*out = (struct tr_fit){
					.data = blob,
					.media_type = jpeg ? "image/jpeg" : "image/png",
					.width = to_w,
					.height = to_h,
					.from_width = from_w,
					.from_height = from_h,
					.scale = (double)from_long / (double)to_long,
				};
				g_object_unref(thumb);
				return 0;
			}
			tr_blob_unref(blob);
		}
		g_object_unref(thumb);
		target = (uint32_t)floor(target * SHRINK_STEP);
	}
	snprintf(err, err_size, "cannot make the image fit in %llu bytes of base64",
		 (unsigned long long)opts->image_max_b64);
	return -1;
}
