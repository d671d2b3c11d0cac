/* SPDX-License-Identifier: MIT */
/* media_proto.h - the messages between the reader (media_pool.c) and toolfs-media-worker: to
 * the fork server over its control socket (a worker's socket to fork one on, a worker to end),
 * and to a worker over its own socketpair (one request with the file's descriptor, SCM_RIGHTS;
 * one reply). */
#ifndef TR_MEDIA_PROTO_H
#define TR_MEDIA_PROTO_H

#include <stdint.h>

#define MEDIA_MAGIC 0x746d6431u /* "tmd1" */
/* The fork server's control socket in the fork server, and a worker's end of its socketpair in
 * the worker. */
#define MEDIA_WORKER_FD 3
/* Caps on a reply's parts, checked by both sides. */
#define MEDIA_MAX_TEXT (1u << 20)
#define MEDIA_MAX_BLOB (512u << 20)

enum media_op {
	MEDIA_OP_PROBE = 1,      /* metadata, the loudness outline, pictures of a video */
	MEDIA_OP_AUDIO = 2,      /* MEDIA_OP_PROBE and the audio of [t0, t1) as WAV */
	MEDIA_OP_TEST_OPEN = 3,  /* test hook: the worker calls open(2) (seccomp kills it) */
	MEDIA_OP_TEST_LOOP = 4,  /* test hook: the worker spins (the deadline kills it) */
	MEDIA_OP_TEST_LIE = 5,   /* test hook: a video's picture claims a size whose bytes wrap */
	MEDIA_OP_TEST_ASK = 6,   /* test hook: the harmless questions first (each fails: EPERM) */
	MEDIA_OP_TEST_LIMIT = 7, /* test hook: prlimit64 setting a limit (the filter stops it) */
};

struct media_request {
	uint32_t magic;
	uint32_t op;
	uint64_t size;    /* the file's size (the worker makes no fstat) */
	double t0, t1;    /* seconds; t1 < 0: to the end */
	uint32_t picture; /* video: 0 none, 1 sheet of [t0,t1) (t1 < 0: to the end), 2 one frame
			   * at t0; max_w x max_h the picture's bounds */
	uint32_t max_w, max_h;
	uint32_t skip_whole; /* no WAV when t0 is 0 and the file ends by t1 (the file is sent) */
	uint64_t max_blob;   /* bytes of WAV the worker may make */
	uint64_t deadline;   /* CLOCK_MONOTONIC ns (the same clock in both processes), 0 none */
	uint32_t profile;    /* test runs: the worker's filter logs instead of stopping (its first
			      * request decides, before anything of the file is read) */
	uint32_t pad;
};

/* To the fork server: MEDIA_SPAWN with a socket (SCM_RIGHTS) forks a worker on it; MEDIA_END
 * kills the worker pid (one of its own children, alive or not) and reaps it. */
enum media_control_op {
	MEDIA_SPAWN = 1,
	MEDIA_END = 2,
};

struct media_control {
	uint32_t magic;
	uint32_t op; /* enum media_control_op */
	int32_t pid; /* MEDIA_END: the worker */
	uint32_t pad;
};

/* The fork server's answer: MEDIA_SPAWN the new worker's pid (-1: fork failed, status its
 * errno); MEDIA_END the pid (-1: no such child) and its wait status. */
struct media_control_reply {
	uint32_t magic;
	int32_t pid;
	int32_t status;
	uint32_t pad;
};

enum media_status {
	MEDIA_OK = 0,
	MEDIA_CORRUPT = 1,     /* FFmpeg could not read it: text says why */
	MEDIA_UNSUPPORTED = 2, /* no stream FFmpeg decodes */
	MEDIA_TOO_LARGE = 3,   /* the WAV would pass max_blob */
	MEDIA_NOMEM = 4,
	MEDIA_SANDBOXED = 5, /* the filter stopped the worker at the call named in syscall; the
			      * worker dies of SIGSYS after this reply */
};

enum media_kind {
	MEDIA_KIND_AUDIO = 1,
	MEDIA_KIND_VIDEO = 2,
};

/* The reply's header; text_len bytes of content text (UTF-8) and then blob_len bytes follow:
 * the WAV of MEDIA_OP_AUDIO, or the picture (raw RGB, pic_w x pic_h x 3). */
struct media_reply {
	uint32_t magic;
	uint32_t status;        /* enum media_status */
	uint32_t kind;          /* enum media_kind */
	uint32_t width, height; /* the video's display size (rotation applied); 0 for audio */
	uint32_t text_len;
	uint64_t blob_len;
	uint32_t pic_w, pic_h;
	double duration;         /* seconds; < 0 unknown */
	double blob_t0, blob_t1; /* the span the blob holds */
	uint32_t cpu_ms; /* the worker's CPU time so far (the pool retires it past a budget) */
	uint32_t pad;
	char format[32]; /* FFmpeg's demuxer name's first entry: "mp3", "mov", "matroska" ... */
	char audio_codec[16]; /* the first audio stream's codec name, or "" */
	char syscall[24];     /* MEDIA_SANDBOXED: the system call's name (or number) */
};

#endif
