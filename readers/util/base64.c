/* base64.c - base64 of whole 3-byte groups: a two-characters-per-lookup table, and AVX2. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

/* pairs[v] is the encoding of the 12-bit value v: a 3-byte group costs two lookups. */
static char b64_pairs[4096][2];
static bool use_avx2;
static pthread_once_t b64_once = PTHREAD_ONCE_INIT;
static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_init(void)
{
	for (unsigned v = 0; v < 4096; v++) {
		b64_pairs[v][0] = b64_alphabet[v >> 6];
		b64_pairs[v][1] = b64_alphabet[v & 63];
	}
#ifdef HAVE_AVX2_PATH
	__builtin_cpu_init();
	use_avx2 = __builtin_cpu_supports("avx2");
#endif
}

static void encode_scalar(const unsigned char *in, size_t groups, unsigned char *out)
{
	for (; groups > 0; groups--, in += 3, out += 4) {
		uint32_t v = (uint32_t)in[0] << 16 | (uint32_t)in[1] << 8 | in[2];

		memcpy(out, b64_pairs[v >> 12], 2);
		memcpy(out + 2, b64_pairs[v & 0xfff], 2);
	}
}

#ifdef HAVE_AVX2_PATH
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
#endif

void tr_base64_groups_scalar(const unsigned char *in, size_t groups, unsigned char *out)
{
	pthread_once(&b64_once, b64_init);
	encode_scalar(in, groups, out);
}

void tr_base64_groups(const unsigned char *in, size_t groups, unsigned char *out)
{
	size_t done = 0;

	pthread_once(&b64_once, b64_init);
#ifdef HAVE_AVX2_PATH
	if (use_avx2)
		done = encode_avx2(in, groups, out);
#endif
	encode_scalar(in + 3 * done, groups - done, out + 4 * done);
}
