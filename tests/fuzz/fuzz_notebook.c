/* SPDX-License-Identifier: MIT */
/* fuzz_notebook.c - libFuzzer target for the notebook renderer (tr_notebook_read_buffer): a
 * parameter header (selector, limits), then the notebook's JSON text. Every result must render
 * in every format as valid JSON. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "notebook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input params, payload;
	struct tr_selector sel;
	struct tr_options opts;
	struct tr_result res;

	fuzz_split(data, size, &params, &payload);
	fuzz_selector(&params, &sel);
	fuzz_options(&params, &opts);
	if (tr_result_init(&res, "work/nb.ipynb") < 0)
		fuzz_fail("tr_result_init failed");
	if (tr_notebook_read_buffer((const char *)payload.data, payload.len, "nb.ipynb", &sel,
				    &opts, 0, &res) < 0)
		fuzz_fail("tr_notebook_read_buffer ran out of memory");
	if (res.success && res.type != TR_TYPE_NOTEBOOK)
		fuzz_fail("a successful notebook read of type %d", res.type);
	if (res.success && res.range_start > res.range_end)
		fuzz_fail("range %llu-%llu", (unsigned long long)res.range_start,
			  (unsigned long long)res.range_end);
	fuzz_check_result(&res);
	tr_result_destroy(&res);
	return 0;
}
