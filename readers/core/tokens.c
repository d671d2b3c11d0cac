/* tokens.c - the token estimate and the image prices of include/tr_tokens.h. */
#include <math.h>
#include <stdbool.h>

#include "tr_tokens.h"

/* Byte classes, after the pieces of o200k_base's pre-tokenizer (its regex splits text into
 * words, digit groups of at most 3, punctuation runs and whitespace before BPE merges each). */
enum byte_class { C_SPACE, C_NEWLINE, C_LOWER, C_UPPER, C_DIGIT, C_PUNCT, C_HIGH };

static enum byte_class class_of(unsigned char c)
{
	if (c >= 'a' && c <= 'z')
		return C_LOWER;
	if (c >= 'A' && c <= 'Z')
		return C_UPPER;
	if (c >= '0' && c <= '9')
		return C_DIGIT;
	if (c == ' ' || c == '\t')
		return C_SPACE;
	if (c == '\n' || c == '\r')
		return C_NEWLINE;
	if (c >= 0x80)
		return C_HIGH;
	return C_PUNCT;
}

/* The features the estimate weighs (tests/token_corpus.py's corpus and this repository's files,
 * raw and line-numbered, fitted by least squares on the relative error to js-tiktoken's counts). */
enum feature {
	F_WORD_SHORT,   /* words of 1-4 letters */
	F_WORD_MID,     /* words of 5-8 letters */
	F_WORD_LONG,    /* words over 8 letters */
	F_LONG_LETTERS, /* letters past the 8th of long words */
	F_DIGIT_GROUPS, /* groups of up to 3 digits */
	F_PUNCT_RUNS,   /* runs of punctuation */
	F_PUNCT_GLUED,  /* one punctuation character before a word ("_value", ".get") */
	F_BACKSLASHES,  /* backslashes in punctuation runs (escapes: "\\\"" is two pieces) */
	F_BREAKS,       /* runs of whitespace holding a newline */
	F_SPACE_RUNS,   /* other whitespace runs longer than one space */
	F_TAB_GLUED,    /* whitespace runs ending in a tab before a word */
	F_CJK,          /* CJK ideographs */
	F_KANA,         /* kana and hangul */
	F_OTHER_HIGH,   /* other non-ASCII characters */
	F_BLOB_CHARS,   /* characters of base64-like runs (BPE merges little of them) */
	F_HEX_CHARS,    /* characters of long hexadecimal runs (digests) */
	N_FEATURES
};

/* Base64 and hexadecimal runs shorter than these are words and numbers. */
#define BLOB_MIN 24
#define HEX_MIN 16

/* The length of the base64-like run at s[0..len) (letters of both cases and digits, or
 * hexadecimal digits and letters) when it is one (*hex set for hexadecimal), else 0; *end is
 * set to the length of the run of letters, digits, '+', '/' and '=' scanned. */
static size_t blob_length(const unsigned char *s, size_t len, bool *hex, size_t *end)
{
	size_t n = 0;
	bool upper = false, lower = false, digit = false, not_hex = false;

	for (; n < len; n++) {
		unsigned char c = s[n];

		if (c >= 'a' && c <= 'z')
			lower = true, not_hex |= c > 'f';
		else if (c >= 'A' && c <= 'Z')
			upper = true;
		else if (c >= '0' && c <= '9')
			digit = true;
		else if (c != '+' && c != '/' && c != '=')
			break;
	}
	*end = n;
	*hex = digit && lower && !upper && !not_hex && n >= HEX_MIN;
	return *hex || (upper && lower && digit && n >= BLOB_MIN) ? n : 0;
}

