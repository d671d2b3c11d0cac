/* SPDX-License-Identifier: MIT */
/* notebook_cell.c - renders one notebook cell: header, source, attachments and outputs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notebook.h"
#include "util.h"

/* Room kept for a "[... truncated: X of N chars shown; ...]" note when cutting to a byte budget. */
#define NOTE_RESERVE 160

/* Offsets in the outputs' text, in increasing order. */
struct offsets {
	size_t *at;
	size_t n, cap;
};

/* The outputs section while it is built: its text, and where each image reference and each
 * note of an image not fitted in time (tr_nb_cell.timeouts) ends in it. */
struct outputs_text {
	struct tr_buf text;
	struct offsets refs, notes;
	uint64_t limit;                /* text kept; past it only counted (spill_outputs) */
	uint64_t max_chars, max_bytes; /* the cap: tr_utf8_prefix's limits */
	uint64_t spilled_chars;        /* code points of the text past limit */
	size_t dropped_refs;           /* image references past limit, their images released */
};

/* Bytes of output text kept past the most any cut can show (see render_outputs). */
#define OUTPUT_SLACK 4096

static const char *field(const char *obj, const char *key)
{
	return tr_nbv_field(obj, key);
}

static bool is_type(const char *type, const char *name)
{
	return strcmp(type, name) == 0;
}

/* A string or a list of strings (nbformat's "multiline string"). */
static bool is_multiline(const char *value)
{
	struct tr_nbv_iter it;
	const char *piece;

	if (tr_nbv_is_string(value))
		return true;
	if (!tr_nbv_is_array(value))
		return false;
	tr_nbv_begin(&it, value);
	while (tr_nbv_next(&it, NULL, &piece))
		if (!tr_nbv_is_string(piece))
			return false;
	return true;
}

/* Appends a multiline string joined as-is; other values append nothing. */
static int append_multiline(struct tr_buf *buf, const char *value)
{
	struct tr_nbv_iter it;
	const char *piece;

	if (tr_nbv_is_string(value))
		return tr_nbv_append_string(buf, value);
	tr_nbv_begin(&it, value);
	while (tr_nbv_next(&it, NULL, &piece))
		if (tr_nbv_append_string(buf, piece) < 0)
			return -1;
	return 0;
}

/* True when a multiline string holds a byte that cleaning changes (ESC, or CR when overwrite). */
static bool needs_cleaning(const char *value, bool overwrite)
{
	const char *end = value ? tr_nbv_skip(value) : NULL;

	/* In the JSON text these bytes appear raw (invalid but harmless to look for) or escaped. */
	for (const char *p = value; p < end; p++) {
		if (*p == 0x1b)
			return true;
		if (*p == '\\' && (p[1] == 'u' || (overwrite && p[1] == 'r')))
			return true;
		if (*p == '\\')
			p++;
	}
	return false;
}

/* Appends a multiline string cleaned of terminal escapes (see tr_nb_append_clean). */
static int append_clean_multiline(struct tr_buf *buf, const char *value, bool overwrite)
{
	struct tr_buf joined = {0};
	int rc;

	if (!needs_cleaning(value, overwrite)) /* nothing to clean: no copy of a long output */
		return append_multiline(buf, value) < 0 ? (buf->oom = true, -1) : 0;
	rc = append_multiline(&joined, value);

	if (rc == 0)
		rc = tr_nb_append_clean(buf, joined.data, joined.len, overwrite);
	if (rc < 0)
		buf->oom = true;
	tr_buf_free(&joined);
	return rc;
}

/* Ends the text appended since offset from with a newline, when it does not end in one. */
static int end_line(struct tr_buf *buf, size_t from)
{
	if (buf->len > from && buf->data[buf->len - 1] != '\n')
		return tr_buf_append(buf, "\n", 1);
	return 0;
}

/* Bytes still free in the cell's budget after used bytes, keeping room for a note. */
static uint64_t budget_left(const struct tr_nb_context *ctx, size_t used)
{
	uint64_t need = (uint64_t)used + NOTE_RESERVE;

	return ctx->byte_budget > need ? ctx->byte_budget - need : 0;
}

/* type: the cell_type value. */
static const char *source_key(const char *type, int nbformat)
{
	return nbformat == 3 && tr_nbv_string_is(type, "code") ? "input" : "source";
}

static const char *count_key(int nbformat)
{
	return nbformat == 3 ? "prompt_number" : "execution_count";
}

