/* SPDX-License-Identifier: MIT */
/* media_audio.c - decoding the best audio stream to PCM: the loudness outline and the WAV the
 * provider formats attach. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>

#include "media_ffmpeg.h"

/* Called with n interleaved samples (frames of `channels` values) starting at second t. Returns
 * 0 to go on, 1 to stop, or a media_status. */
typedef int (*pcm_fn)(void *ctx, const void *data, int n, double t);

struct decoder {
	AVCodecContext *codec;
	SwrContext *swr;
	AVPacket *packet;
	AVFrame *frame;
	int stream, rate, channels;
	int in_rate; /* the decoder's rate; rate is the converter's output rate */
	enum AVSampleFormat format;
	uint8_t *buffer;
	int buffer_samples;
};

static void decoder_free(struct decoder *d)
{
	avcodec_free_context(&d->codec);
	swr_free(&d->swr);
	av_packet_free(&d->packet);
	av_frame_free(&d->frame);
	av_freep(&d->buffer);
}

/* Opens the best audio stream's decoder and a converter to format with at most max_channels
 * (1 or 2) at rate samples a second (0: the stream's). */
static int decoder_open(struct media_input *in, struct decoder *d, enum AVSampleFormat format,
			int max_channels, int rate)
{
	const AVCodec *codec = NULL;
	AVChannelLayout layout;
	int rc;

	memset(d, 0, sizeof(*d));
	d->stream = av_find_best_stream(in->fmt, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
	if (d->stream < 0 || !codec)
		return MEDIA_UNSUPPORTED;
	d->codec = avcodec_alloc_context3(codec);
	d->packet = av_packet_alloc();
	d->frame = av_frame_alloc();
	if (!d->codec || !d->packet || !d->frame)
		return MEDIA_NOMEM;
	if (avcodec_parameters_to_context(d->codec, in->fmt->streams[d->stream]->codecpar) < 0)
		return MEDIA_CORRUPT;
	d->codec->thread_count = 1; /* one thread, as the seccomp profile was measured */
	if (avcodec_open2(d->codec, codec, NULL) < 0)
		return MEDIA_CORRUPT;
	d->in_rate = d->codec->sample_rate;
	d->rate = rate ? rate : d->in_rate;
	d->channels = d->codec->ch_layout.nb_channels > 1 ? max_channels : 1;
	d->format = format;
	if (d->in_rate <= 0 || d->codec->ch_layout.nb_channels <= 0)
		return MEDIA_CORRUPT;
	av_channel_layout_default(&layout, d->channels);
	rc = swr_alloc_set_opts2(&d->swr, &layout, format, d->rate, &d->codec->ch_layout,
				 d->codec->sample_fmt, d->in_rate, 0, NULL);
	if (rc < 0 || swr_init(d->swr) < 0)
		return MEDIA_CORRUPT;
	return MEDIA_OK;
}

/* Converts the decoded frame and hands it to fn. */
static int deliver(struct decoder *d, double t0, double t1, pcm_fn fn, void *ctx)
{
	double tb, t;
	int n, skip = 0, keep;

	int room = swr_get_out_samples(d->swr, d->frame->nb_samples);

	if (room > d->buffer_samples) {
		av_freep(&d->buffer);
		if (av_samples_alloc(&d->buffer, NULL, d->channels, room, d->format, 0) < 0)
			return MEDIA_NOMEM;
		d->buffer_samples = room;
	}
	n = swr_convert(d->swr, &d->buffer, d->buffer_samples,
			(const uint8_t **)d->frame->extended_data, d->frame->nb_samples);
	if (n <= 0)
		return 0;
	tb = av_q2d(d->codec->pkt_timebase);
	t = d->frame->best_effort_timestamp == AV_NOPTS_VALUE
		    ? t0
		    : (double)d->frame->best_effort_timestamp * tb;
	if (t < t0)
		skip = (int)fmin((double)n, (t0 - t) * d->rate);
	keep = n - skip;
	if (t1 >= 0 && t + (double)n / d->rate > t1)
		keep = (int)fmax(0.0, (t1 - t) * d->rate) - skip;
	if (keep <= 0)
		return t1 >= 0 && t >= t1 ? 1 : 0;
	return fn(ctx, d->buffer + (size_t)skip * d->channels * av_get_bytes_per_sample(d->format),
		  keep, t + (double)skip / d->rate);
}

#define DECODE_END 100 /* decode's answer when the stream ended before fn stopped it */

/* Decodes [t0, t1) (t1 < 0: to the end) into fn until it stops (0), the data ends (DECODE_END)
 * or deadline (0); or a media_status from fn. */
static int decode(struct media_input *in, struct decoder *d, double t0, double t1,
		  uint64_t deadline, pcm_fn fn, void *ctx)
{
	int rc = 0;

	d->codec->pkt_timebase = in->fmt->streams[d->stream]->time_base;
	/* always: an earlier decode of this file may have read on */
	av_seek_frame(in->fmt, -1, (int64_t)(t0 * AV_TIME_BASE), AVSEEK_FLAG_BACKWARD);
	while (rc == 0) {
		int got = av_read_frame(in->fmt, d->packet);

		if (deadline && media_now_ns() > deadline)
			return 1;
		if (got < 0) {
			avcodec_send_packet(d->codec, NULL);
		} else if (d->packet->stream_index != d->stream) {
			av_packet_unref(d->packet);
			continue;
		} else {
			avcodec_send_packet(d->codec, d->packet); /* a damaged packet is skipped */
			av_packet_unref(d->packet);
		}
		while (rc == 0 && avcodec_receive_frame(d->codec, d->frame) == 0) {
			rc = deliver(d, t0, t1, fn, ctx);
			av_frame_unref(d->frame);
		}
		if (got < 0)
			return rc == 1 ? 0 : rc ? rc : DECODE_END;
	}
	return rc == 1 ? 0 : rc;
}

/* --- the loudness outline --- */

#define WINDOW_S 0.5       /* seconds per measured window */
#define SILENT_DB (-50.0)  /* RMS under this: silent */
#define LOUD_DB (-10.0)    /* RMS over this: loud */
#define MAX_SPANS 8        /* spans listed */
#define MAX_WINDOWS 100000 /* 13.9 hours of windows */

struct loudness {
	double *rms; /* per window, dBFS */
	size_t n, cap;
	double sum, peak, window_sum;
	long window_fill, window_size;
	double start;
	bool started;
};

static int loud_window_end(struct loudness *l)
{
	double db = l->window_fill ? 10.0 * log10(l->window_sum / (double)l->window_fill + 1e-12)
				   : -120.0;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		double *grown = cap > MAX_WINDOWS ? NULL : realloc(l->rms, cap * sizeof(*grown));

		if (!grown)
			return 1;
		l->rms = grown;
		l->cap = cap;
	}
	l->rms[l->n++] = db;
	l->window_sum = 0;
	l->window_fill = 0;
	return 0;
}

