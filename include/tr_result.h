/* SPDX-License-Identifier: MIT */
/* tr_result.h - the ToolResult of docs/SPEC.md §2 as a C structure, its error codes and setters. */
#ifndef TR_RESULT_H
#define TR_RESULT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tr_blob.h"
#include "tr_digest.h"
#include "tr_selector.h"

struct stat;

/* The contentType, errorCode and range.unit values, rows of tr_results.def. */
enum tr_content_type {
#define TR_CONTENT_TYPE(id, name) TR_TYPE_##id,
#include "tr_results.def"
};

/* errorCode values of docs/SPEC.md §5; TR_OK means success. */
enum tr_error {
	TR_OK,
#define TR_ERROR_CODE(id, name) TR_E_##id,
#include "tr_results.def"
};

enum tr_range_unit {
	TR_UNIT_NONE,
#define TR_RANGE_UNIT(id, name) TR_UNIT_##id,
#include "tr_results.def"
};

/* How many values each enum has (the sandbox's wire refuses a number past them). */
enum {
#define TR_CONTENT_TYPE(id, name) TR_CONTENT_TYPE_ROW_##id,
#include "tr_results.def"
	TR_CONTENT_TYPE_COUNT,
};
enum {
	TR_ERROR_ROW_OK,
#define TR_ERROR_CODE(id, name) TR_ERROR_ROW_##id,
#include "tr_results.def"
	TR_ERROR_COUNT,
};
enum {
	TR_RANGE_UNIT_ROW_NONE,
#define TR_RANGE_UNIT(id, name) TR_RANGE_UNIT_ROW_##id,
#include "tr_results.def"
	TR_RANGE_UNIT_COUNT,
};

/* One entry of images[]: the blob holds the raw (decoded) image bytes; owned reference. */
struct tr_image {
	struct tr_blob *data;
	const char *media_type; /* static string, e.g. "image/png" */
	uint32_t width, height;
	uint32_t page;  /* 0: not a PDF page render */
	uint32_t cell;  /* 0: not a notebook output */
	uint32_t slide; /* 0: not a picture of a presentation slide */
};

/* One entry of documents[]: raw bytes; owned reference. */
struct tr_document {
	struct tr_blob *data;
	const char *media_type; /* static string */
};

/* One entry of audio[]: the sound of [start, end) seconds of the file, as the file's own bytes
 * or as a WAV; owned reference. */
struct tr_audio {
	struct tr_blob *data;
	const char *media_type; /* static: "audio/wav", "audio/mpeg", "audio/flac", ... */
	double start, end;
};

/* One entry of metadata.sheets (spreadsheets): every sheet in workbook order. */
struct tr_sheet_meta {
	char *name;  /* owned */
	char *range; /* owned, the used range ("A1:F1200"), or NULL when the sheet does not say */
	bool hidden; /* hidden or very hidden: not shown by default, readable by selector */
};

/* One entry of metadata.ocr: a page (0: the image) read by OCR and Tesseract's mean word
 * confidence (0-100). */
struct tr_ocr_meta {
	uint32_t page;
	int confidence;
};

/* A growable byte string; data is NUL-terminated whenever len > 0. */
struct tr_buf {
	char *data;
	size_t len, cap;
	bool oom; /* an append failed: the contents are incomplete */
};

