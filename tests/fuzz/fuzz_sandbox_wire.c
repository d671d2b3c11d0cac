/* SPDX-License-Identifier: MIT */
/* fuzz_sandbox_wire.c - libFuzzer target for the reader worker's reply as the core decodes it
 * (readers/sandbox/sandbox_wire.c): any bytes are refused or become a result that renders as
 * valid JSON and encodes back to bytes that decode to the same encoding. */
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "sandbox.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tr_result res, again;
	struct tr_buf one = {0}, two = {0};
	int rc;

	if (tr_result_init(&res, "fuzz.bin") < 0)
		fuzz_fail("out of memory");
	rc = tr_sandbox_decode(data, size, &res);
	if (rc < 0)
		fuzz_fail("tr_sandbox_decode ran out of memory");
	if (rc == 0) {
		fuzz_check_result(&res);
		if (tr_sandbox_encode(&res, &one) < 0 || tr_result_init(&again, "fuzz.bin") < 0)
			fuzz_fail("out of memory");
		if (tr_sandbox_decode((unsigned char *)one.data, one.len, &again) != 0)
			fuzz_fail("a decoded result does not decode again");
		if (tr_sandbox_encode(&again, &two) < 0)
			fuzz_fail("out of memory");
		if (one.len != two.len || memcmp(one.data, two.data, one.len) != 0)
			fuzz_fail("a decoded result encodes differently the second time");
		tr_result_destroy(&again);
		tr_buf_free(&one);
		tr_buf_free(&two);
	}
	tr_result_destroy(&res);
	return 0;
}
