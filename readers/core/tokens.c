/* SPDX-License-Identifier: MIT */
/* tokens.c - the token estimate and the image prices of include/tr_tokens.h. */
#include <math.h>

#include "tr_tokens.h"

/* The estimate is a linear function of the pairs of adjacent byte classes. o200k_base's
 * pre-tokenizer cuts text where the class changes (a word after a space, capitals starting a
 * word, digits in groups of 3, punctuation runs with the line breaks after them, CJK
 * characters), so counting the class pairs counts its pieces; which pairs repeat says how long
 * and how ordinary they are (a word's inner letters cost little, base64's case changes a lot).
 * Two table loads and an add a byte: a few percent of a text read (bench/tokens.py). */
enum byte_class {
	C_SPACE,
	C_TAB,
	C_NEWLINE,
	C_LOWER,
	C_UPPER,
	C_DIGIT,
	C_PUNCT, /* other ASCII */
	C_BACKSLASH,
	C_CONT,        /* UTF-8 continuation byte */
	C_LEAD2,       /* lead of a 2-byte character: accented Latin, Greek, Cyrillic, ... */
	C_LEAD_E3,     /* U+3000-U+3FFF: CJK punctuation, kana */
	C_LEAD_CJK,    /* U+4000-U+9FFF: CJK ideographs */
	C_LEAD_HANGUL, /* U+A000-U+DFFF: Hangul and others */
	C_LEAD_OTHER,  /* other 3-byte characters (symbols, dashes, quotes), 4-byte ones (emoji) */
	N_CLASSES
};

#define PAIR(a, b) ((a)*N_CLASSES + (b))

static const unsigned char byte_class[256] = {
	[0x00 ... 0x08] = C_PUNCT,
	['\t'] = C_TAB,
	['\n'] = C_NEWLINE,
	[0x0b ... 0x0c] = C_PUNCT,
	['\r'] = C_NEWLINE,
	[0x0e ... 0x1f] = C_PUNCT,
	[' '] = C_SPACE,
	['!' ... '/'] = C_PUNCT,
	['0' ... '9'] = C_DIGIT,
	[':' ... '@'] = C_PUNCT,
	['A' ... 'Z'] = C_UPPER,
	['['] = C_PUNCT,
	['\\'] = C_BACKSLASH,
	[']' ... '`'] = C_PUNCT,
	['a' ... 'z'] = C_LOWER,
	['{' ... 0x7f] = C_PUNCT,
	[0x80 ... 0xbf] = C_CONT,
	[0xc0 ... 0xdf] = C_LEAD2,
	[0xe0 ... 0xe2] = C_LEAD_OTHER,
	[0xe3] = C_LEAD_E3,
	[0xe4 ... 0xe9] = C_LEAD_CJK,
	[0xea ... 0xed] = C_LEAD_HANGUL,
	[0xee ... 0xff] = C_LEAD_OTHER,
};

/* Thousandths of a token per class pair: least squares on the relative error to js-tiktoken's
 * count (tests/sdk/count_tokens.mjs) over tests/token_corpus.py's corpus and this repository's
 * files, raw and line-numbered, pairs with negative weights left out; the pairs inside
 * characters that the corpus has few of (2-byte letters, Hangul, symbols and emoji) are set
 * from their measured cost per character. Unlisted pairs cost nothing. */
