/* SPDX-License-Identifier: MIT */
/* base64.c - base64 of whole 3-byte groups: a two-characters-per-lookup table, AVX2, AVX-512 VBMI. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_X86_PATHS 1
#endif

/* pairs[v] is the encoding of the 12-bit value v: a 3-byte group costs two lookups. */
static char b64_pairs[4096][2];
static bool path_usable[TR_BASE64_PATHS];
static enum tr_base64_path best_path;
/* vbmi_spread[4k..4k+3] are the offsets of group k's bytes b, a, c, b in a 48-byte block. */
static unsigned char vbmi_spread[64];
static pthread_once_t b64_once = PTHREAD_ONCE_INIT;
static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

#ifdef HAVE_X86_PATHS
/* The CPU having an instruction set is not enough: the kernel must also save and restore its
 * registers (XCR0), and a virtual CPU such as valgrind's may offer AVX2 and not AVX-512. So ask
 * CPUID and XGETBV themselves rather than trust the compiler's model of the CPU. */
static void detect_x86_paths(void)
{
	unsigned a, b, c, d, max_leaf, leaf7_b, leaf7_c;
	uint32_t xcr0_lo, xcr0_hi;

	if (!__get_cpuid(0, &max_leaf, &b, &c, &d) || max_leaf < 7)
		return;
	__cpuid(1, a, b, c, d);
	if (!(c & bit_OSXSAVE) || !(c & bit_AVX))
		return;
	__asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
	(void)xcr0_hi;
	if ((xcr0_lo & 0x06) != 0x06) /* SSE and AVX state */
		return;
	__cpuid_count(7, 0, a, leaf7_b, leaf7_c, d);
	path_usable[TR_BASE64_AVX2] = (leaf7_b & bit_AVX2) != 0;
	/* Opmask and both halves of the 32 zmm registers, besides the AVX state. */
	if ((xcr0_lo & 0xe6) != 0xe6)
		return;
	path_usable[TR_BASE64_AVX512VBMI] = (leaf7_b & bit_AVX512F) && (leaf7_b & bit_AVX512BW) &&
					    (leaf7_c & bit_AVX512VBMI);
}
#endif

static void b64_init(void)
{
	for (unsigned v = 0; v < 4096; v++) {
		b64_pairs[v][0] = b64_alphabet[v >> 6];
		b64_pairs[v][1] = b64_alphabet[v & 63];
	}
	for (int k = 0; k < 16; k++) {
		vbmi_spread[4 * k + 0] = (unsigned char)(3 * k + 1);
		vbmi_spread[4 * k + 1] = (unsigned char)(3 * k + 0);
		vbmi_spread[4 * k + 2] = (unsigned char)(3 * k + 2);
		vbmi_spread[4 * k + 3] = (unsigned char)(3 * k + 1);
	}
	path_usable[TR_BASE64_SCALAR] = true;
#ifdef HAVE_X86_PATHS
	detect_x86_paths();
#endif
	for (int p = 0; p < TR_BASE64_PATHS; p++) {
		if (path_usable[p])
			best_path = (enum tr_base64_path)p;
	}
}

static void encode_scalar(const unsigned char *in, size_t groups, unsigned char *out)
{
	for (; groups > 0; groups--, in += 3, out += 4) {
		uint32_t v = (uint32_t)in[0] << 16 | (uint32_t)in[1] << 8 | in[2];

		memcpy(out, b64_pairs[v >> 12], 2);
		memcpy(out + 2, b64_pairs[v & 0xfff], 2);
	}
}

#ifdef HAVE_X86_PATHS
/* 24 input bytes -> 32 characters per step, after Wojciech Muła's and Daniel Lemire's method:
 * each 128-bit lane takes 12 bytes, a shuffle spreads every group over a 32-bit word, two
 * multiplies move the four 6-bit fields into separate bytes, and a 16-entry table adds the
 * offset of each field's alphabet range. Reads 28 bytes per step (two 16-byte loads). */
