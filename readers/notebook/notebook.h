/* SPDX-License-Identifier: MIT */
/* notebook.h - the notebook reader's private parts: the entry point on a buffer, cell rendering,
 * image outputs, JSON error location and text helpers. */
#ifndef TR_NOTEBOOK_PRIVATE_H
#define TR_NOTEBOOK_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "tr_blob.h"
#include "tr_options.h"
#include "tr_result.h"
#include "tr_selector.h"

/* --- notebook --- */
/* the notebook reader's entry point on a buffer (shared with its unit tests). */

/* The notebook reader: probes .ipynb by name, reads it whole (up to max_notebook_size). */
extern const struct tr_reader tr_reader_notebook;

/* MIME type of a Jupyter notebook. */
#define TR_NOTEBOOK_MIME "application/x-ipynb+json"

/* Fills res (freshly initialised) from the notebook JSON text[0..len) as the notebook reader
 * does: type, mimeType, content, shortResult, range, truncated, next, images, and metadata
 * cellCount, language, nbformat (not size, modified or sha256). name is the notebook's base name
 * for next and the notes of cut outputs (borrowed). Image fits stop at deadline
 * (tr_deadline_after_ms; 0: none): the images not fitted by then are notes in content.
 * Parse errors, non-notebooks and selectors past the end are recorded in res. Returns 0, or -1
 * when out of memory. */
int tr_notebook_read_buffer(const char *text, size_t len, const char *name,
			    const struct tr_selector *sel, const struct tr_options *opts,
			    uint64_t deadline, struct tr_result *res);

/* --- notebook_cell --- */
/* renders one notebook cell (source, attachments, outputs) with its caps. */

/* Code points of outputs shown per cell when a result holds several cells (docs/SPEC.md §3). */
#define TR_NB_CELL_OUTPUT_CHARS 10000

/* The read's time for image fits (docs/SPEC.md §3 "Render time"), shared by its cells. */
struct tr_nb_budget {
	uint64_t deadline; /* tr_deadline_after_ms; 0: none. Fits still running then are stopped */
	uint64_t fit_cell; /* the first cell where a fit ran (done or stopped); 0: none yet */
};

/* How cells are rendered and capped. */
struct tr_nb_context {
	const char *name;     /* the notebook's base name, for "read NAME:C.tool.json"; borrowed */
	int nbformat;         /* major version: 3, or 4 (also used for later versions) */
	bool single_cell;     /* the result holds only this cell: outputs capped by bytes */
	uint64_t byte_budget; /* content bytes the cell may take when it is alone in a result */
	uint64_t max_image_size;       /* larger images are mentioned in the text, not attached */
	const struct tr_options *opts; /* image_max_dim, image_max_b64: images over them are
					* fitted (libvips); borrowed */
	uint32_t first_image;          /* 1-based number in images[] of the cell's first image */
	uint64_t cell;                 /* the cell's 1-based index, for "read NAME:C.tool.json" */
	struct tr_nb_budget *budget;   /* borrowed, updated by the fits; NULL: no deadline */
};

/* A rendered cell, waiting to be added to a result. */
struct tr_nb_cell {
	struct tr_buf text;         /* "\n--- Cell N [type] ---\n", the source, the outputs */
	struct tr_nb_image *images; /* owned, numbered from first_image in text order */
	size_t n_images, cap_images;
	size_t timeouts; /* images noted as not fitted within the read's budget */
	bool truncated;  /* the source or the outputs were cut */
};

/* Checks what the renderer relies on in cell number index (1-based) of an nbformat notebook: an
 * object with a string cell_type, a source (v3 code cells: input) that is a string or a list of
 * strings, outputs (when present) a list of objects with a string output_type. Returns true, or
 * false with a reason written to reason[0..size), e.g. "cell 3 has no \"cell_type\"". */
bool tr_nb_cell_check(const char *cell, uint64_t index, int nbformat, char *reason, size_t size);

/* Renders checked cell number index into out (zeroed by the caller): the cell header, the source
 * verbatim (cut with a note past ctx->byte_budget), markdown attachments, then the outputs
 * (terminal escapes removed, capped at TR_NB_CELL_OUTPUT_CHARS code points, or by the byte budget
 * when ctx->single_cell, with a note). Images go to out->images. Returns 0, or -1 when out of
 * memory; out must be destroyed either way. */
int tr_nb_cell_render(const char *cell, uint64_t index, const struct tr_nb_context *ctx,
		      struct tr_nb_cell *out);

/* Frees the text and image references out holds and zeroes it. */
void tr_nb_cell_destroy(struct tr_nb_cell *out);

/* Decodes an image value and appends its reference line to buf:
 * "[<prefix>image 2: image/png 640x480, attached]", with the size it is shown at when it had to
 * be fitted, or why it is not attached; an attached image goes to out->images (owned by out).
 * Returns 1 when the image was attached, 0 when not, -1 when out of memory. */
