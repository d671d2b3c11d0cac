/* doc.c - output documents: literal runs and lazily encoded base64 runs, readable at any offset. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "tr_doc.h"

/* A segment is either literal bytes (blob == NULL) or the base64 of blob. */
struct doc_segment {
	uint64_t start; /* offset of the segment's first byte in the document */
	uint64_t len;   /* encoded length */
	struct tr_blob *blob;
	char *bytes;    /* literal bytes (owned) */
	size_t cap;
};

struct tr_doc {
	struct doc_segment *segs;
	size_t n_segs, cap_segs;
	uint64_t size;
	int refs;
	int failed;
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

	if (doc->failed)
		return -1;
	if (len == 0)
		return 0;
	seg = doc->n_segs ? &doc->segs[doc->n_segs - 1] : NULL;
	if (!seg || seg->blob) {
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

	if (doc->failed)
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

int tr_doc_failed(const struct tr_doc *doc)
{
	return doc->failed;
}

uint64_t tr_doc_size(const struct tr_doc *doc)
{
	return doc->size;
}

/* Encodes base64 characters [from, from+len) of blob into out. EVP_EncodeBlock writes a NUL
 * after its output, so it always encodes into scratch space, never straight into out. */
static void read_base64(const struct tr_blob *blob, uint64_t from, size_t len, unsigned char *out)
{
	enum { SCRATCH_GROUPS = 4096 };
	unsigned char scratch[SCRATCH_GROUPS * 4 + 1];

	while (len > 0) {
		uint64_t group_index = from / 4;
		size_t skip = from % 4;
		size_t raw_off = group_index * 3;
		size_t groups = (skip + len + 3) / 4;

		if (groups > SCRATCH_GROUPS)
			groups = SCRATCH_GROUPS;
		size_t raw_len = groups * 3;

		if (raw_len > blob->len - raw_off)
			raw_len = blob->len - raw_off;
		size_t n = (size_t)EVP_EncodeBlock(scratch, blob->data + raw_off, (int)raw_len);
		size_t take = n - skip < len ? n - skip : len;

		memcpy(out, scratch + skip, take);
		out += take;
		from += take;
		len -= take;
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
		else
			memcpy(out + done, seg->bytes + in_seg, take);
		done += take;
	}
	return done;
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

int tr_doc_write_fd(const struct tr_doc *doc, int fd)
{
	enum { CHUNK = 1 << 20 };
	unsigned char *chunk = NULL;

	for (size_t i = 0; i < doc->n_segs; i++) {
		const struct doc_segment *seg = &doc->segs[i];

		if (!seg->blob) {
			if (write_all(fd, seg->bytes, seg->len) < 0)
				goto fail;
			continue;
		}
		if (!chunk && !(chunk = malloc(CHUNK)))
			goto fail;
		for (uint64_t at = 0; at < seg->len; at += CHUNK) {
			size_t take = seg->len - at < CHUNK ? seg->len - at : CHUNK;

			read_base64(seg->blob, at, take, chunk);
			if (write_all(fd, chunk, take) < 0)
				goto fail;
		}
	}
	free(chunk);
	return 0;
fail:
	free(chunk);
	return -1;
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
		free(doc->segs[i].bytes);
	}
	free(doc->segs);
	free(doc);
}