bool tr_nb_cell_check(const char *cell, uint64_t index, int nbformat, char *reason, size_t size)
{
	const char *type, *source, *outputs, *output;
	struct tr_nbv_iter it;
	const char *key;
	uint64_t k = 0;

	if (!tr_nbv_is_object(cell)) {
		snprintf(reason, size, "cell %" PRIu64 " is not an object", index);
		return false;
	}
	type = field(cell, "cell_type");
	if (!tr_nbv_is_string(type)) {
		snprintf(reason, size, "cell %" PRIu64 " has no \"cell_type\"", index);
		return false;
	}
	key = source_key(type, nbformat);
	source = field(cell, key);
	if (source && !is_multiline(source)) {
		snprintf(reason, size,
			 "cell %" PRIu64 ": \"%s\" is not a string or a list of strings", index,
			 key);
		return false;
	}
	outputs = field(cell, "outputs");
	if (!outputs)
		return true;
	if (!tr_nbv_is_array(outputs)) {
		snprintf(reason, size, "cell %" PRIu64 ": \"outputs\" is not a list", index);
		return false;
	}
	tr_nbv_begin(&it, outputs);
	while (tr_nbv_next(&it, NULL, &output)) {
		k++;
		if (!tr_nbv_is_object(output) || !tr_nbv_is_string(field(output, "output_type"))) {
			snprintf(reason, size,
				 "cell %" PRIu64 ": output %" PRIu64 " has no \"output_type\"",
				 index, k);
			return false;
		}
	}
	return true;
}

static bool is_image_mime(const char *mime)
{
	return is_type(mime, "image/png") || is_type(mime, "image/jpeg");
}

/* The source, verbatim; cut (with a note) only when it alone overflows the cell's budget. */
static int render_source(const char *cell, const char *type, const struct tr_nb_context *ctx,
			 struct tr_nb_cell *out)
{
	struct tr_buf source = {0};
	struct tr_buf *text = &out->text;
	uint64_t avail;
	size_t keep;
	int rc = append_multiline(&source, field(cell, source_key(type, ctx->nbformat)));

	if (rc < 0 || source.len == 0)
		goto out;
	avail = budget_left(ctx, text->len);
	if (source.len <= avail) {
		size_t from = text->len;

		rc = tr_buf_append(text, source.data, source.len);
		if (rc == 0)
			rc = end_line(text, from);
		goto out;
	}
	keep = tr_utf8_prefix((const unsigned char *)source.data, source.len, UINT64_MAX, avail);
	if ((keep && tr_buf_append(text, source.data, keep) < 0) ||
	    (keep && end_line(text, text->len - 1) < 0) ||
	    tr_buf_printf(text,
			  "[... source truncated: %" PRIu64 " of %" PRIu64
			  " chars shown; the rest is in the raw notebook]\n",
			  tr_utf8_count((const unsigned char *)source.data, keep),
			  tr_utf8_count((const unsigned char *)source.data, source.len)) < 0)
		rc = -1;
	out->truncated = true;
out:
	tr_buf_free(&source);
	return rc;
}

/* Markdown and raw cells may carry images as attachments: {"name.png": {"image/png": B64}}. */
static int render_attachments(const char *cell, const struct tr_nb_context *ctx,
			      struct tr_nb_cell *out)
{
	const char *attachments = field(cell, "attachments"), *attachment, *entry, *key, *mime;
	struct tr_nbv_iter it, entries;
	char prefix[512], *name;
	int rc = 0;

	if (!tr_nbv_is_object(attachments))
		return 0;
	tr_nbv_begin(&it, attachments);
	while (rc == 0 && tr_nbv_next(&it, &key, &attachment)) {
		if (!tr_nbv_is_object(attachment))
			continue;
		if (!(name = tr_nbv_strdup(key)))
			return -1;
		snprintf(prefix, sizeof(prefix), "attachment %s: ", name);
		free(name);
		tr_nbv_begin(&entries, attachment);
		while (rc == 0 && tr_nbv_next(&entries, &mime, &entry)) {
			char *type = tr_nbv_strdup(mime);

			if (!type)
				return -1;
			if (is_image_mime(type))
				rc = tr_nb_append_image(ctx, out, &out->text, entry, prefix,
							"image") < 0
					     ? -1
					     : 0;
			else
				rc = tr_buf_printf(&out->text, "[%s%s omitted]\n", prefix, type) < 0
					     ? -1
					     : 0;
			free(type);
		}
	}
	return rc;
}

