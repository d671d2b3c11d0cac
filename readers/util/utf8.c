/* SPDX-License-Identifier: MIT */
/* utf8.c - UTF-8 validation, counting and repair; the hot loops work 8 or 16 bytes at a time. */
#include <string.h>

#include "util.h"

/* GCC/Clang generic vectors: SSE2 on x86-64, NEON on arm64, scalar code elsewhere. */
typedef unsigned char tr_u8x16 __attribute__((vector_size(16)));
typedef signed char tr_s8x16 __attribute__((vector_size(16)));

#define HIGH_BITS 0x8080808080808080ULL

/* Sum of the 16 byte lanes of v. */
static uint64_t sum_lanes(tr_u8x16 v)
{
	uint64_t half[2], total = 0;

	memcpy(half, &v, sizeof(half));
	for (int i = 0; i < 2; i++) {
		uint64_t x = half[i];

		x = (x & 0x00FF00FF00FF00FFULL) + ((x >> 8) & 0x00FF00FF00FF00FFULL);
		total += (x * 0x0001000100010001ULL) >> 48;
	}
	return total;
}

uint64_t tr_count_byte(const unsigned char *s, size_t len, unsigned char c)
{
	uint64_t total = 0;
	tr_u8x16 needle = (tr_u8x16){0} + c;

	while (len >= 16) {
		tr_u8x16 acc = {0};
		size_t rounds = len / 16 > 255 ? 255 : len / 16;

		/* Each lane counts up to 255 matches before it is summed. */
		for (size_t i = 0; i < rounds; i++, s += 16) {
			tr_u8x16 v;

			memcpy(&v, s, 16);
			acc -= (tr_u8x16)(v == needle);
		}
		len -= rounds * 16;
		total += sum_lanes(acc);
	}
	for (; len; len--, s++)
		total += *s == c;
	return total;
}

uint64_t tr_utf8_count(const unsigned char *s, size_t len)
{
	uint64_t total = 0;
	/* A code point starts at every byte that is not a continuation byte (0x80-0xBF). */
	tr_s8x16 limit = (tr_s8x16){0} - 65;

	while (len >= 16) {
		tr_u8x16 acc = {0};
		size_t rounds = len / 16 > 255 ? 255 : len / 16;

		for (size_t i = 0; i < rounds; i++, s += 16) {
			tr_s8x16 v;

			memcpy(&v, s, 16);
			acc -= (tr_u8x16)(v > limit);
		}
		len -= rounds * 16;
		total += sum_lanes(acc);
	}
	for (; len; len--, s++)
		total += (*s & 0xC0) != 0x80;
	return total;
}

int tr_utf8_check_seq(const unsigned char *s, size_t len)
{
	unsigned char b = s[0], lo = 0x80, hi = 0xBF;
	int need;

	if (b < 0x80)
		return 1;
	if (b < 0xC2)
		return -1;
	if (b < 0xE0) {
		need = 1;
	} else if (b < 0xF0) {
		need = 2;
		if (b == 0xE0)
			lo = 0xA0;
		else if (b == 0xED)
			hi = 0x9F; /* no surrogates */
	} else if (b < 0xF5) {
		need = 3;
		if (b == 0xF0)
			lo = 0x90;
		else if (b == 0xF4)
			hi = 0x8F; /* nothing past U+10FFFF */
	} else {
		return -1;
	}
	for (int i = 1; i <= need; i++) {
		if ((size_t)i >= len)
			return 0;
		if (s[i] < lo || s[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xBF;
	}
	return need + 1;
}

size_t tr_utf8_valid_len(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		if (len - i >= 8) {
			uint64_t w;

			memcpy(&w, s + i, 8);
			if (!(w & HIGH_BITS)) {
				i += 8;
				continue;
			}
		}
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		int n = tr_utf8_check_seq(s + i, len - i);

		if (n <= 0)
			break;
		i += (size_t)n;
	}
	return i;
}

size_t tr_utf8_prefix(const unsigned char *s, size_t len, uint64_t max_chars, uint64_t max_bytes)
{
	size_t i = 0;
	uint64_t chars = 0;

	/* Continuation bytes at the start belong to no code point (tr_utf8_count counts none). */
	while (i < len && i < max_bytes && (s[i] & 0xC0) == 0x80)
		i++;
	while (i < len && chars < max_chars) {
		size_t j = i + 1;

		while (j < len && (s[j] & 0xC0) == 0x80)
			j++;
		if (j > max_bytes)
			break;
		chars++;
		i = j;
	}
	return i;
}

size_t tr_utf8_advance(const unsigned char *s, size_t len, uint64_t n, uint64_t *passed)
{
	size_t i = 0;
	uint64_t count = 0;

	/* Whole 8-byte ASCII words first: each byte is one code point. */
	while (len - i >= 8 && n - count >= 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		if (w & HIGH_BITS)
			break;
		i += 8;
		count += 8;
	}
	while (i < len) {
		if ((s[i] & 0xC0) != 0x80) {
			if (count == n)
				break;
			count++;
		}
		i++;
	}
	*passed = count;
	return i;
}

int tr_utf8_repair_feed(struct tr_utf8_repair *rep, const unsigned char *s, size_t len,
			tr_utf8_sink sink, void *ctx)
{
	/* Complete a sequence held back from the previous piece, one byte at a time. */
	while (rep->n_pending && len) {
		rep->pending[rep->n_pending++] = *s++;
		len--;
		int n = tr_utf8_check_seq(rep->pending, rep->n_pending);

		if (n > 0) {
			rep->n_pending = 0;
			if (sink(ctx, rep->pending, (size_t)n))
				return -1;
		} else if (n < 0) {
			/* The byte just added broke the sequence: what came before is the maximal
			 * subpart; the byte itself starts afresh. */
			rep->n_pending = 0;
			s--;
			len++;
			if (sink(ctx, (const unsigned char *)TR_UTF8_REPLACEMENT, 3))
				return -1;
		}
	}
	while (len) {
		size_t valid = tr_utf8_valid_len(s, len);

		if (valid) {
			if (sink(ctx, s, valid))
				return -1;
			s += valid;
			len -= valid;
			if (!len)
				break;
		}
		int n = tr_utf8_check_seq(s, len);

		if (n == 0) {
			memcpy(rep->pending, s, len); /* len <= 3 here */
			rep->n_pending = len;
			break;
		}
		/* n < 0: valid_prefix stopped at an invalid sequence. */
		if (sink(ctx, (const unsigned char *)TR_UTF8_REPLACEMENT, 3))
			return -1;
		s += (size_t)-n;
		len -= (size_t)-n;
	}
	return 0;
}

int tr_utf8_repair_flush(struct tr_utf8_repair *rep, tr_utf8_sink sink, void *ctx)
{
	if (!rep->n_pending)
		return 0;
	rep->n_pending = 0;
	return sink(ctx, (const unsigned char *)TR_UTF8_REPLACEMENT, 3);
}
