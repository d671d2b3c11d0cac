/* SPDX-License-Identifier: MIT */
/* image.c - the read path shared by the PNG, JPEG, GIF and WebP readers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "image.h"
#include "ocr.h"
#include "util.h"

int tr_image_error(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
	return -1;
}

bool tr_image_selector_past_end(struct tr_result *res, const struct tr_selector *sel)
{
	if (!sel || !sel->present || sel->start <= 1)
		return false;
	tr_result_fail(res, TR_E_OUT_OF_RANGE,
		       "Part %llu is past the end of the image (an image is read whole: 1 part)",
		       (unsigned long long)sel->start);
	return true;
}

bool tr_image_region_outside(struct tr_result *res, const struct tr_selector *sel, uint32_t width,
			     uint32_t height, struct tr_region *clipped)
{
	const struct tr_region *r = &sel->region;

	if (tr_region_clip(r, width, height, clipped) == 0)
		return false;
	tr_result_fail(res, TR_E_OUT_OF_RANGE,
		       "Region %ux%u+%u+%u is outside the %ux%u image (X must be below %u and Y "
		       "below %u)",
		       r->width, r->height, r->x, r->y, width, height, width, height);
	return true;
}

int tr_image_read(const struct tr_file *file, const struct tr_selector *sel,
		  const struct tr_options *opts, struct tr_result *res,
		  const struct tr_image_format *fmt)
{
	uint64_t size = (uint64_t)file->st.st_size;
	struct tr_image_info info;
	struct tr_blob *blob = NULL;
	char err[256];

	res->type = TR_TYPE_IMAGE;
	/* mimeType comes from the bytes: a .png holding text is an image read that failed, but
	 * not an image/png. */
	if (fmt->signature(file->head, file->head_len)) {
		res->mime_type = strdup(fmt->mime_type);
		if (!res->mime_type)
			return -1;
	}
	if (tr_image_selector_past_end(res, sel))
		return 0;
	if (size == 0) {
		tr_result_fail(res, TR_E_CORRUPT,
			       "Failed to process image file: empty file (0 bytes)");
		return 0;
	}
	if (size > opts->max_image_size) {
		tr_result_fail_too_large(res, "Image", size, opts->max_image_size, NULL);
		return 0;
	}
	if (tr_load_file(file->fd, size, &blob, &res->meta) < 0)
		return tr_result_fail_load(res, errno);

	if (fmt->validate(blob->data, blob->len, &info, err, sizeof(err)) < 0) {
		tr_blob_unref(blob);
		tr_result_fail(res, TR_E_CORRUPT, "Failed to process image file: %s", err);
		return 0;
	}

	struct tr_region region;
	struct tr_image_shown shown = {
		.format = fmt->name,
		.media_type = fmt->mime_type,
		.width = info.width,
		.height = info.height,
		.summary = info.summary,
		.deadline = file->deadline,
		.region = sel->has_region ? &region : NULL,
	};
	if (sel->has_region &&
	    tr_image_region_outside(res, sel, info.width, info.height, &region)) {
		tr_blob_unref(blob);
		return 0;
	}
	/* ocr=on: the image's text follows its description (docs/SPEC.md §3 "OCR"); a region is
	 * not read by OCR (its pixels are cropped inside the fit). */
	struct tr_blob *ocr_src = opts->ocr == TR_OCR_ON && !sel->has_region ? tr_blob_ref(blob)
									     : NULL;
	int rc = tr_image_attach(res, blob, &shown, opts);

	if (rc == 0 && ocr_src && res->success)
		rc = tr_ocr_image(res, ocr_src, &file->st, opts, file->deadline);
	tr_blob_unref(ocr_src);
	return rc;
}

bool tr_fit_needed(uint32_t width, uint32_t height, size_t len, const struct tr_options *opts)
{
	uint32_t long_edge = width > height ? width : height;

	return long_edge > opts->image_max_dim ||
	       4 * (((uint64_t)len + 2) / 3) > opts->image_max_b64;
}

const char *tr_fit_saving_text(const char *saving)
{
	if (strcmp(saving, "palette") == 0)
		return "encoded with 256 colours, as the full-colour PNG at this size was larger "
		       "than the source";
	if (strcmp(saving, "jpeg") == 0)
		return "encoded at a lower JPEG quality, as the first was larger than the source";
	return "shown smaller than the size limit, as every encoding at the limit was larger "
	       "than the source";
}

#if defined(TR_HAVE_VIPS)
/* Defined when fit.c is linked in (the fuzz targets); else the module is loaded. */
extern const struct tr_vips_api tr_vips_api __attribute__((weak));