struct tr_metadata {
	bool has_stat; /* false when the file could not be stat'ed: size/modified omitted */
	uint64_t size;
	int64_t modified_sec; /* source mtime, seconds since the epoch (UTC) */
	bool has_sha256;
	char sha256[65];                /* when has_sha256 and not sha256_later */
	struct tr_digest *sha256_later; /* owned or NULL: sha256 is still being computed (a large
					 * file); tr_metadata_sha256() waits for it */
	char *description;              /* owned, libmagic's text, or NULL */
	const char *encoding;           /* static, or NULL */
	const char *line_ending;        /* static "lf", "crlf", "cr", "mixed", "none", or NULL */
	bool has_dimensions;
	uint32_t width, height;
	int64_t page_count, cell_count; /* -1 when absent */
	char *language;                 /* owned or NULL */
	char *nbformat;                 /* owned or NULL, e.g. "4.5" */
	struct tr_sheet_meta *sheets;   /* owned array of n_sheets (spreadsheets), or NULL */
	size_t n_sheets;
	int64_t slide_count;              /* -1 when absent */
	int64_t tracked_ins, tracked_del; /* -1 when absent: tracked changes of a document */
	bool has_resized;
	uint32_t from_width, from_height, to_width, to_height;
	const char *saving;      /* static or NULL: tr_fit.saving (resized.saving) */
	bool has_content_tokens; /* content_tokens is the estimate of content as it stands */
	uint64_t content_tokens; /* (a reader that weighed it already: metadata.tokens.content) */
	double scale;
	bool has_region; /* region: the rectangle of the source shown (a region selector) */
	struct tr_region region;
	struct tr_ocr_meta *ocr; /* owned array of n_ocr (pages read by OCR), or NULL */
	size_t n_ocr;
	char ocr_language[64]; /* ocr_lang of those, when n_ocr */
};

struct tr_result {
	bool success;
	enum tr_content_type type;
	char *path;      /* owned, as given (invalid UTF-8 is replaced when written) */
	char *abs_path;  /* owned or NULL: absolute path for file:// URIs (MCP resources) */
	char *mime_type; /* owned or NULL */
	struct tr_buf content;
	char *short_result; /* owned */
	bool truncated;
	char *next;           /* owned or NULL */
	size_t next_name_len; /* next's NAME: its first next_name_len bytes (tr_result_set_next) */
	enum tr_range_unit range_unit; /* TR_UNIT_NONE: no range */
	uint64_t range_start, range_end, range_total;
	int64_t line_count; /* -1 when absent */
	struct tr_image *images;
	size_t n_images;
	struct tr_document *documents;
	size_t n_documents;
	struct tr_audio *audio;
	size_t n_audio;
	struct tr_metadata meta;
	enum tr_error error;
	char *error_text; /* owned, iff error != TR_OK */
};

/* Initialises res as an empty "unknown" result for path (copied). Returns 0, -1 when out of
 * memory (res is still safe to destroy). */
int tr_result_init(struct tr_result *res, const char *path);

/* Frees everything res owns; leaves it zeroed. */
void tr_result_destroy(struct tr_result *res);

/* The hex SHA-256 of meta's file (waiting for a digest still being computed), or NULL when
 * meta has none. */
const char *tr_metadata_sha256(struct tr_metadata *meta);

/* Marks res failed with code and a printf-formatted sentence: sets error, errorCode, content
 * (= the sentence), shortResult ("Error: <sentence>"), success=false. Keeps type and metadata. */
