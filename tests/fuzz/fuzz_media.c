/* SPDX-License-Identifier: MIT */
/* fuzz_media.c - libFuzzer target for the media module's probe path, in process (no sandbox):
 * detection by content (media_detect), FFmpeg's demuxer over our pread AVIOContext
 * (media_open), the description (media_describe), the loudness outline of the first seconds
 * (media_loudness, with a deadline) and a video's pictures and subtitles (media_video_reply).
 * The input is the file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libavutil/log.h>

#include "fuzz_util.h"
#include "media.h"
#include "media_ffmpeg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A video's pictures and subtitles as the worker makes them (media_video_reply.c): the default
 * sheet, small, then the frame at 1 s; each picture's size must be what the reply says. */
static void fuzz_video(struct media_input *in, struct media_reply *rep, FILE *out)
{
	struct media_request req = {.t1 = -1,
				    .picture = 1,
				    .max_w = 96,
				    .max_h = 96,
				    .deadline = media_now_ns() + 2000000000ull};
	int i, rc;

	for (i = 0; i < 2; i++) {
		unsigned char *blob = NULL;
		size_t blob_len = 0;

		rep->pic_w = rep->pic_h = 0;
		rc = media_video_reply(in, &req, rep, out, &blob, &blob_len);
		if (rc == MEDIA_NOMEM) /* allocator_may_return_null */
			return;
		if (rc != MEDIA_OK)
			fuzz_fail("media_video_reply: status %d", rc);
		if (blob_len != (size_t)rep->pic_w * rep->pic_h * 3 || rep->pic_w > 96 ||
		    rep->pic_h > 96)
			fuzz_fail("picture %ux%u, %zu bytes", rep->pic_w, rep->pic_h, blob_len);
		free(blob);
		req.picture = 2;
		req.t0 = 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct media_reply rep = {.duration = -1.0};
	struct media_input in;
	const char *mime = NULL;
	char err[256], *text = NULL;
	size_t text_len = 0;
	FILE *out;
	int fd;

	/* FFmpeg's own assertions log at PANIC before they abort: a crash then names its line */
	av_log_set_level(AV_LOG_PANIC);
	media_detect(data, size < 8192 ? size : 8192, &mime);
	fd = memfd_create("fuzz_media", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		fuzz_fail("memfd_create/write failed");
	out = open_memstream(&text, &text_len);
	if (!out)
		fuzz_fail("open_memstream failed");
	if (media_open(&in, fd, size, err, sizeof(err)) == MEDIA_OK) {
		int described = media_describe(&in, &rep, out);

		if (described == MEDIA_OK && rep.kind == MEDIA_KIND_AUDIO)
			media_loudness(&in, 0, 5, media_now_ns() + 2000000000ull, out);
		if (described == MEDIA_OK && rep.kind == MEDIA_KIND_VIDEO)
			fuzz_video(&in, &rep, out);
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
