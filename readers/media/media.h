/* SPDX-License-Identifier: MIT */
/* media.h - the audio and video reader's core side (no FFmpeg here): detection by content,
 * time selectors, and the pool of sandboxed workers (toolfs-media-worker) that run FFmpeg. */
#ifndef TR_MEDIA_H
#define TR_MEDIA_H

#include <stddef.h>
#include <stdint.h>

#include "media_proto.h"
#include "tr_result.h"

/* What the bytes of head say: the type (TR_TYPE_AUDIO or TR_TYPE_VIDEO; the worker may turn a
 * video container holding only audio into audio) and a MIME type (static); TR_TYPE_UNKNOWN when
 * no media signature matches. */
enum tr_content_type media_detect(const unsigned char *head, size_t len, const char **mime);

/* One worker's answer: the reply's header, its text (NUL-terminated) and blob. */
struct media_answer {
	struct media_reply rep;
	char *text;
	unsigned char *blob;
};

/* Runs req on fd (borrowed, passed to a worker) within deadline (CLOCK_MONOTONIC ns, 0 none).
 * Returns 0 with *ans filled (ans->rep.status may still be a media_status failure, with its
 * sentence as text); -1 when out of memory; otherwise a tr_error (TR_E_TIMEOUT when the
 * deadline passed, TR_E_CORRUPT when the worker died, TR_E_UNSUPPORTED when there is no
 * worker to run) with a sentence in err. */
int media_call(int fd, const struct media_request *req, uint64_t deadline, struct media_answer *ans,
	       char *err, size_t err_size);
void media_answer_free(struct media_answer *ans);

/* Kills and reaps the idle workers (tr_library_shutdown). */
void tr_media_pool_shutdown(void);

#endif
