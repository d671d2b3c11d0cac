/* SPDX-License-Identifier: MIT */
/* sandbox_wire.c - a tr_result as the bytes of a worker's reply, and back: every scalar a
 * little-endian u64 (doubles by their bits), every string or blob a u64 length and its bytes
 * (UINT64_MAX: NULL), every array a u64 count. The decoder trusts nothing: a count or length
 * is checked against the bytes left before it is allocated or multiplied, enums against their
 * range, static strings (media types, encodings) against a bounded table of interned names. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "sandbox_proto.h"

#define WIRE_NULL UINT64_MAX

/* Every field of a result has its place in the wire: a field added to these structures fails
 * the build here until encode and decode carry it (sizes of x86-64, where CI builds). */
#if defined(__x86_64__)
_Static_assert(sizeof(struct tr_result) == 576,
	       "a new tr_result field needs its place in the wire");
_Static_assert(sizeof(struct tr_metadata) == 376,
	       "a new tr_metadata field needs its place in the wire");
#endif
/* Interned static strings: distinct values a worker may name (media types, encodings, line
 * endings), each at most WIRE_STATIC_MAX bytes of [a-z0-9/.+-]; a reply naming more is
 * refused. Bounded, so that workers cannot grow the core's memory with names. */
#define WIRE_STATICS 128
#define WIRE_STATIC_MAX 127

static int put_u64(struct tr_buf *out, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return tr_buf_append(out, b, sizeof(b));
}

static int put_f64(struct tr_buf *out, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	return put_u64(out, bits);
}

static int put_bytes(struct tr_buf *out, const void *data, size_t len)
{
	if (put_u64(out, len))
		return -1;
	return len ? tr_buf_append(out, data, len) : 0;
}

static int put_str(struct tr_buf *out, const char *s)
{
	return s ? put_bytes(out, s, strlen(s)) : put_u64(out, WIRE_NULL);
}

static int put_blob(struct tr_buf *out, const struct tr_blob *blob)
{
	return blob ? put_bytes(out, blob->data, blob->len) : put_u64(out, WIRE_NULL);
}

static int encode_meta(struct tr_metadata *m, struct tr_buf *out)
{
	const char *sha = tr_metadata_sha256(m);
	int rc = 0;

	rc |= put_str(out, sha);
	rc |= put_str(out, m->description);
	rc |= put_str(out, m->encoding);
	rc |= put_str(out, m->line_ending);
	rc |= put_u64(out, m->has_dimensions) | put_u64(out, m->width) | put_u64(out, m->height);
	rc |= put_u64(out, (uint64_t)m->page_count) | put_u64(out, (uint64_t)m->cell_count);
	rc |= put_str(out, m->language) | put_str(out, m->nbformat);
	rc |= put_u64(out, m->n_sheets);
	for (size_t i = 0; i < m->n_sheets; i++)
		rc |= put_str(out, m->sheets[i].name) | put_str(out, m->sheets[i].range) |
		      put_u64(out, m->sheets[i].hidden);
	rc |= put_u64(out, (uint64_t)m->slide_count);
	rc |= put_u64(out, (uint64_t)m->tracked_ins) | put_u64(out, (uint64_t)m->tracked_del);
	rc |= put_u64(out, m->has_resized) | put_u64(out, m->from_width) |
	      put_u64(out, m->from_height) | put_u64(out, m->to_width) | put_u64(out, m->to_height);
	rc |= put_str(out, m->saving);
	rc |= put_u64(out, m->has_content_tokens) | put_u64(out, m->content_tokens);
	rc |= put_f64(out, m->scale);
	rc |= put_u64(out, m->has_region) | put_u64(out, m->region.width) |
	      put_u64(out, m->region.height) | put_u64(out, m->region.x) |
	      put_u64(out, m->region.y);
	rc |= put_u64(out, m->n_ocr);
	for (size_t i = 0; i < m->n_ocr; i++)
		rc |= put_u64(out, m->ocr[i].page) | put_u64(out, (uint64_t)m->ocr[i].confidence);
	rc |= put_str(out, m->ocr_language);
	return rc ? -1 : 0;
}