struct tr_module tr_module_vips = {
	.file = "toolfs-vips.so",
	.symbol = "tr_vips_api",
	.abi = TR_VIPS_ABI,
	.linked = &tr_vips_api,
};

bool tr_fit_has_loader(const char *nickname)
{
	const struct tr_vips_api *api = tr_module_api(&tr_module_vips);

	return api && api->has_loader(nickname);
}

enum tr_error tr_fit_image(const struct tr_blob *src, const struct tr_options *opts,
			   uint64_t deadline, struct tr_fit *out, char *err, size_t err_size)
{
	const struct tr_vips_api *api = tr_module_api(&tr_module_vips);

	if (!api) {
		memset(out, 0, sizeof(*out));
		snprintf(err, err_size, "%s", tr_module_vips.error);
		return TR_E_UNSUPPORTED;
	}
	return api->fit_image(src, opts, deadline, out, err, err_size);
}

enum tr_error tr_fit_region(const struct tr_blob *src, const struct tr_region *region,
			    const struct tr_options *opts, uint64_t deadline, struct tr_fit *out,
			    char *err, size_t err_size)
{
	const struct tr_vips_api *api = tr_module_api(&tr_module_vips);

	if (!api) {
		memset(out, 0, sizeof(*out));
		snprintf(err, err_size, "%s", tr_module_vips.error);
		return TR_E_UNSUPPORTED;
	}
	return api->fit_region(src, region, opts, deadline, out, err, err_size);
}
#endif

static bool has_summary(const struct tr_image_shown *img)
{
	return img->summary && *img->summary;
}

#if defined(TR_HAVE_VIPS)
/* The note of content on which frame of a multi-frame source is shown ("" for one frame). */
static void frame_note(const struct tr_fit *fit, char *buf, size_t size)
{
	buf[0] = '\0';
	if (fit->frames > 1 && fit->largest)
		snprintf(buf, size, " The largest of its %u images is shown.", fit->frames);
	else if (fit->frames > 1)
		snprintf(buf, size, " Only the first of its %u frames is shown.", fit->frames);
}

/* Fails res for a fit that did not succeed (code, err: the fit's). */
static void fail_fit(struct tr_result *res, enum tr_error code, const struct tr_image_shown *img,
		     const struct tr_options *opts, const char *err)
{
	if (code == TR_E_UNSUPPORTED) {
		tr_result_fail(res, code, "Unsupported image format: %s (%s)", img->format, err);
		return;
	}
	if (code == TR_E_TOO_LARGE) {
		tr_result_fail(res, code, "Image cannot be made to fit: %s", err);
		return;
	}
	if (code == TR_E_TIMEOUT) {
		tr_result_fail(res, code,
			       "Timeout: the %s image (%ux%u) was not fitted within max_render_ms "
			       "(%llu ms): %s",
			       img->format, img->width, img->height,
			       (unsigned long long)opts->max_render_ms, res->path);
		return;
	}
	tr_result_fail(res, code == TR_E_IO ? TR_E_IO : TR_E_CORRUPT,
		       "Failed to process image file: %s", err);
}

/* Attaches the fitted (downscaled or converted) image and says in content how to map
 * coordinates back. */
