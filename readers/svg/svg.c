/* SPDX-License-Identifier: MIT */
/* svg.c - the SVG reader (docs/SPEC.md §3 "SVG"): an SVG or gzipped SVG (.svgz) document, its
 * source numbered as a text file and, on the default view, its render as a PNG. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "reader.h"
#include "svg.h"
#include "text.h"
#include "util.h"

/* Defined when the module's objects are linked in (fuzz targets); else the module is loaded. */
extern const struct tr_svg_api tr_svg_api __attribute__((weak));

struct tr_module tr_module_svg = {
	.file = "toolfs-svg.so",
	.symbol = "tr_svg_api",
	.abi = TR_SVG_ABI,
	.linked = &tr_svg_api,
};

/* A render on a thread of its own, so that the read answers at its deadline while librsvg,
 * which cannot be interrupted, goes on: the reader worker that runs this reader ends as soon as
 * it has answered (docs/SPEC.md §8), and the thread with it. Whoever of the two lets go last
 * frees the job. */
struct render_job {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;
	int refs; /* under lock */
	const struct tr_svg_api *api;
	unsigned char *svg; /* owned copy of the document */
	size_t len;
	struct tr_svg_limits lim;
	struct tr_svg_render r;
	enum tr_error code;
	char err[512];
};

static void job_release(struct render_job *job)
{
	bool last;

	pthread_mutex_lock(&job->lock);
	last = --job->refs == 0;
	pthread_mutex_unlock(&job->lock);
	if (!last)
		return;
	if (job->done && job->code == TR_OK)
		tr_blob_unref(job->r.png);
	pthread_cond_destroy(&job->done_cond);
	pthread_mutex_destroy(&job->lock);
	free(job->svg);
	free(job);
}

static void *render_thread(void *arg)
{
	struct render_job *job = arg;

	job->code = job->api->render(job->svg, job->len, &job->lim, &job->r, job->err,
				     sizeof(job->err));
	pthread_mutex_lock(&job->lock);
	job->done = true;
	pthread_cond_signal(&job->done_cond);
	pthread_mutex_unlock(&job->lock);
	job_release(job);
	return NULL;
}

/* Renders svg[0..len) before deadline (0: none). Returns as api->render, or TR_E_TIMEOUT when
 * the deadline came first, or -1 when out of memory or no thread could be had. */
static int render_before(const struct tr_svg_api *api, const char *svg, size_t len,
			 const struct tr_svg_limits *lim, uint64_t deadline,
			 struct tr_svg_render *r, char *err, size_t err_size)
{
	struct render_job *job = calloc(1, sizeof(*job));
	pthread_condattr_t attr;
	pthread_t thread;
	int code;

	if (!job || !(job->svg = malloc(len ? len : 1))) {
		free(job);
		return -1;
	}
	memcpy(job->svg, svg, len);
	*job = (struct render_job){.refs = 2, .api = api, .svg = job->svg, .len = len, .lim = *lim};
	pthread_mutex_init(&job->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&job->done_cond, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&thread, NULL, render_thread, job)) {
		job->refs = 1;
		job_release(job);
		return -1;
	}
	pthread_detach(thread);
	pthread_mutex_lock(&job->lock);
	while (!job->done && !(deadline && tr_deadline_passed(deadline))) {
		struct timespec at = {(time_t)(deadline / 1000000000u),
				      (long)(deadline % 1000000000u)};

		if (deadline)
			pthread_cond_timedwait(&job->done_cond, &job->lock, &at);
		else
			pthread_cond_wait(&job->done_cond, &job->lock);
	}
	code = job->done ? (int)job->code : TR_E_TIMEOUT;
	if (job->done) {
		*r = job->r;
		job->code = TR_E_IO; /* the render is the caller's now */
		snprintf(err, err_size, "%s", job->err);
	}
	pthread_mutex_unlock(&job->lock);
	job_release(job);
	return code;
}

/* Content when the head is an SVG document, or a gzip stream whose inflated start is one. */
static enum tr_probe svg_probe(const struct tr_file *file)
{
	char *text, err[128];
	size_t len;
	bool svg;

