/* SPDX-License-Identifier: MIT */
/* png_shrink.c - PNG shrink-on-load: the pixels inflated (ISA-L), unfiltered and averaged in
 * blocks of factor x factor as they stream in, so a large PNG is never held decoded. */
#include <stdlib.h>
#include <string.h>

#include <isa-l/igzip_lib.h>

#include "image.h"
#include "util.h"

/* The loops below are what the fit of a large PNG spends its time in (sums of byte rows); GCC's
 * -O2 leaves them scalar. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#define INFLATE_CHUNK (256u * 1024u) /* decoded bytes asked of the inflater at a time */
/* Bounds that keep the 32-bit column sums from overflowing (255 x 255 x 4096 rows with alpha)
 * and their memory (4 bytes a sample of one row) small; past them libvips decodes it. */
#define MAX_FACTOR 4096u
#define MAX_ROW_SAMPLES (1u << 24)
#define PNG_SIGNATURE_LEN 8

/* What the chunks before the pixels say. */
struct png_layout {
	uint32_t width, height;
	int depth, color;
	size_t row_bytes;   /* of one unfiltered row, without its filter byte */
	size_t filter_step; /* bytes per pixel for the filters (1 below 8 bits) */
	int bands;          /* of the decoded pixels: 1, 2, 3 or 4 */
	bool indexed;       /* palette (or grey below 8 bits, not taken) to expand */
	bool has_trns;
	unsigned char palette[256][4]; /* RGBA of each index; unset entries are opaque black */
};

/* Walks the chunks of data[0..len) over IHDR, PLTE and tRNS to the first IDAT; fills *p and
 * returns the offset of the first IDAT chunk, or 0 when the PNG is not of a kind taken here. */
static size_t read_layout(const unsigned char *data, size_t len, struct png_layout *p)
{
	size_t pos = PNG_SIGNATURE_LEN;
	uint32_t palette_entries = 0;
	bool have_header = false;

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < 256; i++)
		p->palette[i][3] = 255;
	while (pos + 12 <= len) {
		uint32_t clen = tr_be32(data + pos);
		const unsigned char *type = data + pos + 4, *body = data + pos + 8;

		if (clen > len - pos - 12)
			return 0;
		if (!have_header && (memcmp(type, "IHDR", 4) || clen != 13))
			return 0; /* IHDR comes first */
		if (!memcmp(type, "IDAT", 4))
			break;
		if (!memcmp(type, "IHDR", 4) && !have_header) {
			p->width = tr_be32(body);
			p->height = tr_be32(body + 4);
			p->depth = body[8];
			p->color = body[9];
			if (body[10] != 0 || body[11] != 0 || body[12] != 0) /* interlaced */
				return 0;
			have_header = true;
		} else if (!memcmp(type, "PLTE", 4)) {
			palette_entries = clen / 3 > 256 ? 256 : clen / 3;
			for (uint32_t i = 0; i < palette_entries; i++)
				memcpy(p->palette[i], body + 3 * i, 3);
		} else if (!memcmp(type, "tRNS", 4)) {
			p->has_trns = true;
			for (uint32_t i = 0; i < clen && i < 256; i++)
				p->palette[i][3] = body[i];
		}
		pos += 12 + (size_t)clen;
	}
	if (!have_header || pos + 12 > len || p->width == 0 || p->height == 0)
		return 0;
	if ((uint64_t)p->width * 4 > MAX_ROW_SAMPLES)
		return 0;
	switch (p->color) {
	case 0: /* grey */
	case 2: /* RGB */
	case 4: /* grey + alpha */
	case 6: /* RGBA */
		/* 16 bits, low-depth grey and colour keys (tRNS) take libvips' path. */
		if (p->depth != 8 || p->has_trns)
			return 0;
		p->bands = p->color == 0 ? 1 : p->color == 2 ? 3 : p->color == 4 ? 2 : 4;
		p->row_bytes = (size_t)p->width * p->bands;
		p->filter_step = p->bands;
		break;
	case 3: /* palette: expanded as libpng does, alpha from tRNS when present */
		if (palette_entries == 0 ||
		    (p->depth != 1 && p->depth != 2 && p->depth != 4 && p->depth != 8))
			return 0;
		p->indexed = true;
		p->bands = p->has_trns ? 4 : 3;
		p->row_bytes = ((size_t)p->width * p->depth + 7) / 8;
		p->filter_step = 1;
		break;
	default: return 0;
	}
	return pos;
}

