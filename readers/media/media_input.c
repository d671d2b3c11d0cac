/* SPDX-License-Identifier: MIT */
/* media_input.c - FFmpeg's demuxer over a file descriptor: a custom AVIOContext that preads,
 * so the worker never opens a path. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libavutil/error.h>

#include "media_ffmpeg.h"

#define MEDIA_IO_BUFFER (32 * 1024) /* as the file protocol: the same probing as ffprobe */

uint64_t media_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int input_read(void *opaque, uint8_t *buf, int n)
{
	struct media_input *in = opaque;
	ssize_t got;

	if (in->pos >= in->size)
		return AVERROR_EOF;
	do
		got = pread(in->fd, buf, (size_t)n, (off_t)in->pos);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return AVERROR(errno);
	if (got == 0)
		return AVERROR_EOF;
	in->pos += (uint64_t)got;
	return (int)got;
}

static int64_t input_seek(void *opaque, int64_t offset, int whence)
{
	struct media_input *in = opaque;
	int64_t base;

	switch (whence & ~AVSEEK_FORCE) {
	case AVSEEK_SIZE: return (int64_t)in->size;
	case SEEK_SET: base = 0; break;
	case SEEK_CUR: base = (int64_t)in->pos; break;
	case SEEK_END: base = (int64_t)in->size; break;
	default: return AVERROR(EINVAL);
	}
	if (offset > INT64_MAX - base || base + offset < 0)
		return AVERROR(EINVAL);
	in->pos = (uint64_t)(base + offset);
	return (int64_t)in->pos;
}

static void say(char *err, size_t size, const char *what, int code)
{
	char why[AV_ERROR_MAX_STRING_SIZE] = "";

	av_strerror(code, why, sizeof(why));
	snprintf(err, size, "%s: %s", what, why);
}

int media_open(struct media_input *in, int fd, uint64_t size, char *err, size_t err_size)
{
	unsigned char *buffer;
	int rc;

	memset(in, 0, sizeof(*in));
	in->fd = fd;
	in->size = size;
	buffer = av_malloc(MEDIA_IO_BUFFER);
	if (!buffer)
		return MEDIA_NOMEM;
	in->io = avio_alloc_context(buffer, MEDIA_IO_BUFFER, 0, in, input_read, NULL, input_seek);
	in->fmt = avformat_alloc_context();
	if (!in->io || !in->fmt) {
		if (!in->io)
			av_free(buffer);
		media_close(in);
		return MEDIA_NOMEM;
	}
	in->fmt->pb = in->io;
	in->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
	rc = avformat_open_input(&in->fmt, NULL, NULL, NULL);
	if (rc < 0) {
		/* avformat_open_input freed the context on failure */
		say(err, err_size, "not a media file FFmpeg reads", rc);
		in->fmt = NULL;
		media_close(in);
		return rc == AVERROR(ENOMEM) ? MEDIA_NOMEM : MEDIA_CORRUPT;
	}
	rc = avformat_find_stream_info(in->fmt, NULL);
	if (rc < 0) {
		say(err, err_size, "its streams could not be read", rc);
		media_close(in);
		return rc == AVERROR(ENOMEM) ? MEDIA_NOMEM : MEDIA_CORRUPT;
	}
	return MEDIA_OK;
}

void media_close(struct media_input *in)
{
	if (in->fmt)
		avformat_close_input(&in->fmt);
	if (in->io) {
		av_freep(&in->io->buffer);
		avio_context_free(&in->io);
	}
}
