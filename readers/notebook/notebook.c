/* SPDX-License-Identifier: MIT */
/* notebook.c - the Jupyter notebook reader (.ipynb, nbformat 3 and 4): cells and outputs rendered
 * for a model to read. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "notebook.h"
#include "reader.h"
#include "util.h"

/*
 * The layout of content (keep it stable: agents and tests read it):
 *
 *   Jupyter notebook: python, 12 cells, nbformat 4.5   language left out when unknown
 *                                                      a blank line opens every cell
 *   --- Cell 1 [markdown] ---
 *   # Title                                            the source verbatim (+ "\n" if missing)
 *
 *   --- Cell 2 [code] In [3] ---                       "In [ ]": never executed
 *   print(np.arange(3))
 *   --- Output 1 (stream stdout) ---                   outputs numbered from 1 in each cell
 *   [0 1 2]
 *   --- Output 2 (execute_result) Out [3] ---          text/plain, images, then other types as
 *   array([0, 1, 2])                                   "[text/html output omitted; 1234 chars]"
 *   --- Output 3 (display_data) ---
 *   [image 1: image/png 640x480, attached]             N-th entry of images[] (its "cell": 2)
 *   --- Output 4 (error) ---
 *   ZeroDivisionError: division by zero                "ename: evalue", then the traceback
 *   Traceback (most recent call last):
 *
 * Output text loses its terminal escapes (ANSI colours), and stream text shows carriage returns
 * as a terminal does. Markdown attachments follow the source as
 * "[attachment NAME: image 2: image/png 10x10, attached]". nbformat 3 names are kept:
 * [heading 2] cells, (pyout) and (pyerr) outputs.
 *
 * Caps: a cell's outputs (their "--- Output" lines included) stop after 10,000 code points with
 * "[... output truncated: 10000 of N chars shown; read NAME:C.tool.json for all of it]"; when
 * the result holds one cell they stop where content would pass max_output bytes instead
 * ("[... output truncated: X of N chars shown; the rest is in the raw notebook]"), and so does a
 * source that alone would pass it ("[... source truncated: ...]"). The whole content stops at
 * max_output bytes before the first cell that does not fit (at least one cell is shown); next
 * then names "NAME:K-.tool.json". Images of cut text are not attached.
 *
 * Time: image fits stop at the read's deadline (max_render_ms); an image not fitted by then is
 * "[image output omitted: image/png WxH, timeout: not fitted within max_render_ms (N ms), ...]"
 * in its place, and shortResult ends ", K images not fitted (timeout)".
 */

/* Containers nested deeper than this are refused (as cJSON refused them): the readers of
 * notebook_value.c recurse into omitted outputs. */
#define NESTING_LIMIT 1000

/* The notebook as the renderer sees it; cells point into the text (notebook_value.c). */
struct notebook {
	int major, minor;
	bool has_minor;
	const char **cells;
	uint64_t n_cells;
	char *language; /* owned, or NULL */
};

