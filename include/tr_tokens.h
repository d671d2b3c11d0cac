/* SPDX-License-Identifier: MIT */
/* tr_tokens.h - what a result costs a model: an estimate of text's tokens in o200k_base (the
 * tokenizer of current OpenAI models, the reference of docs/SPEC.md §2) and each provider's
 * published price of an image in tokens. */
#ifndef TR_TOKENS_H
#define TR_TOKENS_H

#include <stddef.h>
#include <stdint.h>

/* The tokenizer the estimate follows, as metadata.tokens.tokenizer names it. */
#define TR_TOKENIZER "o200k_base"

/* The o200k_base tokens of the UTF-8 text s[0..len), estimated in one pass from the pieces its
 * pre-tokenizer splits (words by length and case, digit groups, punctuation runs, whitespace,
 * CJK characters); within 10% of the exact count on the corpus of tests/token_corpus.py and this
 * repository's files. Never more than len, never 0 for non-empty text. */
uint64_t tr_tokens_estimate(const char *s, size_t len);

/* The same estimate in thousandths of a token, unrounded and unclamped: pieces of a text
 * weighed one by one add up to the whole (the text reader's max_tokens sums lines). */
uint64_t tr_tokens_weigh(const char *s, size_t len);

/* The estimate of a text of len bytes that weighs milli thousandths: tr_tokens_estimate(s, len)
 * is tr_tokens_round(tr_tokens_weigh(s, len), len). */
uint64_t tr_tokens_round(uint64_t milli, size_t len);

/* What an image of width x height pixels costs as a model input: Anthropic's formula
 * (width * height / 750, rounded up), and OpenAI's tile formula for high detail (fit within
 * 2048x2048, then the shorter side to 768; 85 + 170 per 512-pixel tile). */
uint64_t tr_tokens_image_anthropic(uint32_t width, uint32_t height);
uint64_t tr_tokens_image_openai(uint32_t width, uint32_t height);

#endif
