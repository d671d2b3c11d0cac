/* SPDX-License-Identifier: MIT */
/* media.c - the audio and video reader: detection by content, the time window, and the result
 * built from what FFmpeg (toolfs-media.so) tells of the file. The read runs in
 * toolfs-reader-worker, as every TR_CAP_UNTRUSTED reader's (docs/SPEC.md §8). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "image.h"
#include "media.h"
#include "media_api.h"
#include "reader.h"
#include "util.h"

#if defined(TR_HAVE_MEDIA)
/* Defined when the module's objects are linked in (sanitizer builds); else it is loaded. */
extern const struct tr_media_api tr_media_api __attribute__((weak));

struct tr_module tr_module_media = {
	.file = "toolfs-media.so",
	.symbol = "tr_media_api",
	.abi = TR_MEDIA_ABI,
	.linked = &tr_media_api,
};
#endif

static void media_answer_free(struct media_answer *ans)
{
	free(ans->text);
	free(ans->blob);
	ans->text = NULL;
	ans->blob = NULL;
}

static enum tr_probe media_probe(const struct tr_file *file)
{
	const char *mime;

	return media_detect(file->head, file->head_len, &mime) ? TR_PROBE_CONTENT : TR_PROBE_NO;
}

/* The span of seconds asked for: [t0, t1), t1 < 0 to the end; a single time T is T onwards. */
static int media_span(const struct tr_selector *sel, struct tr_result *res, double *t0, double *t1)
{
	*t0 = 0;
	*t1 = -1;
	if (!sel->present)
		return 0;
	if (sel->column) {
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Audio and video take a time selector (T, T1-T2, MM:SS), not a "
			       "column: %s",
			       res->path);
		return -1;
	}
	*t0 = sel->time ? sel->t0 : (double)sel->start;
	*t1 = sel->time ? sel->t1 : sel->end ? (double)sel->end : -1;
	if (*t1 == *t0)
		*t1 = -1;
	return 0;
}

/* The type Gemini takes inline for a file detected as mime, or NULL (docs/SPEC.md §6). */
static const char *gemini_type(const char *mime)
{
	static const char *const map[][2] = {
		{"audio/mpeg", "audio/mp3"},    {"audio/x-wav", "audio/wav"},
		{"audio/flac", "audio/flac"},   {"audio/ogg", "audio/ogg"},
		{"audio/x-aiff", "audio/aiff"},
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(mime, map[i][0]) == 0)
			return map[i][1];
	return NULL;
}

static void fail_read(struct tr_result *res, int code, const char *kind, const char *why)
{
	tr_result_fail(res, (enum tr_error)code, "Failed to read %s file: %s: %s", kind, why,
		       res->path);
}

/* Attaches the file itself when it is whole, a type Gemini takes and within max_audio_size. */
static int attach_original(const struct tr_file *file, const struct tr_options *opts,
			   struct tr_result *res, const char *type, double duration)
{
	struct tr_blob *blob = NULL;

	if ((uint64_t)file->st.st_size > opts->max_audio_size)
		return 0;
	if (tr_load_file(file->fd, (uint64_t)file->st.st_size, &blob, &res->meta) < 0)
		return errno == ENOMEM ? -1 : 0;
	return tr_result_add_audio(res, blob, type, 0, duration);
}

static void put_clock(struct tr_buf *buf, double s)
{
	long long ms = llround(s * 1000.0);

	tr_buf_printf(buf, "%02lld:%02lld:%02lld.%03lld", ms / 3600000, ms / 60000 % 60,
		      ms / 1000 % 60, ms % 1000);
}