	if (tr_svg_detect(file->head, file->head_len))
		return TR_PROBE_CONTENT;
	if (!tr_svg_gzip_signature(file->head, file->head_len))
		return TR_PROBE_NO;
	if (tr_svg_inflate(file->head, file->head_len, TR_HEAD_SIZE, &text, &len, err,
			   sizeof(err)) < 0)
		return TR_PROBE_NO;
	svg = tr_svg_detect((const unsigned char *)text, len);
	free(text);
	return svg ? TR_PROBE_CONTENT : TR_PROBE_NO;
}

/* Fails res with code and sentence, and shows the source window after the sentence (a broken
 * or unrenderable SVG is still readable as text). window (the formatted source window) is
 * freed. */
static int fail_with_source(struct tr_result *res, struct tr_buf *window, enum tr_error code,
			    const char *sentence)
{
	tr_result_fail(res, code, "%s", sentence);
	if (window->len)
		tr_buf_printf(&res->content, "\n\nThe SVG source:\n%s", window->data);
	tr_buf_free(window);
	return res->content.oom ? -1 : 0;
}

/* Renders text (the whole document) and attaches the PNG, or turns res into the failure. */
static int attach_render(const struct tr_file *file, const char *text, size_t len,
			 const struct tr_options *opts, struct tr_result *res)
{
	const struct tr_svg_api *api = tr_module_api(&tr_module_svg);
	struct tr_svg_limits lim = {.max_dim = opts->image_max_dim, .max_b64 = opts->image_max_b64};
	struct tr_buf window = res->content;
	struct tr_svg_render r;
	struct tr_buf sentence = {0};
	char err[512];
	int code = TR_E_UNSUPPORTED;
	int rc;

	memset(&res->content, 0, sizeof(res->content));
	if (!api)
		tr_buf_printf(&sentence, "SVG rendering needs librsvg: %s", tr_module_svg.error);
	else
		code = render_before(api, text, len, &lim, file->deadline, &r, err, sizeof(err));
	if (code < 0) {
		tr_buf_free(&window);
		return -1;
	}
	if (code == TR_E_TIMEOUT)
		tr_buf_printf(
			&sentence,
			"Timeout: the SVG was not rendered within max_render_ms (%llu ms): %s",
			(unsigned long long)opts->max_render_ms, res->path);
	else if (code == TR_E_TOO_LARGE)
		tr_buf_printf(&sentence, "SVG cannot be rendered: %s: %s", err, res->path);
	else if (code != TR_OK && api)
		tr_buf_printf(&sentence, "%s: %s", err, res->path);
	if (code != TR_OK) {
		rc = sentence.oom ? -1 : fail_with_source(res, &window, code, sentence.data);
		tr_buf_free(&sentence);
		tr_buf_free(&window);
		return rc;
	}
	res->content = window;
	res->meta.has_dimensions = true;
	res->meta.width = r.from_width;
	res->meta.height = r.from_height;
	if (r.width != r.from_width || r.height != r.from_height) {
		res->meta.has_resized = true;
		res->meta.from_width = r.from_width;
		res->meta.from_height = r.from_height;
		res->meta.to_width = r.width;
		res->meta.to_height = r.height;
		res->meta.scale = (double)(r.from_width > r.from_height ? r.from_width
									: r.from_height) /
				  (r.width > r.height ? r.width : r.height);
	}
	if (tr_result_add_image(res, r.png, "image/png", r.width, r.height, 0, 0) < 0)
		return -1;
	/* shortResult: the render, then the text window's own "Read N lines (A-B of T)". */
	char *lines = res->short_result;
	const char *window_text = lines && strncmp(lines, "Read ", 5) == 0 ? lines + 5 : "";

	res->short_result = NULL;
	tr_result_set_short(res, "Read SVG image %ux%u, rendered as PNG %ux%u, and its source: %s",
			    r.from_width, r.from_height, r.width, r.height, window_text);
	free(lines);
	return res->short_result ? 0 : -1;
}