void tr_result_fail(struct tr_result *res, enum tr_error code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records an errno from opening or reading res->path as its error, worded as docs/SPEC.md §5 does:
 * not_found, permission_denied ("Permission denied accessing image file: docs/a.png"),
 * not_regular, or io_error ("I/O error reading data/x.bin: Input/output error"). */
void tr_result_fail_errno(struct tr_result *res, int err);

/* Lists the folder open as dir_fd (borrowed; O_PATH is enough) and, when up to three names in it
 * are close to path's last component, rewrites res's not_found error as "File not found: P. Did
 * you mean A, B or C?" with each name shown in path's folder. Nothing but dir_fd itself is read:
 * no path is resolved. Leaves res unchanged when none is close. */
void tr_result_suggest_names(struct tr_result *res, int dir_fd, const char *path);

/* Records a failed read of res->path's bytes (the file is open) with errno err: permission_denied
 * as tr_result_fail_errno words it, anything else io_error ("I/O error reading data/x.bin:
 * Input/output error"). Returns -1 when err is ENOMEM (nothing recorded: the caller's
 * out-of-memory return), else 0. */
int tr_result_fail_load(struct tr_result *res, int err);

/* Records st's size (regular files only; 0 otherwise) and mtime in res->meta. */
void tr_result_set_stat(struct tr_result *res, const struct stat *st);

/* Fills res with the error of a file whose lstat/stat is st (a directory, FIFO, ...):
 * "Not a regular file: PATH (fifo)". */
void tr_result_not_regular(struct tr_result *res, const struct stat *st);

/* Replaces the short result with a printf-formatted line. */
void tr_result_set_short(struct tr_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Sets next to "<name>:<sel>.tool.json" where name is the basename of path. */
void tr_result_set_next(struct tr_result *res, const char *basename, const char *sel);

/* A window of a result over its units (docs/SPEC.md §2 range, truncated, next): units first..last
 * of total are shown (first 1 and last 0 when total is 0), cut when anything inside them was cut
 * short (a line, a cell's output, a sheet's rows, max_output), and next the selector that reads
 * on (next.present false: nothing to read on). */
struct tr_window {
	enum tr_range_unit unit;
	uint64_t first, last, total;
	bool cut;
	struct tr_selector next;
};

/* Records w in res: range {unit, first, last, total}; truncated when w->cut or the window is not
 * all of total (first > 1 or last < total); next "<name>:<next>.tool.json" (name a basename).
 * Returns 0, or -1 when out of memory (next is then missing). */
int tr_result_set_window(struct tr_result *res, const char *name, const struct tr_window *w);

/* Appends an image (takes ownership of the blob reference). Returns 0 or -1 (blob released). */
int tr_result_add_image(struct tr_result *res, struct tr_blob *blob, const char *media_type,
			uint32_t width, uint32_t height, uint32_t page, uint32_t cell);

/* Appends a document (takes ownership of the blob reference). Returns 0 or -1 (blob released). */
int tr_result_add_document(struct tr_result *res, struct tr_blob *blob, const char *media_type);

/* Appends a sound (takes ownership of the blob reference). Returns 0 or -1 (blob released). */
int tr_result_add_audio(struct tr_result *res, struct tr_blob *blob, const char *media_type,
			double start, double end);
/* Names used in JSON: "text", "image", ...; "not_found", ... ("" for TR_OK). */
const char *tr_content_type_name(enum tr_content_type type);
const char *tr_error_name(enum tr_error code);
/* range.unit's name ("line", ...); NULL for TR_UNIT_NONE. */
const char *tr_range_unit_name(enum tr_range_unit unit);

/* Writes every contentType name of docs/SPEC.md §2, comma-separated, unknown last ("text, image,
 * ..., binary, unknown"), to buf, cut to size. For usage texts and the MCP tool description. */
void tr_content_types_list(char *buf, size_t size);

/* Maps an errno from opening or reading a source to an error code. */
enum tr_error tr_error_from_errno(int err);

/* tr_buf helpers: append bytes / printf; on failure set buf->oom and return -1. */
int tr_buf_append(struct tr_buf *buf, const void *bytes, size_t len);
int tr_buf_printf(struct tr_buf *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tr_buf_vprintf(struct tr_buf *buf, const char *fmt, va_list ap);
void tr_buf_free(struct tr_buf *buf);

/* Formats a byte count as docs/SPEC.md's short results do: "245.3 KB", "1.2 MB", "512 bytes"
 * (1 KB = 1024 bytes). Returns buf. */
char *tr_format_size(uint64_t bytes, char *buf, size_t size);

/* Formats a size limit and a size over it as the too_large sentences do, both in the limit's
 * unit: "64MB" and "70.12MB" (a limit that is not whole MiB keeps two decimals: "1.46MB");
 * under 1 MiB "2KB" and "4.23KB"; under 1 KiB "10 bytes" and "33 bytes". Writes NUL-terminated
 * texts of at most size bytes into limit_text and actual_text. */
void tr_format_limit(uint64_t limit, uint64_t actual, char *limit_text, char *actual_text,
		     size_t size);

/* Records too_large for a file of size bytes over limit, in docs/SPEC.md §5's words:
 * "<kind> file exceeds 20MB limit (actual: 25.30MB)" followed by suffix (NULL or "" for none),
 * with the units of tr_format_limit. */
void tr_result_fail_too_large(struct tr_result *res, const char *kind, uint64_t size,
			      uint64_t limit, const char *suffix);

#endif
