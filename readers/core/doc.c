/* SPDX-License-Identifier: MIT */
/* doc.c - output documents: literal runs and lazily encoded base64 runs, readable at any offset. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tr_doc.h"
#include "util.h"

/* A segment is literal bytes, the base64 of blob, or the 64 hex digits of digest. */
struct doc_segment {
	uint64_t start; /* offset of the segment's first byte in the document */
	uint64_t len;   /* encoded length */
	struct tr_blob *blob;
	struct tr_digest *digest;
	char *bytes; /* literal bytes (owned) */
	size_t cap;
};

#define DIGEST_HEX_LEN 64

struct tr_doc {
	struct doc_segment *segs;
	size_t n_segs, cap_segs;
	uint64_t size;
	int refs;
	int failed;
	char *sealed; /* after tr_doc_seal: the one block holding segs and every literal run */
};

static uint64_t base64_len(size_t raw)
{
	return 4 * (((uint64_t)raw + 2) / 3);
}

struct tr_doc *tr_doc_new(void)
{
	struct tr_doc *doc = calloc(1, sizeof(*doc));

	if (doc)
		doc->refs = 1;
	return doc;
}

static struct doc_segment *push_segment(struct tr_doc *doc)
{
	if (doc->n_segs == doc->cap_segs) {
		size_t cap = doc->cap_segs ? doc->cap_segs * 2 : 8;
		struct doc_segment *segs = realloc(doc->segs, cap * sizeof(*segs));

		if (!segs)
			return NULL;
		doc->segs = segs;
		doc->cap_segs = cap;
	}
	struct doc_segment *seg = &doc->segs[doc->n_segs++];

	memset(seg, 0, sizeof(*seg));
	seg->start = doc->size;
	return seg;
}

int tr_doc_append(struct tr_doc *doc, const void *bytes, size_t len)
{
	struct doc_segment *seg;

	if (doc->failed || doc->sealed)
		return -1;
	if (len == 0)
		return 0;
	seg = doc->n_segs ? &doc->segs[doc->n_segs - 1] : NULL;
	if (!seg || seg->blob || seg->digest) {
		seg = push_segment(doc);
		if (!seg)
			goto oom;
	}
	if (seg->len + len > seg->cap) {
		size_t cap = seg->cap ? seg->cap : 256;

		while (cap < seg->len + len)
			cap *= 2;
		char *grown = realloc(seg->bytes, cap);

		if (!grown)
			goto oom;
		seg->bytes = grown;
		seg->cap = cap;
	}
	memcpy(seg->bytes + seg->len, bytes, len);
	seg->len += len;
	doc->size += len;
	return 0;
oom:
	doc->failed = 1;
	return -1;
}

int tr_doc_append_base64(struct tr_doc *doc, struct tr_blob *blob)
{
	struct doc_segment *seg;

	if (doc->failed || doc->sealed)
		return -1;
	if (blob->len == 0)
		return 0;
	seg = push_segment(doc);
	if (!seg) {
		doc->failed = 1;
		return -1;
	}
	seg->blob = tr_blob_ref(blob);
	seg->len = base64_len(blob->len);
	doc->size += seg->len;
	return 0;
}

int tr_doc_append_digest(struct tr_doc *doc, struct tr_digest *digest)
{
	struct doc_segment *seg;

	if (doc->failed || doc->sealed)
		return -1;
	seg = push_segment(doc);
	if (!seg) {
		doc->failed = 1;
		return -1;
	}
	seg->digest = tr_digest_ref(digest);
	seg->len = DIGEST_HEX_LEN;
	doc->size += seg->len;
	return 0;
}

void tr_doc_seal(struct tr_doc *doc)
{
	size_t table = doc->n_segs * sizeof(*doc->segs), literal = 0;
	struct doc_segment *segs;
	char *block, *at;

	if (doc->sealed || doc->failed || doc->n_segs == 0)
		return;
	for (size_t i = 0; i < doc->n_segs; i++) {
		if (!doc->segs[i].blob && !doc->segs[i].digest)
			literal += doc->segs[i].len;
	}
	block = malloc(table + literal);
	if (!block)
		return; /* stays as built: correct, only larger */
	segs = memcpy(block, doc->segs, table);
	at = block + table;
	for (size_t i = 0; i < doc->n_segs; i++) {
		struct doc_segment *seg = &segs[i];

		if (seg->blob || seg->digest)
			continue;
		memcpy(at, seg->bytes, seg->len);
		free(seg->bytes);
		seg->bytes = at;
		seg->cap = seg->len;
		at += seg->len;
	}
	free(doc->segs);
	doc->segs = segs;
	doc->cap_segs = doc->n_segs;
	doc->sealed = block;
}

int tr_doc_failed(const struct tr_doc *doc)
{
	return doc->failed;
}

uint64_t tr_doc_size(const struct tr_doc *doc)
{
	return doc->size;
}