/* Counts the features of s[0..len) into f[N_FEATURES] (added to). */
static void count_features(const unsigned char *s, size_t len, uint64_t *f)
{
	size_t i = 0, checked = 0; /* s[..checked) is known not to start a blob */

	while (i < len) {
		size_t start = i, upper = 0, lower = 0, n;
		enum byte_class cls = class_of(s[i]);

		if (i >= checked && (cls == C_LOWER || cls == C_UPPER || cls == C_DIGIT)) {
			bool hex;
			size_t end, blob = blob_length(s + i, len - i, &hex, &end);

			if (blob) {
				f[hex ? F_HEX_CHARS : F_BLOB_CHARS] += blob;
				i += blob;
				continue;
			}
			checked = i + end;
		}
		switch (cls) {
		case C_LOWER:
		case C_UPPER:
			/* a word is capitals then small letters ("Value", "HTTPServer"), or capitals
			 * alone ("JSON"): "getValue" is two */
			for (; i < len && class_of(s[i]) == C_UPPER; i++)
				upper++;
			for (; i < len && class_of(s[i]) == C_LOWER; i++)
				lower++;
			n = upper + lower;
			f[n <= 4 ? F_WORD_SHORT : n <= 8 ? F_WORD_MID : F_WORD_LONG]++;
			if (n > 8)
				f[F_LONG_LETTERS] += n - 8;
			break;
		case C_DIGIT:
			while (i < len && class_of(s[i]) == C_DIGIT)
				i++;
			f[F_DIGIT_GROUPS] += (i - start + 2) / 3;
			break;
		case C_PUNCT:
			for (; i < len && class_of(s[i]) == C_PUNCT; i++)
				f[F_BACKSLASHES] += s[i] == '\\';
			/* " \"name" is two pieces, "(name" one */
			if (i - start == 1 && i < len &&
			    (class_of(s[i]) == C_LOWER || class_of(s[i]) == C_UPPER) &&
			    (start == 0 || class_of(s[start - 1]) != C_SPACE)) {
				f[F_PUNCT_GLUED]++;
				break;
			}
			f[F_PUNCT_RUNS]++;
			/* the run takes the line breaks after it ("):\n" is one piece) */
			while (i < len && class_of(s[i]) == C_NEWLINE)
				i++;
			break;
		case C_SPACE:
			while (i < len && class_of(s[i]) == C_SPACE)
				i++;
			if (i < len && class_of(s[i]) == C_NEWLINE)
				break; /* taken by the newline's run */
			/* the last space or tab goes with the next word, but not with a number:
			 * "     1\t" is "    ", " ", "1", "\t" */
			f[F_SPACE_RUNS] += (i - start > 1) + (i == len || class_of(s[i]) == C_DIGIT);
			if (s[i - 1] == '\t' && i < len && class_of(s[i]) != C_DIGIT)
				f[F_TAB_GLUED]++;
			break;
		case C_NEWLINE:
			while (i < len && class_of(s[i]) == C_NEWLINE)
				i++;
			f[F_BREAKS]++;
			break;
		case C_HIGH:
			if (s[i] >= 0xf0)
				n = 4;
			else if (s[i] >= 0xe0)
				n = 3;
			else
				n = 2;
			if (n == 3 && s[i] == 0xe3 && i + 1 < len && s[i + 1] == 0x80)
				f[F_PUNCT_RUNS]++; /* CJK punctuation */
			else if (n == 3 && s[i] == 0xe3 && i + 1 < len && s[i + 1] <= 0x83)
				f[F_KANA]++;
			else if (n == 3 && s[i] >= 0xe3 && s[i] <= 0xe9)
				f[F_CJK]++;
			else if (n == 3 && s[i] >= 0xea && s[i] <= 0xed)
				f[F_KANA]++;
			else
				f[F_OTHER_HIGH]++;
			i++;
			while (i < len && n-- > 1 && (s[i] & 0xc0) == 0x80)
				i++;
			break;
		}
	}
}

/* Tokens per feature, in thousandths, in enum feature's order. */
static const uint32_t weight[N_FEATURES] = {
	[F_WORD_SHORT] = 908, [F_WORD_MID] = 778,     [F_WORD_LONG] = 1432, [F_LONG_LETTERS] = 300,
	[F_DIGIT_GROUPS] = 868, [F_PUNCT_RUNS] = 1120, [F_PUNCT_GLUED] = 379, [F_BACKSLASHES] = 824,
	[F_BREAKS] = 2540,     [F_SPACE_RUNS] = 1099, [F_TAB_GLUED] = 360,  [F_CJK] = 453,
	[F_KANA] = 639,        [F_OTHER_HIGH] = 500,  [F_BLOB_CHARS] = 671, [F_HEX_CHARS] = 580,
};

uint64_t tr_tokens_weigh(const char *s, size_t len)
{
	uint64_t f[N_FEATURES] = {0}, sum = 0;

	count_features((const unsigned char *)s, len, f);
	for (int i = 0; i < N_FEATURES; i++)
		sum += f[i] * weight[i];
	return sum;
}

uint64_t tr_tokens_estimate(const char *s, size_t len)
{
	uint64_t sum;

	if (!len)
		return 0;
	sum = (tr_tokens_weigh(s, len) + 500) / 1000;
	return sum < 1 ? 1 : sum > len ? len : sum;
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
