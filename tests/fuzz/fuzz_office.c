/* SPDX-License-Identifier: MIT */
/* fuzz_office.c - libFuzzer target for the Office reader's zip + XML path: a parameter header
 * (file name, selector, limits), then archive entries as [name length: 1][name][data length: 2,
 * little-endian][data]... which the target writes into a stored zip (valid CRCs, so the XML
 * parts reach libxml2 and the renderers), read by tr_read_fd like a real file. Payloads that
 * start with "PK" are taken as a zip file as they are, to fuzz the container too. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz_util.h"
#include "tr_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A growable byte buffer for the zip being written. */
struct bytes {
	uint8_t *data;
	size_t len, cap;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->data = realloc(b->data, b->cap);
		if (!b->data)
			fuzz_fail("out of memory");
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put16(struct bytes *b, uint32_t v)
{
	uint8_t le[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	put(b, le, 2);
}

static void put32(struct bytes *b, uint32_t v)
{
	put16(b, v & 0xffff);
	put16(b, v >> 16);
}

#define MAX_ENTRIES 64

/* Writes the entries of in as a stored zip into out. */
static void build_zip(struct fuzz_input *in, struct bytes *out)
{
	struct bytes dir = {0};
	uint32_t offsets[MAX_ENTRIES];
	size_t n = 0;

	while (in->len && n < MAX_ENTRIES) {
		size_t name_len, got_name, got_data, data_len;
		const uint8_t *name, *body;
		uint32_t crc;

		name_len = fuzz_byte(in);
		name = fuzz_bytes(in, name_len, &got_name);
		data_len = fuzz_byte(in);
		data_len |= (size_t)fuzz_byte(in) << 8;
		body = fuzz_bytes(in, data_len, &got_data);
		crc = (uint32_t)crc32(0, body, (uInt)got_data);
		offsets[n] = (uint32_t)out->len;
		put32(out, 0x04034b50);
		put16(out, 20);
		put16(out, 0);
		put16(out, 0); /* stored */
		put32(out, 0);
		put32(out, crc);
		put32(out, (uint32_t)got_data);
		put32(out, (uint32_t)got_data);
		put16(out, (uint32_t)got_name);
		put16(out, 0);
		put(out, name, got_name);
		put(out, body, got_data);
		put32(&dir, 0x02014b50);
		put16(&dir, 20);
		put16(&dir, 20);
		put16(&dir, 0);
		put16(&dir, 0);
		put32(&dir, 0);
		put32(&dir, crc);
		put32(&dir, (uint32_t)got_data);
		put32(&dir, (uint32_t)got_data);
		put16(&dir, (uint32_t)got_name);
		put16(&dir, 0);
		put16(&dir, 0);
		put16(&dir, 0);
		put16(&dir, 0);
		put32(&dir, 0);
		put32(&dir, offsets[n]);
		put(&dir, name, got_name);
		n++;
	}
	{
		uint32_t dir_offset = (uint32_t)out->len;

		put(out, dir.data, dir.len);
		put32(out, 0x06054b50);
		put16(out, 0);
		put16(out, 0);
		put16(out, (uint32_t)n);
		put16(out, (uint32_t)n);
		put32(out, (uint32_t)dir.len);
		put32(out, dir_offset);
		put16(out, 0);
	}
	free(dir.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"doc.docx", "book.xlsx", "deck.pptx", "file"};
	struct fuzz_input params, payload;
	struct bytes zip = {0};
	struct tr_selector sel;
	struct tr_options opts;
	struct tr_source src = {0};
	struct tr_result res;
	char path[64];
	int fd;

	fuzz_split(data, size, &params, &payload);
	src.name = names[fuzz_byte(&params) % (sizeof(names) / sizeof(names[0]))];
	fuzz_selector(&params, &sel);
	fuzz_options(&params, &opts);
	if (payload.len >= 2 && payload.data[0] == 'P' && payload.data[1] == 'K')
		put(&zip, payload.data, payload.len);
	else
		build_zip(&payload, &zip);
	strcpy(path, "dir/");
	strcat(path, src.name);
	src.path = path;
	fd = fuzz_memfd(zip.data ? (const void *)zip.data : "", zip.len);
	if (tr_result_init(&res, path) < 0)
		fuzz_fail("tr_result_init failed");
	if (tr_read_fd(fd, &src, &sel, &opts, &res, NULL) < 0)
		fuzz_fail("tr_read_fd ran out of memory");
	close(fd);
	if (!res.success && res.error == TR_OK)
		fuzz_fail("failed without an error code");
	if (res.success && res.error != TR_OK)
		fuzz_fail("succeeded with an error code");
	if (res.success)
		fuzz_check_utf8("content", (const unsigned char *)res.content.data,
				res.content.len);
	fuzz_check_result(&res);
	tr_result_destroy(&res);
	free(zip.data);
	return 0;
}
