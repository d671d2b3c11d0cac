/* SPDX-License-Identifier: MIT */
/* result.c - lifecycle and setters of struct tr_result, and the names of its enums. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "tr_result.h"
#include "util.h"

int tr_buf_append(struct tr_buf *buf, const void *bytes, size_t len)
{
	if (buf->oom)
		return -1;
	if (buf->len + len + 1 > buf->cap) {
		size_t cap = buf->cap ? buf->cap : 256;

		while (cap < buf->len + len + 1)
			cap *= 2;
		char *grown = realloc(buf->data, cap);

		if (!grown) {
			buf->oom = true;
			return -1;
		}
		buf->data = grown;
		buf->cap = cap;
	}
	if (len)
		memcpy(buf->data + buf->len, bytes, len);
	buf->len += len;
	buf->data[buf->len] = '\0';
	return 0;
}

int tr_buf_vprintf(struct tr_buf *buf, const char *fmt, va_list ap)
{
	char small[256];
	va_list copy;
	int n;

	va_copy(copy, ap);
	n = vsnprintf(small, sizeof(small), fmt, copy);
	va_end(copy);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(small))
		return tr_buf_append(buf, small, (size_t)n);
	char *big = malloc((size_t)n + 1);

	if (!big) {
		buf->oom = true;
		return -1;
	}
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	int rc = tr_buf_append(buf, big, (size_t)n);

	free(big);
	return rc;
}

int tr_buf_printf(struct tr_buf *buf, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = tr_buf_vprintf(buf, fmt, ap);
	va_end(ap);
	return rc;
}

void tr_buf_free(struct tr_buf *buf)
{
	free(buf->data);
	memset(buf, 0, sizeof(*buf));
}

int tr_result_init(struct tr_result *res, const char *path)
{
	memset(res, 0, sizeof(*res));
	res->type = TR_TYPE_UNKNOWN;
	res->line_count = -1;
	res->meta.page_count = -1;
	res->meta.cell_count = -1;
	res->meta.slide_count = -1;
	res->meta.tracked_ins = -1;
	res->meta.tracked_del = -1;
	res->path = strdup(path ? path : "");
	return res->path ? 0 : -1;
}

void tr_result_destroy(struct tr_result *res)
{
	free(res->path);
	free(res->abs_path);
	free(res->mime_type);
	tr_buf_free(&res->content);
	free(res->short_result);
	free(res->next);
	for (size_t i = 0; i < res->n_images; i++)
		tr_blob_unref(res->images[i].data);
	free(res->images);
	for (size_t i = 0; i < res->n_documents; i++)
		tr_blob_unref(res->documents[i].data);
	free(res->documents);
	for (size_t i = 0; i < res->n_audio; i++)
		tr_blob_unref(res->audio[i].data);
	free(res->audio);
	free(res->meta.description);
	free(res->meta.language);
	free(res->meta.nbformat);
	for (size_t i = 0; i < res->meta.n_sheets; i++) {
		free(res->meta.sheets[i].name);
		free(res->meta.sheets[i].range);
	}
	free(res->meta.sheets);
	free(res->meta.ocr);
	tr_digest_unref(res->meta.sha256_later);
	free(res->error_text);
	memset(res, 0, sizeof(*res));
}

const char *tr_metadata_sha256(struct tr_metadata *meta)
{
	if (!meta->has_sha256)
		return NULL;
	if (meta->sha256_later) {
		memcpy(meta->sha256, tr_digest_hex(meta->sha256_later), sizeof(meta->sha256));
		tr_digest_unref(meta->sha256_later);
		meta->sha256_later = NULL;
	}
	return meta->sha256;
}

static char *vformat(const char *fmt, va_list ap)
{
	char *out = NULL;

	if (vasprintf(&out, fmt, ap) < 0)
		return NULL;
	return out;
}

void tr_result_fail(struct tr_result *res, enum tr_error code, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = vformat(fmt, ap);
	va_end(ap);
	res->success = false;
	res->error = code;
	free(res->error_text);
	res->error_text = text ? text : strdup("Out of memory");
	res->content.len = 0;
	res->meta.has_content_tokens = false; /* content is the sentence now */
	if (res->content.data)
		res->content.data[0] = '\0';
	if (res->error_text)
		tr_buf_append(&res->content, res->error_text, strlen(res->error_text));
	tr_result_set_short(res, "Error: %s", res->error_text ? res->error_text : "");
}

