/* SPDX-License-Identifier: MIT */
/* crc32.c - CRC-32 (ISO 3309: PNG's, zlib's) at memory speed, by libdeflate. */
#include <libdeflate.h>

#include "util.h"

uint32_t tr_crc32(uint32_t crc, const void *data, size_t len)
{
	return libdeflate_crc32(crc, data, len);
}