int tr_sandbox_encode(struct tr_result *res, struct tr_buf *out)
{
	int rc = 0;

	rc |= put_u64(out, SANDBOX_VERSION);
	rc |= put_u64(out, res->success) | put_u64(out, res->type);
	rc |= put_str(out, res->mime_type);
	rc |= put_bytes(out, res->content.data, res->content.len);
	rc |= put_str(out, res->short_result) | put_u64(out, res->truncated);
	rc |= put_str(out, res->next) | put_u64(out, res->next_name_len);
	rc |= put_u64(out, res->range_unit) | put_u64(out, res->range_start) |
	      put_u64(out, res->range_end) | put_u64(out, res->range_total);
	rc |= put_u64(out, (uint64_t)res->line_count);
	rc |= put_u64(out, res->n_images);
	for (size_t i = 0; i < res->n_images; i++) {
		const struct tr_image *im = &res->images[i];

		rc |= put_blob(out, im->data) | put_str(out, im->media_type);
		rc |= put_u64(out, im->width) | put_u64(out, im->height) | put_u64(out, im->page) |
		      put_u64(out, im->cell) | put_u64(out, im->slide);
	}
	rc |= put_u64(out, res->n_documents);
	for (size_t i = 0; i < res->n_documents; i++)
		rc |= put_blob(out, res->documents[i].data) |
		      put_str(out, res->documents[i].media_type);
	rc |= put_u64(out, res->n_audio);
	for (size_t i = 0; i < res->n_audio; i++)
		rc |= put_blob(out, res->audio[i].data) | put_str(out, res->audio[i].media_type) |
		      put_f64(out, res->audio[i].start) | put_f64(out, res->audio[i].end);
	rc |= encode_meta(&res->meta, out);
	rc |= put_u64(out, res->error) | put_str(out, res->error_text);
	return rc || out->oom ? -1 : 0;
}

/* --- decoding --- */

struct cursor {
	const unsigned char *p;
	size_t left;
	bool bad; /* the bytes are not a valid encoding */
	bool oom; /* an allocation failed */
};

static uint64_t get_u64(struct cursor *c)
{
	uint64_t v = 0;

	if (c->bad || c->left < 8) {
		c->bad = true;
		return 0;
	}
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += 8;
	c->left -= 8;
	return v;
}

/* A value that must be at most max (bools 1, enums their last, u32 fields UINT32_MAX). */
static uint64_t get_max(struct cursor *c, uint64_t max)
{
	uint64_t v = get_u64(c);

	if (v > max)
		c->bad = true;
	return c->bad ? 0 : v;
}

static bool get_bool(struct cursor *c)
{
	return get_max(c, 1) == 1;
}

static double get_f64(struct cursor *c)
{
	uint64_t bits = get_u64(c);
	double v;

	memcpy(&v, &bits, sizeof(v));
	return v;
}

/* The next length-prefixed bytes, borrowed; *len their count. NULL for a NULL (or bad) one. */
static const unsigned char *get_bytes(struct cursor *c, size_t *len)
{
	uint64_t n = get_u64(c);
	const unsigned char *p;

	*len = 0;
	if (c->bad || n == WIRE_NULL)
		return NULL;
	if (n > c->left) {
		c->bad = true;
		return NULL;
	}
	p = c->p;
	c->p += n;
	c->left -= (size_t)n;
	*len = (size_t)n;
	return p;
}

/* A string without NULs, owned (NULL for a NULL one). */
static char *get_str(struct cursor *c)
{
	size_t len;
	const unsigned char *p = get_bytes(c, &len);
	char *s;

	if (!p)
		return NULL;
	if (memchr(p, '\0', len)) {
		c->bad = true;
		return NULL;
	}
	s = strndup((const char *)p, len);
	if (!s)
		c->oom = true;
	return s;
}

static pthread_mutex_t statics_lock = PTHREAD_MUTEX_INITIALIZER;
static char statics[WIRE_STATICS][WIRE_STATIC_MAX + 1];
static size_t n_statics;

static bool static_char(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '/' || ch == '.' || ch == '+' || ch == '-' || ch == '_';
}

