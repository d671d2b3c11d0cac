/* SPDX-License-Identifier: MIT */
/* fuzz_image.c - libFuzzer target for one image validator of readers/image.h (chosen at build
 * time with -DFUZZ_VALIDATOR=tr_png_validate, ...): any bytes, never a crash, and an answer that
 * keeps its contract. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "image.h"

#ifndef FUZZ_VALIDATOR
#error "build with -DFUZZ_VALIDATOR=tr_png_validate (or jpeg, gif, webp)"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_image_info info, again;
	char err[256], small[8];
	int rc, rc_small;
	size_t small_size = 1 + size % sizeof(small);

	memset(err, 'x', sizeof(err));
	memset(&info, 0xa5, sizeof(info));
	rc = FUZZ_VALIDATOR(data, size, &info, err, sizeof(err));
	if (rc != 0 && rc != -1)
		fuzz_fail("validator returned %d", rc);
	if (rc == 0) {
		if (info.width == 0 || info.height == 0 || info.frames == 0)
			fuzz_fail("valid image with width %u height %u frames %u", info.width,
				  info.height, info.frames);
		if (!memchr(info.summary, '\0', sizeof(info.summary)))
			fuzz_fail("summary is not NUL-terminated");
		fuzz_check_utf8("summary", (const unsigned char *)info.summary,
				strlen(info.summary));
	} else {
		if (!memchr(err, '\0', sizeof(err)))
			fuzz_fail("error is not NUL-terminated");
		if (err[0] == '\0')
			fuzz_fail("error sentence is empty");
		fuzz_check_utf8("error", (const unsigned char *)err, strlen(err));
	}
	/* Pure: the same answer again, whatever the size of the error buffer. */
	memset(small, 'x', sizeof(small));
	rc_small = FUZZ_VALIDATOR(data, size, &again, small, small_size);
	if (rc_small != rc)
		fuzz_fail("validator is not deterministic (%d then %d)", rc, rc_small);
	if (rc == 0 && (again.width != info.width || again.height != info.height ||
			again.frames != info.frames))
		fuzz_fail("validator is not deterministic");
	if (rc != 0 && !memchr(small, '\0', small_size))
		fuzz_fail("error cut to %zu bytes is not NUL-terminated", small_size);
	if (rc != 0 && small_size < sizeof(small) && small[small_size] != 'x')
		fuzz_fail("error written past err_size");
	return 0;
}
