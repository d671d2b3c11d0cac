/* SPDX-License-Identifier: MIT */
/* mime_list.c - prints the mime type toolfs's classification path gives each file named in a
 * list (one path a line), as tests/readers/test_magic_agreement.py compares with `file --mime-type
 * -b -f`: a text head (tr_head_is_binary false) typed from its first TR_HEAD_SIZE bytes as the text
 * reader does, any other file from its descriptor as the binary reader does. One line out per
 * path in: "text MIME" or "binary MIME" ("-" when libmagic gave no answer or the open failed). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "util.h"

int main(int argc, char **argv)
{
	static unsigned char head[TR_HEAD_SIZE];
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *list;

	if (argc != 2 || !(list = fopen(argv[1], "r"))) {
		fputs("usage: mime_list LIST\n", stderr);
		return 2;
	}
	while ((len = getline(&line, &cap, list)) > 0) {
		const char *kind = "binary";
		char *mime = NULL;
		ssize_t head_len;
		int fd;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		fd = open(line, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0 && (head_len = tr_pread_full(fd, head, sizeof(head), 0)) >= 0) {
			if (!tr_head_is_binary(head, (size_t)head_len)) {
				kind = "text";
				mime = tr_magic_mime_buffer(head, (size_t)head_len);
			} else {
				mime = tr_magic_mime_fd(fd);
			}
		}
		if (fd >= 0)
			close(fd);
		printf("%s %s\n", kind, mime ? mime : "-");
		free(mime);
	}
	free(line);
	fclose(list);
	return 0;
}
