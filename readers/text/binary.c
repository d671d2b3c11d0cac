/* SPDX-License-Identifier: MIT */
/* binary.c - the binary reader (docs/SPEC.md §3 "Binary"): says what the file is instead of showing it. */
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "util.h"

static enum tr_probe binary_probe(const struct tr_file *file)
{
	return tr_head_is_binary(file->head, file->head_len) ? TR_PROBE_FALLBACK : TR_PROBE_NO;
}

/* Length of the first two comma-separated fields of desc ("ELF 64-bit LSB pie executable,
 * x86-64" of libmagic's longer text). */
static size_t short_description_len(const char *desc)
{
	const char *comma = strchr(desc, ',');

	if (comma)
		comma = strchr(comma + 1, ',');
	return comma ? (size_t)(comma - desc) : strlen(desc);
}

static int binary_read(const struct tr_file *file, const struct tr_selector *sel,
		       const struct tr_options *opts, struct tr_result *res)
{
	char size_text[32];

	(void)sel;
	(void)opts;
	res->type = TR_TYPE_BINARY;
	free(res->mime_type);
	res->mime_type = tr_magic_mime_fd(file->fd);
	free(res->meta.description);
	res->meta.description = tr_magic_description_fd(file->fd);
	tr_format_size((uint64_t)file->st.st_size, size_text, sizeof(size_text));
	if (res->meta.description)
		tr_result_fail(res, TR_E_BINARY, "Cannot display binary file: %s (%.*s, %s)",
			       file->src->path, (int)short_description_len(res->meta.description),
			       res->meta.description, size_text);
	else
		tr_result_fail(res, TR_E_BINARY, "Cannot display binary file: %s (%s)",
			       file->src->path, size_text);
	return res->short_result ? 0 : -1;
}

const struct tr_reader tr_reader_binary = {
	.name = "binary",
	.probe = binary_probe,
	.read = binary_read,
};
