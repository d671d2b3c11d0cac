/* SPDX-License-Identifier: MIT */
/* media_probe.c - bench/media.py's in-process probe: what toolfs-media.so does for the
 * default view of an audio file (media_open, media_describe, the loudness outline of its first
 * SPAN seconds), without the sandbox, process or socket. Prints the median of RUNS in
 * microseconds. Usage: media_probe FILE SPAN RUNS */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavutil/log.h>

#include "media_ffmpeg.h"

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int fd = argc == 4 ? open(argv[1], O_RDONLY) : -1;
	double span = argc == 4 ? atof(argv[2]) : 0, runs[1001];
	int n = argc == 4 ? atoi(argv[3]) : 0;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || n < 1 || n > 1001)
		return 2;
	av_log_set_level(AV_LOG_QUIET);
	for (int i = 0; i < n; i++) {
		struct media_reply rep = {.duration = -1};
		struct media_input in;
		char err[256], *text = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);
		uint64_t t0 = media_now_ns();

		if (media_open(&in, fd, (uint64_t)st.st_size, err, sizeof(err)) != MEDIA_OK)
			return 1;
		media_describe(&in, &rep, out);
		media_loudness(&in, 0, span, 0, out);
		media_close(&in);
		fclose(out);
		runs[i] = (double)(media_now_ns() - t0) / 1000.0;
		free(text);
	}
	qsort(runs, (size_t)n, sizeof(runs[0]), by_value);
	printf("%.1f\n", runs[n / 2]);
	return 0;
}
