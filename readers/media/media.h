/* SPDX-License-Identifier: MIT */
/* media.h - the audio and video reader's core side (no FFmpeg here): detection by content.
 * Its read runs in toolfs-reader-worker (TR_CAP_UNTRUSTED), where it loads toolfs-media.so
 * (media_api.h) for FFmpeg. */
#ifndef TR_MEDIA_H
#define TR_MEDIA_H

#include <stddef.h>

#include "tr_result.h"

/* What the bytes of head say: the type (TR_TYPE_AUDIO or TR_TYPE_VIDEO; the read may turn a
 * video container holding only audio into audio) and a MIME type (static); TR_TYPE_UNKNOWN when
 * no media signature matches. */
enum tr_content_type media_detect(const unsigned char *head, size_t len, const char **mime);

#endif
