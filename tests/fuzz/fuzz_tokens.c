/* SPDX-License-Identifier: MIT */
/* fuzz_tokens.c - libFuzzer target for the token estimate (readers/core/tokens.c), which weighs
 * every text read: an image size of 8 bytes (width, height, little-endian), then any bytes
 * (invalid UTF-8 and NULs included). The estimate must be the weight rounded, between 1 and
 * the length for non-empty text; the weights of the pieces cut after each line break ('\n' or
 * '\r', which a line starts after) must add up to the whole, as the text reader's max_tokens
 * sums them; no pair of bytes may weigh 4 tokens. The image prices must match their formulas
 * worked here in integers: Anthropic's ceil(w * h / 750), OpenAI's 85 + 170 a 512-pixel tile
 * of at most 2048 x 768 (8 tiles). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "tr_tokens.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input params = {data, size < 8 ? size : 8};
	uint32_t width = fuzz_u32(&params), height = fuzz_u32(&params);
	const char *text = (const char *)data + (size < 8 ? size : 8);
	size_t len = size < 8 ? 0 : size - 8;
	/* A copy of exactly len bytes: ASan catches a read past the text. */
	char *copy = malloc(len ? len : 1);
	uint64_t whole, sum = 0, estimate, anthropic, openai;
	size_t start = 0;

	if (!copy)
		return 0;
	memcpy(copy, text, len);
	whole = tr_tokens_weigh(copy, len);
	estimate = tr_tokens_estimate(copy, len);
	if (estimate != tr_tokens_round(whole, len))
		fuzz_fail("estimate %llu is not the weight %llu rounded",
			  (unsigned long long)estimate, (unsigned long long)whole);
	if (len ? estimate < 1 || estimate > len : estimate != 0)
		fuzz_fail("estimate %llu for %zu bytes", (unsigned long long)estimate, len);
	if (whole / 4000 > len)
		fuzz_fail("weight %llu for %zu bytes", (unsigned long long)whole, len);
	for (size_t i = 0; i < len; i++) {
		if (copy[i] != '\n' && copy[i] != '\r' && i + 1 < len)
			continue;
		sum += tr_tokens_weigh(copy + start, i + 1 - start);
		start = i + 1;
	}
	if (sum != whole)
		fuzz_fail("lines weigh %llu, the whole %llu", (unsigned long long)sum,
			  (unsigned long long)whole);
	free(copy);

	anthropic = tr_tokens_image_anthropic(width, height);
	if (anthropic != ((uint64_t)width * height + 749) / 750 ||
	    (anthropic * 750 < (uint64_t)width * height ||
	     (anthropic && (anthropic - 1) * 750 >= (uint64_t)width * height)))
		fuzz_fail("Anthropic %ux%u: %llu", width, height, (unsigned long long)anthropic);
	openai = tr_tokens_image_openai(width, height);
	if (!width || !height ? openai != 0
			      : openai < 85 + 170 || openai > 85 + 170 * 8 || (openai - 85) % 170)
		fuzz_fail("OpenAI %ux%u: %llu", width, height, (unsigned long long)openai);
	return 0;
}