/* The document's text: the file itself, or a .svgz inflated (within max_image_size). Returns
 * 0 with *text set (into *inflated, or the blob's bytes with *blob set), 1 when res records a
 * failure, -1 when out of memory; the caller frees *inflated and *blob in every case. */
static int load_text(const struct tr_file *file, const struct tr_options *opts,
		     struct tr_result *res, struct tr_blob **blob, char **inflated,
		     const char **text, size_t *len)
{
	uint64_t size = (uint64_t)file->st.st_size;
	char err[256];
	int rc;

	if (size > opts->max_image_size) {
		tr_result_fail_too_large(res, "SVG", size, opts->max_image_size, NULL);
		return 1;
	}
	if (tr_load_file(file->fd, size, blob, &res->meta) < 0) {
		rc = tr_result_fail_load(res, errno);
		return rc < 0 ? -1 : 1;
	}
	if (!tr_svg_gzip_signature((*blob)->data, (*blob)->len)) {
		*text = (const char *)(*blob)->data;
		*len = (*blob)->len;
		return 0;
	}
	rc = tr_svg_inflate((*blob)->data, (*blob)->len, opts->max_image_size, inflated, len, err,
			    sizeof(err));
	if (rc < 0)
		return -1;
	if (rc == 1) {
		tr_result_fail(res, TR_E_TOO_LARGE,
			       "SVG file inflates past the %llu bytes of max_image_size: %s",
			       (unsigned long long)opts->max_image_size, res->path);
		return 1;
	}
	if (rc == 2) {
		tr_result_fail(res, TR_E_CORRUPT, "Failed to inflate SVGZ: %s: %s", err, res->path);
		return 1;
	}
	*text = *inflated;
	return 0;
}

static int svg_read(const struct tr_file *file, const struct tr_selector *sel,
		    const struct tr_options *opts, struct tr_result *res)
{
	struct tr_blob *blob = NULL;
	char *inflated = NULL;
	const char *text = NULL;
	size_t len = 0;
	int rc;

	res->type = TR_TYPE_IMAGE;
	res->mime_type = strdup("image/svg+xml");
	if (!res->mime_type)
		return -1;
	rc = load_text(file, opts, res, &blob, &inflated, &text, &len);
	if (rc != 0) {
		free(inflated);
		tr_blob_unref(blob);
		return rc < 0 ? -1 : 0;
	}
	/* The source, numbered as a text file (a UTF-8 BOM is not shown). */
	size_t bom = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;

	rc = tr_text_window_buffer(text + bom, len - bom, file->src->name, sel, opts, res);
	/* The render goes with the default view only: a selector reads source lines. */
	if (rc == 0 && res->success && !sel->present)
		rc = attach_render(file, text, len, opts, res);
	free(inflated);
	tr_blob_unref(blob);
	return rc;
}

/* docs/SPEC.md §4 max_read_memory: the file, a .svgz's document (taken as 20 times the file,
 * within max_image_size), and the render's memory: librsvg's tree, about 50 bytes for each
 * byte of the document, and the canvas with its PNG, within TR_SVG_RENDER_MEMORY. */
static uint64_t svg_memory(const struct tr_file *file, const struct tr_options *opts)
{
	uint64_t size = (uint64_t)file->st.st_size, doc = size, dim = opts->image_max_dim, child;

	if (size > opts->max_image_size)
		return 0;
	if (tr_svg_gzip_signature(file->head, file->head_len))
		doc = size > opts->max_image_size / 20 ? opts->max_image_size : 20 * size;
	child = dim > 65536 || doc > TR_SVG_RENDER_MEMORY / 50 ? TR_SVG_RENDER_MEMORY
							       : 50 * doc + 8 * dim * dim;
	return size + (doc != size ? doc : 0) +
	       (child > TR_SVG_RENDER_MEMORY ? TR_SVG_RENDER_MEMORY : child);
}

const struct tr_reader tr_reader_svg = {
	.name = "svg",
	.probe = svg_probe,
	.read = svg_read,
	.memory = svg_memory,
	.caps = TR_CAP_UNTRUSTED | TR_CAP_THREADS, /* librsvg, cairo, fontconfig */
	.module = "toolfs-svg.so",
};