/* The audio of [t0, t1) attached, with the range, truncated and next. */
static int media_audio(const struct tr_file *file, const struct tr_options *opts,
		       struct tr_result *res, const char *mime, struct media_answer *ans, double t0,
		       double t1)
{
	const struct media_reply *rep = &ans->rep;
	double duration = rep->duration, end = rep->blob_t1;
	const char *original = gemini_type(mime);
	bool whole = t0 == 0 && duration >= 0 && duration <= t1;
	char sel[80];

	if (whole && original && attach_original(file, opts, res, original, duration) < 0)
		return -1;
	bool kept = res->n_audio > 0;

	if (!res->n_audio && !rep->blob_len)
		end = t0;
	if (duration >= 0 && end > duration)
		end = duration;
	if (rep->blob_len > 44) { /* a WAV with no samples is not attached */
		struct tr_blob *blob = tr_blob_adopt(ans->blob, rep->blob_len);

		if (!blob)
			return -1;
		ans->blob = NULL;
		if (tr_result_add_audio(res, blob, "audio/wav", t0, end) < 0)
			return -1;
	}
	tr_buf_printf(&res->content, "Attached: ");
	if (res->n_audio) {
		put_clock(&res->content, t0);
		tr_buf_printf(&res->content, " - ");
		put_clock(&res->content, end);
		for (size_t i = 0; i < res->n_audio; i++) /* the file's own bytes come first */
			tr_buf_printf(&res->content, "%s%s", i ? " and " : " as ",
				      i == 0 && kept ? res->audio[i].media_type
						     : "16 kHz mono WAV");
		tr_buf_printf(&res->content, ", for models that hear audio (the MCP and OpenAI "
					     "formats).\n");
	} else {
		tr_buf_printf(&res->content, "%s",
			      opts->max_audio_size < 46
				      ? "nothing (max_audio_size is too small).\n"
				      : "nothing: no sound decodes in this span.\n");
	}
	tr_buf_printf(&res->content,
		      "Speech is not transcribed: toolfs has no speech model (none ships in Debian "
		      "12).\n");
	res->range_unit = TR_UNIT_SECOND;
	res->range_start = (uint64_t)floor(t0);
	res->range_end = (uint64_t)ceil(end);
	res->range_total = duration >= 0 ? (uint64_t)ceil(duration) : res->range_end;
	if (duration >= 0 && end > t0 && end + 0.001 < duration) {
		struct tr_selector next = {.present = true,
					   .time = true,
					   .t0 = end,
					   .t1 = fmin(duration, end + (end - t0))};

		res->truncated = true;
		tr_selector_format(&next, sel, sizeof(sel));
		tr_result_set_next(res, file->src->name, sel);
		if (!res->next)
			return -1;
	}
	return 0;
}

/* The worker's picture of a video (raw RGB: a contact sheet or a frame) as a PNG, fitted like
 * any image when it passes image_max_dim or image_max_b64. A picture that cannot be made is a
 * line of content; the metadata stays. */
static int media_picture(struct tr_result *res, const struct tr_options *opts, uint64_t deadline,
			 const struct media_reply *rep, const unsigned char *rgb)
{
	struct tr_blob *png = tr_png_encode(rgb, (size_t)rep->pic_w * 3, rep->pic_w, rep->pic_h, 3);
	struct tr_fit fit = {0};
	char err[256];

	if (!png)
		return -1;
	if (!tr_fit_needed(rep->pic_w, rep->pic_h, png->len, opts))
		return tr_result_add_image(res, png, "image/png", rep->pic_w, rep->pic_h, 0, 0);
	if (tr_fit_image(png, opts, deadline, &fit, err, sizeof(err)) != TR_OK) {
		tr_blob_unref(png);
		return tr_buf_printf(&res->content, "[picture not attached: %s]\n", err) < 0 ? -1
											     : 0;
	}
	tr_blob_unref(png);
	return tr_result_add_image(res, fit.data, fit.media_type, fit.width, fit.height, 0, 0);
}

/* Fills what req asks of the module beyond the span: for a video, its picture (one frame at
 * most image_max_dim wide and high); for audio, the span and bytes max_audio_seconds and
 * max_audio_size allow, and whether the file goes as it is. */
static void media_request_limits(struct media_request *req, enum tr_content_type type,
				 const struct tr_file *file, const struct tr_selector *sel,
				 const struct tr_options *opts, const char *mime)
{
	if (type == TR_TYPE_VIDEO) {
		bool single = sel->present &&
			      (sel->time ? sel->t1 == sel->t0 : sel->end == sel->start);

		req->picture = single ? 2 : 1;
		req->max_w = req->max_h = (uint32_t)(opts->image_max_dim > 16384
							     ? 16384
							     : opts->image_max_dim);
	}
	if (type == TR_TYPE_AUDIO) {
		req->op = MEDIA_OP_AUDIO;
		if (req->t1 < 0 || req->t1 - req->t0 > (double)opts->max_audio_seconds)
			req->t1 = req->t0 + (double)opts->max_audio_seconds;
		req->max_blob = opts->max_audio_size;
		/* WAV and MP3 go as they are (OpenAI and Gemini take both) */
		req->skip_whole = req->t0 == 0 &&
				  (uint64_t)file->st.st_size <= opts->max_audio_size &&
				  (strcmp(mime, "audio/x-wav") == 0 ||
				   strcmp(mime, "audio/mpeg") == 0);
	}
}

