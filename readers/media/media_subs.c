/* SPDX-License-Identifier: MIT */
/* media_subs.c - the text subtitle tracks of a file (mov_text, SubRip, WebVTT, ASS) as timed
 * lines, decoded by libavcodec's subtitle decoders (which turn them all into ASS events). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>

#include "media_video.h"

/* Cues kept per track at most, bytes of one cue's text, and text tracks read (a file may claim
 * thousands of streams). A track also stops taking cues once it holds MEDIA_SUBS_MAX_TEXT bytes
 * of text, more than the output can show. */
#define SUBS_MAX_CUES 100000
#define SUBS_MAX_CUE_TEXT 4096
#define SUBS_MAX_TRACKS 16

struct cue {
	int64_t start, end; /* ms from the file's start */
	size_t seq;         /* order in the file, to keep sorting stable */
	char *text;
};

struct track {
	AVStream *st;
	AVCodecContext *ctx;
	struct cue *cues;
	size_t n, cap;
	size_t text_bytes; /* of the cues kept */
	int full;          /* a cap was reached: cues were left out */
};

/* The output being built; full is set once limit is reached. */
struct text_buf {
	char *data;
	size_t len, cap, limit;
	int full, failed;
};

static void buf_add(struct text_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed || b->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (b->len + n + 1 > b->limit) {
		b->full = 1;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *data;

		while (cap < b->len + n + 1)
			cap *= 2;
		data = realloc(b->data, cap);
		if (!data) {
			b->failed = 1;
			return;
		}
		b->data = data;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

static int is_text_subtitle(enum AVCodecID id)
{
	return id == AV_CODEC_ID_MOV_TEXT || id == AV_CODEC_ID_SUBRIP || id == AV_CODEC_ID_SRT ||
	       id == AV_CODEC_ID_WEBVTT || id == AV_CODEC_ID_ASS || id == AV_CODEC_ID_SSA ||
	       id == AV_CODEC_ID_TEXT;
}

/* Whether an override block (len bytes from '{') leaves ASS drawing mode on: its last \pN
 * says (N > 0: on); none keeps `drawing`. */
static int drawing_mode(const char *block, size_t len, int drawing)
{
	size_t i;

	for (i = 0; i + 2 < len; i++)
		if (block[i] == '\\' && block[i + 1] == 'p' && block[i + 2] >= '0' &&
		    block[i + 2] <= '9')
			drawing = block[i + 2] != '0' ||
				  (i + 3 < len && block[i + 3] >= '1' && block[i + 3] <= '9');
	return drawing;
}

/* The text of an ASS event ("ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text"
 * or, from a plain-text decoder, the text alone) without override tags ({...}) and drawings
 * ({\p1}...{\p0}), its lines
 * (\N, \n, line breaks) joined with " / ", control characters as spaces. Owned; NULL when no
 * text is left or memory ran out. */
static char *clean_text(const char *event, int is_ass)
{
	size_t n = strlen(event), o = 0, i;
	int commas = 0, pending_break = 0, drawing = 0;
	char *out;

	if (is_ass) {
		for (i = 0; i < n && commas < 8; i++)
			commas += event[i] == ',';
		if (commas < 8)
			return NULL;
		event += i;
		n -= i;
	}
	if (n > 4 * SUBS_MAX_CUE_TEXT) /* enough for the text kept below, with its tags */
		n = 4 * SUBS_MAX_CUE_TEXT;
	out = malloc(n * 3 + 1); /* a break becomes " / " */
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		char c = event[i];

		if (c == '{' && memchr(event + i, '}', n - i)) {
			size_t end = (size_t)((const char *)memchr(event + i, '}', n - i) - event);

			drawing = drawing_mode(event + i, end - i, drawing);
			i = end;
			continue;
		}
		if (drawing) /* the vector commands of {\p1}...{\p0} are not text */
			continue;
		if (c == '\\' && i + 1 < n && (event[i + 1] == 'N' || event[i + 1] == 'n')) {
			i++;
			pending_break = o > 0;
			continue;
		}
		if (c == '\\' && i + 1 < n && event[i + 1] == 'h') {
			i++;
			c = ' ';
		}
		if (c == '\n' || c == '\r') {
			pending_break = o > 0;
			continue;
		}
		if ((unsigned char)c < 0x20 || c == 0x7f)
			c = ' ';
		if (c == ' ' && (o == 0 || out[o - 1] == ' '))
			continue;
		if (pending_break) {
			while (o > 0 && out[o - 1] == ' ')
				o--;
			memcpy(out + o, " / ", 3);
			o += 3;
			pending_break = 0;
		}
		out[o++] = c;
	}
	if (o > SUBS_MAX_CUE_TEXT) { /* cut on a character's first byte */
		o = SUBS_MAX_CUE_TEXT;
		while (o > 0 && ((unsigned char)out[o] & 0xc0) == 0x80)
			o--;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	if (o == 0) {
		free(out);
		return NULL;
	}
	out[o] = '\0';
	return out;
}

static int track_add(struct track *t, int64_t start, int64_t end, char *text)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct cue *cues = realloc(t->cues, cap * sizeof(*cues));

		if (!cues)
			return -ENOMEM;
		t->cues = cues;
		t->cap = cap;
	}
	t->cues[t->n] = (struct cue){start, end, t->n, text};
	t->n++;
	t->text_bytes += strlen(text);
	return 0;
}

