/* SPDX-License-Identifier: MIT */
/* ocr.c - the core's side of OCR: loading toolfs-ocr.so, cache keys, metadata.ocr, and the OCR
 * of images under ocr=on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "ocr.h"
#include "util.h"

/* Defined when the module's objects are linked in (fuzz targets); else the module is loaded. */
extern const struct tr_ocr_api tr_ocr_api __attribute__((weak));

struct tr_module tr_module_ocr = {
	.file = "toolfs-ocr.so",
	.symbol = "tr_ocr_api",
	.abi = TR_OCR_ABI,
	.linked = &tr_ocr_api,
};

const struct tr_ocr_api *tr_ocr_load(char *err, size_t err_size)
{
#if !defined(TR_HAVE_TESSERACT)
	snprintf(err, err_size, "this build of toolfs has no Tesseract");
	return NULL;
#endif
	const struct tr_ocr_api *api = tr_module_api(&tr_module_ocr);

	if (!api)
		snprintf(err, err_size, "%s", tr_module_ocr.error);
	return api;
}

void tr_ocr_key(const struct stat *st, uint64_t part, const char *lang, char *buf, size_t size)
{
	snprintf(buf, size, "%llx:%llx:%llx:%lld.%09ld:%lld.%09ld:%llu:%s",
		 (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
		 (unsigned long long)st->st_size, (long long)st->st_mtim.tv_sec,
		 st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec,
		 (unsigned long long)part, lang);
}

int tr_ocr_note(struct tr_result *res, uint32_t page, int confidence, const char *lang)
{
	struct tr_metadata *m = &res->meta;
	struct tr_ocr_meta *grown = realloc(m->ocr, (m->n_ocr + 1) * sizeof(*grown));

	if (!grown)
		return -1;
	m->ocr = grown;
	m->ocr[m->n_ocr++] = (struct tr_ocr_meta){.page = page, .confidence = confidence};
	snprintf(m->ocr_language, sizeof(m->ocr_language), "%s", lang);
	return 0;
}

int tr_ocr_image(struct tr_result *res, const struct tr_blob *blob, const struct stat *st,
		 const struct tr_options *opts, uint64_t deadline)
{
	const char *lang = opts->ocr_lang.text;
	const struct tr_ocr_api *api;
	struct tr_ocr_text text = {0};
	char err[256] = "", key[TR_OCR_KEY_SIZE];
	int rc;

	api = tr_ocr_load(err, sizeof(err));
	if (!api)
		return tr_buf_printf(&res->content, "\n[OCR unavailable: %s]", err) < 0 ? -1 : 0;
	tr_ocr_key(st, 0, lang, key, sizeof(key));
	rc = api->cached(key, &text);
	if (rc != 0 && api->check(lang, err, sizeof(err)) != 0) {
		tr_result_fail(res, TR_E_UNSUPPORTED, "%s", err);
		return 0;
	}
	if (rc != 0)
		rc = api->image(blob, lang, deadline, key, &text, err, sizeof(err));
	if (rc < 0)
		return -1;
	if (rc == 2)
		return tr_buf_printf(&res->content,
				     "\n[OCR: timeout: not done within max_render_ms (%llu ms)]",
				     (unsigned long long)opts->max_render_ms) < 0
			       ? -1
			       : 0;
	if (rc == 1)
		return tr_buf_printf(&res->content, "\n[OCR failed: %s]", err) < 0 ? -1 : 0;
	if (text.text[0])
		tr_buf_printf(&res->content, "\n--- OCR ---\n%s\n", text.text);
	else
		tr_buf_printf(&res->content, "\n[OCR found no text]");
	if (text.script[0])
		tr_buf_printf(&res->content,
			      "\n[OCR'd in %s, but the image's script is %s, which %s does not "
			      "read: the text above may be noise; install the Debian package "
			      "tesseract-ocr-%s]",
			      text.lang, text.script, text.lang, text.missing);
	free(text.text);
	if (res->content.oom)
		return -1;
	return tr_ocr_note(res, 0, text.confidence, text.lang[0] ? text.lang : lang);
}
