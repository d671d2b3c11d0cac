/* SPDX-License-Identifier: MIT */
/* media_describe.c - the description of an audio or video file (docs/SPEC.md §3 "Audio and
 * video"): container, duration, bit rate, tags, creation time, every stream, chapters. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/channel_layout.h>
#include <libavutil/display.h>

#include "media_ffmpeg.h"

/* Streams and chapters listed one a line; the rest are counted. A book or a talk has hundreds
 * of chapters, each a line of at most MEDIA_MAX_TAG bytes of title. */
#define MEDIA_MAX_LISTED 32
#define MEDIA_MAX_CHAPTERS 1000
/* Bytes shown of one tag value. */
#define MEDIA_MAX_TAG 300

/* "HH:MM:SS.mmm", rounded as "%.3f" rounds s */
static void put_time(FILE *out, double s)
{
	char text[64];
	long long ms;

	snprintf(text, sizeof(text), "%.3f", s);
	ms = llround(strtod(text, NULL) * 1000.0);

	if (ms < 0)
		ms = 0;
	fprintf(out, "%02lld:%02lld:%02lld.%03lld", ms / 3600000, ms / 60000 % 60, ms / 1000 % 60,
		ms % 1000);
}

/* A tag's value on one line: control bytes become spaces, cut at MEDIA_MAX_TAG bytes. */
static void put_value(FILE *out, const char *v)
{
	size_t n = strlen(v);

	for (size_t i = 0; i < n && i < MEDIA_MAX_TAG; i++)
		fputc((unsigned char)v[i] < 0x20 || v[i] == 0x7f ? ' ' : v[i], out);
	if (n > MEDIA_MAX_TAG)
		fputs(" [...]", out);
}

/* A rational as a short decimal: 25, 29.97, 23.976. */
static void put_rate(FILE *out, AVRational r)
{
	char text[32];
	size_t n;

	snprintf(text, sizeof(text), "%.3f", av_q2d(r));
	n = strlen(text);
	while (n > 0 && text[n - 1] == '0')
		text[--n] = '\0';
	if (n > 0 && text[n - 1] == '.')
		text[--n] = '\0';
	fputs(text, out);
}

static const AVDictionaryEntry *tag(const AVFormatContext *fmt, const char *key)
{
	const AVDictionaryEntry *e = av_dict_get(fmt->metadata, key, NULL, 0);

	/* Ogg and FLAC-in-Ogg keep their comments on the stream */
	for (unsigned i = 0; !e && i < fmt->nb_streams; i++)
		if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO)
			e = av_dict_get(fmt->streams[i]->metadata, key, NULL, 0);
	return e;
}

/* The display matrix's rotation in degrees as ffprobe gives it (counter-clockwise), 0 none. */
static int rotation(const AVStream *st)
{
	const uint8_t *m = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
	double r;

	if (!m)
		return 0;
	r = av_display_rotation_get((const int32_t *)m);
	return isnan(r) ? 0 : (int)lround(r);
}

static bool is_picture(const AVStream *st)
{
	return st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
	       !(st->disposition & AV_DISPOSITION_ATTACHED_PIC);
}

static void put_stream(FILE *out, unsigned i, const AVStream *st)
{
	const AVCodecParameters *p = st->codecpar;
	const AVDictionaryEntry *lang = av_dict_get(st->metadata, "language", NULL, 0);
	const char *type = av_get_media_type_string(p->codec_type);

	fprintf(out, "Stream %u: %s %s", i, type ? type : "data", avcodec_get_name(p->codec_id));
	if (p->codec_type == AVMEDIA_TYPE_VIDEO) {
		int rot = rotation(st);

		fprintf(out, ", %dx%d", p->width, p->height);
		if (st->disposition & AV_DISPOSITION_ATTACHED_PIC)
			fputs(", attached picture", out);
		else if (st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0) {
			fputs(", ", out);
			put_rate(out, st->avg_frame_rate);
			fputs(" fps", out);
		}
		if (rot)
			fprintf(out, ", rotation %d", rot);
	} else if (p->codec_type == AVMEDIA_TYPE_AUDIO) {
		char layout[64] = "";

		fprintf(out, ", %d Hz, %d channel%s", p->sample_rate, p->ch_layout.nb_channels,
			p->ch_layout.nb_channels == 1 ? "" : "s");
		if (p->ch_layout.order != AV_CHANNEL_ORDER_UNSPEC &&
		    av_channel_layout_describe(&p->ch_layout, layout, sizeof(layout)) > 0)
			fprintf(out, " (%s)", layout);
	}
	if (p->bit_rate > 0)
		fprintf(out, ", %lld b/s", (long long)p->bit_rate);
	if (lang && strcmp(lang->value, "und") != 0) {
		fputs(", language ", out);
		put_value(out, lang->value);
	}
	fputc('\n', out);
}