static int loud_pcm(void *ctx, const void *data, int n, double t)
{
	struct loudness *l = ctx;
	const float *s = data;

	if (!l->started) {
		l->start = t;
		l->started = true;
	}
	for (int i = 0; i < n; i++) {
		double v = s[i];

		l->window_sum += v * v;
		l->sum += v * v;
		if (fabs(v) > l->peak)
			l->peak = fabs(v);
		if (++l->window_fill == l->window_size && loud_window_end(l))
			return 1;
	}
	return 0;
}

static const char *loud_class(double db)
{
	return db < SILENT_DB ? "silent" : db > LOUD_DB ? "loud" : NULL;
}

static void put_clock(FILE *out, double s)
{
	long long ms = llround(s * 1000.0);

	fprintf(out, "%02lld:%02lld.%03lld", ms / 60000, ms / 1000 % 60, ms % 1000);
}

static void loud_report(const struct loudness *l, long samples, FILE *out)
{
	size_t listed = 0, more = 0;

	fprintf(out, "Loudness (%.1f s decoded): RMS %.1f dBFS, peak %.1f dBFS", l->n * WINDOW_S,
		10.0 * log10(l->sum / (double)(samples ? samples : 1) + 1e-12),
		20.0 * log10(l->peak + 1e-12));
	fprintf(out, "; spans of %.1f s windows under %.0f dBFS RMS are silent, over %.0f loud:\n",
		WINDOW_S, SILENT_DB, LOUD_DB);
	for (size_t i = 0; i < l->n;) {
		const char *kind = loud_class(l->rms[i]);
		size_t j = i + 1;

		while (j < l->n && loud_class(l->rms[j]) == kind)
			j++;
		if (kind && listed < MAX_SPANS) {
			fputs("  ", out);
			put_clock(out, l->start + i * WINDOW_S);
			fputs("-", out);
			put_clock(out, l->start + j * WINDOW_S);
			fprintf(out, " %s\n", kind);
			listed++;
		} else if (kind)
			more++;
		i = j;
	}
	if (!listed)
		fputs("  no silent or loud spans\n", out);
	if (more)
		fprintf(out, "  ... and %zu more spans\n", more);
}