/* nbformat 3 keeps a result's representations at the output's top level, by short names. */
static const char *v3_mime(const char *key)
{
	static const char *const names[][2] = {
		{"text", "text/plain"},       {"html", "text/html"},
		{"svg", "image/svg+xml"},     {"png", "image/png"},
		{"jpeg", "image/jpeg"},       {"latex", "text/latex"},
		{"json", "application/json"}, {"javascript", "application/javascript"},
		{"pdf", "application/pdf"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (is_type(key, names[i][0]))
			return names[i][1];
	return strchr(key, '/') ? key : NULL;
}

/* Code points of a representation that is not shown. Returns -1 when out of memory. */
static int64_t value_chars(const char *value)
{
	struct tr_buf joined = {0};
	int64_t n = -1;

	if (!is_multiline(value))
		return tr_nbv_printed_chars(value);
	if (append_multiline(&joined, value) == 0)
		n = (int64_t)tr_utf8_count((const unsigned char *)joined.data, joined.len);
	tr_buf_free(&joined);
	return n;
}

static int offsets_push(struct offsets *o, size_t at)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4;
		size_t *grown = realloc(o->at, cap * sizeof(*grown));

		if (!grown)
			return -1;
		o->at = grown;
		o->cap = cap;
	}
	o->at[o->n++] = at;
	return 0;
}

/* The notes of images not fitted in time that end past cut leave the cell's count. */
static void drop_notes(struct outputs_text *os, struct tr_nb_cell *out, size_t cut)
{
	while (os->notes.n && os->notes.at[os->notes.n - 1] > cut) {
		os->notes.n--;
		out->timeouts--;
	}
}

enum bundle_pass { PASS_TEXT, PASS_IMAGES, PASS_OTHERS, PASS_COUNT };

static enum bundle_pass pass_of(const char *mime)
{
	if (is_type(mime, "text/plain"))
		return PASS_TEXT;
	return is_image_mime(mime) ? PASS_IMAGES : PASS_OTHERS;
}

/* A mime bundle: text/plain first, then PNG/JPEG images, then the other types named with their
 * size, each group in the bundle's order. */
static int render_bundle(const char *bundle, bool short_keys, const struct tr_nb_context *ctx,
			 struct tr_nb_cell *out, struct outputs_text *os)
{
	struct tr_nbv_iter it;
	const char *entry, *key;

