/* SPDX-License-Identifier: MIT */
/* notebook_cell_image.c - the images of a notebook cell (outputs and attachments): decoded,
 * fitted to the image limits within the read's budget, attached, and referenced in the text. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "image.h"
#include "notebook.h"
#include "util.h"

static int push_image(struct tr_nb_cell *out, const struct tr_nb_image *image)
{
	if (out->n_images == out->cap_images) {
		size_t cap = out->cap_images ? out->cap_images * 2 : 4;
		struct tr_nb_image *grown = realloc(out->images, cap * sizeof(*grown));

		if (!grown)
			return -1;
		out->images = grown;
		out->cap_images = cap;
	}
	out->images[out->n_images++] = *image;
	return 0;
}

#if defined(TR_HAVE_VIPS)
/* The note of an image not fitted within the read's budget (docs/SPEC.md §3 "Render time"), in
 * the words of the PDF reader's pages: "timeout: not fitted within max_render_ms (2000 ms),
 * fitting stopped", or "..., not started, the time went to earlier work; read NAME:C.tool.json
 * to show it alone" (the hint only when fits of earlier cells took the time). */
static void timeout_note(const struct tr_nb_context *ctx, bool started, char *note, size_t size)
{
	char hint[160] = "";

	if (!started && ctx->budget->fit_cell && ctx->budget->fit_cell < ctx->cell)
		snprintf(hint, sizeof(hint), "; read %s:%" PRIu64 ".tool.json to show it alone",
			 ctx->name, ctx->cell);
	snprintf(note, size, "timeout: not fitted within max_render_ms (%" PRIu64 " ms), %s%s",
		 (uint64_t)ctx->opts->max_render_ms,
		 started ? "fitting stopped" : "not started, the time went to earlier work", hint);
}

/* Replaces an image over image_max_dim or image_max_b64 by its fitted version and writes into
 * fitted the words of its reference, e.g. ", shown at 2000x1500 as image/jpeg; multiply
 * coordinates by 2.000 to map back" ("" when it is within the limits). Returns 0; 1 with a
 * reason in fitted when it could not be fitted; 2 with the timeout note in fitted when the
 * read's deadline passed before or during the fit (the image is left as it was). */
static int fit_image(const struct tr_nb_context *ctx, struct tr_nb_image *image, char *fitted,
		     size_t size)
{
	uint64_t deadline = ctx->budget ? ctx->budget->deadline : 0;
	struct tr_fit fit;
	enum tr_error rc;
	char err[256];

	fitted[0] = '\0';
	if (!ctx->opts || !tr_fit_needed(image->width, image->height, image->blob->len, ctx->opts))
		return 0;
	if (deadline && tr_deadline_passed(deadline)) {
		timeout_note(ctx, false, fitted, size);
		return 2;
	}
	rc = tr_fit_image(image->blob, ctx->opts, deadline, &fit, err, sizeof(err));
	if (deadline && !ctx->budget->fit_cell)
		ctx->budget->fit_cell = ctx->cell;
	if (rc == TR_E_TIMEOUT && deadline) {
		timeout_note(ctx, true, fitted, size);
		return 2;
	}
	if (rc != TR_OK) {
		snprintf(fitted, size, "%s", err);
		return 1;
	}
	if (fit.width != image->width || fit.height != image->height)
		snprintf(fitted, size,
			 ", shown at %" PRIu32 "x%" PRIu32 " as %s%s%s%s; multiply coordinates"
			 " by %.3f to map back",
			 fit.width, fit.height, fit.media_type, fit.saving ? " (" : "",
			 fit.saving ? tr_fit_saving_text(fit.saving) : "", fit.saving ? ")" : "",
			 fit.scale);
	else
		snprintf(fitted, size, ", re-encoded as %s to fit the size limit", fit.media_type);
	tr_blob_unref(image->blob);
	image->blob = fit.data;
	image->media_type = fit.media_type;
	image->width = fit.width;
	image->height = fit.height;
	return 0;
}
#endif

/* Decodes an image value and appends its reference line to buf:
 * "[<prefix>image 2: image/png 640x480, attached]", with the size it is shown at when it had to
 * be fitted ("[image 2: image/png 4000x3000, shown at 2000x1500 as image/png; multiply
 * coordinates by 2.000 to map back, attached]"), or why it is not attached. Returns 1 when the
 * image was attached, 0 when not, -1 when out of memory. */
int tr_nb_append_image(const struct tr_nb_context *ctx, struct tr_nb_cell *out, struct tr_buf *buf,
		       const char *value, const char *prefix, const char *noun)
{
	struct tr_nb_image image;
	const char *reason;
	char size[32], limit[32], fitted[320] = "";
	const char *media_type;
	uint32_t width, height;
	int rc = tr_nb_image_decode(value, &image, &reason);

	if (rc < 0)
		return -1;
	if (rc > 0)
		return tr_buf_printf(buf, "[%s%s could not be decoded: %s]\n", prefix, noun,
				     reason) < 0
			       ? -1
			       : 0;
	if (image.blob->len > ctx->max_image_size) {
		tr_format_limit(ctx->max_image_size, image.blob->len, limit, size, sizeof(size));
		rc = tr_buf_printf(buf,
				   "[%s%s omitted: %s %" PRIu32 "x%" PRIu32
				   ", %s exceeds the %s image limit]\n",
				   prefix, noun, image.media_type, image.width, image.height, size,
				   limit);
		tr_blob_unref(image.blob);
		return rc < 0 ? -1 : 0;
	}
	media_type = image.media_type;
	width = image.width;
	height = image.height;
#if defined(TR_HAVE_VIPS)
	rc = fit_image(ctx, &image, fitted, sizeof(fitted));
	if (rc > 0) {
		out->timeouts += rc == 2;
		rc = tr_buf_printf(
			buf,
			rc == 2 ? "[%s%s omitted: %s %" PRIu32 "x%" PRIu32 ", %s]\n"
				: "[%s%s omitted: %s %" PRIu32 "x%" PRIu32
				  " is over the image limits and could not be downscaled: "
				  "%s]\n",
			prefix, noun, media_type, width, height, fitted);
		tr_blob_unref(image.blob);
		return rc < 0 ? -1 : 0;
	}
#endif
	if (tr_buf_printf(buf, "[%simage %zu: %s %" PRIu32 "x%" PRIu32 "%s, attached]\n", prefix,
			  (size_t)ctx->first_image + out->n_images, media_type, width, height,
			  fitted) < 0 ||
	    push_image(out, &image) < 0) {
		tr_blob_unref(image.blob);
		return -1;
	}
	return 1;
}
