/* SPDX-License-Identifier: MIT */
/* media_sheet.c - a contact sheet: a grid of frames at even intervals, each with its time drawn
 * in a corner by a built-in 3x5 bitmap font. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "media_video.h"

/* The glyphs, 5 rows of 3 bits (the high bit leftmost): 0-9, ':' and '.'. */
static const unsigned char font_digits[10][5] = {
	{7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
	{7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
};
static const unsigned char font_colon[5] = {0, 2, 0, 2, 0};
static const unsigned char font_dot[5] = {0, 0, 0, 0, 2};
static const unsigned char font_space[5] = {0, 0, 0, 0, 0};

static const unsigned char *glyph(char c)
{
	if (c >= '0' && c <= '9')
		return font_digits[c - '0'];
	if (c == ':')
		return font_colon;
	return c == '.' ? font_dot : font_space;
}

static void fill_rect(struct media_frame *f, int x0, int y0, int w, int h, unsigned char v)
{
	int x, y;

	for (y = y0 < 0 ? 0 : y0; y < y0 + h && y < f->height; y++)
		for (x = x0 < 0 ? 0 : x0; x < x0 + w && x < f->width; x++)
			memset(f->rgb + ((size_t)y * f->width + x) * 3, v, 3);
}

void media_sheet_label(struct media_frame *frame, const char *text, int scale, int right,
		       int bottom)
{
	int n = (int)strlen(text), i, row, col;
	/* each glyph 3 wide and a column apart, a one-pixel margin around (font pixels) */
	int box_w = (4 * n + 1) * scale, box_h = 7 * scale;
	int x0 = right - box_w, y0 = bottom - box_h;

	if (n == 0 || scale < 1)
		return;
	fill_rect(frame, x0, y0, box_w, box_h, 0);
	for (i = 0; i < n; i++) {
		const unsigned char *g = glyph(text[i]);

		for (row = 0; row < 5; row++)
			for (col = 0; col < 3; col++)
				if (g[row] & (4 >> col))
					fill_rect(frame, x0 + (1 + 4 * i + col) * scale,
						  y0 + (1 + row) * scale, scale, scale, 255);
	}
}

void media_sheet_times(double t0, double t1, int cols, int rows, double *times)
{
	int n = cols * rows, i;

	for (i = 0; i < n; i++)
		times[i] = t0 + i * (t1 - t0) / n;
}

/* "MM:SS" (hours: "H:MM:SS"), ".d" (tenths) added when tenths is set; truncated, as players
 * show time. */
static void format_time(double t, int tenths, char *buf, size_t size)
{
	long long d = (long long)floor(t * 10 + 1e-6), s = d / 10;
	int len;

	if (s >= 3600)
		len = snprintf(buf, size, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
	else
		len = snprintf(buf, size, "%02lld:%02lld", s / 60, s % 60);
	if (tenths && len > 0 && (size_t)len < size)
		snprintf(buf + len, size - len, ".%lld", d % 10);
}

/* Copies cell (at most cw x ch) centred into the sheet's cell whose top-left is (x0, y0). */
static void blit(struct media_frame *sheet, const struct media_frame *cell, int x0, int y0, int cw,
		 int ch)
{
	int w = cell->width < cw ? cell->width : cw, h = cell->height < ch ? cell->height : ch;
	int y;

	x0 += (cw - w) / 2;
	y0 += (ch - h) / 2;
	for (y = 0; y < h; y++)
		memcpy(sheet->rgb + ((size_t)(y0 + y) * sheet->width + x0) * 3,
		       cell->rgb + (size_t)y * cell->width * 3, (size_t)w * 3);
}

int media_video_sheet(AVFormatContext *fmt, int stream, double t0, double t1, int cols, int rows,
		      int max_w, int max_h, uint64_t deadline, struct media_frame *sheet,
		      double *times, int *n_frames)
{
	struct media_video_decoder *dec = NULL;
	int dw, dh, cw, ch, i, r, first_error = 0, n = cols * rows, tenths, scale;

	memset(sheet, 0, sizeof(*sheet));
	*n_frames = 0;
	if (cols < 1 || rows < 1 || cols > MEDIA_SHEET_MAX_CELLS || n > MEDIA_SHEET_MAX_CELLS ||
	    !isfinite(t0) || !isfinite(t1) || t0 < 0 || t1 <= t0 || max_w < 0 || max_h < 0)
		return -EINVAL;
	media_sheet_times(t0, t1, cols, rows, times);
	r = media_video_open(fmt, stream, &dec);
	if (r < 0)
		return r;
	media_video_display_size(dec, &dw, &dh);
	r = -ENODATA;
	if (dw < 1 || dh < 1)
		goto fail;
	r = -EINVAL;
	if ((max_w > 0 && max_w < cols) || (max_h > 0 && max_h < rows))
		goto fail;
	media_fit_size(dw, dh, max_w / cols, max_h / rows, &cw, &ch);
	r = -EFBIG;
	if ((int64_t)cw * cols * ch * rows > MEDIA_VIDEO_MAX_PIXELS)
		goto fail;
	sheet->width = cw * cols;
	sheet->height = ch * rows;
	sheet->rgb = calloc((size_t)sheet->width * sheet->height, 3);
	r = -ENOMEM;
	if (!sheet->rgb)
		goto fail;
	tenths = (t1 - t0) / n < 10;
	scale = ch / 100 < 1 ? 1 : ch / 100;
	for (i = 0; i < n; i++) {
		struct media_frame cell;
		char label[32];
		int x0 = i % cols * cw, y0 = i / cols * ch;

		r = media_video_decode_at(dec, times[i], cw, ch, deadline, &cell);
		if (r == -ERANGE || r == -ENODATA) {
			/* past the end: the rest stays black; undecodable: this cell does */
			first_error = first_error ? first_error : r;
			if (r == -ERANGE)
				break;
			continue;
		}
		if (r < 0)
			goto fail;
		blit(sheet, &cell, x0, y0, cw, ch);
		media_frame_free(&cell);
		format_time(times[i], tenths, label, sizeof(label));
		media_sheet_label(sheet, label, scale, x0 + cw, y0 + ch);
		(*n_frames)++;
	}
	r = first_error ? first_error : -ENODATA;
	if (*n_frames == 0)
		goto fail;
	media_video_close(dec);
	return 0;
fail:
	media_video_close(dec);
	media_frame_free(sheet);
	*n_frames = 0;
	return r;
}
