/* SPDX-License-Identifier: MIT */
/* fuzz_svg.c - libFuzzer target for the SVG path: detection (tr_svg_detect), the .svgz inflate
 * (tr_svg_inflate, bounded) and the render (tr_svg_render_here) at a small size. The first
 * byte picks the long edge (1-128 px), the second the base64 budget; the rest is the document,
 * plain or gzipped. Any bytes, never a crash, and results as the contract gives them.
 * The render runs in a forked child, as the reader's does in its worker: librsvg 2.54 aborts
 * on some documents (a panic it cannot unwind, on a font FreeType cannot scale) and CI's run
 * of stop 45 ended on a leak inside cairo (its stack ends there); the product answers such a
 * read corrupt naming the signal (tests/readers/test_svg.py
 * test_a_renderer_that_aborts_is_corrupt_naming_the_signal). A child's failed check or
 * sanitizer report fails here; its abort() alone is the library's. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* check_render in a child process; fails on its failed check or sanitizer report. */
static void check_render_in_child(const unsigned char *doc, size_t len,
				  const struct tr_svg_limits *lim)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		fuzz_fail("fork failed");
	if (pid == 0) {
		/* libFuzzer's handlers, inherited, would turn an abort or the alarm into its exit */
		signal(SIGABRT, SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		alarm(25); /* a hang is a failure before libFuzzer's -timeout=30 leaves it behind */
		fuzz_fail_by_exit();
		check_render(doc, len, lim);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) != pid)
		if (errno != EINTR) /* libFuzzer's second-by-second timer */
			fuzz_fail("waitpid failed");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)
		return;
	fuzz_fail("the render's child ended with status %#x", (unsigned)status);
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
		check_render_in_child(doc, len, &lim);
	free(inflated);
	return 0;
}
