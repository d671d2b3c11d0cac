/* base64.h - standard base64 (RFC 4648, "+/") of whole 3-byte groups, as fast as the CPU allows. */
#ifndef TR_BASE64_H
#define TR_BASE64_H

#include <stddef.h>

/* Encodes groups whole 3-byte groups of in into 4 * groups characters at out (no padding, no
 * NUL). Uses AVX2 when the CPU has it; the output is the same either way. */
void tr_base64_groups(const unsigned char *in, size_t groups, unsigned char *out);

/* The portable path alone, for tests that compare the two. */
void tr_base64_groups_scalar(const unsigned char *in, size_t groups, unsigned char *out);

#endif