static void put_chapters(FILE *out, const AVFormatContext *fmt)
{
	for (unsigned i = 0; i < fmt->nb_chapters; i++) {
		const AVChapter *c = fmt->chapters[i];
		const AVDictionaryEntry *title = av_dict_get(c->metadata, "title", NULL, 0);

		if (i == MEDIA_MAX_CHAPTERS) {
			fprintf(out, "... and %u more chapters\n", fmt->nb_chapters - i);
			break;
		}
		fprintf(out, "Chapter %u: ", i + 1);
		put_time(out, (double)c->start * av_q2d(c->time_base));
		fputs(" - ", out);
		put_time(out, (double)c->end * av_q2d(c->time_base));
		if (title) {
			fputs(" ", out);
			put_value(out, title->value);
		}
		fputc('\n', out);
	}
}

int media_describe(struct media_input *in, struct media_reply *rep, FILE *out)
{
	static const char *const tags[][2] = {
		{"title", "Title"},
		{"artist", "Artist"},
		{"album", "Album"},
		{"comment", "Comment"},
		{"creation_time", "Creation time"},
	};
	const AVFormatContext *fmt = in->fmt;
	int video = av_find_best_stream(in->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	int audio = av_find_best_stream(in->fmt, AVMEDIA_TYPE_AUDIO, -1, -1, NULL, 0);

	if (video >= 0 && !is_picture(fmt->streams[video]))
		video = -1;
	if (video < 0 && audio < 0)
		return MEDIA_UNSUPPORTED;
	rep->kind = video >= 0 ? MEDIA_KIND_VIDEO : MEDIA_KIND_AUDIO;
	snprintf(rep->format, sizeof(rep->format), "%.*s", (int)strcspn(fmt->iformat->name, ","),
		 fmt->iformat->name);
	if (audio >= 0)
		snprintf(rep->audio_codec, sizeof(rep->audio_codec), "%s",
			 avcodec_get_name(fmt->streams[audio]->codecpar->codec_id));
	if (video >= 0) {
		const AVStream *st = fmt->streams[video];
		bool turned = abs(rotation(st)) % 180 == 90;

		rep->width = (uint32_t)(turned ? st->codecpar->height : st->codecpar->width);
		rep->height = (uint32_t)(turned ? st->codecpar->width : st->codecpar->height);
	}
	rep->duration = fmt->duration == AV_NOPTS_VALUE ? -1.0
							: (double)fmt->duration / AV_TIME_BASE;

	fprintf(out, "Container: %s (%s)\n", fmt->iformat->name,
		fmt->iformat->long_name ? fmt->iformat->long_name : fmt->iformat->name);
	fputs("Duration: ", out);
	if (rep->duration >= 0) {
		put_time(out, rep->duration);
		fprintf(out, " (%.3f s)\n", rep->duration);
	} else
		fputs("unknown\n", out);
	if (fmt->bit_rate > 0)
		fprintf(out, "Bit rate: %lld b/s\n", (long long)fmt->bit_rate);
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		const AVDictionaryEntry *e = tag(fmt, tags[i][0]);

		if (e && *e->value) {
			fprintf(out, "%s: ", tags[i][1]);
			put_value(out, e->value);
			fputc('\n', out);
		}
	}
	for (unsigned i = 0; i < fmt->nb_streams; i++) {
		if (i == MEDIA_MAX_LISTED) {
			fprintf(out, "... and %u more streams\n", fmt->nb_streams - i);
			break;
		}
		put_stream(out, i, fmt->streams[i]);
	}
	put_chapters(out, fmt);
	return MEDIA_OK;
}
