/* SPDX-License-Identifier: MIT */
/* sha256.c - SHA-256 (FIPS 180-4) as hex digits: one-shot over a buffer, or incremental. The
 * x86 SHA extensions when the CPU has them, else portable C. Not OpenSSL's: libcrypto costs a
 * process about 2 ms of loader time and constructors at exec (docs/PERFORMANCE.md, issue 29),
 * more than toolfs-read of a short file takes otherwise, and SHA-NI runs at the same speed
 * whichever code issues it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHA_NI 1
#endif

#include "util.h"

struct tr_sha256 {
	uint32_t state[8];
	uint64_t total; /* bytes hashed so far */
	unsigned char block[64];
	size_t filled; /* bytes of block held */
};

static const uint32_t round_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static const uint32_t initial_state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

static inline uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t load_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void blocks_portable(uint32_t state[8], const unsigned char *p, size_t blocks)
{
	for (; blocks > 0; blocks--, p += 64) {
		uint32_t w[64], s[8];

		for (int t = 0; t < 16; t++)
			w[t] = load_be32(p + 4 * t);
		for (int t = 16; t < 64; t++) {
			uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
			uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);

			w[t] = w[t - 16] + s0 + w[t - 7] + s1;
		}
		memcpy(s, state, sizeof(s));
		for (int t = 0; t < 64; t++) {
			uint32_t e1 = ror(s[4], 6) ^ ror(s[4], 11) ^ ror(s[4], 25);
			uint32_t ch = (s[4] & s[5]) ^ (~s[4] & s[6]);
			uint32_t t1 = s[7] + e1 + ch + round_k[t] + w[t];
			uint32_t e0 = ror(s[0], 2) ^ ror(s[0], 13) ^ ror(s[0], 22);
			uint32_t maj = (s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]);

			memmove(s + 1, s, 7 * sizeof(s[0]));
			s[4] += t1;
			s[0] = t1 + e0 + maj;
		}
		for (int i = 0; i < 8; i++)
			state[i] += s[i];
	}
}

#if HAVE_SHA_NI
/* The SHA extensions' form of the rounds (Intel's "New Instructions Supporting the Secure Hash
 * Algorithm on Intel Architecture Processors"): the state as ABEF and CDGH, four rounds per
 * pair of sha256rnds2, the schedule by sha256msg1/msg2 on the four latest message words. */
__attribute__((target("sha,sse4.1"))) static void blocks_sha_ni(uint32_t state[8],
								const unsigned char *p,
								size_t blocks)
{
	const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i tmp = _mm_loadu_si128((const __m128i *)&state[0]);
	__m128i state1 = _mm_loadu_si128((const __m128i *)&state[4]);
	__m128i state0;

	tmp = _mm_shuffle_epi32(tmp, 0xB1);          /* CDAB */
	state1 = _mm_shuffle_epi32(state1, 0x1B);    /* EFGH */
	state0 = _mm_alignr_epi8(tmp, state1, 8);    /* ABEF */
	state1 = _mm_blend_epi16(state1, tmp, 0xF0); /* CDGH */

	for (; blocks > 0; blocks--, p += 64) {
		__m128i abef = state0, cdgh = state1, msg[4];

		for (int i = 0; i < 4; i++)
			msg[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)),
						  swap);
			/* Group g's four rounds take W[4g..4g+3] from msg[g & 3]; the schedule of later
		 * groups is done in their shadow, as Intel's reference orders it: sha256msg1 two
		 * groups ahead (W[t-16] + s0(W[t-15])), then W[t-7..t-4] and sha256msg2 (which adds
		 * s1(W[t-2])) one group ahead. */
#pragma GCC unroll 16
		for (int g = 0; g < 16; g++) {
			__m128i m = _mm_add_epi32(
				msg[g & 3], _mm_loadu_si128((const __m128i *)&round_k[4 * g]));

			state1 = _mm_sha256rnds2_epu32(state1, state0, m);
			if (g >= 3 && g <= 14) {
				__m128i w7 = _mm_alignr_epi8(msg[g & 3], msg[(g - 1) & 3], 4);

				msg[(g + 1) & 3] = _mm_sha256msg2_epu32(
					_mm_add_epi32(msg[(g + 1) & 3], w7), msg[g & 3]);
			}
			state0 = _mm_sha256rnds2_epu32(state0, state1, _mm_shuffle_epi32(m, 0x0E));
			if (g >= 1 && g <= 12)
				msg[(g - 1) & 3] = _mm_sha256msg1_epu32(msg[(g - 1) & 3],
									msg[g & 3]);
		}
		state0 = _mm_add_epi32(state0, abef);
		state1 = _mm_add_epi32(state1, cdgh);
	}

	tmp = _mm_shuffle_epi32(state0, 0x1B);       /* FEBA */
	state1 = _mm_shuffle_epi32(state1, 0xB1);    /* DCHG */
	state0 = _mm_blend_epi16(tmp, state1, 0xF0); /* DCBA */
	state1 = _mm_alignr_epi8(state1, tmp, 8);    /* ABEF */
	_mm_storeu_si128((__m128i *)&state[0], state0);
	_mm_storeu_si128((__m128i *)&state[4], state1);
}