static inline unsigned char paeth(unsigned char a, unsigned char b, unsigned char c)
{
	int p = a + b - c;
	int pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undoes the row filter (PNG spec §9) of row[0..n) in place given the unfiltered prior row;
 * step is the filter's bytes per pixel. Returns -1 for an unknown filter type. */
static int unfilter(int type, unsigned char *row, const unsigned char *prior, size_t n, size_t step)
{
	size_t i;

	switch (type) {
	case 0: return 0;
	case 1:
		for (i = step; i < n; i++)
			row[i] = (unsigned char)(row[i] + row[i - step]);
		return 0;
	case 2:
		for (i = 0; i < n; i++)
			row[i] = (unsigned char)(row[i] + prior[i]);
		return 0;
	case 3:
		for (i = 0; i < step && i < n; i++)
			row[i] = (unsigned char)(row[i] + (prior[i] >> 1));
		for (; i < n; i++)
			row[i] = (unsigned char)(row[i] + ((row[i - step] + prior[i]) >> 1));
		return 0;
	case 4:
		for (i = 0; i < step && i < n; i++)
			row[i] = (unsigned char)(row[i] + prior[i]);
		for (; i < n; i++)
			row[i] = (unsigned char)(row[i] +
						 paeth(row[i - step], prior[i], prior[i - step]));
		return 0;
	default: return -1;
	}
}

/* The block sums of one band of factor rows: per source column and band, the sum of its
 * samples (colour samples weighted by alpha where there is alpha). */
struct band_sums {
	uint32_t *column; /* width x bands */
	uint32_t rows;    /* source rows added so far */
};

/* Adds one row of width x bands 8-bit samples to the column sums. Cloned for AVX2, which
 * widens and adds twice the bytes of SSE2 at a time. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
__attribute__((target_clones("avx2", "default")))
#endif
#endif
static void
add_row(struct band_sums *sums, const unsigned char *px, uint32_t width, int bands)
{
	uint32_t *col = sums->column;
	size_t n = (size_t)width * bands;

	if (bands == 1 || bands == 3) {
		for (size_t i = 0; i < n; i++)
			col[i] += px[i];
	} else if (bands == 2) {
		for (size_t i = 0; i < n; i += 2) {
			col[i] += (uint32_t)px[i] * px[i + 1];
			col[i + 1] += px[i + 1];
		}
	} else {
		for (size_t i = 0; i < n; i += 4) {
			uint32_t a = px[i + 3];

			col[i] += px[i] * a;
			col[i + 1] += px[i + 1] * a;
			col[i + 2] += px[i + 2] * a;
			col[i + 3] += a;
		}
	}
	sums->rows++;
}

/* Below this factor a block mean is exact in 64-bit fixed point (its sample count n < 2^16). */
#define FIXED_POINT_FACTOR 256

/* The mean of the n samples summing to total, rounded, as (total + n/2) * ceil(2^40 / n) >> 40:
 * exact for n < 2^16, as the error stays under 1/n. */
static inline unsigned char fixed_mean(uint32_t total, uint64_t n, uint64_t reciprocal)
{
	return (unsigned char)(((uint64_t)(total + n / 2) * reciprocal) >> 40);
}

/* One output row of the full blocks of an image without alpha, for a constant bands: the hot
 * loop of a large fit, kept free of divisions and of a loop over bands. */
static inline void emit_opaque_blocks(const uint32_t *col, unsigned char *out, uint32_t blocks,
				      uint32_t factor, uint32_t rows, const int bands)
{
	uint64_t n = (uint64_t)factor * rows, reciprocal = ((1ULL << 40) + n - 1) / n;

	for (uint32_t ox = 0; ox < blocks; ox++) {
		uint32_t total[4] = {0, 0, 0, 0};

		for (uint32_t dx = 0; dx < factor; dx++, col += bands)
			for (int b = 0; b < bands; b++)
				total[b] += col[b];
		for (int b = 0; b < bands; b++)
			out[b] = fixed_mean(total[b], n, reciprocal);
		out += bands;
	}
}

/* Writes the means of the column sums over blocks of kx columns starting at column x0 into out,
 * in general (any factor, alpha, the partial block at the right edge). With alpha, a colour is
 * the alpha-weighted mean (what averaging premultiplied samples and dividing by the mean alpha
 * gives), 0 where all is transparent. */
static void emit_blocks(const uint32_t *column, unsigned char *out, uint32_t x0, uint32_t width,
			int bands, uint32_t factor, uint32_t rows)
{
	int colours = bands == 2 || bands == 4 ? bands - 1 : bands;

	for (; x0 < width; x0 += factor) {
		uint32_t kx = width - x0 < factor ? width - x0 : factor;
		uint64_t total[4] = {0, 0, 0, 0};
		const uint32_t *col = column + (size_t)x0 * bands;
		double per_sample = 1.0 / ((double)kx * rows);

		for (uint32_t dx = 0; dx < kx; dx++)
			for (int b = 0; b < bands; b++)
				total[b] += col[(size_t)dx * bands + b];
		if (colours == bands) {
			for (int b = 0; b < bands; b++)
				out[b] = (unsigned char)((double)total[b] * per_sample + 0.5);
		} else {
			uint64_t alpha = total[colours];
			double per_alpha = alpha ? 1.0 / (double)alpha : 0.0;

			for (int b = 0; b < colours; b++)
				out[b] = (unsigned char)((double)total[b] * per_alpha + 0.5);
			out[colours] = (unsigned char)((double)alpha * per_sample + 0.5);
		}
		out += bands;
	}
}

/* Writes the means of the column sums, factor columns at a time (fewer at the right edge), as
 * one output row, and clears the sums. */
static void emit_row(struct band_sums *sums, unsigned char *out, uint32_t width, int bands,
		     uint32_t factor)
{
	uint32_t blocks = 0;

	if (factor < FIXED_POINT_FACTOR && (bands == 1 || bands == 3)) {
		blocks = width / factor;
		if (bands == 1)
			emit_opaque_blocks(sums->column, out, blocks, factor, sums->rows, 1);
		else
			emit_opaque_blocks(sums->column, out, blocks, factor, sums->rows, 3);
	}
	emit_blocks(sums->column, out + (size_t)blocks * bands, blocks * factor, width, bands,
		    factor, sums->rows);
	memset(sums->column, 0, (size_t)width * bands * sizeof(uint32_t));
	sums->rows = 0;
}

/* Expands one unfiltered palette row (depth bits an index) into RGB or RGBA samples. */
static void expand_indexed(const struct png_layout *p, const unsigned char *row, unsigned char *px)
{
	int per_byte = 8 / p->depth, mask = (1 << p->depth) - 1;

	for (uint32_t x = 0; x < p->width; x++) {
		int shift = 8 - p->depth * (int)(x % per_byte + 1);
		const unsigned char *rgba = p->palette[(row[x / per_byte] >> shift) & mask];

		memcpy(px, rgba, p->bands);
		px += p->bands;
	}
}

/* The inflater fed from the IDAT chunks in turn. */
struct idat_stream {
	struct inflate_state state;
	const unsigned char *data;
	size_t len, next; /* next: offset of the chunk after the one being read */
};

/* Fills out[0..want) with inflated bytes. Returns 0, or -1 when the stream or the chunks end
 * first or the data is damaged. */
static int inflate_fill(struct idat_stream *s, unsigned char *out, size_t want)
{
	s->state.next_out = out;
	s->state.avail_out = (uint32_t)want;
	while (s->state.avail_out > 0) {
		if (s->state.avail_in == 0) {
			uint32_t clen;

			if (s->next + 12 > s->len)
				return -1;
			clen = tr_be32(s->data + s->next);
			if (clen > s->len - s->next - 12 ||
			    memcmp(s->data + s->next + 4, "IDAT", 4))
				return -1;
			s->state.next_in = (unsigned char *)s->data + s->next + 8;
			s->state.avail_in = clen;
			s->next += 12 + (size_t)clen;
		}
		if (isal_inflate(&s->state) != ISAL_DECOMP_OK)
			return -1;
		if (s->state.block_state == ISAL_BLOCK_FINISH && s->state.avail_out > 0)
			return -1;
	}
	return 0;
}

/* Slots of the pipe between the inflate (the caller) and the unfilter and sums (the pipe's
 * thread): of INFLATE_CHUNK bytes each, as the text reader's pipe, so the two share kept rings. */
#define PIPE_SLOTS 16

/* What the pipe's thread needs to unfilter and sum the rows, and where it writes the means. */
struct row_sink {
	const struct png_layout *p;
	uint32_t factor, out_width, y; /* y: the next source row */
	struct tr_region area;         /* the pixels summed: the whole image, or a region */
	size_t stride;
	unsigned char *prior, *expanded, *pixels;
	struct band_sums sums;
	bool damaged; /* a row had an unknown filter type: nothing more is taken */
};

/* The pipe's consumer: whole rows (with their filter bytes), unfiltered in place (the caller
 * does not read them again) and summed in order; the last row of each piece is kept as the
 * prior row of the next. */
static void take_rows(void *arg, unsigned char *rows, size_t len)
{
	struct row_sink *sink = arg;
	const struct png_layout *p = sink->p;
	size_t n = len / sink->stride;

	const struct tr_region *a = &sink->area;
	size_t left = (size_t)a->x * p->bands;
	/* A filtered byte depends on the bytes left of it and above it only: the columns right of
	 * the area are never unfiltered. */
	uint64_t right = (uint64_t)a->x + a->width;
	size_t used = p->indexed ? (size_t)((right * (uint64_t)p->depth + 7) / 8)
				 : (size_t)right * p->filter_step;

	for (size_t r = 0; r < n && !sink->damaged; r++, sink->y++) {
		unsigned char *row = rows + r * sink->stride + 1;
		const unsigned char *above = r ? row - sink->stride : sink->prior;

		/* Rows above the area are unfiltered all the same: the next row's filter needs them. */
		if (unfilter(row[-1], row, above, used, p->filter_step) < 0) {
			sink->damaged = true;
			return;
		}
		if (sink->y < a->y)
			continue;
		if (p->indexed)
			expand_indexed(p, row, sink->expanded);
		add_row(&sink->sums, (p->indexed ? sink->expanded : row) + left, a->width,
			p->bands);
		if (sink->sums.rows == sink->factor || sink->y + 1 == a->y + a->height)
			emit_row(&sink->sums,
				 sink->pixels + (size_t)((sink->y - a->y) / sink->factor) *
							sink->out_width * p->bands,
				 a->width, p->bands, sink->factor);
	}
	if (n)
		memcpy(sink->prior, rows + (n - 1) * sink->stride + 1, p->row_bytes);
}

int tr_png_shrink(const unsigned char *data, size_t len, uint32_t factor, struct tr_png_shrunk *out)
{
	return tr_png_shrink_region(data, len, factor, NULL, out);
}

int tr_png_shrink_region(const unsigned char *data, size_t len, uint32_t factor,
			 const struct tr_region *region, struct tr_png_shrunk *out)
{
	struct png_layout *p = malloc(sizeof(*p));
	struct idat_stream *stream = malloc(sizeof(*stream));
	struct row_sink sink = {.factor = factor};
	struct tr_pipe *pipe = NULL;
	size_t first_idat, rows_per_slot;
	uint32_t out_height, bottom, y = 0;
	bool inflated = true;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!p || !stream || factor < 1 || factor > MAX_FACTOR || len < PNG_SIGNATURE_LEN)
		goto out;
	first_idat = read_layout(data, len, p);
	if (!first_idat)
		goto out;
	sink.p = p;
	sink.area = (struct tr_region){.width = p->width, .height = p->height};
	if (region && tr_region_clip(region, p->width, p->height, &sink.area) < 0)
		goto out;
	bottom = sink.area.y + sink.area.height;
	sink.out_width = (uint32_t)(((uint64_t)sink.area.width + factor - 1) / factor);
	out_height = (uint32_t)(((uint64_t)sink.area.height + factor - 1) / factor);
	sink.stride = p->row_bytes + 1;
	rows_per_slot = INFLATE_CHUNK / sink.stride ? INFLATE_CHUNK / sink.stride : 1;
	sink.prior = calloc(1, p->row_bytes);
	sink.sums.column = calloc((size_t)sink.area.width * p->bands, sizeof(uint32_t));
	sink.pixels = malloc((size_t)sink.out_width * out_height * p->bands);
	if (p->indexed)
		sink.expanded = malloc((size_t)p->width * p->bands);
	if (!sink.prior || !sink.sums.column || !sink.pixels || (p->indexed && !sink.expanded))
		goto out;
	pipe = tr_pipe_new(PIPE_SLOTS,
			   rows_per_slot * sink.stride > INFLATE_CHUNK ? rows_per_slot * sink.stride
								       : INFLATE_CHUNK,
			   take_rows, &sink);
	if (!pipe)
		goto out;

	isal_inflate_init(&stream->state);
	stream->state.crc_flag = ISAL_ZLIB;
	stream->data = data;
	stream->len = len;
	stream->next = first_idat;
	/* Nothing below the area is inflated. */
	while (y < bottom && inflated) {
		size_t rows = bottom - y < rows_per_slot ? bottom - y : rows_per_slot;
		unsigned char *slot = tr_pipe_acquire(pipe);

		inflated = inflate_fill(stream, slot, rows * sink.stride) == 0;
		if (inflated)
			tr_pipe_submit(pipe, rows * sink.stride);
		y += (uint32_t)rows;
	}
	tr_pipe_finish(pipe); /* every submitted row is summed */
	pipe = NULL;
	if (!inflated || sink.damaged)
		goto out;
	*out = (struct tr_png_shrunk){
		.pixels = sink.pixels,
		.width = sink.out_width,
		.height = out_height,
		.bands = p->bands,
	};
	sink.pixels = NULL;
	rc = 0;
out:
	tr_pipe_finish(pipe);
	free(sink.pixels);
	free(sink.expanded);
	free(sink.sums.column);
	free(sink.prior);
	free(stream);
	free(p);
	return rc;
}
