/* SPDX-License-Identifier: MIT */
/* ocr_image.c - OCR of an encoded image (toolfs-ocr.so): libvips decodes it within the pixel caps,
 * on white, in grey; Tesseract reads the pixels. */
#include <math.h>
#include <stdio.h>

#include <vips/vips.h>

#include "ocr.h"
#include "util.h"

/* The long edge that keeps width x height within TR_OCR_MAX_EDGE and TR_OCR_MAX_PIXELS. */
static int ocr_edge(int width, int height)
{
	double long_edge = width > height ? width : height;
	double area = (double)width * (double)height, edge = long_edge;

	if (edge > TR_OCR_MAX_EDGE)
		edge = TR_OCR_MAX_EDGE;
	if (area > TR_OCR_MAX_PIXELS) {
		double fit = long_edge * sqrt(TR_OCR_MAX_PIXELS / area);

		if (fit < edge)
			edge = fit;
	}
	return edge < 1 ? 1 : (int)edge;
}

/* Grey 8-bit pixels of src within the caps: *grey is g_malloc'd. Returns 0, or 1 with err. */
static int decode_grey(const struct tr_blob *src, unsigned char **grey, int *width, int *height,
		       char *err, size_t err_size)
{
	VipsImage *head, *img = NULL, *tmp;
	int edge;
	size_t len = 0;

	head = vips_image_new_from_buffer(src->data, src->len, "", "access", VIPS_ACCESS_SEQUENTIAL,
					  NULL);
	if (!head)
		goto fail;
	edge = ocr_edge(vips_image_get_width(head), vips_image_get_height(head));
	g_object_unref(head);
	if (vips_thumbnail_buffer((void *)src->data, src->len, &img, edge, "height", edge, "size",
				  VIPS_SIZE_DOWN, NULL))
		goto fail;
	if (vips_image_hasalpha(img)) {
		double white[] = {255, 255, 255, 255};
		VipsArrayDouble *bg = vips_array_double_new(white, img->Bands > 2 ? 3 : 1);
		int rc = vips_flatten(img, &tmp, "background", bg, NULL);

		vips_area_unref(VIPS_AREA(bg));
		g_object_unref(img);
		img = tmp;
		if (rc)
			goto fail_img;
	}
	if (vips_colourspace(img, &tmp, VIPS_INTERPRETATION_B_W, NULL))
		goto fail_img;
	g_object_unref(img);
	img = tmp;
	if (vips_cast_uchar(img, &tmp, NULL))
		goto fail_img;
	g_object_unref(img);
	img = tmp;
	if (img->Bands > 1) {
		if (vips_extract_band(img, &tmp, 0, NULL))
			goto fail_img;
		g_object_unref(img);
		img = tmp;
	}
	*grey = vips_image_write_to_memory(img, &len);
	if (!*grey)
		goto fail_img;
	*width = vips_image_get_width(img);
	*height = vips_image_get_height(img);
	g_object_unref(img);
	return 0;
fail_img:
	g_object_unref(img);
fail:
	snprintf(err, err_size, "libvips could not decode the image: %s", vips_error_buffer());
	vips_error_clear();
	return 1;
}

int tr_ocr_image_recognize(const struct tr_blob *src, const char *lang, uint64_t deadline,
			   const char *key, struct tr_ocr_text *out, char *err, size_t err_size)
{
	unsigned char *grey = NULL;
	int width = 0, height = 0, rc;

	if (tr_ocr_cached(key, out) == 0)
		return 0;
	if (!tr_vips_start()) {
		snprintf(err, err_size, "libvips failed to start");
		return 1;
	}
	if (decode_grey(src, &grey, &width, &height, err, err_size) != 0)
		return 1;
	rc = tr_ocr_recognize(lang, grey, (uint32_t)width, (uint32_t)height, (size_t)width, 0,
			      deadline, key, out, err, err_size);
	g_free(grey);
	return rc;
}
