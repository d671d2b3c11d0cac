/* SPDX-License-Identifier: MIT */
/* fuzz_media.c - libFuzzer target for the media worker's probe path, in process (no sandbox):
 * detection by content (media_detect), FFmpeg's demuxer over our pread AVIOContext
 * (media_open), the description (media_describe) and the loudness outline of the first seconds
 * (media_loudness, with a deadline). The input is the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libavutil/log.h>

#include "fuzz_util.h"
#include "media.h"
#include "media_worker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct media_reply rep = {.magic = MEDIA_MAGIC, .duration = -1.0};
	struct media_input in;
	const char *mime = NULL;
	char err[256], *text = NULL;
	size_t text_len = 0;
	FILE *out;
	int fd;

	av_log_set_level(AV_LOG_QUIET);
	media_detect(data, size < 8192 ? size : 8192, &mime);
	fd = memfd_create("fuzz_media", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		fuzz_fail("memfd_create/write failed");
	out = open_memstream(&text, &text_len);
	if (!out)
		fuzz_fail("open_memstream failed");
	if (media_open(&in, fd, size, err, sizeof(err)) == MEDIA_OK) {
		if (media_describe(&in, &rep, out) == MEDIA_OK && rep.kind == MEDIA_KIND_AUDIO)
			media_loudness(&in, 0, 5, media_now_ns() + 2000000000ull, out);
		media_close(&in);
		if (rep.kind != 0 && rep.kind != MEDIA_KIND_AUDIO && rep.kind != MEDIA_KIND_VIDEO)
			fuzz_fail("kind %u", rep.kind);
	} else if (!err[0]) {
		fuzz_fail("media_open failed without a sentence");
	}
	fclose(out);
	free(text);
	close(fd);
	return 0;
}
