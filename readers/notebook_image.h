/* notebook_image.h - decodes the base64 image outputs of notebooks and reads their size. */
#ifndef TR_NOTEBOOK_IMAGE_H
#define TR_NOTEBOOK_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "tr_blob.h"

/* A decoded PNG or JPEG image. */
struct tr_nb_image {
	struct tr_blob *blob;   /* owned reference to the raw image bytes */
	const char *media_type; /* static: "image/png" or "image/jpeg", from the bytes' signature */
	uint32_t width, height;
};

/* Decodes value, a base64 string or a list of strings to concatenate (whitespace and line
 * breaks ignored, padding optional), checks the PNG or JPEG signature and reads the size from
 * the PNG IHDR or the JPEG SOF. Returns 0 and fills *image (the caller owns image->blob); 1 when
 * the data is not such an image, with *reason set to a static sentence fragment; -1 when out of
 * memory. */
int tr_nb_image_decode(const cJSON *value, struct tr_nb_image *image, const char **reason);

#endif
