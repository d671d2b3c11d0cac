/* SPDX-License-Identifier: MIT */
/* fuzz_svg.c - libFuzzer target for the SVG path: detection (tr_svg_detect), the .svgz inflate
 * (tr_svg_inflate, bounded) and the render (tr_svg_render_here, in this process so that its
 * coverage counts) at a small size. The first byte picks the long edge (1-128 px), the second
 * the base64 budget; the rest is the document, plain or gzipped. Any bytes, never a crash, and
 * results as the contract gives them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "svg.h"

/* Inflated documents past this are cut (the reader's limit is max_image_size). */
#define MAX_INFLATED (256 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_render(const unsigned char *doc, size_t len, const struct tr_svg_limits *lim)
{
	struct tr_svg_render out;
	char err[512];
	enum tr_error code = tr_svg_render_here(doc, len, lim, &out, err, sizeof(err));

	if (code != TR_OK) {
		if (out.png || !err[0])
			fuzz_fail("error %d left a PNG or said nothing", (int)code);
		if (code != TR_E_CORRUPT && code != TR_E_TOO_LARGE && code != TR_E_IO)
			fuzz_fail("error code %d outside the contract", (int)code);
		return;
	}
	if (!out.png || out.png->len < 8 || memcmp(out.png->data, "\x89PNG\r\n\x1a\n", 8) != 0)
		fuzz_fail("a render that is no PNG");
	if (out.width < 1 || out.height < 1 || out.width > lim->max_dim ||
	    out.height > lim->max_dim)
		fuzz_fail("rendered %ux%u for a long edge of %u", out.width, out.height,
			  lim->max_dim);
	if (4 * ((out.png->len + 2) / 3) > lim->max_b64)
		fuzz_fail("%zu bytes of PNG over a base64 budget of %llu", out.png->len,
			  (unsigned long long)lim->max_b64);
	tr_blob_unref(out.png);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_svg_limits lim;
	char *inflated = NULL, err[128];
	const unsigned char *doc;
	size_t len;

	if (size < 2)
		return 0;
	lim.max_dim = 1 + data[0] % 128;
	lim.max_b64 = 256 + (uint64_t)data[1] * 256;
	doc = data + 2;
	len = size - 2;
	if (tr_svg_gzip_signature(doc, len)) {
		int rc = tr_svg_inflate(doc, len, MAX_INFLATED, &inflated, &len, err, sizeof(err));

		if (rc < 0)
			return 0;
		if (len > MAX_INFLATED || inflated[len] != '\0')
			fuzz_fail("inflated %zu bytes, limit %d, or no NUL", len, MAX_INFLATED);
		if (rc == 2 && !err[0])
			fuzz_fail("a damaged stream without a reason");
		doc = (const unsigned char *)inflated;
	}
	if (tr_svg_detect(doc, len))
		check_render(doc, len, &lim);
	free(inflated);
	return 0;
}
