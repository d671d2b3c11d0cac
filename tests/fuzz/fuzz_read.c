/* SPDX-License-Identifier: MIT */
/* fuzz_read.c - libFuzzer target for whole reads (tr_read_fd on an in-memory file): a parameter
 * header (file name, selector, limits), then the file's bytes. Probing, every reader, sha256 and
 * the renderers run as for a real file; the result must render as valid JSON in every format.
 * Built with -DFUZZ_READ_PDF the file is always named doc.pdf (the PDF reader on poppler). */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "tr_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if defined(FUZZ_READ_PDF)
	static const char *const names[] = {"doc.pdf"};
#else
	static const char *const names[] = {"notes.txt", "nb.ipynb", "pic.png", "pic.jpg",
					    "pic.gif",   "pic.webp", "data",    "main.c"};
#endif
	struct fuzz_input params, payload;
	struct tr_selector sel;
	struct tr_options opts;
	struct tr_source src = {0};
	struct tr_result res;
	char path[64];
	int fd;

	fuzz_split(data, size, &params, &payload);
#if !defined(FUZZ_READ_PDF)
	/* PDFs (a header within the first 1 KiB) are fuzz_pdf's: page renders would take most of
	 * this target's time. */
	if (memmem(payload.data, payload.len < 1024 ? payload.len : 1024, "%PDF-", 5))
		return 0;
#endif
	src.name = names[fuzz_byte(&params) % (sizeof(names) / sizeof(names[0]))];
	fuzz_selector(&params, &sel);
	fuzz_options(&params, &opts);
	strcpy(path, "dir/");
	strcat(path, src.name);
	src.path = path;
	fd = fuzz_memfd(payload.data, payload.len);
	if (tr_result_init(&res, path) < 0)
		fuzz_fail("tr_result_init failed");
	if (tr_read_fd(fd, &src, &sel, &opts, &res, NULL) < 0)
		fuzz_fail("tr_read_fd ran out of memory");
	close(fd);
	if (!res.meta.has_stat || res.meta.size != payload.len)
		fuzz_fail("metadata.size %llu for %zu bytes", (unsigned long long)res.meta.size,
			  payload.len);
	if (!res.success && res.error == TR_OK)
		fuzz_fail("failed without an error code");
	if (res.success && res.error != TR_OK)
		fuzz_fail("succeeded with an error code");
	if (res.type == TR_TYPE_TEXT && res.success)
		fuzz_check_utf8("text content", (const unsigned char *)res.content.data,
				res.content.len);
	fuzz_check_result(&res);
	tr_result_destroy(&res);
	return 0;
}