void media_loudness(struct media_input *in, double t0, double t1, uint64_t deadline, FILE *out)
{
	struct decoder d;
	struct loudness l = {0};
	long samples;

	/* mono: one value per sample frame */
	if (decoder_open(in, &d, AV_SAMPLE_FMT_FLT, 1, 0) == MEDIA_OK) {
		l.window_size = (long)(d.rate * WINDOW_S);
		if (l.window_size > 0)
			decode(in, &d, t0, t1, deadline, loud_pcm, &l);
		samples = (long)l.n * l.window_size + l.window_fill;
		if (l.window_fill)
			loud_window_end(&l);
		if (l.n)
			loud_report(&l, samples, out);
	}
	decoder_free(&d);
	free(l.rms);
}

/* --- WAV --- */

struct wav {
	unsigned char *data;
	size_t len, cap, max;
	int bytes_per_frame, rate;
	double end; /* the second the data reaches */
};

static int wav_pcm(void *ctx, const void *data, int n, double t)
{
	struct wav *w = ctx;
	size_t add = (size_t)n * (size_t)w->bytes_per_frame;

	bool full = w->len + add > w->max;

	if (full) { /* what fits, then stop: the result says where it ends */
		n = (int)((w->max - w->len) / (size_t)w->bytes_per_frame);
		add = (size_t)n * (size_t)w->bytes_per_frame;
	}
	if (w->len + add > w->cap) {
		size_t cap = (w->cap ? w->cap : 1 << 16);
		unsigned char *grown;

		while (cap < w->len + add)
			cap *= 2;
		grown = realloc(w->data, cap);
		if (!grown)
			return MEDIA_NOMEM;
		w->data = grown;
		w->cap = cap;
	}
	memcpy(w->data + w->len, data, add);
	w->len += add;
	w->end = t + (double)n / w->rate;
	return full ? 1 : 0;
}

static void put_le(unsigned char *p, uint32_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

int media_wav(struct media_input *in, double t0, double t1, uint64_t max_bytes, unsigned char **wav,
	      size_t *len, double *end, char *err, size_t err_size)
{
	struct decoder d;
	struct wav w = {.len = 44, .max = max_bytes, .end = t0};
	int rc = decoder_open(in, &d, AV_SAMPLE_FMT_S16, 1, MEDIA_WAV_RATE);

	if (max_bytes < 44 + 2)
		rc = MEDIA_TOO_LARGE;
	if (rc == MEDIA_OK) {
		w.bytes_per_frame = 2 * d.channels;
		w.rate = d.rate;
		w.cap = 1 << 16;
		w.data = malloc(w.cap);
		rc = w.data ? decode(in, &d, t0, t1, 0, wav_pcm, &w) : MEDIA_NOMEM;
	}
	if (rc == DECODE_END) { /* the file's end: where the container says it is */
		double duration = in->fmt->duration == AV_NOPTS_VALUE
					  ? 0
					  : (double)in->fmt->duration / AV_TIME_BASE;

		w.end = w.end > duration ? w.end : duration;
		rc = MEDIA_OK;
	}
	if (rc == MEDIA_OK && w.len - 44 > UINT32_MAX - 36)
		rc = MEDIA_TOO_LARGE;
	if (rc == MEDIA_OK) {
		uint32_t data_len = (uint32_t)(w.len - 44);

		memcpy(w.data, "RIFF\0\0\0\0WAVEfmt ", 16);
		put_le(w.data + 4, 36 + data_len, 4);
		put_le(w.data + 16, 16, 4);
		put_le(w.data + 20, 1, 2); /* PCM */
		put_le(w.data + 22, (uint32_t)d.channels, 2);
		put_le(w.data + 24, (uint32_t)d.rate, 4);
		put_le(w.data + 28, (uint32_t)(d.rate * w.bytes_per_frame), 4);
		put_le(w.data + 32, (uint32_t)w.bytes_per_frame, 2);
		put_le(w.data + 34, 16, 2);
		memcpy(w.data + 36, "data", 4);
		put_le(w.data + 40, data_len, 4);
		*wav = w.data;
		*len = w.len;
		*end = w.end;
	} else {
		free(w.data);
		snprintf(err, err_size, "%s",
			 rc == MEDIA_TOO_LARGE     ? "its audio as WAV passes max_audio_size"
			 : rc == MEDIA_UNSUPPORTED ? "it has no audio stream FFmpeg decodes"
						   : "its audio could not be decoded");
	}
	decoder_free(&d);
	return rc;
}
