/* SPDX-License-Identifier: MIT */
/* ocr_api.c - the interface table toolfs-ocr.so exports. */
#include "ocr.h"

const struct tr_ocr_api tr_ocr_api = {
	.abi = TR_OCR_ABI,
	.warm = tr_ocr_warm,
	.check = tr_ocr_check,
	.recognize = tr_ocr_recognize,
	.cached = tr_ocr_cached,
	.image = tr_ocr_image_recognize,
};