static int attach_fitted(struct tr_result *res, struct tr_blob *blob,
			 const struct tr_image_shown *img, const struct tr_options *opts)
{
	struct tr_fit fit;
	char err[512], size_text[32], frames[96];
	uint64_t size = blob->len;
	/* Refused from the validator's dimensions: libvips is not even loaded for a bomb. */
	enum tr_error code = tr_fit_too_many_pixels(img->width, img->height, err, sizeof(err))
				     ? TR_E_TOO_LARGE
			     : img->region ? tr_fit_region(blob, img->region, opts, img->deadline,
							   &fit, err, sizeof(err))
					   : tr_fit_image(blob, opts, img->deadline, &fit, err,
							  sizeof(err));

	tr_blob_unref(blob);
	if (code != TR_OK) {
		fail_fit(res, code, img, opts, err);
		return 0;
	}
	bool resized = fit.width != fit.from_width || fit.height != fit.from_height;
	bool png = strcmp(fit.media_type, "image/png") == 0;
	const char *shown_as = png ? "PNG" : "JPEG";
	bool same_type = strcmp(fit.media_type, img->media_type) == 0;

	tr_format_size(size, size_text, sizeof(size_text));
	frame_note(&fit, frames, sizeof(frames));
	if (tr_result_add_image(res, fit.data, fit.media_type, fit.width, fit.height, 0, 0) < 0)
		return -1;
	/* A region's fit is of the region; the image is the source's size (of a multi-frame
	 * source, the frame shown). */
	uint32_t from_w = img->region ? img->width : fit.from_width;
	uint32_t from_h = img->region ? img->height : fit.from_height;

	tr_buf_printf(&res->content, "%s image, %ux%u pixels%s%s, %s.", img->format, from_w, from_h,
		      has_summary(img) ? ", " : "", has_summary(img) ? img->summary : "",
		      size_text);
	if (img->region) {
		const struct tr_region *r = img->region;

		res->meta.has_region = true;
		res->meta.region = *r;
		tr_buf_printf(&res->content,
			      " [Region %ux%u+%u+%u shown at %ux%u; a point (x, y) of the attached "
			      "image is (%u + x * %.3f, %u + y * %.3f) in the original]",
			      r->width, r->height, r->x, r->y, fit.width, fit.height, r->x,
			      fit.scale, r->y, fit.scale);
	}
	if (resized) {
		res->meta.has_resized = true;
		res->meta.from_width = fit.from_width;
		res->meta.from_height = fit.from_height;
		res->meta.to_width = fit.width;
		res->meta.to_height = fit.height;
		res->meta.scale = fit.scale;
		res->meta.saving = fit.saving;
		if (!img->region)
			tr_buf_printf(
				&res->content,
				" [Image: original %ux%u, shown at %ux%u; multiply coordinates "
				"by %.3f to map back]",
				fit.from_width, fit.from_height, fit.width, fit.height, fit.scale);
		if (fit.saving)
			tr_buf_printf(&res->content, " [The attached image is %s]",
				      tr_fit_saving_text(fit.saving));
	}
	tr_buf_printf(&res->content, "%s", frames);
	if (!same_type)
		tr_buf_printf(&res->content, " Converted to %s for viewing.", shown_as);
	else if (!resized && !img->region)
		tr_buf_printf(&res->content, " Re-encoded as %s to fit the size limit.", shown_as);
	tr_buf_printf(&res->content, " The image is attached.");
	if (res->content.oom)
		return -1;
	res->meta.has_dimensions = true;
	res->meta.width = from_w;
	res->meta.height = from_h;
	if (img->region)
		tr_result_set_short(
			res, "Read %s image %ux%u (%s), region %ux%u+%u+%u shown at %ux%u",
			img->format, img->width, img->height, size_text, img->region->width,
			img->region->height, img->region->x, img->region->y, fit.width, fit.height);
	else if (resized)
		tr_result_set_short(res, "Read %s image %ux%u (%s), shown at %ux%u", img->format,
				    fit.from_width, fit.from_height, size_text, fit.width,
				    fit.height);
	else
		tr_result_set_short(res, "Read %s image %ux%u (%s), %s %s", img->format,
				    fit.from_width, fit.from_height, size_text,
				    same_type ? "re-encoded as" : "converted to", shown_as);
	res->success = true;
	return 0;
}
#endif

int tr_image_attach(struct tr_result *res, struct tr_blob *blob, const struct tr_image_shown *img,
		    const struct tr_options *opts)
{
	char size_text[32];

#if defined(TR_HAVE_VIPS)
	if (img->must_convert || img->region ||
	    tr_fit_needed(img->width, img->height, blob->len, opts))
		return attach_fitted(res, blob, img, opts);
#else
	(void)opts;
	if (img->region) {
		tr_blob_unref(blob);
		tr_result_fail(res, TR_E_UNSUPPORTED,
			       "Regions of images need libvips, which this build does not have");
		return 0;
	}
	if (img->must_convert) {
		tr_blob_unref(blob);
		tr_result_fail(
			res, TR_E_UNSUPPORTED,
			"Unsupported image format: %s (this build has no libvips to convert it)",
			img->format);
		return 0;
	}
#endif
	res->meta.has_dimensions = true;
	res->meta.width = img->width;
	res->meta.height = img->height;
	tr_format_size(blob->len, size_text, sizeof(size_text));
	if (tr_result_add_image(res, blob, img->media_type, img->width, img->height, 0, 0) < 0)
		return -1;
	tr_buf_printf(&res->content, "%s image, %ux%u pixels%s%s, %s. The image is attached.",
		      img->format, img->width, img->height, has_summary(img) ? ", " : "",
		      has_summary(img) ? img->summary : "", size_text);
	if (res->content.oom)
		return -1;
	tr_result_set_short(res, "Read %s image %ux%u (%s)", img->format, img->width, img->height,
			    size_text);
	res->success = true;
	return 0;
}