int tr_nb_append_image(const struct tr_nb_context *ctx, struct tr_nb_cell *out, struct tr_buf *buf,
		       const char *value, const char *prefix, const char *noun);

/* --- notebook_image --- */
/* decodes the base64 image outputs of notebooks and reads their size. */

/* A decoded PNG or JPEG image. */
struct tr_nb_image {
	struct tr_blob *blob;   /* owned reference to the raw image bytes */
	const char *media_type; /* static: "image/png" or "image/jpeg", from the bytes' signature */
	uint32_t width, height;
};

/* Decodes value, a base64 string or a list of strings to concatenate (whitespace and line
 * breaks ignored, padding optional), checks the PNG or JPEG signature and reads the size from
 * the PNG IHDR or the JPEG SOF. Returns 0 and fills *image (the caller owns image->blob); 1 when
 * the data is not such an image, with *reason set to a static sentence fragment; -1 when out of
 * memory. */
int tr_nb_image_decode(const char *value, struct tr_nb_image *image, const char **reason);

/* --- notebook_value --- */
/* reads values of a notebook text in place: a value is a pointer to its first byte in a text that
 * tr_json_find_error accepted (NULL: absent). Nothing is parsed into a tree. */

/* Iterates the members of an object or the elements of an array. */
struct tr_nbv_iter {
	const char *p; /* the next member's key or element, or NULL at the end */
	bool object;
};

static inline bool tr_nbv_is_string(const char *v)
{
	return v && *v == '"';
}
static inline bool tr_nbv_is_object(const char *v)
{
	return v && *v == '{';
}
static inline bool tr_nbv_is_array(const char *v)
{
	return v && *v == '[';
}
/* A number (NaN and Infinity too, as Python's json reads them). */
bool tr_nbv_is_number(const char *v);

/* Returns the text just past value v. */
const char *tr_nbv_skip(const char *v);

/* Starts iterating container (an object or an array; anything else iterates nothing). */
void tr_nbv_begin(struct tr_nbv_iter *it, const char *container);

/* Sets *value to the next element (and *key, when key is not NULL, to an object member's key
 * string, NULL in an array). Returns false at the end. */
bool tr_nbv_next(struct tr_nbv_iter *it, const char **key, const char **value);

/* The value of the first member named key in object obj; NULL when obj is not an object or has
 * no such member. */
const char *tr_nbv_field(const char *obj, const char *key);

/* Members or elements in container (0 when it is neither). */
size_t tr_nbv_count(const char *container);

/* True when v is a string whose decoded text is s. */
bool tr_nbv_string_is(const char *v, const char *s);

/* Appends the decoded text of string v to buf (escapes decoded, a lone surrogate as U+FFFD, the
 * text ending at a \u0000 as a C string would); nothing when v is not a string. Returns 0, or -1
 * when out of memory. */
int tr_nbv_append_string(struct tr_buf *buf, const char *v);

/* The decoded text of string v, NUL-terminated, owned by the caller; NULL when out of memory. */
char *tr_nbv_strdup(const char *v);

/* Number v as a double, and as an int clamped to INT_MIN..INT_MAX (NaN: 0). */
double tr_nbv_number(const char *v);
int tr_nbv_int(const char *v);

/* Code points of v printed as compact JSON (cJSON_PrintUnformatted's text, which the notes of
 * omitted outputs counted before). Returns -1 when out of memory. */
int64_t tr_nbv_printed_chars(const char *v);

/* --- notebook_json --- */
/* locates a JSON syntax error where Python's json module reports it. */

/* Scans text[0..len) as Python's json.loads does (NaN and Infinity accepted, control characters
 * in strings rejected, trailing data rejected). Returns 1 and sets *offset to the byte offset of
 * the first error, at the character JSONDecodeError.pos names; 0 when the text is valid; -1 when
 * out of memory (*offset untouched). */
int tr_json_find_error(const char *text, size_t len, size_t *offset);

/* Converts a byte offset in text into Python's 1-based lineno (1 + newlines before it) and colno
 * (1 + code points since the last newline). */
void tr_json_line_column(const char *text, size_t offset, uint64_t *line, uint64_t *column);

/* --- notebook_text --- */
/* text helpers of the notebook reader: terminal escapes, carriage returns, UTF-8 code point
 * counting and cutting. */

/* Appends s[0..len) to buf without terminal escape sequences: CSI (ESC '[', parameter and
 * intermediate bytes, a final byte 0x40-0x7E), OSC (ESC ']' up to BEL or ESC '\'), and any other
 * ESC byte alone. When overwrite is set, carriage returns act as on a terminal (and in Jupyter):
 * CR LF is LF, a trailing CR is dropped, and text after a CR overwrites its line from the start
 * ("50%\r100%" shows "100%"). Returns 0, or -1 when out of memory (buf->oom set). */
int tr_nb_append_clean(struct tr_buf *buf, const char *s, size_t len, bool overwrite);

#endif