/* Encodes group index (the last may be partial, then padded) of blob into quad. */
static void encode_one(const struct tr_blob *blob, uint64_t index, unsigned char quad[4])
{
	unsigned char in[3] = {0, 0, 0};
	size_t have = blob->len - index * 3 < 3 ? blob->len - index * 3 : 3;

	memcpy(in, blob->data + index * 3, have);
	tr_base64_groups(in, 1, quad);
	if (have < 3)
		quad[3] = '=';
	if (have < 2)
		quad[2] = '=';
}

/* Encodes base64 characters [from, from+len) of blob into out. */
static void read_base64(const struct tr_blob *blob, uint64_t from, size_t len, unsigned char *out)
{
	uint64_t whole = blob->len / 3; /* groups with no padding */

	while (len > 0) {
		uint64_t index = from / 4;
		size_t skip = from % 4;

		if (skip == 0 && len >= 4 && index < whole) {
			size_t groups = len / 4 < whole - index ? len / 4 : whole - index;

			tr_base64_groups(blob->data + index * 3, groups, out);
			out += 4 * groups;
			from += 4 * groups;
			len -= 4 * groups;
		} else {
			unsigned char quad[4];
			size_t take = 4 - skip < len ? 4 - skip : len;

			encode_one(blob, index, quad);
			memcpy(out, quad + skip, take);
			out += take;
			from += take;
			len -= take;
		}
	}
}

static size_t find_segment(const struct tr_doc *doc, uint64_t offset)
{
	size_t lo = 0, hi = doc->n_segs;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (doc->segs[mid].start <= offset)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

size_t tr_doc_read(const struct tr_doc *doc, uint64_t offset, void *buf, size_t len)
{
	unsigned char *out = buf;
	size_t done = 0;

	if (offset >= doc->size || len == 0)
		return 0;
	if (len > doc->size - offset)
		len = doc->size - offset;
	for (size_t i = find_segment(doc, offset); i < doc->n_segs && done < len; i++) {
		const struct doc_segment *seg = &doc->segs[i];
		uint64_t in_seg = offset + done - seg->start;
		size_t take = seg->len - in_seg < len - done ? seg->len - in_seg : len - done;

		if (seg->blob)
			read_base64(seg->blob, in_seg, take, out + done);
		else if (seg->digest)
			memcpy(out + done, tr_digest_hex(seg->digest) + in_seg, take);
		else
			memcpy(out + done, seg->bytes + in_seg, take);
		done += take;
	}
	return done;
}

const void *tr_doc_span(const struct tr_doc *doc, uint64_t offset, size_t len)
{
	const struct doc_segment *seg;

	if (offset >= doc->size || len > doc->size - offset || doc->n_segs == 0)
		return NULL;
	seg = &doc->segs[find_segment(doc, offset)];
	if (seg->blob || seg->digest || offset - seg->start + len > seg->len)
		return NULL;
	return seg->bytes + (offset - seg->start);
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int tr_doc_write_to(const struct tr_doc *doc, uint64_t len, tr_doc_sink_fn sink, void *arg)
{
	/* On the stack: a write that has begun (an MCP answer's head is out) never fails for
	 * memory halfway. */
	enum { CHUNK = 64 << 10 };
	unsigned char chunk[CHUNK];

	for (size_t i = 0; i < doc->n_segs && doc->segs[i].start < len; i++) {
		const struct doc_segment *seg = &doc->segs[i];
		uint64_t end = len - seg->start < seg->len ? len - seg->start : seg->len;

		if (seg->digest) {
			if (sink(arg, tr_digest_hex(seg->digest), (size_t)end) < 0)
				return -1;
			continue;
		}
		if (!seg->blob) {
			if (sink(arg, seg->bytes, (size_t)end) < 0)
				return -1;
			continue;
		}
		for (uint64_t at = 0; at < end; at += CHUNK) {
			size_t take = end - at < CHUNK ? end - at : CHUNK;

			read_base64(seg->blob, at, take, chunk);
			if (sink(arg, chunk, take) < 0)
				return -1;
		}
	}
	return 0;
}

static int write_fd_sink(void *arg, const void *bytes, size_t len)
{
	return write_all(*(const int *)arg, bytes, len);
}

int tr_doc_write_fd(const struct tr_doc *doc, int fd)
{
	return tr_doc_write_to(doc, doc->size, write_fd_sink, &fd);
}

struct tr_doc *tr_doc_ref(struct tr_doc *doc)
{
	if (doc)
		__atomic_add_fetch(&doc->refs, 1, __ATOMIC_RELAXED);
	return doc;
}

void tr_doc_unref(struct tr_doc *doc)
{
	if (!doc || __atomic_sub_fetch(&doc->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	for (size_t i = 0; i < doc->n_segs; i++) {
		tr_blob_unref(doc->segs[i].blob);
		tr_digest_unref(doc->segs[i].digest);
		if (!doc->sealed)
			free(doc->segs[i].bytes);
	}
	if (doc->sealed)
		free(doc->sealed); /* segs and the literal runs live in it */
	else
		free(doc->segs);
	free(doc);
}