	for (int pass = 0; pass < PASS_COUNT; pass++) {
		tr_nbv_begin(&it, bundle);
		while (tr_nbv_next(&it, &key, &entry)) {
			char *name = tr_nbv_strdup(key);
			const char *mime = name && short_keys ? v3_mime(name) : name;
			size_t from = os->text.len;
			int64_t chars;
			int rc = 0;

			if (!name)
				return -1;
			if (!mime || pass_of(mime) != (enum bundle_pass)pass) {
				free(name);
				continue;
			}
			switch (pass) {
			case PASS_TEXT:
				rc = append_clean_multiline(&os->text, entry, false);
				if (rc == 0)
					rc = end_line(&os->text, from);
				break;
			case PASS_IMAGES: {
				size_t timeouts = out->timeouts;

				rc = tr_nb_append_image(ctx, out, &os->text, entry, "",
							"image output");
				if (rc > 0)
					rc = offsets_push(&os->refs, os->text.len);
				else if (rc == 0 && out->timeouts > timeouts)
					rc = offsets_push(&os->notes, os->text.len);
				break;
			}
			default:
				chars = value_chars(entry);
				rc = chars < 0 ? -1
					       : tr_buf_printf(&os->text,
							       "[%s output omitted; %" PRId64
							       " chars]\n",
							       mime, chars);
			}
			free(name);
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

static int append_clean_string(struct tr_buf *text, const char *value)
{
	struct tr_buf s = {0};
	int rc = tr_nbv_append_string(&s, value);

	if (rc == 0)
		rc = tr_nb_append_clean(text, s.data, s.len, false);
	tr_buf_free(&s);
	return rc;
}

static int render_error(const char *output, struct tr_buf *text)
{
	const char *ename = field(output, "ename"), *evalue = field(output, "evalue");
	const char *traceback = field(output, "traceback"), *line;
	struct tr_nbv_iter it;
	size_t from = text->len;

	if (tr_nbv_is_string(ename) || tr_nbv_is_string(evalue)) {
		if ((tr_nbv_is_string(ename) && append_clean_string(text, ename) < 0) ||
		    tr_buf_append(text, ": ", 2) < 0 ||
		    (tr_nbv_is_string(evalue) && append_clean_string(text, evalue) < 0) ||
		    end_line(text, from) < 0)
			return -1;
	}
	tr_nbv_begin(&it, tr_nbv_is_array(traceback) ? traceback : NULL);
	while (tr_nbv_next(&it, NULL, &line)) {
		if (!tr_nbv_is_string(line))
			continue;
		from = text->len;
		if (append_clean_string(text, line) < 0 || end_line(text, from) < 0 ||
		    (text->len == from && tr_buf_append(text, "\n", 1) < 0))
			return -1;
	}
	return 0;
}

static int render_output(const char *output, uint64_t k, const struct tr_nb_context *ctx,
			 struct tr_nb_cell *out, struct outputs_text *os)
{
	char *type = tr_nbv_strdup(field(output, "output_type")), *name = NULL;
	const char *name_value = field(output, ctx->nbformat == 3 ? "stream" : "name");
	const char *count = field(output, count_key(ctx->nbformat)), *data;
	struct tr_buf *text = &os->text;
	bool stream, result = false;
	size_t from;
	int rc = -1;

	if (!type || (tr_nbv_is_string(name_value) && !(name = tr_nbv_strdup(name_value))))
		goto out;
	stream = is_type(type, "stream");
	if (tr_buf_printf(text, "--- Output %" PRIu64 " (%s", k, type) < 0 ||
	    (stream && name && tr_buf_printf(text, " %s", name) < 0))
		goto out;
	if (is_type(type, "execute_result") || is_type(type, "pyout")) {
		result = true;
		if (tr_nbv_is_number(count)) {
			if (tr_buf_printf(text, ") Out [%d] ---\n", tr_nbv_int(count)) < 0)
				goto out;
		} else if (tr_buf_append(text, ") ---\n", 6) < 0) {
			goto out;
		}
	} else if (tr_buf_append(text, ") ---\n", 6) < 0) {
		goto out;
	}
	if (stream) {
		from = text->len;
		rc = append_clean_multiline(text, field(output, "text"), true) < 0 ||
				     end_line(text, from) < 0
			     ? -1
			     : 0;
	} else if (is_type(type, "error") || is_type(type, "pyerr")) {
		rc = render_error(output, text);
	} else if (result || is_type(type, "display_data")) {
		data = field(output, "data");
		if (tr_nbv_is_object(data))
			rc = render_bundle(data, false, ctx, out, os);
		else
			rc = render_bundle(output, true, ctx, out, os);
	} else {
		rc = tr_buf_printf(text, "[output of type %s omitted]\n", type) < 0 ? -1 : 0;
	}
out:
	free(type);
	free(name);
	return rc;
}

/* Keeps at most os->limit bytes of the outputs' text: the bytes past it are only counted (they
 * can never be shown: the cap keeps fewer), and images referenced past it are released at once.
 * So a cell's outputs cost what is shown, not what the notebook holds. */
static void spill_outputs(struct outputs_text *os, struct tr_nb_cell *out)
{
	size_t cut;

	if (os->text.len <= os->limit)
		return;
	/* Never inside what the cap keeps (a code point's continuation bytes may run on). Every
	 * output ends in a newline, so what later outputs add cannot change that prefix. */
	cut = tr_utf8_prefix((const unsigned char *)os->text.data, os->text.len, os->max_chars,
			     os->max_bytes);
	if (cut < os->limit)
		cut = os->limit;
	if (cut >= os->text.len)
		return;
	os->spilled_chars += tr_utf8_count((const unsigned char *)os->text.data + cut,
					   os->text.len - cut);
	os->text.len = cut;
	drop_notes(os, out, cut);
	while (os->refs.n && os->refs.at[os->refs.n - 1] > cut) {
		os->refs.n--;
		out->n_images--;
		tr_blob_unref(out->images[out->n_images].blob);
		os->dropped_refs++;
	}
}

/* Renders all outputs, then keeps what the cap allows; images whose reference was cut off are
 * released so that images[] matches the text. */
static int render_outputs(const char *outputs, const struct tr_nb_context *ctx,
			  struct tr_nb_cell *out, uint64_t index)
{
	struct outputs_text os = {0};
	size_t first_image = out->n_images, keep;
	struct tr_nbv_iter it;
	const char *output;
	uint64_t k = 0;
	int rc = -1;

	/* A cut keeps at most TR_NB_CELL_OUTPUT_CHARS code points (4 bytes each at most), or the
	 * byte budget of a cell alone; the slack keeps tr_utf8_prefix's answer the same. */
	os.max_chars = ctx->single_cell ? UINT64_MAX : TR_NB_CELL_OUTPUT_CHARS;
	os.max_bytes = ctx->single_cell ? budget_left(ctx, out->text.len) : SIZE_MAX;
	os.limit = (ctx->single_cell ? os.max_bytes : (uint64_t)TR_NB_CELL_OUTPUT_CHARS * 4) +
		   OUTPUT_SLACK;
	tr_nbv_begin(&it, outputs);
	while (tr_nbv_next(&it, NULL, &output)) {
		if (render_output(output, ++k, ctx, out, &os) < 0)
			goto out;
		spill_outputs(&os, out);
	}
	if (os.text.oom)
		goto out;
	keep = tr_utf8_prefix((const unsigned char *)os.text.data, os.text.len, os.max_chars,
			      os.max_bytes);
	if (keep == os.text.len && os.spilled_chars == 0) {
		rc = os.text.len ? tr_buf_append(&out->text, os.text.data, os.text.len) : 0;
		goto out;
	}
	if (keep && (tr_buf_append(&out->text, os.text.data, keep) < 0 ||
		     end_line(&out->text, out->text.len - 1) < 0))
		goto out;
	uint64_t shown = tr_utf8_count((const unsigned char *)os.text.data, keep);
	uint64_t total = tr_utf8_count((const unsigned char *)os.text.data, os.text.len) +
			 os.spilled_chars;

	if (ctx->single_cell)
		rc = tr_buf_printf(&out->text,
				   "[... output truncated: %" PRIu64 " of %" PRIu64
				   " chars shown; the rest is in the raw notebook]\n",
				   shown, total);
	else
		rc = tr_buf_printf(&out->text,
				   "[... output truncated: %" PRIu64 " of %" PRIu64
				   " chars shown; read %s:%" PRIu64 ".tool.json for all of it]\n",
				   shown, total, ctx->name, index);
	drop_notes(&os, out, keep);
	for (size_t i = 0; i < os.refs.n; i++) {
		if (os.refs.at[i] <= keep)
			continue;
		for (size_t j = first_image + i; j < out->n_images; j++)
			tr_blob_unref(out->images[j].blob);
		out->n_images = first_image + i;
		break;
	}
	out->truncated = true;
out:
	tr_buf_free(&os.text);
	free(os.refs.at);
	free(os.notes.at);
	return rc < 0 ? -1 : 0;
}

int tr_nb_cell_render(const char *cell, uint64_t index, const struct tr_nb_context *ctx,
		      struct tr_nb_cell *out)
{
	const char *type_value = field(cell, "cell_type");
	const char *level = field(cell, "level"), *count = field(cell, count_key(ctx->nbformat));
	const char *outputs = field(cell, "outputs");
	struct tr_buf *text = &out->text;
	char *type = tr_nbv_strdup(type_value);
	int rc = -1;

	if (!type || tr_buf_printf(text, "\n--- Cell %" PRIu64 " [%s", index, type) < 0)
		goto out;
	if (is_type(type, "heading") && tr_nbv_is_number(level) &&
	    tr_buf_printf(text, " %d", tr_nbv_int(level)) < 0)
		goto out;
	if (tr_buf_append(text, "]", 1) < 0)
		goto out;
	if (is_type(type, "code")) {
		if (tr_nbv_is_number(count)) {
			if (tr_buf_printf(text, " In [%d]", tr_nbv_int(count)) < 0)
				goto out;
		} else if (tr_buf_append(text, " In [ ]", 7) < 0) {
			goto out;
		}
	}
	if (tr_buf_append(text, " ---\n", 5) < 0 || render_source(cell, type_value, ctx, out) < 0 ||
	    render_attachments(cell, ctx, out) < 0)
		goto out;
	if (tr_nbv_is_array(outputs) && tr_nbv_count(outputs) > 0 &&
	    render_outputs(outputs, ctx, out, index) < 0)
		goto out;
	rc = text->oom ? -1 : 0;
out:
	free(type);
	return rc;
}

void tr_nb_cell_destroy(struct tr_nb_cell *out)
{
	tr_buf_free(&out->text);
	for (size_t i = 0; i < out->n_images; i++)
		tr_blob_unref(out->images[i].blob);
	free(out->images);
	memset(out, 0, sizeof(*out));
}
