/* SPDX-License-Identifier: MIT */
/* tokens_speed.c - bench/tokens.py's timer of the token estimate alone: for each FILE, the
 * median time of tr_tokens_estimate over its bytes, in microseconds, one line each. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tr_tokens.h"

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static char buf[64 << 20];
	double runs[101];
	volatile uint64_t sink = 0;

	for (int a = 1; a < argc; a++) {
		FILE *fp = fopen(argv[a], "rb");
		size_t n;

		if (!fp)
			return 1;
		n = fread(buf, 1, sizeof(buf), fp);
		fclose(fp);
		for (int r = 0; r < 101; r++) {
			struct timespec t0, t1;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			sink += tr_tokens_estimate(buf, n);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			runs[r] = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
		}
		qsort(runs, 101, sizeof(runs[0]), by_value);
		printf("%.3f\n", runs[50]);
	}
	return sink == 42; /* keeps the calls */
}
