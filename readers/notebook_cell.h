/* notebook_cell.h - renders one notebook cell (source, attachments, outputs) with its caps. */
#ifndef TR_NOTEBOOK_CELL_H
#define TR_NOTEBOOK_CELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "notebook_image.h"
#include "tr_options.h"
#include "tr_result.h"

/* Code points of outputs shown per cell when a result holds several cells (SPEC §3). */
#define TR_NB_CELL_OUTPUT_CHARS 10000

/* How cells are rendered and capped. */
struct tr_nb_context {
	const char *name;        /* the notebook's base name, for "read NAME:C.tool.json"; borrowed */
	int nbformat;            /* major version: 3, or 4 (also used for later versions) */
	bool single_cell;        /* the result holds only this cell: outputs capped by bytes */
	uint64_t byte_budget;    /* content bytes the cell may take when it is alone in a result */
	uint64_t max_image_size; /* larger images are mentioned in the text, not attached */
	const struct tr_options *opts; /* image_max_dim, image_max_b64: images over them are
					* fitted (libvips); borrowed */
	uint32_t first_image;    /* 1-based number in images[] of the cell's first image */
};

/* A rendered cell, waiting to be added to a result. */
struct tr_nb_cell {
	struct tr_buf text;         /* "\n--- Cell N [type] ---\n", the source, the outputs */
	struct tr_nb_image *images; /* owned, numbered from first_image in text order */
	size_t n_images, cap_images;
	bool truncated;             /* the source or the outputs were cut */
};

/* Checks what the renderer relies on in cell number index (1-based) of an nbformat notebook: an
 * object with a string cell_type, a source (v3 code cells: input) that is a string or a list of
 * strings, outputs (when present) a list of objects with a string output_type. Returns true, or
 * false with a reason written to reason[0..size), e.g. "cell 3 has no \"cell_type\"". */
bool tr_nb_cell_check(const cJSON *cell, uint64_t index, int nbformat, char *reason, size_t size);

/* Renders checked cell number index into out (zeroed by the caller): the cell header, the source
 * verbatim (cut with a note past ctx->byte_budget), markdown attachments, then the outputs
 * (terminal escapes removed, capped at TR_NB_CELL_OUTPUT_CHARS code points, or by the byte budget
 * when ctx->single_cell, with a note). Images go to out->images. Returns 0, or -1 when out of
 * memory; out must be destroyed either way. */
int tr_nb_cell_render(const cJSON *cell, uint64_t index, const struct tr_nb_context *ctx,
		      struct tr_nb_cell *out);

/* Frees the text and image references out holds and zeroes it. */
void tr_nb_cell_destroy(struct tr_nb_cell *out);

#endif
