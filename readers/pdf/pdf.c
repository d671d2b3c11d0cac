/* SPDX-License-Identifier: MIT */
/* pdf.c - the PDF reader: its probe, and the read on poppler or, without it, the bare document. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "pdf.h"
#include "reader.h"
#include "util.h"

/* poppler looks for the header within the first 1024 bytes, after any junk. */
#define PDF_HEADER_SEARCH 1024

/* Offset of "%PDF-" within the first PDF_HEADER_SEARCH bytes of head, or -1. */
static long pdf_header_offset(const unsigned char *head, size_t len)
{
	const unsigned char *hit;

	if (len > PDF_HEADER_SEARCH)
		len = PDF_HEADER_SEARCH;
	hit = memmem(head, len, "%PDF-", 5);
	return hit ? (long)(hit - head) : -1;
}

static bool pdf_named(const struct tr_file *file)
{
	return file->src && file->src->name && tr_has_extension(file->src->name, "pdf");
}

/* Content when the file starts with %PDF-, or has it after junk that is binary (a MacBinary or
 * mail wrapper) or under a .pdf name; a text file merely quoting "%PDF-" near its top (a script
 * that writes PDFs) stays text. Otherwise extension for a .pdf name. */
static enum tr_probe pdf_probe(const struct tr_file *file)
{
	long offset = pdf_header_offset(file->head, file->head_len);
	bool named = pdf_named(file);

	if (offset == 0)
		return TR_PROBE_CONTENT;
	if (offset > 0 && (named || memchr(file->head, '\0', (size_t)offset)))
		return TR_PROBE_CONTENT;
	return named ? TR_PROBE_EXTENSION : TR_PROBE_NO;
}

#if defined(TR_HAVE_POPPLER)
/* Defined when the module's objects are linked in (fuzz targets); else the module is loaded. */
extern const struct tr_pdf_api tr_pdf_api __attribute__((weak));

struct tr_module tr_module_pdf = {
	.file = "toolfs-pdf.so",
	.symbol = "tr_pdf_api",
	.abi = TR_PDF_ABI,
	.linked = &tr_pdf_api,
};
#else
/* Without poppler: no text, no page count, no renders; the document itself is still attached
 * (within max_pdf_size) so a model that reads PDFs natively can use it. */
static int pdf_read_bare(const struct tr_file *file, const struct tr_selector *sel,
			 const struct tr_options *opts, struct tr_result *res)
{
	uint64_t size = (uint64_t)file->st.st_size;
	struct tr_blob *blob = NULL;
	char size_text[32];

	if (pdf_header_offset(file->head, file->head_len) < 0) {
		tr_result_fail(res, TR_E_CORRUPT,
			       "Failed to parse PDF: no %%PDF- header in the first %d bytes",
			       PDF_HEADER_SEARCH);
		return 0;
	}
	if (sel->present) {
		tr_result_fail(res, TR_E_UNSUPPORTED,
			       "PDF pages need poppler, which this build of toolfs lacks: %s",
			       res->path);
		return 0;
	}
	if (size > opts->max_pdf_size) {
		tr_result_fail_too_large(res, "PDF", size, opts->max_pdf_size, NULL);
		return 0;
	}
	if (tr_load_file(file->fd, size, &blob, &res->meta) < 0)
		return tr_result_fail_load(res, errno);
	if (tr_result_add_document(res, blob, "application/pdf") < 0)
		return -1;
	res->success = true;
	if (tr_buf_printf(&res->content,
			  "PDF text needs poppler, which this build of toolfs lacks: the document "
			  "is attached whole (%s) for a model that reads PDFs.",
			  tr_format_size(size, size_text, sizeof(size_text))) < 0)
		return -1;
	tr_result_set_short(res, "Read PDF: attached without text (PDF text needs poppler), %s",
			    size_text);
	return res->short_result ? 0 : -1;
}
#endif

static int pdf_read(const struct tr_file *file, const struct tr_selector *sel,
		    const struct tr_options *opts, struct tr_result *res)
{
	res->type = TR_TYPE_PDF;
	/* mimeType comes from content: a .pdf that holds something else says what it holds. */
	if (pdf_header_offset(file->head, file->head_len) >= 0)
		res->mime_type = strdup("application/pdf");
	else if (file->head_len)
		res->mime_type = tr_magic_mime_buffer(file->head, file->head_len);
	if (!res->mime_type && file->head_len)
		return -1;
	if (file->st.st_size == 0) {
		tr_result_fail(res, TR_E_CORRUPT, "Failed to parse PDF: the file is empty");
		return 0;
	}
#if defined(TR_HAVE_POPPLER)
	const struct tr_pdf_api *api = tr_module_api(&tr_module_pdf);

	if (!api) {
		tr_result_fail(res, TR_E_UNSUPPORTED, "PDF reading needs poppler: %s",
			       tr_module_pdf.error);
		return 0;
	}
	int rc = api->read(file, sel, opts, res);

	/* poppler only says "PDF document is damaged"; a missing header is the likelier story. */
	if (rc == 0 && res->error == TR_E_CORRUPT && res->error_text &&
	    pdf_header_offset(file->head, file->head_len) < 0) {
		char *reason = strdup(res->error_text);

		if (!reason)
			return -1;
		tr_result_fail(res, TR_E_CORRUPT, "%s (no %%PDF- header in the first %d bytes)",
			       reason, PDF_HEADER_SEARCH);
		free(reason);
	}
	return rc;
#else
	return pdf_read_bare(file, sel, opts, res);
#endif
}

const struct tr_reader tr_reader_pdf = {
	.name = "pdf",
	.probe = pdf_probe,
	.read = pdf_read,
#if defined(TR_HAVE_POPPLER)
	.caps = TR_CAP_REGIONS | TR_CAP_UNTRUSTED | TR_CAP_THREADS,
	.module = "toolfs-pdf.so",
#endif
};
