/* SPDX-License-Identifier: MIT */
/* media_video.c - one video frame by time: seek to the keyframe before it, decode forward to it,
 * rotate and scale it to fit (libavcodec, libswscale). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libavcodec/avcodec.h>
#include <libavutil/display.h>
#include <libswscale/swscale.h>

#include "media_video.h"

struct media_video_decoder {
	AVFormatContext *fmt; /* borrowed */
	AVStream *st;
	AVCodecContext *ctx;
	AVPacket *pkt;
	AVFrame *frame; /* being decoded */
	AVFrame *best;  /* the last frame decoded, the one shown */
	int64_t first;  /* pts of the first frame decoded since the seek (AV_NOPTS_VALUE: none) */
	int drained;    /* the end was reached: only a seek goes on */
	int rotation;   /* clockwise degrees to apply: 0, 90, 180, 270 */
	int64_t start;  /* the file's start, in the stream's time base */
};

int media_deadline_passed(uint64_t deadline)
{
	struct timespec ts;

	if (deadline == 0 || clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec >= deadline;
}

void media_frame_free(struct media_frame *frame)
{
	if (!frame)
		return;
	free(frame->rgb);
	memset(frame, 0, sizeof(*frame));
}

/* The clockwise turn the display matrix asks for, as ffmpeg's autorotate reads it. */
static int stream_rotation(const AVStream *st)
{
	const int32_t *matrix;
	double theta;
	int deg;

	matrix = (const int32_t *)av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
	if (!matrix)
		return 0;
	theta = -av_display_rotation_get(matrix);
	if (!isfinite(theta))
		return 0;
	deg = (int)lrint(theta / 90.0) * 90 % 360;
	return deg < 0 ? deg + 360 : deg;
}

static int size_refused(int width, int height)
{
	return width > MEDIA_VIDEO_MAX_SIDE || height > MEDIA_VIDEO_MAX_SIDE ||
	       (int64_t)width * height > MEDIA_VIDEO_MAX_PIXELS;
}

int media_video_open(AVFormatContext *fmt, int stream, struct media_video_decoder **out)
{
	struct media_video_decoder *d;
	const AVCodecParameters *par;
	const AVCodec *codec;
	int r;

	*out = NULL;
	if (!fmt || stream < 0 || (unsigned)stream >= fmt->nb_streams)
		return -EINVAL;
	par = fmt->streams[stream]->codecpar;
	if (par->codec_type != AVMEDIA_TYPE_VIDEO)
		return -EINVAL;
	if (par->width <= 0 || par->height <= 0)
		return -ENODATA; /* avformat found no picture size (or refused it) */
	if (size_refused(par->width, par->height))
		return -EFBIG;
	codec = avcodec_find_decoder(par->codec_id);
	if (!codec)
		return -ENOSYS;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fmt = fmt;
	d->st = fmt->streams[stream];
	d->rotation = stream_rotation(d->st);
	d->start = fmt->start_time == AV_NOPTS_VALUE
			   ? 0
			   : av_rescale_q(fmt->start_time, AV_TIME_BASE_Q, d->st->time_base);
	d->ctx = avcodec_alloc_context3(codec);
	d->pkt = av_packet_alloc();
	d->frame = av_frame_alloc();
	d->best = av_frame_alloc();
	r = -ENOMEM;
	if (!d->ctx || !d->pkt || !d->frame || !d->best)
		goto fail;
	r = -EINVAL;
	if (avcodec_parameters_to_context(d->ctx, par) < 0)
		goto fail;
	/* one thread: a frame at a time within max_worker_memory, as the seccomp profile was
	 * measured; the cap also binds what the bitstream says after the header */
	d->ctx->thread_count = 1;
	d->ctx->thread_type = 0;
	d->ctx->max_pixels = MEDIA_VIDEO_MAX_PIXELS;
	d->ctx->pkt_timebase = d->st->time_base;
	r = -ENOSYS;
	if (avcodec_open2(d->ctx, codec, NULL) < 0)
		goto fail;
	*out = d;
	return 0;
fail:
	media_video_close(d);
	return r;
}

void media_video_close(struct media_video_decoder *dec)
{
	if (!dec)
		return;
	avcodec_free_context(&dec->ctx);
	av_packet_free(&dec->pkt);
	av_frame_free(&dec->frame);
	av_frame_free(&dec->best);
	free(dec);
}

/* Displayed size of a coded width x height with sample aspect sar, turned by rotation. */
static void display_size(int width, int height, AVRational sar, int rotation, int *dw, int *dh)
{
	double w = width;

	if (sar.num > 0 && sar.den > 0 && sar.num != sar.den)
		w = w * sar.num / sar.den;
	*dw = (int)lrint(fmin(w, MEDIA_VIDEO_MAX_SIDE * 4.0));
	*dh = height;
	if (*dw < 1 && width > 0)
		*dw = 1;
	if (rotation == 90 || rotation == 270) {
		int swap = *dw;
		*dw = *dh;
		*dh = swap;
	}
}

void media_video_display_size(const struct media_video_decoder *dec, int *width, int *height)
{
	const AVCodecParameters *par = dec->st->codecpar;
	AVRational sar = dec->st->sample_aspect_ratio.num ? dec->st->sample_aspect_ratio
							  : par->sample_aspect_ratio;

	display_size(par->width, par->height, sar, dec->rotation, width, height);
}

/* Seeks to the keyframe at or before ts (stream time base); the start of the file when the
 * demuxer cannot. */
static void seek_before(struct media_video_decoder *d, int64_t ts)
{
	if (av_seek_frame(d->fmt, d->st->index, ts, AVSEEK_FLAG_BACKWARD) < 0 &&
	    avformat_seek_file(d->fmt, d->st->index, INT64_MIN, ts, ts, 0) < 0)
		av_seek_frame(d->fmt, d->st->index, 0, AVSEEK_FLAG_BYTE);
	avcodec_flush_buffers(d->ctx);
	av_frame_unref(d->best);
	d->first = AV_NOPTS_VALUE;
	d->drained = 0;
}

/* Whether decoding on from the frame last shown reaches target at least as soon as a seek: it
 * is before target, and the keyframe a seek would land on (the demuxer's index) is not after
 * it. A sheet's cells within one GOP are then decoded once, not once each. */
static int can_continue(struct media_video_decoder *d, int64_t target)
{
	int64_t at = d->best->data[0] ? d->best->best_effort_timestamp : AV_NOPTS_VALUE;
	const AVIndexEntry *key;
	int idx;

	if (d->drained || at == AV_NOPTS_VALUE || at >= target)
		return 0;
	idx = av_index_search_timestamp(d->st, target, AVSEEK_FLAG_BACKWARD);
	key = idx < 0 ? NULL : avformat_index_get_entry(d->st, idx);
	return key && key->timestamp <= at;
}

/* Decodes forward to the first frame with pts >= target, left in d->best: 1 found, 0 the end
 * came first (d->best holds the last frame, if any), or -errno. */
static int decode_until(struct media_video_decoder *d, int64_t target, uint64_t deadline)
{
	int draining = 0, r;

	for (;;) {
		r = avcodec_receive_frame(d->ctx, d->frame);
		if (r == 0) {
			int64_t pts = d->frame->best_effort_timestamp;

			if (size_refused(d->frame->width, d->frame->height)) {
				av_frame_unref(d->frame);
				return -EFBIG;
			}
			av_frame_unref(d->best);
			av_frame_move_ref(d->best, d->frame);
			if (d->first == AV_NOPTS_VALUE)
				d->first = pts;
			if (pts == AV_NOPTS_VALUE || pts >= target)
				return 1;
			continue;
		}
		if (r == AVERROR_EOF || (r == AVERROR(EAGAIN) && draining))
			return 0;
		if (r != AVERROR(EAGAIN))
			return r == AVERROR(ENOMEM) ? -ENOMEM : -ENODATA;
		if (media_deadline_passed(deadline))
			return -ETIMEDOUT;
		r = av_read_frame(d->fmt, d->pkt);
		if (r == AVERROR(ENOMEM))
			return -ENOMEM;
		if (r < 0) {
			draining = d->drained = 1;
			avcodec_send_packet(d->ctx, NULL);
			continue;
		}
		if (d->pkt->stream_index == d->st->index)
			r = avcodec_send_packet(d->ctx, d->pkt);
		av_packet_unref(d->pkt);
		/* a corrupt packet is skipped: a later keyframe may decode */
		if (r == AVERROR(ENOMEM))
			return -ENOMEM;
	}
}

/* The stream's duration in seconds, or 0 when neither the file nor the stream gives one. */
static double duration_of(const struct media_video_decoder *d)
{
	if (d->fmt->duration != AV_NOPTS_VALUE && d->fmt->duration > 0)
		return d->fmt->duration / (double)AV_TIME_BASE;
	if (d->st->duration != AV_NOPTS_VALUE && d->st->duration > 0)
		return d->st->duration * av_q2d(d->st->time_base);
	return 0;
}

/* Turns the packed RGB picture src (w x h) clockwise by rotation into a new buffer. */
static unsigned char *rotate_rgb(const unsigned char *src, int w, int h, int rotation)
{
	unsigned char *dst = malloc((size_t)w * h * 3);
	int x, y;

	if (!dst)
		return NULL;
	for (y = 0; y < h; y++) {
		for (x = 0; x < w; x++) {
			size_t to;

			if (rotation == 90)
				to = (size_t)x * h + (h - 1 - y);
			else if (rotation == 180)
				to = (size_t)(h - 1 - y) * w + (w - 1 - x);
			else
				to = (size_t)(w - 1 - x) * h + y;
			memcpy(dst + to * 3, src + ((size_t)y * w + x) * 3, 3);
		}
	}
	return dst;
}

void media_fit_size(int dw, int dh, int max_w, int max_h, int *fw, int *fh)
{
	double s = 1.0;

	if (max_w > 0 && dw > max_w)
		s = (double)max_w / dw;
	if (max_h > 0 && dh * s > max_h)
		s = (double)max_h / dh;
	*fw = (int)lrint(dw * s);
	*fh = (int)lrint(dh * s);
	*fw = *fw < 1 ? 1 : *fw;
	*fh = *fh < 1 ? 1 : *fh;
}

/* d->best scaled (and turned) to fit max_w x max_h into out->rgb. */
static int frame_to_rgb(const struct media_video_decoder *d, int max_w, int max_h,
			struct media_frame *out)
{
	const AVFrame *f = d->best;
	struct SwsContext *sws;
	unsigned char *rgb, *dst[4] = {NULL};
	int dw, dh, fw, fh, sw, sh, stride[4] = {0};
	int full = f->color_range == AVCOL_RANGE_JPEG;
	const int *coef;

	display_size(f->width, f->height, f->sample_aspect_ratio, d->rotation, &dw, &dh);
	if (dw < 1 || dh < 1)
		return -ENODATA;
	media_fit_size(dw, dh, max_w, max_h, &fw, &fh);
	if (size_refused(fw, fh))
		return -EFBIG;
	sw = d->rotation == 90 || d->rotation == 270 ? fh : fw;
	sh = d->rotation == 90 || d->rotation == 270 ? fw : fh;
	sws = sws_getContext(f->width, f->height, f->format, sw, sh, AV_PIX_FMT_RGB24, SWS_BICUBIC,
			     NULL, NULL, NULL);
	if (!sws)
		return -ENOSYS;
	/* the frame's own matrix, as ffmpeg's scale filter takes it (unspecified: BT.601) */
	coef = sws_getCoefficients(f->colorspace == AVCOL_SPC_UNSPECIFIED ? SWS_CS_DEFAULT
									  : (int)f->colorspace);
	sws_setColorspaceDetails(sws, coef, full, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
				 1 << 16, 1 << 16);
	rgb = malloc((size_t)sw * sh * 3);
	if (!rgb) {
		sws_freeContext(sws);
		return -ENOMEM;
	}
	dst[0] = rgb;
	stride[0] = sw * 3;
	sws_scale(sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dst, stride);
	sws_freeContext(sws);
	if (d->rotation) {
		unsigned char *turned = rotate_rgb(rgb, sw, sh, d->rotation);

		free(rgb);
		if (!turned)
			return -ENOMEM;
		rgb = turned;
	}
	out->width = fw;
	out->height = fh;
	out->rgb = rgb;
	return 0;
}

int media_video_decode_at(struct media_video_decoder *dec, double t, int max_w, int max_h,
			  uint64_t deadline, struct media_frame *out)
{
	double tb = av_q2d(dec->st->time_base), duration = duration_of(dec), shown;
	int64_t target, back;
	int r;

	memset(out, 0, sizeof(*out));
	if (!isfinite(t) || t < 0 || max_w < 0 || max_h < 0 || tb <= 0)
		return -EINVAL;
	if ((duration > 0 && t >= duration) || t / tb > (double)(INT64_MAX / 4))
		return -ERANGE;
	/* the first tick at or after t (t = 4.02 s at 1/25 s is tick 101, not 100) */
	target = dec->start + (int64_t)ceil(t / tb - 1e-6);
	if (can_continue(dec, target)) {
		r = decode_until(dec, target, deadline);
	} else {
		/* A demuxer that seeks by timestamps alone (MPEG-TS) may land past target, or past
		 * the last keyframe: then seek again from earlier, 1 s back, then 2, 4, ... */
		for (back = 0;; back = back ? back * 2 : (int64_t)lrint(1 / tb)) {
			seek_before(dec, target - back);
			r = decode_until(dec, target, deadline);
			if (r < 0 || (dec->first != AV_NOPTS_VALUE && dec->first <= target) ||
			    target - back <= dec->start || back > (int64_t)lrint(16 / tb))
				break;
		}
	}
	if (r < 0)
		return r;
	if (!dec->best->data[0])
		return -ENODATA;
	shown = dec->best->best_effort_timestamp == AV_NOPTS_VALUE
			? t
			: (dec->best->best_effort_timestamp - dec->start) * tb;
	/* the end came first: the last frame stands for t only within a second of it (a file cut
	 * short says a length its frames do not reach) */
	if (r == 0 && t - shown > 1.0)
		return -ERANGE;
	r = frame_to_rgb(dec, max_w, max_h, out);
	if (r == 0)
		out->pts = shown;
	return r;
}

int media_video_frame(AVFormatContext *fmt, int stream, double t, int max_w, int max_h,
		      uint64_t deadline, struct media_frame *out)
{
	struct media_video_decoder *dec;
	int r;

	memset(out, 0, sizeof(*out));
	r = media_video_open(fmt, stream, &dec);
	if (r < 0)
		return r;
	r = media_video_decode_at(dec, t, max_w, max_h, deadline, out);
	media_video_close(dec);
	return r;
}