/* Decodes one packet of track t into cues. */
static int track_packet(struct track *t, AVPacket *pkt, int64_t start_ms)
{
	AVRational ms = {1, 1000};
	AVSubtitle sub;
	int64_t start, end;
	int got = 0, r = 0;
	unsigned i;

	if (t->n >= SUBS_MAX_CUES || t->text_bytes >= MEDIA_SUBS_MAX_TEXT)
		t->full = 1;
	if (pkt->pts == AV_NOPTS_VALUE || t->full)
		return 0;
	if (avcodec_decode_subtitle2(t->ctx, &sub, &got, pkt) < 0 || !got)
		return 0;
	start = av_rescale_q(pkt->pts, t->st->time_base, ms) - start_ms;
	end = pkt->duration > 0 ? start + av_rescale_q(pkt->duration, t->st->time_base, ms)
				: start + (int64_t)sub.end_display_time;
	for (i = 0; i < sub.num_rects && r == 0; i++) {
		const AVSubtitleRect *rect = sub.rects[i];
		char *text = NULL;

		if (rect->type == SUBTITLE_ASS && rect->ass)
			text = clean_text(rect->ass, 1);
		else if (rect->type == SUBTITLE_TEXT && rect->text)
			text = clean_text(rect->text, 0);
		if (text && (r = track_add(t, start, end, text)) < 0)
			free(text);
	}
	avsubtitle_free(&sub);
	return r;
}

static int cue_order(const void *a, const void *b)
{
	const struct cue *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void media_time_text(int64_t ms, char *buf, size_t size)
{
	ms = ms < 0 ? 0 : ms;
	if (ms >= 3600000)
		snprintf(buf, size, "%" PRId64 ":%02" PRId64 ":%02" PRId64 ".%03" PRId64,
			 ms / 3600000, ms / 60000 % 60, ms / 1000 % 60, ms % 1000);
	else
		snprintf(buf, size, "%02" PRId64 ":%02" PRId64 ".%03" PRId64, ms / 60000,
			 ms / 1000 % 60, ms % 1000);
}

/* Writes the cues of [from, to) (to < 0: to the end; to == from: the instant from). */
static void track_write(struct track *t, struct text_buf *b, int64_t from, int64_t to)
{
	const AVDictionaryEntry *lang = av_dict_get(t->st->metadata, "language", NULL, 0);
	size_t i;

	buf_add(b, "Subtitle track %d (%s, %s):\n", t->st->index, lang ? lang->value : "und",
		avcodec_get_name(t->st->codecpar->codec_id));
	qsort(t->cues, t->n, sizeof(*t->cues), cue_order);
	for (i = 0; i < t->n; i++) {
		const struct cue *c = &t->cues[i];
		char s[32], e[32];

		/* overlapping [from, to), or on screen at the instant from (to == from); a cue
		 * without an end is an instant */
		if (c->end > c->start ? c->end <= from : c->start < from)
			continue;
		if (to >= from && (to > from ? c->start >= to : c->start > from))
			continue;
		media_time_text(c->start, s, sizeof(s));
		media_time_text(c->end, e, sizeof(e));
		buf_add(b, "[%s --> %s] %s\n", s, e, c->text);
	}
	if (t->full)
		buf_add(b, "(only the first %zu cues of this track are shown)\n", t->n);
}

static int track_open(struct track *t, AVStream *st)
{
	const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);

	memset(t, 0, sizeof(*t));
	t->st = st;
	if (!codec)
		return -ENOSYS;
	t->ctx = avcodec_alloc_context3(codec);
	if (!t->ctx)
		return -ENOMEM;
	t->ctx->thread_count = 1;
	t->ctx->pkt_timebase = st->time_base;
	if (avcodec_parameters_to_context(t->ctx, st->codecpar) < 0 ||
	    avcodec_open2(t->ctx, codec, NULL) < 0) {
		avcodec_free_context(&t->ctx);
		return -ENOSYS;
	}
	return 0;
}

