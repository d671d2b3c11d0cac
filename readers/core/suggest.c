/* SPDX-License-Identifier: MIT */
/* suggest.c - close names for a missing file, by edit distance within its folder. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

#define MAX_SUGGESTIONS 3
#define MAX_NAME 255

struct candidate {
	char name[MAX_NAME + 1];
	size_t distance;
};

/* Case-insensitive edit distance counting a swap of two neighbours as one edit (optimal string
 * alignment: "mian" is one edit from "main"), giving up (returning limit + 1) past limit. */
static size_t edit_distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t rows[3][MAX_NAME + 1];
	size_t *before = rows[0], *prev = rows[1], *cur = rows[2];

	if (la > MAX_NAME || lb > MAX_NAME)
		return limit + 1;
	if ((la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t best;

		cur[0] = best = i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]),
			    cb = tolower((unsigned char)b[j - 1]);
			size_t v = prev[j - 1] + (ca != cb);

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && before[j - 2] + 1 < v)
				v = before[j - 2] + 1;
			cur[j] = v;
			if (v < best)
				best = v;
		}
		if (best > limit)
			return limit + 1;
		size_t *spare = before;

		before = prev;
		prev = cur;
		cur = spare;
	}
	return prev[lb];
}

static void consider(struct candidate *best, size_t *n, const char *name, size_t distance)
{
	size_t at = *n;

	while (at > 0 &&
	       (best[at - 1].distance > distance ||
		(best[at - 1].distance == distance && strcmp(best[at - 1].name, name) > 0)))
		at--;
	if (at >= MAX_SUGGESTIONS)
		return;
	size_t last = *n < MAX_SUGGESTIONS ? *n : MAX_SUGGESTIONS - 1;

	memmove(&best[at + 1], &best[at], (last - at) * sizeof(best[0]));
	size_t len = strnlen(name, MAX_NAME);

	memcpy(best[at].name, name, len);
	best[at].name[len] = '\0';
	best[at].distance = distance;
	if (*n < MAX_SUGGESTIONS)
		(*n)++;
}

void tr_suggest_similar(struct tr_result *res, int dirfd, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t prefix_len = slash ? (size_t)(slash - path) + 1 : 0;
	char folder[4096];
	int fd;

	if (prefix_len >= sizeof(folder))
		return;
	if (prefix_len) {
		memcpy(folder, path, prefix_len);
		folder[prefix_len] = '\0';
	} else {
		strcpy(folder, ".");
	}
	fd = openat(dirfd, folder, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	tr_result_suggest_names(res, fd, path);
	close(fd);
}

void tr_result_suggest_names(struct tr_result *res, int dir_fd, const char *path)
{
	struct candidate best[MAX_SUGGESTIONS];
	size_t n = 0;
	const char *slash = strrchr(path, '/');
	const char *missing = slash ? slash + 1 : path;
	size_t prefix_len = slash ? (size_t)(slash - path) + 1 : 0;
	int fd;
	DIR *dir;
	struct dirent *entry;

	if (!*missing)
		return;
	/* "." of the folder itself: its listing, whatever its name leads to by now */
	fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	size_t limit = strlen(missing) / 3;

	if (limit < 2)
		limit = 2;
	while ((entry = readdir(dir)) != NULL) {
		if (entry->d_name[0] == '.' &&
		    (!entry->d_name[1] || (entry->d_name[1] == '.' && !entry->d_name[2])))
			continue;
		size_t d = edit_distance(missing, entry->d_name, limit);

		if (d <= limit)
			consider(best, &n, entry->d_name, d);
	}
	closedir(dir);
	if (n == 0)
		return;

	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return;
	fprintf(out, "File not found: %s. Did you mean ", path);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			fputs(i + 1 == n ? " or " : ", ", out);
		fprintf(out, "%.*s%s", (int)prefix_len, path, best[i].name);
	}
	fputs("?", out);
	if (fclose(out) == 0 && text)
		tr_result_fail(res, TR_E_NOT_FOUND, "%s", text);
	free(text);
}
