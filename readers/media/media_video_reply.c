/* SPDX-License-Identifier: MIT */
/* media_video_reply.c - the media module's answer for a video: the picture the request asks
 * for (a contact sheet of [t0, t1) or the frame at t0) as raw RGB, the times of its frames, and
 * the text of its subtitle tracks, in the content. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "media_ffmpeg.h"
#include "media_video.h"

/* The default view's grid. */
#define SHEET_COLS 3
#define SHEET_ROWS 3

/* Why a picture could not be made, for the content line. */
static const char *why(int r)
{
	switch (r) {
	case -ERANGE: return "the time is past the end of the video";
	case -EFBIG: return "its pictures are larger than 8192x4320 pixels";
	case -ENOSYS: return "FFmpeg has no decoder for its video codec";
	case -ETIMEDOUT: return "decoding took longer than max_render_ms";
	case -ENOMEM: return "out of memory";
	case -EINVAL: return "the span is empty";
	default: return "no frame of it decodes (no picture size, cut short or corrupt)";
	}
}

static void put_time(FILE *text, double s)
{
	char buf[32];

	media_time_text((int64_t)llround(s * 1000), buf, sizeof(buf));
	fputs(buf, text);
}

/* The sheet of [t0, t1) (t1 < 0: to the end) or the frame at t0 into *pic; its times into text. */
static int picture(struct media_input *in, const struct media_request *req,
		   const struct media_reply *rep, int stream, uint64_t deadline, FILE *text,
		   struct media_frame *pic)
{
	double times[SHEET_COLS * SHEET_ROWS], t1 = req->t1;
	int n = 0, r, i;

	if (req->picture == 2) {
		r = media_video_frame(in->fmt, stream, req->t0, (int)req->max_w, (int)req->max_h,
				      deadline, pic);
		if (r == 0) {
			fputs("Frame shown: ", text);
			put_time(text, pic->pts);
			fputs("\n", text);
		}
		return r;
	}
	if (t1 < 0 || (rep->duration > 0 && t1 > rep->duration))
		t1 = rep->duration;
	/* no length to spread a sheet over: the first frame */
	if (!(t1 > req->t0))
		return picture(in,
			       &(struct media_request){.t0 = req->t0,
						       .picture = 2,
						       .max_w = req->max_w,
						       .max_h = req->max_h},
			       rep, stream, deadline, text, pic);
	r = media_video_sheet(in->fmt, stream, req->t0, t1, SHEET_COLS, SHEET_ROWS, (int)req->max_w,
			      (int)req->max_h, deadline, pic, times, &n);
	if (r < 0)
		return r;
	fprintf(text,
		"Frames shown (a %dx%d contact sheet, row by row, each time drawn in its "
		"bottom-right corner): ",
		SHEET_COLS, SHEET_ROWS);
	for (i = 0; i < n; i++) {
		fputs(i ? ", " : "", text);
		put_time(text, times[i]);
	}
	fputs("\n", text);
	return 0;
}

int media_video_reply(struct media_input *in, const struct media_request *req,
		      struct media_reply *rep, FILE *text, unsigned char **blob, size_t *blob_len)
{
	int stream = av_find_best_stream(in->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	uint64_t deadline = req->deadline;
	struct media_frame pic = {0};
	char *subs = NULL;
	size_t subs_len = 0;
	int r;

	if (stream >= 0 && req->picture) {
		r = picture(in, req, rep, stream, deadline, text, &pic);
		if (r == -ENOMEM)
			return MEDIA_NOMEM;
		if (r < 0)
			fprintf(text, "[pictures: %s]\n", why(r));
	}
	/* a frame's cues are those on screen at its time, a sheet's those of its span */
	r = media_subtitles(in->fmt, req->t0, req->picture == 2 ? req->t0 : req->t1, deadline,
			    &subs, &subs_len);
	if (r == -ENOMEM) {
		media_frame_free(&pic);
		return MEDIA_NOMEM;
	}
	if (r < 0)
		fprintf(text, "[subtitles not read: %s]\n", why(r));
	else if (subs)
		fwrite(subs, 1, subs_len, text);
	free(subs);
	if (pic.rgb) {
		*blob = pic.rgb;
		*blob_len = (size_t)pic.width * pic.height * 3;
		rep->pic_w = (uint32_t)pic.width;
		rep->pic_h = (uint32_t)pic.height;
	}
	return MEDIA_OK;
}