static const uint32_t weight[N_CLASSES * N_CLASSES] = {
	[PAIR(C_SPACE, C_LOWER)] = 463,
	[PAIR(C_SPACE, C_DIGIT)] = 1866,
	[PAIR(C_SPACE, C_PUNCT)] = 966,
	[PAIR(C_TAB, C_SPACE)] = 55,
	[PAIR(C_TAB, C_TAB)] = 316,
	[PAIR(C_TAB, C_PUNCT)] = 1023,
	[PAIR(C_NEWLINE, C_SPACE)] = 575,
	[PAIR(C_NEWLINE, C_TAB)] = 347,
	[PAIR(C_NEWLINE, C_PUNCT)] = 777,
	[PAIR(C_LOWER, C_SPACE)] = 251,
	[PAIR(C_LOWER, C_NEWLINE)] = 2735,
	[PAIR(C_LOWER, C_LOWER)] = 76,
	[PAIR(C_LOWER, C_DIGIT)] = 1048,
	[PAIR(C_LOWER, C_PUNCT)] = 713,
	[PAIR(C_LOWER, C_BACKSLASH)] = 862,
	[PAIR(C_LOWER, C_LEAD2)] = 6,
	[PAIR(C_UPPER, C_LOWER)] = 641,
	[PAIR(C_UPPER, C_UPPER)] = 242,
	[PAIR(C_UPPER, C_DIGIT)] = 3049,
	[PAIR(C_UPPER, C_PUNCT)] = 490,
	[PAIR(C_DIGIT, C_SPACE)] = 178,
	[PAIR(C_DIGIT, C_TAB)] = 1255,
	[PAIR(C_DIGIT, C_NEWLINE)] = 1264,
	[PAIR(C_DIGIT, C_LOWER)] = 1723,
	[PAIR(C_DIGIT, C_UPPER)] = 1769,
	[PAIR(C_DIGIT, C_PUNCT)] = 568,
	[PAIR(C_DIGIT, C_BACKSLASH)] = 128,
	[PAIR(C_PUNCT, C_SPACE)] = 450,
	[PAIR(C_PUNCT, C_TAB)] = 105,
	[PAIR(C_PUNCT, C_NEWLINE)] = 339,
	[PAIR(C_PUNCT, C_LOWER)] = 571,
	[PAIR(C_PUNCT, C_UPPER)] = 599,
	[PAIR(C_PUNCT, C_DIGIT)] = 1906,
	[PAIR(C_PUNCT, C_PUNCT)] = 55,
	[PAIR(C_PUNCT, C_BACKSLASH)] = 1036,
	[PAIR(C_PUNCT, C_LEAD_CJK)] = 82,
	[PAIR(C_BACKSLASH, C_NEWLINE)] = 2262,
	[PAIR(C_BACKSLASH, C_DIGIT)] = 837,
	[PAIR(C_BACKSLASH, C_PUNCT)] = 590,
	[PAIR(C_CONT, C_SPACE)] = 1170,
	[PAIR(C_CONT, C_LOWER)] = 1,
	[PAIR(C_CONT, C_BACKSLASH)] = 25,
	[PAIR(C_CONT, C_CONT)] = 18,
	[PAIR(C_CONT, C_LEAD_OTHER)] = 5,
	[PAIR(C_LEAD2, C_CONT)] = 450,
	[PAIR(C_LEAD_E3, C_CONT)] = 649,
	[PAIR(C_LEAD_CJK, C_CONT)] = 485,
	[PAIR(C_LEAD_HANGUL, C_CONT)] = 900,
	[PAIR(C_LEAD_OTHER, C_CONT)] = 800,
};

uint64_t tr_tokens_weigh(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	unsigned prev = PAIR(C_NEWLINE, 0); /* the text starts as a line does */
	uint64_t sum = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned c = byte_class[s[i]];

		sum += weight[prev + c];
		prev = PAIR(c, 0);
	}
	return sum;
}

uint64_t tr_tokens_round(uint64_t milli, size_t len)
{
	uint64_t sum = (milli + 500) / 1000;

	if (!len)
		return 0;
	return sum < 1 ? 1 : sum > len ? len : sum;
}

uint64_t tr_tokens_estimate(const char *s, size_t len)
{
	return tr_tokens_round(tr_tokens_weigh(s, len), len);
}

uint64_t tr_tokens_image_anthropic(uint32_t width, uint32_t height)
{
	return ((uint64_t)width * height + 749) / 750;
}

uint64_t tr_tokens_image_openai(uint32_t width, uint32_t height)
{
	double w = width, h = height, scale;

	if (!width || !height)
		return 0;
	/* fit within 2048 x 2048, then the shorter side down to 768 */
	scale = 2048.0 / (w > h ? w : h);
	if (scale < 1)
		w *= scale, h *= scale;
	scale = 768.0 / (w < h ? w : h);
	if (scale < 1)
		w *= scale, h *= scale;
	return 85 + 170 * (uint64_t)(ceil(w / 512) * ceil(h / 512));
}