static void track_close(struct track *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->cues[i].text);
	free(t->cues);
	avcodec_free_context(&t->ctx);
}

/* Reads every packet of the text tracks (the others discarded), from the file's start. */
static int read_tracks(AVFormatContext *fmt, struct track *tracks, int *by_stream, int64_t start_ms,
		       uint64_t deadline)
{
	AVPacket *pkt = av_packet_alloc();
	int r = 0;

	if (!pkt)
		return -ENOMEM;
	if (av_seek_frame(fmt, -1, fmt->start_time == AV_NOPTS_VALUE ? 0 : fmt->start_time,
			  AVSEEK_FLAG_BACKWARD) < 0)
		av_seek_frame(fmt, -1, 0, AVSEEK_FLAG_BYTE);
	while (r == 0) {
		if (media_deadline_passed(deadline)) {
			r = -ETIMEDOUT;
			break;
		}
		r = av_read_frame(fmt, pkt);
		if (r < 0) {
			r = r == AVERROR(ENOMEM) ? -ENOMEM : 0;
			break;
		}
		if ((unsigned)pkt->stream_index < fmt->nb_streams &&
		    by_stream[pkt->stream_index] >= 0)
			r = track_packet(&tracks[by_stream[pkt->stream_index]], pkt, start_ms);
		av_packet_unref(pkt);
	}
	av_packet_free(&pkt);
	return r;
}

int media_subtitles(AVFormatContext *fmt, double t0, double t1, uint64_t deadline, char **text,
		    size_t *len)
{
	struct track *tracks = NULL;
	/* room kept for the last line saying the text was cut */
	struct text_buf b = {.limit = MEDIA_SUBS_MAX_TEXT - 64};
	enum AVDiscard *discard = NULL;
	int *by_stream = NULL, n = 0, r;
	int64_t start_ms;
	unsigned i;

	*text = NULL;
	*len = 0;
	if (!fmt || !isfinite(t0) || !isfinite(t1) || t0 < 0)
		return -EINVAL;
	start_ms = fmt->start_time == AV_NOPTS_VALUE ? 0 : fmt->start_time / 1000;
	tracks = calloc(fmt->nb_streams + 1, sizeof(*tracks));
	by_stream = calloc(fmt->nb_streams + 1, sizeof(*by_stream));
	discard = calloc(fmt->nb_streams + 1, sizeof(*discard));
	r = -ENOMEM;
	if (!tracks || !by_stream || !discard)
		goto done;
	for (i = 0; i < fmt->nb_streams; i++) {
		AVStream *st = fmt->streams[i];

		by_stream[i] = -1;
		discard[i] = st->discard;
		if (st->codecpar->codec_type == AVMEDIA_TYPE_SUBTITLE && n < SUBS_MAX_TRACKS &&
		    is_text_subtitle(st->codecpar->codec_id) && track_open(&tracks[n], st) == 0)
			by_stream[i] = n++;
		else
			st->discard = AVDISCARD_ALL;
	}
	r = 0;
	if (n == 0)
		goto done;
	r = read_tracks(fmt, tracks, by_stream, start_ms, deadline);
	if (r < 0)
		goto done;
	for (i = 0; i < (unsigned)n; i++)
		track_write(&tracks[i], &b, (int64_t)llround(t0 * 1000),
			    t1 >= t0 ? (int64_t)llround(fmin(t1, 1e12) * 1000) : -1);
	if (b.full) {
		b.full = 0;
		b.limit = MEDIA_SUBS_MAX_TEXT;
		buf_add(&b, "(subtitles cut at %u bytes)\n", MEDIA_SUBS_MAX_TEXT);
	}
	r = b.failed ? -ENOMEM : 0;
	if (r == 0 && b.len > 0) {
		*text = b.data;
		*len = b.len;
		b.data = NULL;
	}
done:
	for (i = 0; i < fmt->nb_streams && discard; i++)
		fmt->streams[i]->discard = discard[i];
	for (i = 0; tracks && i < (unsigned)n; i++)
		track_close(&tracks[i]);
	free(b.data);
	free(tracks);
	free(by_stream);
	free(discard);
	return r;
}