/* A static string: the interned copy of the next string (NULL for a NULL one). */
static const char *get_static(struct cursor *c)
{
	size_t len;
	const unsigned char *p = get_bytes(c, &len);
	const char *found = NULL;

	if (!p)
		return NULL;
	if (len == 0 || len > WIRE_STATIC_MAX)
		goto bad;
	for (size_t i = 0; i < len; i++)
		if (!static_char(p[i]))
			goto bad;
	pthread_mutex_lock(&statics_lock);
	for (size_t i = 0; i < n_statics && !found; i++)
		if (strlen(statics[i]) == len && memcmp(statics[i], p, len) == 0)
			found = statics[i];
	if (!found && n_statics < WIRE_STATICS) {
		memcpy(statics[n_statics], p, len);
		statics[n_statics][len] = '\0';
		found = statics[n_statics++];
	}
	pthread_mutex_unlock(&statics_lock);
	if (found)
		return found;
bad:
	c->bad = true;
	return NULL;
}

/* The next blob (a NULL one is bad: every entry has its bytes). */
static struct tr_blob *get_blob(struct cursor *c)
{
	size_t len;
	const unsigned char *p = get_bytes(c, &len);
	struct tr_blob *blob;

	if (!p) {
		c->bad = true;
		return NULL;
	}
	blob = tr_blob_copy(p, len);
	if (!blob)
		c->oom = true;
	return blob;
}

/* A count of entries of at least min_size encoded bytes each: bounded by the bytes left, so
 * that count * sizeof(entry) is allocated only for entries that are there. */
static size_t get_count(struct cursor *c, size_t min_size)
{
	uint64_t n = get_u64(c);

	if (!c->bad && n > c->left / min_size)
		c->bad = true;
	return c->bad ? 0 : (size_t)n;
}

static bool cursor_ok(const struct cursor *c)
{
	return !c->bad && !c->oom;
}

static void decode_meta(struct cursor *c, struct tr_metadata *m)
{
	size_t sha_len;
	const unsigned char *sha = get_bytes(c, &sha_len);
	size_t n;

	if (sha && sha_len == 64) {
		memcpy(m->sha256, sha, 64);
		m->sha256[64] = '\0';
		m->has_sha256 = strspn(m->sha256, "0123456789abcdef") == 64;
	}
	if (sha && !m->has_sha256)
		c->bad = true;
	m->description = get_str(c);
	m->encoding = get_static(c);
	m->line_ending = get_static(c);
	m->has_dimensions = get_bool(c);
	m->width = (uint32_t)get_max(c, UINT32_MAX);
	m->height = (uint32_t)get_max(c, UINT32_MAX);
	m->page_count = (int64_t)get_u64(c);
	m->cell_count = (int64_t)get_u64(c);
	m->language = get_str(c);
	m->nbformat = get_str(c);
	n = get_count(c, 24);
	if (n && cursor_ok(c)) {
		m->sheets = calloc(n, sizeof(*m->sheets));
		if (!m->sheets)
			c->oom = true;
	}
	for (size_t i = 0; i < n && cursor_ok(c); i++) {
		m->sheets[i].name = get_str(c);
		m->sheets[i].range = get_str(c);
		m->sheets[i].hidden = get_bool(c);
		m->n_sheets = i + 1;
		if (!m->sheets[i].name)
			c->bad = true;
	}
	m->slide_count = (int64_t)get_u64(c);
	m->tracked_ins = (int64_t)get_u64(c);
	m->tracked_del = (int64_t)get_u64(c);
	m->has_resized = get_bool(c);
	m->from_width = (uint32_t)get_max(c, UINT32_MAX);
	m->from_height = (uint32_t)get_max(c, UINT32_MAX);
	m->to_width = (uint32_t)get_max(c, UINT32_MAX);
	m->to_height = (uint32_t)get_max(c, UINT32_MAX);
	m->saving = get_static(c);
	m->has_content_tokens = get_bool(c);
	m->content_tokens = get_u64(c);
	m->scale = get_f64(c);
	m->has_region = get_bool(c);
	m->region.width = (uint32_t)get_max(c, UINT32_MAX);
	m->region.height = (uint32_t)get_max(c, UINT32_MAX);
	m->region.x = (uint32_t)get_max(c, UINT32_MAX);
	m->region.y = (uint32_t)get_max(c, UINT32_MAX);
	n = get_count(c, 16);
	if (n && cursor_ok(c)) {
		m->ocr = calloc(n, sizeof(*m->ocr));
		if (!m->ocr)
			c->oom = true;
	}
	for (size_t i = 0; i < n && cursor_ok(c); i++) {
		m->ocr[i].page = (uint32_t)get_max(c, UINT32_MAX);
		m->ocr[i].confidence = (int)get_max(c, 100);
		m->n_ocr = i + 1;
	}
	{
		size_t len;
		const unsigned char *lang = get_bytes(c, &len);

		if (lang && (len >= sizeof(m->ocr_language) || memchr(lang, '\0', len)))
			c->bad = true;
		else if (lang)
			memcpy(m->ocr_language, lang, len);
	}
}

