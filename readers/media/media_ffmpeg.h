/* SPDX-License-Identifier: MIT */
/* media_ffmpeg.h - what toolfs-media.so runs on FFmpeg's libraries, in toolfs-reader-worker:
 * the file opened through its descriptor, its description, its audio, a video's pictures. Also
 * linked into the fuzz target (tests/fuzz/fuzz_media.c), without the sandbox. */
#ifndef TR_MEDIA_FFMPEG_H
#define TR_MEDIA_FFMPEG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <libavformat/avformat.h>

#include "media_api.h"

/* An open media file: the demuxer over our own I/O on fd (pread, never a path). */
struct media_input {
	AVFormatContext *fmt;
	AVIOContext *io;
	int fd;
	uint64_t size, pos;
};

/* Opens fd (size bytes) and reads its streams' parameters. Returns 0, or a media_status with a
 * sentence in err. */
int media_open(struct media_input *in, int fd, uint64_t size, char *err, size_t err_size);
void media_close(struct media_input *in);

/* Fills rep's kind, size, duration, format and codec, and writes the content's description
 * (docs/SPEC.md §3 "Audio and video") to out. Returns a media_status. */
int media_describe(struct media_input *in, struct media_reply *rep, FILE *out);

/* A video's pictures (media_video_reply.c): the contact sheet of [t0, t1) or the frame at t0
 * that req->picture asks for, fitted to req->max_w x max_h, as raw RGB in *blob (malloc'd) with
 * rep->pic_w/pic_h; the frames' times and the subtitle tracks' text written to text (a picture
 * that cannot be made is a line there). Returns a media_status (MEDIA_NOMEM alone fails). */
int media_video_reply(struct media_input *in, const struct media_request *req,
		      struct media_reply *rep, FILE *text, unsigned char **blob, size_t *blob_len);

/* The loudness outline of the best audio stream's [t0, t1) (t1 < 0: to the end; or until
 * deadline, CLOCK_MONOTONIC ns, 0 none): a few lines of silent and loud spans written to out.
 * Nothing is written when the file has no audio that decodes. */
void media_loudness(struct media_input *in, double t0, double t1, uint64_t deadline, FILE *out);

/* The WAV the provider formats attach: 16 kHz mono 16-bit PCM, what speech models take (10
 * minutes are 19.2 MB, within max_audio_size's default). */
#define MEDIA_WAV_RATE 16000

/* Decodes the best audio stream's [t0, t1) (t1 < 0: to the end) into a MEDIA_WAV_RATE mono WAV
 * of at most max_bytes, stopping early when it is full. Returns 0 with *wav (malloc'd), *len
 * and *end (the second it reaches), or a media_status with a sentence in err. */
int media_wav(struct media_input *in, double t0, double t1, uint64_t max_bytes, unsigned char **wav,
	      size_t *len, double *end, char *err, size_t err_size);

/* CLOCK_MONOTONIC in ns (the deadlines' clock). */
uint64_t media_now_ns(void);

#endif