void tr_result_set_short(struct tr_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	free(res->short_result);
	res->short_result = vformat(fmt, ap);
	va_end(ap);
}

int tr_result_set_window(struct tr_result *res, const char *name, const struct tr_window *w)
{
	char sel[80];

	res->range_unit = w->unit;
	res->range_start = w->first;
	res->range_end = w->last;
	res->range_total = w->total;
	res->truncated = w->cut || w->first > 1 || w->last < w->total;
	if (!w->next.present)
		return 0;
	tr_selector_format_after(name, strlen(name), &w->next, sel, sizeof(sel));
	tr_result_set_next(res, name, sel);
	return res->next ? 0 : -1;
}

void tr_result_set_next(struct tr_result *res, const char *basename, const char *sel)
{
	free(res->next);
	res->next = NULL;
	if (asprintf(&res->next, "%s:%s.tool.json", basename, sel) < 0)
		res->next = NULL;
	res->next_name_len = strlen(basename);
}

int tr_result_add_image(struct tr_result *res, struct tr_blob *blob, const char *media_type,
			uint32_t width, uint32_t height, uint32_t page, uint32_t cell)
{
	struct tr_image *images = realloc(res->images, (res->n_images + 1) * sizeof(*images));

	if (!images) {
		tr_blob_unref(blob);
		return -1;
	}
	res->images = images;
	images[res->n_images++] = (struct tr_image){
		.data = blob,
		.media_type = media_type,
		.width = width,
		.height = height,
		.page = page,
		.cell = cell,
	};
	return 0;
}

int tr_result_add_document(struct tr_result *res, struct tr_blob *blob, const char *media_type)
{
	struct tr_document *docs = realloc(res->documents, (res->n_documents + 1) * sizeof(*docs));

	if (!docs) {
		tr_blob_unref(blob);
		return -1;
	}
	res->documents = docs;
	docs[res->n_documents++] = (struct tr_document){.data = blob, .media_type = media_type};
	return 0;
}

int tr_result_add_audio(struct tr_result *res, struct tr_blob *blob, const char *media_type,
			double start, double end)
{
	struct tr_audio *audio = realloc(res->audio, (res->n_audio + 1) * sizeof(*audio));

	if (!audio) {
		tr_blob_unref(blob);
		return -1;
	}
	res->audio = audio;
	audio[res->n_audio++] = (struct tr_audio){
		.data = blob, .media_type = media_type, .start = start, .end = end};
	return 0;
}

static const char *const content_type_names[] = {
#define TR_CONTENT_TYPE(id, name) [TR_TYPE_##id] = name,
#include "tr_results.def"
};

static const char *const error_names[] = {
	[TR_OK] = "",
#define TR_ERROR_CODE(id, name) [TR_E_##id] = name,
#include "tr_results.def"
};

static const char *const range_unit_names[] = {
	[TR_UNIT_NONE] = NULL,
#define TR_RANGE_UNIT(id, name) [TR_UNIT_##id] = name,
#include "tr_results.def"
};

const char *tr_content_type_name(enum tr_content_type type)
{
	return (unsigned)type < TR_CONTENT_TYPE_COUNT ? content_type_names[type] : "unknown";
}

void tr_content_types_list(char *buf, size_t size)
{
	size_t used = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	/* unknown (the zero value) last, as the docs list them */
	for (int t = 1; t <= TR_CONTENT_TYPE_COUNT && used < size; t++) {
		int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
				 content_type_names[t % TR_CONTENT_TYPE_COUNT]);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

const char *tr_error_name(enum tr_error code)
{
	return (unsigned)code < TR_ERROR_COUNT ? error_names[code] : "io_error";
}

const char *tr_range_unit_name(enum tr_range_unit unit)
{
	return (unsigned)unit < TR_RANGE_UNIT_COUNT ? range_unit_names[unit] : NULL;
}

enum tr_error tr_error_from_errno(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR: return TR_E_NOT_FOUND;
	case EACCES:
	case EPERM: return TR_E_PERMISSION_DENIED;
	case ELOOP:
	case EISDIR:
	case ENXIO: return TR_E_NOT_REGULAR;
	case EFBIG: return TR_E_TOO_LARGE;
	default: return TR_E_IO;
	}
}