static void decode_images(struct cursor *c, struct tr_result *res)
{
	size_t n = get_count(c, 56);

	if (n && cursor_ok(c)) {
		res->images = calloc(n, sizeof(*res->images));
		if (!res->images)
			c->oom = true;
	}
	for (size_t i = 0; i < n && cursor_ok(c); i++) {
		struct tr_image *im = &res->images[i];

		im->data = get_blob(c);
		if (!im->data)
			break;
		res->n_images = i + 1;
		im->media_type = get_static(c);
		im->width = (uint32_t)get_max(c, UINT32_MAX);
		im->height = (uint32_t)get_max(c, UINT32_MAX);
		im->page = (uint32_t)get_max(c, UINT32_MAX);
		im->cell = (uint32_t)get_max(c, UINT32_MAX);
		im->slide = (uint32_t)get_max(c, UINT32_MAX);
		if (!im->media_type)
			c->bad = true;
	}
}

static void decode_documents(struct cursor *c, struct tr_result *res)
{
	size_t n = get_count(c, 16);

	if (n && cursor_ok(c)) {
		res->documents = calloc(n, sizeof(*res->documents));
		if (!res->documents)
			c->oom = true;
	}
	for (size_t i = 0; i < n && cursor_ok(c); i++) {
		res->documents[i].data = get_blob(c);
		if (!res->documents[i].data)
			break;
		res->n_documents = i + 1;
		res->documents[i].media_type = get_static(c);
		if (!res->documents[i].media_type)
			c->bad = true;
	}
}

static void decode_audio(struct cursor *c, struct tr_result *res)
{
	size_t n = get_count(c, 32);

	if (n && cursor_ok(c)) {
		res->audio = calloc(n, sizeof(*res->audio));
		if (!res->audio)
			c->oom = true;
	}
	for (size_t i = 0; i < n && cursor_ok(c); i++) {
		struct tr_audio *a = &res->audio[i];

		a->data = get_blob(c);
		if (!a->data)
			break;
		res->n_audio = i + 1;
		a->media_type = get_static(c);
		a->start = get_f64(c);
		a->end = get_f64(c);
		if (!a->media_type)
			c->bad = true;
	}
}

int tr_sandbox_decode(const unsigned char *data, size_t len, struct tr_result *res)
{
	struct cursor c = {.p = data, .left = len};
	size_t content_len;
	const unsigned char *content;

	if (get_u64(&c) != SANDBOX_VERSION)
		return 1;
	res->success = get_bool(&c);
	res->type = (enum tr_content_type)get_max(&c, TR_CONTENT_TYPE_COUNT - 1);
	res->mime_type = get_str(&c);
	content = get_bytes(&c, &content_len);
	if (content && content_len && tr_buf_append(&res->content, content, content_len))
		c.oom = true;
	res->short_result = get_str(&c);
	res->truncated = get_bool(&c);
	res->next = get_str(&c);
	res->next_name_len = (size_t)get_max(&c, res->next ? strlen(res->next) : 0);
	res->range_unit = (enum tr_range_unit)get_max(&c, TR_RANGE_UNIT_COUNT - 1);
	res->range_start = get_u64(&c);
	res->range_end = get_u64(&c);
	res->range_total = get_u64(&c);
	res->line_count = (int64_t)get_u64(&c);
	decode_images(&c, res);
	decode_documents(&c, res);
	decode_audio(&c, res);
	decode_meta(&c, &res->meta);
	res->error = (enum tr_error)get_max(&c, TR_ERROR_COUNT - 1);
	res->error_text = get_str(&c);
	if (c.oom)
		return -1;
	if (c.bad || c.left != 0 || (res->error != TR_OK) != !!res->error_text)
		return 1;
	return 0;
}