static int media_read(const struct tr_file *file, const struct tr_selector *sel,
		      const struct tr_options *opts, struct tr_result *res)
{
	const char *mime = "application/octet-stream";
	enum tr_content_type type = media_detect(file->head, file->head_len, &mime);
	struct media_request req = {.op = MEDIA_OP_PROBE, .size = (uint64_t)file->st.st_size};
	struct media_answer ans;
	const char *kind;
	char size_text[32];

	res->type = type;
	kind = type == TR_TYPE_AUDIO ? "audio" : "video";
	/* libmagic's answer, as for every type (docs/SPEC.md §2), but where it has none (MPEG-TS) */
	res->mime_type = tr_magic_mime_fd(file->fd);
	if (res->mime_type && strcmp(res->mime_type, "application/octet-stream") == 0) {
		free(res->mime_type);
		res->mime_type = NULL;
	}
	if (!res->mime_type)
		res->mime_type = strdup(mime);
	if (!res->mime_type)
		return -1;
	if (media_span(sel, res, &req.t0, &req.t1) < 0)
		return 0;
	req.deadline = file->deadline;
	media_request_limits(&req, type, file, sel, opts, mime);
#if defined(TR_HAVE_MEDIA)
	const struct tr_media_api *api = tr_module_api(&tr_module_media);

	if (!api) {
		fail_read(res, TR_E_UNSUPPORTED, kind, tr_module_media.error);
		return 0;
	}
	if (api->run(file->fd, &req, &ans) < 0)
		return -1;
#else
	fail_read(res, TR_E_UNSUPPORTED, kind, "toolfs was built without FFmpeg");
	return 0;
#endif
	if (ans.rep.status != MEDIA_OK) {
		fail_read(res,
			  ans.rep.status == MEDIA_UNSUPPORTED ? TR_E_UNSUPPORTED : TR_E_CORRUPT,
			  kind, ans.text);
		media_answer_free(&ans);
		return 0;
	}
	if (ans.rep.kind == MEDIA_KIND_AUDIO && type == TR_TYPE_VIDEO) {
		/* a video container holding sound alone (WebM, Matroska, MP4) */
		res->type = type = TR_TYPE_AUDIO;
		kind = "audio";
	}
	if (ans.rep.duration >= 0 && req.t0 > 0 && req.t0 >= ans.rep.duration) {
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Second %.3f is past the end of the %s (%.3f s): %s", req.t0, kind,
			       ans.rep.duration, res->path);
		media_answer_free(&ans);
		return 0;
	}
	res->success = true;
	tr_buf_append(&res->content, ans.text, ans.rep.text_len);
	if (type == TR_TYPE_VIDEO) {
		res->meta.has_dimensions = ans.rep.width && ans.rep.height;
		res->meta.width = ans.rep.width;
		res->meta.height = ans.rep.height;
		res->range_unit = TR_UNIT_SECOND;
		res->range_total = ans.rep.duration >= 0 ? (uint64_t)ceil(ans.rep.duration) : 0;
		res->range_start = (uint64_t)floor(req.t0);
		res->range_end = req.t1 >= 0 ? (uint64_t)ceil(fmin(req.t1, ans.rep.duration))
					     : res->range_total;
		/* The module's answer is checked as a worker's was: a picture larger than asked for
		 * is dropped before its size is multiplied (2900561549 x 4239809835 x 3 wraps to 13
		 * in 64 bits). */
		if (ans.rep.pic_w && ans.rep.pic_h && ans.rep.pic_w <= req.max_w &&
		    ans.rep.pic_h <= req.max_h &&
		    ans.rep.blob_len == (uint64_t)ans.rep.pic_w * ans.rep.pic_h * 3) {
			if (media_picture(res, opts, file->deadline, &ans.rep, ans.blob) < 0) {
				media_answer_free(&ans);
				return -1;
			}
		}
	} else if (media_audio(file, opts, res, mime, &ans, req.t0, req.t1) < 0) {
		media_answer_free(&ans);
		return -1;
	}
	media_answer_free(&ans);
	tr_format_size((uint64_t)file->st.st_size, size_text, sizeof(size_text));
	if (type == TR_TYPE_VIDEO)
		tr_result_set_short(res, "Read %s video %ux%u, %.1f s (%s)", ans.rep.format,
				    ans.rep.width, ans.rep.height, fmax(ans.rep.duration, 0),
				    size_text);
	else
		tr_result_set_short(res, "Read %s audio, %.1f s (%s)", ans.rep.format,
				    fmax(ans.rep.duration, 0), size_text);
	return res->content.oom || !res->short_result ? -1 : 0;
}

/* Audio: the file's bytes and the WAV, each within max_audio_size; video: FFmpeg's RGB
 * picture and its PNG (in the worker, and the result's copy here). */
static uint64_t media_memory(const struct tr_file *file, const struct tr_options *opts)
{
	const char *mime;
	uint64_t side = opts->image_max_dim > 16384 ? 16384 : opts->image_max_dim;

	if (media_detect(file->head, file->head_len, &mime) == TR_TYPE_AUDIO)
		return 2 * opts->max_audio_size;
	return 2 * side * side * 3;
}

const struct tr_reader tr_reader_media = {
	.name = "media",
	.probe = media_probe,
	.read = media_read,
	.memory = media_memory,
#if defined(TR_HAVE_MEDIA)
	/* FFmpeg's demuxers and decoders; libvips fits a frame (its threads) */
	.caps = TR_CAP_TIMES | TR_CAP_UNTRUSTED | TR_CAP_THREADS,
	.module = "toolfs-media.so",
#endif
};
