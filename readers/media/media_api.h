/* SPDX-License-Identifier: MIT */
/* media_api.h - the interface of toolfs-media.so (FFmpeg): what the reader (media.c) asks of
 * one file and what it answers, in the same process, toolfs-reader-worker's (docs/SPEC.md §8). */
#ifndef TR_MEDIA_API_H
#define TR_MEDIA_API_H

#include <stddef.h>
#include <stdint.h>

/* A cap on an answer's text (the content; the reader cuts it at max_output anyway). */
#define MEDIA_MAX_TEXT (1u << 20)

enum media_op {
	MEDIA_OP_PROBE = 1, /* metadata, the loudness outline, pictures of a video */
	MEDIA_OP_AUDIO = 2, /* MEDIA_OP_PROBE and the audio of [t0, t1) as WAV */
};

struct media_request {
	uint32_t op;
	uint64_t size;    /* the file's size */
	double t0, t1;    /* seconds; t1 < 0: to the end */
	uint32_t picture; /* video: 0 none, 1 sheet of [t0,t1) (t1 < 0: to the end), 2 one frame
			   * at t0; max_w x max_h the picture's bounds */
	uint32_t max_w, max_h;
	uint32_t skip_whole; /* no WAV when t0 is 0 and the file ends by t1 (the file is sent) */
	uint64_t max_blob;   /* bytes of WAV that may be made */
	uint64_t deadline;   /* CLOCK_MONOTONIC ns, 0 none */
};

enum media_status {
	MEDIA_OK = 0,
	MEDIA_CORRUPT = 1,     /* FFmpeg could not read it: text says why */
	MEDIA_UNSUPPORTED = 2, /* no stream FFmpeg decodes */
	MEDIA_TOO_LARGE = 3,   /* the WAV would pass max_blob */
	MEDIA_NOMEM = 4,
};

enum media_kind {
	MEDIA_KIND_AUDIO = 1,
	MEDIA_KIND_VIDEO = 2,
};

/* The answer's header: the WAV of MEDIA_OP_AUDIO or the picture (raw RGB, pic_w x pic_h x 3)
 * is the blob. */
struct media_reply {
	uint32_t status;        /* enum media_status */
	uint32_t kind;          /* enum media_kind */
	uint32_t width, height; /* the video's display size (rotation applied); 0 for audio */
	uint32_t text_len;
	uint64_t blob_len;
	uint32_t pic_w, pic_h;
	double duration;         /* seconds; < 0 unknown */
	double blob_t0, blob_t1; /* the span the blob holds */
	char format[32]; /* FFmpeg's demuxer name's first entry: "mp3", "mov", "matroska" ... */
	char audio_codec[16]; /* the first audio stream's codec name, or "" */
};

/* One answer: the header, its text (NUL-terminated; a failure's sentence) and blob, owned by
 * the caller (free(3)). */
struct media_answer {
	struct media_reply rep;
	char *text;
	unsigned char *blob;
};

#define TR_MEDIA_ABI 2

/* The table toolfs-media.so exports (readers/util/module.c). */
struct tr_media_api {
	unsigned abi;       /* TR_MEDIA_ABI */
	void (*warm)(void); /* struct tr_module_head */
	/* Runs req on fd (borrowed) into *ans. Returns 0 (ans->rep.status may be a failure, its
	 * sentence the text), or -1 when out of memory (ans then empty). */
	int (*run)(int fd, const struct media_request *req, struct media_answer *ans);
};

#endif