__attribute__((target("avx2"))) static size_t encode_avx2(const unsigned char *in, size_t groups,
							  unsigned char *out)
{
	const __m256i spread = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,
						1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
	const __m256i offsets = _mm256_setr_epi8(
		'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
		'0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0, 'a' - 26, '0' - 52,
		'0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
		'0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
	size_t done = 0;

	/* 8 groups (24 bytes) per step; the loads reach 4 bytes further, so stop early enough. */
	while (groups - done >= 10) {
		const unsigned char *p = in + 3 * done;
		__m256i v = _mm256_loadu2_m128i((const __m128i *)(p + 12), (const __m128i *)p);
		__m256i hi, lo, idx, res, lt26;

		v = _mm256_shuffle_epi8(v, spread);
		hi = _mm256_mulhi_epu16(_mm256_and_si256(v, _mm256_set1_epi32(0x0fc0fc00)),
					_mm256_set1_epi32(0x04000040));
		lo = _mm256_mullo_epi16(_mm256_and_si256(v, _mm256_set1_epi32(0x003f03f0)),
					_mm256_set1_epi32(0x01000010));
		idx = _mm256_or_si256(hi, lo);
		/* Table index: 0 for 0..25, 1..12 for 52..63 (saturating idx - 51), 13 for 26..51. */
		res = _mm256_subs_epu8(idx, _mm256_set1_epi8(51));
		lt26 = _mm256_cmpgt_epi8(_mm256_set1_epi8(26), idx);
		res = _mm256_or_si256(res, _mm256_and_si256(lt26, _mm256_set1_epi8(13)));
		res = _mm256_add_epi8(_mm256_shuffle_epi8(offsets, res), idx);
		_mm256_storeu_si256((__m256i *)(out + 4 * done), res);
		done += 8;
	}
	return done;
}

#define VBMI_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi")))

/* The 16 groups of one 48-byte block (in the low 48 bytes of block) as 64 characters.
 *
 * vpermb gives group k's bytes a, b, c the 32-bit word k as b, a, c, b (lowest byte first):
 * its low half is then a:b and its high half b:c as big-endian 16-bit numbers, and each
 * character's 6 bits lie whole in one of them: a >> 2 at bit 10, (a:b) >> 4 at bit 4,
 * (b:c) >> 6 at bit 22, c at bit 16. vpmultishiftqb copies the 8 bits at such an offset of its
 * 64-bit word into each byte; vpermb over the 64-character alphabet then ignores the upper two
 * bits, so no mask is needed. */
VBMI_TARGET static inline __m512i encode_block_vbmi(__m512i block, __m512i spread, __m512i shifts,
						    __m512i alphabet)
{
	__m512i words = _mm512_permutexvar_epi8(spread, block);
	__m512i fields = _mm512_multishift_epi64_epi8(shifts, words);

	return _mm512_permutexvar_epi8(fields, alphabet);
}

/* 48 input bytes -> 64 characters per block, four blocks per step. A block is read with one
 * 64-byte load (faster here than a masked one: 19.5 against 14.3 GB/s over a 19 MiB blob), so
 * the steps stop while 16 bytes beyond the last block remain; the tail takes masked loads and
 * stores, which neither read nor write a byte outside the groups. */
VBMI_TARGET static size_t encode_avx512vbmi(const unsigned char *in, size_t groups,
					    unsigned char *out)
{
	__m512i spread = _mm512_loadu_si512(vbmi_spread), shifts, alphabet;
	size_t done = 0;

	/* Bit offsets of the four characters in the first word, then the same + 32 in the second. */
	shifts = _mm512_set1_epi64(0x3036242a1016040aLL);
	alphabet = _mm512_loadu_si512(b64_alphabet);

	while (groups - done >= 64 + 6) { /* 6 groups >= the 16 bytes past the last block */
		const unsigned char *p = in + 3 * done;
		unsigned char *q = out + 4 * done;
		__m512i b0 = _mm512_loadu_si512(p);
		__m512i b1 = _mm512_loadu_si512(p + 48);
		__m512i b2 = _mm512_loadu_si512(p + 96);
		__m512i b3 = _mm512_loadu_si512(p + 144);

		_mm512_storeu_si512(q, encode_block_vbmi(b0, spread, shifts, alphabet));
		_mm512_storeu_si512(q + 64, encode_block_vbmi(b1, spread, shifts, alphabet));
		_mm512_storeu_si512(q + 128, encode_block_vbmi(b2, spread, shifts, alphabet));
		_mm512_storeu_si512(q + 192, encode_block_vbmi(b3, spread, shifts, alphabet));
		done += 64;
	}
	while (done < groups) {
		size_t n = groups - done < 16 ? groups - done : 16;
		__mmask64 load = (1ULL << (3 * n)) - 1;
		__mmask64 store = n == 16 ? ~0ULL : (1ULL << (4 * n)) - 1;
		__m512i b = _mm512_maskz_loadu_epi8(load, in + 3 * done);

		_mm512_mask_storeu_epi8(out + 4 * done, store,
					encode_block_vbmi(b, spread, shifts, alphabet));
		done += n;
	}
	return done;
}
#endif

int tr_base64_path_usable(enum tr_base64_path path)
{
	pthread_once(&b64_once, b64_init);
	return (unsigned)path < TR_BASE64_PATHS && path_usable[path];
}

void tr_base64_groups_path(enum tr_base64_path path, const unsigned char *in, size_t groups,
			   unsigned char *out)
{
	size_t done = 0;

	if (!tr_base64_path_usable(path))
		path = TR_BASE64_SCALAR;
	switch (path) {
#ifdef HAVE_X86_PATHS
	case TR_BASE64_AVX512VBMI: done = encode_avx512vbmi(in, groups, out); break;
	case TR_BASE64_AVX2: done = encode_avx2(in, groups, out); break;
#endif
	default: break;
	}
	encode_scalar(in + 3 * done, groups - done, out + 4 * done);
}

void tr_base64_groups(const unsigned char *in, size_t groups, unsigned char *out)
{
	pthread_once(&b64_once, b64_init);
	tr_base64_groups_path(best_path, in, groups, out);
}