static const char *field(const char *obj, const char *key)
{
	return tr_nbv_field(obj, key);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static bool is_json_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The offset of the first bracket nested past NESTING_LIMIT in valid JSON text, or len. */
static size_t too_deep(const char *text, size_t len)
{
	size_t depth = 0;

	for (size_t i = 0; i < len; i++) {
		switch (text[i]) {
		case '"':
			for (i++; text[i] != '"'; i++)
				if (text[i] == '\\')
					i++;
			break;
		case '{':
		case '[':
			if (++depth > NESTING_LIMIT)
				return i;
			break;
		case '}':
		case ']': depth--; break;
		}
	}
	return len;
}

/* Checks text as Python's json module reads it (Jupyter's own check); on a syntax error records
 * it, at Python's line and column, and returns NULL; else the top-level value. Nothing is
 * parsed into a tree: the renderer reads values in place (notebook_value.c). */
static const char *parse_notebook(const char *text, size_t len, struct tr_result *res)
{
	size_t offset = 0;
	uint64_t line, column;
	int rc = tr_json_find_error(text, len, &offset);

	if (rc < 0)
		return NULL;
	if (rc == 0 && (offset = too_deep(text, len)) == len) {
		while (is_json_ws(*text))
			text++; /* valid JSON holds a value: this stops inside the text */
		return text;
	}
	tr_json_line_column(text, offset, &line, &column);
	tr_result_fail(res, TR_E_CORRUPT,
		       "Failed to parse notebook: invalid JSON at line %" PRIu64 " column %" PRIu64,
		       line, column);
	return NULL;
}

/* A non-empty string member of obj, decoded into *out (owned); *out stays NULL when there is
 * none. Returns -1 when out of memory. */
static int string_field(const char *obj, const char *key, char **out)
{
	const char *value = field(obj, key);

	*out = NULL;
	if (!tr_nbv_is_string(value) || value[1] == '"')
		return 0;
	*out = tr_nbv_strdup(value);
	if (*out && !**out) { /* "\u0000..." is empty as a C string */
		free(*out);
		*out = NULL;
		return 0;
	}
	return *out ? 0 : -1;
}

/* v4: kernelspec.language, else language_info.name; v3: metadata.language, else the language
 * of the first code cell that has one, else as v4 (IPython 3 wrote kernelspec into v3). Sets
 * nb->language; returns -1 when out of memory. */
static int notebook_language(const char *root, struct notebook *nb)
{
	const char *meta = field(root, "metadata");

	if (nb->major == 3) {
		if (string_field(meta, "language", &nb->language) < 0 || nb->language)
			return nb->language ? 0 : -1;
		for (uint64_t i = 0; i < nb->n_cells; i++)
			if (string_field(nb->cells[i], "language", &nb->language) < 0 ||
			    nb->language)
				return nb->language ? 0 : -1;
	}
	if (string_field(field(meta, "kernelspec"), "language", &nb->language) < 0 || nb->language)
		return nb->language ? 0 : -1;
	return string_field(field(meta, "language_info"), "name", &nb->language);
}

static int push_cells(struct notebook *nb, const char *cells)
{
	size_t n = tr_nbv_count(cells);
	struct tr_nbv_iter it;
	const char **grown, *cell;

	if (n == 0)
		return 0;
	grown = realloc(nb->cells, (nb->n_cells + n) * sizeof(*grown));
	if (!grown)
		return -1;
	nb->cells = grown;
	tr_nbv_begin(&it, cells);
	while (tr_nbv_next(&it, NULL, &cell))
		nb->cells[nb->n_cells++] = cell;
	return 0;
}

/* Fills nb from the notebook's top-level value. Returns 0; 1 when root is not a readable notebook (recorded in
 * res); -1 when out of memory. */
static int load_notebook(const char *root, struct notebook *nb, struct tr_result *res)
{
	const char *version, *minor, *cells, *sheets, *sheet;
	struct tr_nbv_iter it;
	char reason[256];
	uint64_t k = 0;

	if (!tr_nbv_is_object(root)) {
		tr_result_fail(res, TR_E_CORRUPT, "Invalid notebook: the JSON is not an object");
		return 1;
	}
	version = field(root, "nbformat");
	if (!tr_nbv_is_number(version)) {
		tr_result_fail(res, TR_E_CORRUPT,
			       "Invalid notebook: no \"nbformat\" version number");
		return 1;
	}
	nb->major = tr_nbv_int(version);
	if (nb->major < 3) {
		tr_result_fail(
			res, TR_E_UNSUPPORTED,
			"Unsupported notebook format: nbformat %d (nbformat 3 and 4 are read)",
			nb->major);
		return 1;
	}
	minor = field(root, "nbformat_minor");
	nb->has_minor = tr_nbv_is_number(minor) && tr_nbv_int(minor) >= 0;
	nb->minor = nb->has_minor ? tr_nbv_int(minor) : 0;
	if (nb->major == 3) {
		sheets = field(root, "worksheets");
		if (!tr_nbv_is_array(sheets)) {
			tr_result_fail(res, TR_E_CORRUPT,
				       "Invalid notebook: no \"worksheets\" list (nbformat 3)");
			return 1;
		}
		tr_nbv_begin(&it, sheets);
		while (tr_nbv_next(&it, NULL, &sheet)) {
			k++;
			cells = field(sheet, "cells");
			if (!tr_nbv_is_object(sheet) || (cells && !tr_nbv_is_array(cells))) {
				tr_result_fail(res, TR_E_CORRUPT,
					       "Invalid notebook: worksheet %" PRIu64
					       " has no \"cells\" list",
					       k);
				return 1;
			}
			if (cells && push_cells(nb, cells) < 0)
				return -1;
		}
	} else {
		cells = field(root, "cells");
		if (!tr_nbv_is_array(cells)) {
			tr_result_fail(res, TR_E_CORRUPT, "Invalid notebook: no \"cells\" list");
			return 1;
		}
		if (push_cells(nb, cells) < 0)
			return -1;
	}
	for (uint64_t i = 0; i < nb->n_cells; i++) {
		if (!tr_nb_cell_check(nb->cells[i], i + 1, nb->major, reason, sizeof(reason))) {
			tr_result_fail(res, TR_E_CORRUPT, "Invalid notebook: %s", reason);
			return 1;
		}
	}
	return notebook_language(root, nb);
}

static int fill_metadata(const struct notebook *nb, struct tr_result *res)
{
	char version[32];

	if (nb->has_minor)
		snprintf(version, sizeof(version), "%d.%d", nb->major, nb->minor);
	else
		snprintf(version, sizeof(version), "%d", nb->major);
	res->meta.cell_count = (int64_t)nb->n_cells;
	res->meta.nbformat = strdup(version);
	res->meta.language = nb->language ? strdup(nb->language) : NULL;
	res->mime_type = strdup(TR_NOTEBOOK_MIME);
	if (!res->meta.nbformat || (nb->language && !res->meta.language) || !res->mime_type)
		return -1;
	return 0;
}

/* Moves a rendered cell's images into res (cell = its 1-based index). */
static int take_images(struct tr_nb_cell *cell, uint64_t index, struct tr_result *res)
{
	for (size_t i = 0; i < cell->n_images; i++) {
		struct tr_nb_image *image = &cell->images[i];
		struct tr_blob *blob = image->blob;

		image->blob = NULL;
		if (tr_result_add_image(res, blob, image->media_type, image->width, image->height,
					0, (uint32_t)index) < 0)
			return -1;
	}
	cell->n_images = 0;
	return 0;
}

/* What render_cells did. */
struct rendered {
	uint64_t shown_last; /* the last cell in content */
	bool cut;            /* a cell's source or outputs were shortened */
	size_t timeouts;     /* images noted as not fitted within max_render_ms */
};

/* Renders cells first..last into content until max_output, their image fits within
 * budget; fills *done. Returns 0 or -1 when out of memory. */
static int render_cells(const struct notebook *nb, uint64_t first, uint64_t last, const char *name,
			const struct tr_options *opts, struct tr_nb_budget *budget,
			struct tr_result *res, struct rendered *done)
{
	struct tr_nb_context ctx = {
		.name = name,
		.nbformat = nb->major == 3 ? 3 : 4,
		.single_cell = first == last,
		.byte_budget = opts->max_output > res->content.len
				       ? opts->max_output - res->content.len
				       : 0,
		.max_image_size = opts->max_image_size,
		.opts = opts,
		.budget = budget,
	};

	*done = (struct rendered){.shown_last = first - 1};
	for (uint64_t i = first; i <= last; i++) {
		struct tr_nb_cell cell = {0};
		int rc;

		ctx.first_image = (uint32_t)res->n_images + 1;
		ctx.cell = i;
		rc = tr_nb_cell_render(nb->cells[i - 1], i, &ctx, &cell);
		if (rc == 0 && i > first && res->content.len + cell.text.len > opts->max_output) {
			tr_nb_cell_destroy(&cell);
			break;
		}
		if (rc == 0)
			rc = tr_buf_append(&res->content, cell.text.data, cell.text.len);
		if (rc == 0)
			rc = take_images(&cell, i, res);
		done->cut = done->cut || cell.truncated;
		done->timeouts += cell.timeouts;
		tr_nb_cell_destroy(&cell);
		if (rc < 0)
			return -1;
		done->shown_last = i;
	}
	return 0;
}

/* ", 3 images not fitted (timeout)" after shortResult when the budget left images out. */
static void note_timeouts(struct tr_result *res, size_t timeouts)
{
	char *short_result = res->short_result;

	if (!timeouts || !short_result)
		return;
	res->short_result = NULL;
	tr_result_set_short(res, "%s, %zu %s not fitted (timeout)", short_result, timeouts,
			    plural(timeouts, "image", "images"));
	free(short_result);
}

static int render_notebook(const struct notebook *nb, const char *name,
			   const struct tr_selector *sel, const struct tr_options *opts,
			   uint64_t deadline, struct tr_result *res)
{
	uint64_t total = nb->n_cells, first = 1, last = total, shown_last;
	struct tr_nb_budget budget = {.deadline = deadline};
	struct rendered done;

	res->range_unit = TR_UNIT_CELL;
	res->range_total = total;
	if (sel->present) {
		/* A.C- (a text column) means nothing here: it reads as A-. */
		if (sel->start > total) {
			tr_result_fail(res, TR_E_OUT_OF_RANGE,
				       "Cell %" PRIu64 " is past the end of the notebook (%" PRIu64
				       " %s)",
				       sel->start, total, plural(total, "cell", "cells"));
			return 0;
		}
		first = sel->start;
		if (sel->end && sel->end < total)
			last = sel->end;
	}
	if (tr_buf_printf(&res->content, "Jupyter notebook: %s%s%" PRIu64 " %s, nbformat %s\n",
			  nb->language ? nb->language : "", nb->language ? ", " : "", total,
			  plural(total, "cell", "cells"), res->meta.nbformat) < 0)
		return -1;
	res->success = true;
	if (total == 0) {
		tr_result_set_short(res, "Notebook has no cells");
		return tr_buf_append(&res->content, "\nNotebook has no cells\n", 23);
	}
	if (render_cells(nb, first, last, name, opts, &budget, res, &done) < 0)
		return -1;
	shown_last = done.shown_last;
	if (tr_result_set_window(res, name,
				 &(struct tr_window){.unit = TR_UNIT_CELL,
						     .first = first,
						     .last = shown_last,
						     .total = total,
						     .cut = done.cut,
						     .next = {.present = shown_last < total,
							      .start = shown_last + 1}}) < 0)
		return -1;
	if (res->n_images)
		tr_result_set_short(res,
				    "Read notebook: %" PRIu64 " %s (%" PRIu64 "-%" PRIu64
				    " of %" PRIu64 "), %zu %s",
				    shown_last - first + 1,
				    plural(shown_last - first + 1, "cell", "cells"), first,
				    shown_last, total, res->n_images,
				    plural(res->n_images, "image", "images"));
	else
		tr_result_set_short(
			res,
			"Read notebook: %" PRIu64 " %s (%" PRIu64 "-%" PRIu64 " of %" PRIu64 ")",
			shown_last - first + 1, plural(shown_last - first + 1, "cell", "cells"),
			first, shown_last, total);
	note_timeouts(res, done.timeouts);
	return 0;
}

int tr_notebook_read_buffer(const char *text, size_t len, const char *name,
			    const struct tr_selector *sel, const struct tr_options *opts,
			    uint64_t deadline, struct tr_result *res)
{
	struct notebook nb = {0};
	const char *root;
	int rc;

	res->type = TR_TYPE_NOTEBOOK;
	root = parse_notebook(text, len, res);
	if (!root)
		return res->error ? 0 : -1;
	rc = load_notebook(root, &nb, res);
	if (rc == 0)
		rc = fill_metadata(&nb, res);
	if (rc == 0)
		rc = render_notebook(&nb, name, sel, opts, deadline, res);
	if (rc == 0 && (res->content.oom || !res->short_result))
		rc = -1;
	free(nb.cells);
	free(nb.language);
	return rc < 0 ? -1 : 0;
}

static const char *source_name(const struct tr_file *file)
{
	const char *path = file->src->path ? file->src->path : "";
	const char *slash = strrchr(path, '/');

	if (file->src->name)
		return file->src->name;
	return slash ? slash + 1 : path;
}

static enum tr_probe notebook_probe(const struct tr_file *file)
{
	return tr_has_extension(source_name(file), "ipynb") ? TR_PROBE_EXTENSION : TR_PROBE_NO;
}

static int notebook_read(const struct tr_file *file, const struct tr_selector *sel,
			 const struct tr_options *opts, struct tr_result *res)
{
	uint64_t size = (uint64_t)file->st.st_size;
	struct tr_blob *blob = NULL;
	int rc;

	res->type = TR_TYPE_NOTEBOOK;
	if (size > opts->max_notebook_size) {
		tr_result_fail_too_large(res, "Notebook", size, opts->max_notebook_size, NULL);
		return 0;
	}
	if (tr_load_file(file->fd, size, &blob, &res->meta) < 0) {
		return tr_result_fail_load(res, errno);
	}
	rc = tr_notebook_read_buffer((const char *)blob->data, blob->len, source_name(file), sel,
				     opts, file->deadline, res);
	tr_blob_unref(blob);
	return rc;
}

/* The file, and at most as much again for the shown text, the decoded outputs being rendered
 * and the result (docs/SPEC.md §3: a read stays within 3 times the size plus 64 MiB). */
static uint64_t notebook_memory(const struct tr_file *file, const struct tr_options *opts)
{
	uint64_t size = (uint64_t)file->st.st_size;

	return size > opts->max_notebook_size ? 0 : 3 * size;
}

const struct tr_reader tr_reader_notebook = {
	.name = "notebook",
	.probe = notebook_probe,
	.read = notebook_read,
	.memory = notebook_memory,
#if defined(TR_HAVE_VIPS)
	.caps = TR_CAP_UNTRUSTED | TR_CAP_THREADS, /* its image outputs: libvips and its decoders */
	.module = "toolfs-vips.so",
#endif
};