char *tr_format_size(uint64_t bytes, char *buf, size_t size)
{
	if (bytes < 1024)
		snprintf(buf, size, "%" PRIu64 " bytes", bytes);
	else if (bytes < 1024 * 1024)
		snprintf(buf, size, "%.1f KB", bytes / 1024.0);
	else if (bytes < 1024ull * 1024 * 1024)
		snprintf(buf, size, "%.1f MB", bytes / (1024.0 * 1024));
	else
		snprintf(buf, size, "%.1f GB", bytes / (1024.0 * 1024 * 1024));
	return buf;
}

void tr_format_limit(uint64_t limit, uint64_t actual, char *limit_text, char *actual_text,
		     size_t size)
{
	uint64_t unit = 1024 * 1024;
	const char *name = "MB";

	if (limit < 1024) {
		snprintf(limit_text, size, "%" PRIu64 " bytes", limit);
		snprintf(actual_text, size, "%" PRIu64 " bytes", actual);
		return;
	}
	if (limit < unit) {
		unit = 1024;
		name = "KB";
	}
	if (limit % unit == 0)
		snprintf(limit_text, size, "%" PRIu64 "%s", limit / unit, name);
	else
		snprintf(limit_text, size, "%.2f%s", (double)limit / (double)unit, name);
	snprintf(actual_text, size, "%.2f%s", (double)actual / (double)unit, name);
}

void tr_result_fail_too_large(struct tr_result *res, const char *kind, uint64_t size,
			      uint64_t limit, const char *suffix)
{
	char limit_text[48], actual_text[48];

	tr_format_limit(limit, size, limit_text, actual_text, sizeof(limit_text));
	tr_result_fail(res, TR_E_TOO_LARGE, "%s file exceeds %s limit (actual: %s)%s", kind,
		       limit_text, actual_text, suffix ? suffix : "");
}

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return "directory";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	case S_IFLNK: return "symbolic link";
	case S_IFREG: return "regular file";
	}
	return "unknown file type";
}

void tr_result_set_stat(struct tr_result *res, const struct stat *st)
{
	res->meta.has_stat = true;
	res->meta.size = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
	res->meta.modified_sec = st->st_mtim.tv_sec;
}

void tr_result_not_regular(struct tr_result *res, const struct stat *st)
{
	tr_result_set_stat(res, st);
	tr_result_fail(res, TR_E_NOT_REGULAR, "Not a regular file: %s (%s)", res->path,
		       file_kind(st->st_mode));
}

/* "image file", "PDF file" ... for messages, guessed from the name. */
static const char *name_kind(const char *name)
{
	static const char *const image_exts[] = {"png", "jpg",  "jpeg", "gif",  "webp", "bmp",
						 "tif", "tiff", "ico",  "heic", "avif", NULL};

	for (size_t i = 0; image_exts[i]; i++)
		if (tr_has_extension(name, image_exts[i]))
			return "image file";
	if (tr_has_extension(name, "pdf"))
		return "PDF file";
	if (tr_has_extension(name, "ipynb"))
		return "notebook file";
	return "file";
}

void tr_result_fail_errno(struct tr_result *res, int err)
{
	enum tr_error code = tr_error_from_errno(err);

	switch (code) {
	case TR_E_NOT_FOUND: tr_result_fail(res, code, "File not found: %s", res->path); break;
	case TR_E_PERMISSION_DENIED:
		tr_result_fail(res, code, "Permission denied accessing %s: %s",
			       name_kind(res->path), res->path);
		break;
	case TR_E_NOT_REGULAR:
		tr_result_fail(res, code, "Not a regular file: %s (%s)", res->path,
			       err == ELOOP ? "symbolic link loop" : strerror(err));
		break;
	default: tr_result_fail(res, code, "I/O error reading %s: %s", res->path, strerror(err));
	}
}

int tr_result_fail_load(struct tr_result *res, int err)
{
	if (err == ENOMEM)
		return -1;
	if (tr_error_from_errno(err) == TR_E_PERMISSION_DENIED)
		tr_result_fail_errno(res, err);
	else
		tr_result_fail(res, TR_E_IO, "I/O error reading %s: %s", res->path, strerror(err));
	return 0;
}
