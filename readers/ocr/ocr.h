/* SPDX-License-Identifier: MIT */
/* ocr.h - optical character recognition with Tesseract (docs/SPEC.md §3 "OCR"): the module's
 * interface, and the core's calls into it for PDF pages and images. */
#ifndef TR_OCR_PRIVATE_H
#define TR_OCR_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tr_blob.h"
#include "tr_options.h"
#include "tr_result.h"

/* OCR resolution of PDF pages (Tesseract reads best at 300 dpi), and the pixel caps a page or
 * image is downscaled to before OCR: the long edge and the pixel count. */
#define TR_OCR_DPI 300
#define TR_OCR_MAX_EDGE 5000
#define TR_OCR_MAX_PIXELS (24u * 1000 * 1000)

/* What one recognition gave. */
struct tr_ocr_text {
	char *text;     /* malloc'd UTF-8, trailing whitespace dropped; "" when none was found */
	int confidence; /* Tesseract's mean word confidence, 0-100 */
	/* The language it was read in: the one asked for, or the one of the script Tesseract's
	 * script detection found (osd.traineddata) when the one asked for does not read that
	 * script and that language is installed. */
	char lang[sizeof(((struct tr_option_word *)0)->text)];
	/* The script found ("Arabic") and its language's Debian package suffix ("ara", "chi-sim")
	 * when neither the language asked for nor an installed one reads it: the text is likely
	 * noise; "" otherwise. */
	char script[32], missing[16];
};

/* The interface table toolfs-ocr.so exports (util/module.c loads it); abi first. Every entry
 * is safe to call from several threads at once. */
#define TR_OCR_ABI 3
struct tr_ocr_api {
	unsigned abi;       /* TR_OCR_ABI */
	void (*warm)(void); /* struct tr_module_head */
	/* 0 when every language of lang ("eng+deu") has its traineddata; else 1 with err naming
	 * the missing one and its Debian package. */
	int (*check)(const char *lang, char *err, size_t err_size);
	/* Recognises width x height 8-bit grey pixels (rows stride bytes apart) scanned at dpi,
	 * in lang or the language of the script it finds (struct tr_ocr_text).
	 * A cached answer for key (NULL: none) is returned without recognising again, and a new
	 * one is cached under it. Returns 0 with *out filled (the caller frees out->text), 1 on
	 * an engine failure (err), 2 when deadline (0: none) passed first or during the
	 * recognition (Tesseract's cancel callback stops it), -1 when out of memory. */
	int (*recognize)(const char *lang, const unsigned char *grey, uint32_t width,
			 uint32_t height, size_t stride, uint32_t dpi, uint64_t deadline,
			 const char *key, struct tr_ocr_text *out, char *err, size_t err_size);
	/* The cached answer for key: 0 with *out filled (a copy), 1 when none. */
	int (*cached)(const char *key, struct tr_ocr_text *out);
	/* Decodes the encoded image src (libvips, shrunk on load to the pixel caps, flattened on
	 * white, grey) and recognises it; returns as recognize. */
	int (*image)(const struct tr_blob *src, const char *lang, uint64_t deadline,
		     const char *key, struct tr_ocr_text *out, char *err, size_t err_size);
};
extern const struct tr_ocr_api tr_ocr_api;

/* --- ocr_tess.c (the module): the entries of tr_ocr_api, on Tesseract --- */

/* tr_ocr_api.check, .recognize and .cached. */
int tr_ocr_check(const char *lang, char *err, size_t err_size);
int tr_ocr_recognize(const char *lang, const unsigned char *grey, uint32_t width, uint32_t height,
		     size_t stride, uint32_t dpi, uint64_t deadline, const char *key,
		     struct tr_ocr_text *out, char *err, size_t err_size);
int tr_ocr_cached(const char *key, struct tr_ocr_text *out);

/* tr_ocr_api.warm (struct tr_module_head): an engine of the default ocr_lang, initialised
 * (its traineddata loaded: 70 ms for eng) and left idle for the next recognition. */
void tr_ocr_warm(void);

/* --- ocr_image.c (the module) --- */

/* tr_ocr_api.image. */
int tr_ocr_image_recognize(const struct tr_blob *src, const char *lang, uint64_t deadline,
			   const char *key, struct tr_ocr_text *out, char *err, size_t err_size);

/* --- ocr.c (the core) --- */

/* The OCR module, loaded on first use; NULL with one sentence in err when it cannot be. */
const struct tr_ocr_api *tr_ocr_load(char *err, size_t err_size);

/* Room for any key tr_ocr_key writes (eight numbers, their separators and a 63-byte ocr_lang). */
#define TR_OCR_KEY_SIZE 256

/* The cache key of a recognition of part (a page number, 0 for an image) of the file st
 * describes (its identity, size, mtime and ctime) in language lang, written to buf. */
void tr_ocr_key(const struct stat *st, uint64_t part, const char *lang, char *buf, size_t size);

/* Records in res->meta.ocr the confidence of page (0: an image) in language lang. Returns 0,
 * -1 when out of memory. */
int tr_ocr_note(struct tr_result *res, uint32_t page, int confidence, const char *lang);

/* ocr=on for an image read that succeeded: appends "--- OCR ---" and the image's text to
 * res->content (or a line saying why there is none) and its confidence to the metadata.
 * A missing language fails res. Returns 0, -1 when out of memory. */
int tr_ocr_image(struct tr_result *res, const struct tr_blob *blob, const struct stat *st,
		 const struct tr_options *opts, uint64_t deadline);

#endif
