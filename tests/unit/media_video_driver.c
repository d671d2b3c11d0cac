/* SPDX-License-Identifier: MIT */
/* media_video_driver.c - runs the video functions (readers/media/media_video.h) on a file opened
 * with avformat's own I/O, for tests/readers/test_media_video.py and bench/video.py:
 *   media_video_driver [--deadline-ms N] frame FILE T [MAX_W MAX_H]      PPM on stdout
 *   media_video_driver [--deadline-ms N] sheet FILE T0 T1 COLS ROWS MAX_W MAX_H   PPM on stdout
 *   media_video_driver [--deadline-ms N] subs FILE [T0 T1]                text on stdout
 * stderr gets "pts=S" (frame) or "n=K times=A,B,..." (sheet); a failure prints
 * "error: ENAME" and exits 2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libavutil/log.h>

#include "media_video.h"

static int write_ppm(const struct media_frame *f)
{
	printf("P6\n%d %d\n255\n", f->width, f->height);
	return fwrite(f->rgb, 3, (size_t)f->width * f->height, stdout) ==
			       (size_t)f->width * f->height
		       ? 0
		       : -EIO;
}

static int run_frame(AVFormatContext *fmt, int stream, char **argv, int argc, uint64_t deadline)
{
	struct media_frame f;
	int r;

	if (argc != 1 && argc != 3)
		return -EINVAL;
	r = media_video_frame(fmt, stream, atof(argv[0]), argc == 3 ? atoi(argv[1]) : 0,
			      argc == 3 ? atoi(argv[2]) : 0, deadline, &f);
	if (r < 0)
		return r;
	fprintf(stderr, "pts=%.6f\n", f.pts);
	r = write_ppm(&f);
	media_frame_free(&f);
	return r;
}

static int run_sheet(AVFormatContext *fmt, int stream, char **argv, int argc, uint64_t deadline)
{
	double times[MEDIA_SHEET_MAX_CELLS];
	struct media_frame f;
	int r, n, i, cols, rows;

	if (argc != 6)
		return -EINVAL;
	cols = atoi(argv[2]);
	rows = atoi(argv[3]);
	r = media_video_sheet(fmt, stream, atof(argv[0]), atof(argv[1]), cols, rows, atoi(argv[4]),
			      atoi(argv[5]), deadline, &f, times, &n);
	if (r < 0)
		return r;
	fprintf(stderr, "n=%d times=", n);
	for (i = 0; i < cols * rows; i++)
		fprintf(stderr, "%s%.6f", i ? "," : "", times[i]);
	fprintf(stderr, "\n");
	r = write_ppm(&f);
	media_frame_free(&f);
	return r;
}

static int run_subs(AVFormatContext *fmt, char **argv, int argc, uint64_t deadline)
{
	char *text;
	size_t len;
	int r;

	if (argc != 0 && argc != 2)
		return -EINVAL;
	r = media_subtitles(fmt, argc ? atof(argv[0]) : 0, argc ? atof(argv[1]) : -1, deadline,
			    &text, &len);
	if (r < 0)
		return r;
	if (text)
		fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

static uint64_t deadline_after_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + (uint64_t)ms * 1000000u;
}

int main(int argc, char **argv)
{
	AVFormatContext *fmt = NULL;
	uint64_t deadline = 0;
	int r, stream;

	av_log_set_level(AV_LOG_QUIET);
	if (argc > 2 && strcmp(argv[1], "--deadline-ms") == 0) {
		deadline = deadline_after_ms(atol(argv[2]));
		argv += 2;
		argc -= 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: media_video_driver [--deadline-ms N] frame|sheet|subs FILE "
				"ARGS...\n");
		return 1;
	}
	if (avformat_open_input(&fmt, argv[2], NULL, NULL) < 0) {
		fprintf(stderr, "error: cannot open\n");
		return 2;
	}
	r = avformat_find_stream_info(fmt, NULL) < 0 ? -ENODATA : 0;
	stream = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	for (unsigned i = 0; stream < 0 && i < fmt->nb_streams; i++)
		if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO)
			stream = (int)i; /* one avformat could not size: the functions' error */
	if (r == 0 && strcmp(argv[1], "subs") == 0)
		r = run_subs(fmt, argv + 3, argc - 3, deadline);
	else if (r == 0 && stream < 0)
		r = -ENOENT;
	else if (r == 0 && strcmp(argv[1], "frame") == 0)
		r = run_frame(fmt, stream, argv + 3, argc - 3, deadline);
	else if (r == 0 && strcmp(argv[1], "sheet") == 0)
		r = run_sheet(fmt, stream, argv + 3, argc - 3, deadline);
	else if (r == 0)
		r = -EINVAL;
	avformat_close_input(&fmt);
	if (r < 0) {
		fprintf(stderr, "error: %s\n", strerrorname_np(-r));
		return 2;
	}
	return 0;
}
