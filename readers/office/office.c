/* SPDX-License-Identifier: MIT */
/* office.c - the Office reader (docs/SPEC.md §3 "Office documents"): recognises OOXML archives by their
 * [Content_Types].xml and legacy OLE2 files by their signature and stream names; a package is
 * read by the module toolfs-office.so (office_package.c, libzip + libxml2), loaded on first use
 * so that a process reading text never maps libxml2, ICU or libzip. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office_api.h"
#include "util.h"

extern const struct tr_reader tr_reader_binary;

static const unsigned char ole2_signature[8] = {0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1};

/* Bytes at the end of a zip file searched for the central directory's entry names. */
#define DIRECTORY_TAIL (256 * 1024)

/* Extensions whose zip files are expected to be Office documents: such a zip without the
 * parts of one is corrupt, not an anonymous binary. */
static const char *const office_extensions[] = {"docx", "docm", "dotx", "xlsx", "xlsm",
						"xltx", "pptx", "pptm", "ppsx", "potx",
						"odt",  "ods",  "odp"};

static bool is_zip(const unsigned char *head, size_t len)
{
	return len >= 4 && head[0] == 'P' && head[1] == 'K' &&
	       ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6));
}

static bool is_ole2(const unsigned char *head, size_t len)
{
	return len >= sizeof(ole2_signature) &&
	       memcmp(head, ole2_signature, sizeof(ole2_signature)) == 0;
}

/* True when the zip's central directory (in its last DIRECTORY_TAIL bytes) names
 * [Content_Types].xml. */
static bool names_content_types(const struct tr_file *file)
{
	static const char name[] = "[Content_Types].xml";
	uint64_t size = (uint64_t)file->st.st_size;
	size_t len = size < DIRECTORY_TAIL ? (size_t)size : DIRECTORY_TAIL;
	unsigned char *tail;
	bool found = false;

	if (memmem(file->head, file->head_len, name, sizeof(name) - 1))
		return true;
	if (size <= file->head_len)
		return false;
	tail = malloc(len);
	if (!tail)
		return false;
	if (tr_pread_full(file->fd, tail, len, (off_t)(size - len)) == (ssize_t)len)
		found = memmem(tail, len, name, sizeof(name) - 1) != NULL;
	free(tail);
	return found;
}

static bool has_office_extension(const char *name)
{
	for (size_t i = 0; i < sizeof(office_extensions) / sizeof(office_extensions[0]); i++)
		if (tr_has_extension(name, office_extensions[i]))
			return true;
	return false;
}

static enum tr_probe office_probe(const struct tr_file *file)
{
	if (is_ole2(file->head, file->head_len))
		return TR_PROBE_CONTENT;
	/* Bytes before the archive (a self-extractor's stub; the directory's offsets count
	 * them, so zip -T and Python's zipfile read it): an Office file by its name and parts. */
	if (!is_zip(file->head, file->head_len))
		return has_office_extension(file->src->name) && names_content_types(file)
			       ? TR_PROBE_EXTENSION
			       : TR_PROBE_NO;
	if (tr_office_is_odf(file->head, file->head_len) || names_content_types(file))
		return TR_PROBE_CONTENT;
	return has_office_extension(file->src->name) ? TR_PROBE_EXTENSION : TR_PROBE_NO;
}

/* Legacy binary Office files: which one, by the name of its main stream (UTF-16LE in the
 * compound file's directory). */
static const struct {
	const char *stream, *format, *modern;
} ole2_streams[] = {
	{"EncryptedPackage", NULL, NULL},
	{"WordDocument", "Word 97-2003 document (.doc)", ".docx"},
	{"Workbook", "Excel 97-2003 workbook (.xls)", ".xlsx"},
	{"Book", "Excel 5.0/95 workbook (.xls)", ".xlsx"},
	{"PowerPoint Document", "PowerPoint 97-2003 presentation (.ppt)", ".pptx"},
};

/* True when data holds name as a UTF-16LE directory entry name. */
static bool has_stream(const unsigned char *data, size_t len, const char *name)
{
	unsigned char wide[64];
	size_t n = strlen(name);

	for (size_t i = 0; i < n; i++) {
		wide[2 * i] = (unsigned char)name[i];
		wide[2 * i + 1] = 0;
	}
	wide[2 * n] = wide[2 * n + 1] = 0; /* the name's terminator */
	return memmem(data, len, wide, 2 * n + 2) != NULL;
}

static int read_ole2(const struct tr_file *file, const struct tr_selector *sel,
		     const struct tr_options *opts, struct tr_result *res)
{
	uint64_t size = (uint64_t)file->st.st_size;
	size_t len = size < opts->max_office_size ? (size_t)size : (size_t)opts->max_office_size;
	unsigned char *data = malloc(len ? len : 1);
	ssize_t got;

	if (!data)
		return -1;
	got = tr_pread_full(file->fd, data, len, 0);
	if (got < 0) {
		free(data);
		tr_result_fail(res, TR_E_IO, "I/O error reading %s", file->src->path);
		return res->short_result ? 0 : -1;
	}
	for (size_t i = 0; i < sizeof(ole2_streams) / sizeof(ole2_streams[0]); i++) {
		if (!has_stream(data, (size_t)got, ole2_streams[i].stream))
			continue;
		free(data);
		free(res->mime_type);
		res->mime_type = tr_magic_mime_fd(file->fd);
		if (!ole2_streams[i].format)
			tr_result_fail(res, TR_E_ENCRYPTED,
				       "Office document is password-protected: %s",
				       file->src->path);
		else
			tr_result_fail(res, TR_E_UNSUPPORTED,
				       "Unsupported format: %s is a legacy %s; save it as %s to "
				       "read it",
				       file->src->path, ole2_streams[i].format,
				       ole2_streams[i].modern);
		return res->short_result ? 0 : -1;
	}
	free(data);
	/* Another compound file (.msg, .msi, Thumbs.db): an anonymous binary. */
	return tr_reader_binary.read(file, sel, opts, res);
}

/* Defined when the module's objects are linked in (sanitizer builds, fuzz targets); else the
 * module is loaded on the first Office package read. */
extern const struct tr_office_api tr_office_api __attribute__((weak));

struct tr_module tr_module_office = {
	.file = "toolfs-office.so",
	.symbol = "tr_office_api",
	.abi = TR_OFFICE_ABI,
	.linked = &tr_office_api,
};

static int office_read(const struct tr_file *file, const struct tr_selector *sel,
		       const struct tr_options *opts, struct tr_result *res)
{
	uint64_t size = (uint64_t)file->st.st_size;
	const struct tr_office_api *api;

	if (is_ole2(file->head, file->head_len))
		return read_ole2(file, sel, opts, res);
	if (size > opts->max_office_size) {
		tr_result_fail_too_large(res, "Office", size, opts->max_office_size, NULL);
		return res->short_result ? 0 : -1;
	}
	api = tr_module_api(&tr_module_office);
	if (!api) {
		tr_result_fail(res, TR_E_UNSUPPORTED, "Office reading needs libzip and libxml2: %s",
			       tr_module_office.error);
		return 0;
	}
	return api->read(file, sel, opts, res);
}

const struct tr_reader tr_reader_office = {
	.name = "office",
	.probe = office_probe,
	.read = office_read,
	.caps = TR_CAP_UNTRUSTED, /* libzip, libxml2 */
	.module = "toolfs-office.so",
};
