/* SPDX-License-Identifier: MIT */
/* media_module.c - toolfs-media.so: FFmpeg's part of the audio and video reader, run in
 * toolfs-reader-worker (the reader is TR_CAP_UNTRUSTED; docs/SPEC.md §8): one request on one
 * file's descriptor, its description, loudness, pictures and WAV answered in memory. */
#include <stdlib.h>
#include <string.h>

#include <libavutil/log.h>

#include "media_ffmpeg.h"

/* Runs one request into rep, text (open_memstream) and *blob. */
static void answer(const struct media_request *req, int fd, struct media_reply *rep, FILE *text,
		   unsigned char **blob, size_t *blob_len, char *err, size_t err_size)
{
	struct media_input in = {0};
	int rc = media_open(&in, fd, req->size, err, err_size);

	if (rc == MEDIA_OK) {
		rc = media_describe(&in, rep, text);
		if (rc == MEDIA_UNSUPPORTED)
			snprintf(err, err_size, "it holds no audio or video stream");
	}
	if (rc == MEDIA_OK && rep->kind == MEDIA_KIND_AUDIO)
		media_loudness(&in, req->t0, req->t1, req->deadline, text);
	if (rc == MEDIA_OK && rep->kind == MEDIA_KIND_VIDEO)
		rc = media_video_reply(&in, req, rep, text, blob, blob_len);
	if (rc == MEDIA_OK && req->op == MEDIA_OP_AUDIO && req->skip_whole && req->t0 == 0 &&
	    rep->duration >= 0 && rep->duration <= req->t1) {
		rep->blob_t1 = rep->duration;
	} else if (rc == MEDIA_OK && req->op == MEDIA_OP_AUDIO) {
		rc = media_wav(&in, req->t0, req->t1, req->max_blob, blob, blob_len, &rep->blob_t1,
			       err, err_size);
		rep->blob_t0 = req->t0;
	}
	if (in.fmt || in.io)
		media_close(&in);
	rep->status = (uint32_t)rc;
}

static int media_run(int fd, const struct media_request *req, struct media_answer *ans)
{
	struct media_reply *rep = &ans->rep;
	unsigned char *blob = NULL;
	size_t blob_len = 0, text_len = 0;
	char *text = NULL, err[256] = "";
	FILE *out;

	*ans = (struct media_answer){.rep = {.duration = -1.0}};
	av_log_set_level(AV_LOG_QUIET);
	/* FFmpeg formats creation times with localtime_r: in UTC (the worker reads no zone file) */
	setenv("TZ", "UTC", 1);
	tzset();
	out = open_memstream(&text, &text_len);
	if (!out)
		return -1;
	answer(req, fd, rep, out, &blob, &blob_len, err, sizeof(err));
	/* MEDIA_NOMEM stays a status with its sentence: FFmpeg answers ENOMEM for limits of its
	 * own too (max_streams), not only for memory, which max_worker_memory bounds */
	if (fclose(out)) {
		free(text);
		free(blob);
		return -1;
	}
	if (rep->status != MEDIA_OK) { /* the sentence alone */
		free(text);
		text = strdup(err);
		text_len = text ? strlen(text) : 0;
		if (!text) {
			free(blob);
			return -1;
		}
	}
	if (text_len > MEDIA_MAX_TEXT) /* cut on a line: open_memstream keeps a NUL after it */
		text[text_len = MEDIA_MAX_TEXT] = '\0';
	rep->text_len = (uint32_t)text_len;
	rep->blob_len = blob_len;
	ans->text = text;
	ans->blob = blob;
	return 0;
}

const struct tr_media_api tr_media_api = {
	.abi = TR_MEDIA_ABI,
	.run = media_run,
};