/* CPUID itself: clang 14's __builtin_cpu_supports does not know "sha". Leaf 7's EBX bit 29 is
 * SHA, leaf 1's ECX bit 19 SSE4.1 (Intel SDM vol. 2A, CPUID). */
static bool cpu_has_sha_ni(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1))
		return false;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
}
#endif

/* SHA-NI hashes about 2 GB/s from the L2 cache, but its loads come one block after another, so
 * from memory it waits on each: 44 ms for 50 MB on the 2-core bench machine against 25 ms. Asking
 * for the next piece while this one is hashed brings that to 29 ms. */
enum { PREFETCH_STEP = 16 << 10 };

static void prefetch_range(const unsigned char *p, size_t len)
{
	for (size_t at = 0; at < len; at += 64)
		__builtin_prefetch(p + at, 0, 3);
}

#if HAVE_SHA_NI
static int sha_ni = -1; /* -1 not asked yet, 0 portable, 1 the SHA extensions */
#endif

void tr_sha256_use_portable(bool on)
{
#if HAVE_SHA_NI
	sha_ni = on ? 0 : cpu_has_sha_ni();
#else
	(void)on;
#endif
}

/* Hashes whole blocks of p[0..blocks*64), the next piece prefetched while one is hashed. */
static void hash_blocks(uint32_t state[8], const unsigned char *p, size_t blocks)
{
#if HAVE_SHA_NI
	/* Benign race: every thread computes the same answer. */
	if (sha_ni < 0)
		sha_ni = cpu_has_sha_ni();
#endif
	while (blocks > 0) {
		size_t step = blocks < PREFETCH_STEP / 64 ? blocks : PREFETCH_STEP / 64;
		size_t rest = (blocks - step) * 64;

		prefetch_range(p + step * 64, rest < PREFETCH_STEP ? rest : PREFETCH_STEP);
#if HAVE_SHA_NI
		if (sha_ni)
			blocks_sha_ni(state, p, step);
		else
#endif
			blocks_portable(state, p, step);
		p += step * 64;
		blocks -= step;
	}
}

static void ctx_init(struct tr_sha256 *ctx)
{
	memcpy(ctx->state, initial_state, sizeof(initial_state));
	ctx->total = 0;
	ctx->filled = 0;
}

static void ctx_update(struct tr_sha256 *ctx, const unsigned char *p, size_t len)
{
	ctx->total += len;
	if (ctx->filled) {
		size_t take = 64 - ctx->filled < len ? 64 - ctx->filled : len;

		memcpy(ctx->block + ctx->filled, p, take);
		ctx->filled += take;
		p += take;
		len -= take;
		if (ctx->filled < 64)
			return;
		hash_blocks(ctx->state, ctx->block, 1);
		ctx->filled = 0;
	}
	hash_blocks(ctx->state, p, len / 64);
	p += len / 64 * 64;
	len %= 64;
	memcpy(ctx->block, p, len);
	ctx->filled = len;
}

static void ctx_final(struct tr_sha256 *ctx, unsigned char digest[32])
{
	uint64_t bits = ctx->total * 8;
	unsigned char pad[72] = {0x80};
	size_t pad_len = (ctx->filled < 56 ? 56 : 120) - ctx->filled;

	for (int i = 0; i < 8; i++)
		pad[pad_len + i] = (unsigned char)(bits >> (56 - 8 * i));
	ctx_update(ctx, pad, pad_len + 8);
	for (int i = 0; i < 8; i++) {
		digest[4 * i] = (unsigned char)(ctx->state[i] >> 24);
		digest[4 * i + 1] = (unsigned char)(ctx->state[i] >> 16);
		digest[4 * i + 2] = (unsigned char)(ctx->state[i] >> 8);
		digest[4 * i + 3] = (unsigned char)ctx->state[i];
	}
}

static void to_hex(const unsigned char *digest, unsigned len, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < len; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 15];
	}
	hex[2 * len] = '\0';
}

struct tr_sha256 *tr_sha256_new(void)
{
	struct tr_sha256 *ctx = malloc(sizeof(*ctx));

	if (ctx)
		ctx_init(ctx);
	return ctx;
}

void tr_sha256_update(struct tr_sha256 *ctx, const void *data, size_t len)
{
	if (ctx && len)
		ctx_update(ctx, data, len);
}

void tr_sha256_finish(struct tr_sha256 *ctx, char *hex)
{
	unsigned char digest[32];

	if (!ctx)
		return;
	ctx_final(ctx, digest);
	to_hex(digest, sizeof(digest), hex);
	free(ctx);
}

void tr_sha256_free(struct tr_sha256 *ctx)
{
	free(ctx);
}

void tr_sha256_hex(const void *data, size_t len, char *hex)
{
	unsigned char digest[32];

	tr_sha256_raw(data, len, digest);
	to_hex(digest, sizeof(digest), hex);
}

bool tr_sha256_raw(const void *data, size_t len, unsigned char digest[32])
{
	struct tr_sha256 ctx;

	ctx_init(&ctx);
	if (len)
		ctx_update(&ctx, data, len);
	ctx_final(&ctx, digest);
	return true;
}
