/* SPDX-License-Identifier: MIT */
/* fuzz_util.c - shared helpers of the libFuzzer targets (see fuzz_util.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cJSON.h>
#include <sanitizer/common_interface_defs.h>

#include "fuzz_util.h"
#include "sandbox.h"
#include "tr_read.h"

static bool fail_by_exit;

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("FUZZ CHECK FAILED: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (fail_by_exit)
		_exit(FUZZ_FAILED_STATUS);
	abort();
}

static void sanitizer_died(void)
{
	_exit(FUZZ_FAILED_STATUS);
}

void fuzz_fail_by_exit(void)
{
	fail_by_exit = true;
	__sanitizer_set_death_callback(sanitizer_died);
}

void fuzz_split(const uint8_t *data, size_t size, struct fuzz_input *params,
		struct fuzz_input *payload)
{
	size_t head = size < FUZZ_PARAMS ? size : FUZZ_PARAMS;

	params->data = data;
	params->len = head;
	payload->data = data + head;
	payload->len = size - head;
}

uint8_t fuzz_byte(struct fuzz_input *in)
{
	uint8_t b;

	if (in->len == 0)
		return 0;
	b = in->data[0];
	in->data++;
	in->len--;
	return b;
}

uint32_t fuzz_u32(struct fuzz_input *in)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v |= (uint32_t)fuzz_byte(in) << (8 * i);
	return v;
}

const uint8_t *fuzz_bytes(struct fuzz_input *in, size_t n, size_t *got)
{
	const uint8_t *p = in->data;

	if (n > in->len)
		n = in->len;
	in->data += n;
	in->len -= n;
	*got = n;
	return p;
}

/* A 1-based number: mostly 1..16, sometimes up to 2^32, rarely near UINT64_MAX. */
static uint64_t fuzz_number(struct fuzz_input *in)
{
	uint8_t b = fuzz_byte(in);

	switch (b >> 6) {
	case 0:
	case 1: return 1 + (b & 15);
	case 2: return 1 + (b & 63) * 37;
	default:
		if (b & 1)
			return UINT64_MAX - (b & 7);
		return 1 + (uint64_t)fuzz_u32(in);
	}
}

void fuzz_selector(struct fuzz_input *in, struct tr_selector *sel)
{
	uint8_t kind = fuzz_byte(in);
	uint64_t a = fuzz_number(in), b = fuzz_number(in);

	memset(sel, 0, sizeof(*sel));
	switch (kind % 5) {
	case 0: return; /* the default view */
	case 1: sel->start = sel->end = a; break;
	case 2:
		sel->start = a; /* A- */
		break;
	case 3:
		sel->start = a;
		sel->end = a + b - 1 < a ? UINT64_MAX : a + b - 1;
		break;
	case 4:
		sel->start = a;
		sel->column = b;
		break;
	}
	sel->present = true;
}

void fuzz_options(struct fuzz_input *in, struct tr_options *opts)
{
	static const uint64_t lines[] = {2000, 1, 2, 3, 5, 10, 100, UINT64_MAX};
	static const uint64_t chars[] = {2000, 1, 2, 3, 7, 40, 100, UINT64_MAX};
	static const uint64_t output[] = {100 * 1024, 1, 16, 64, 200, 1000, 4096, UINT64_MAX};
	uint8_t b = fuzz_byte(in), c = fuzz_byte(in);

	tr_options_init(opts);
	opts->max_lines = lines[b & 7];
	opts->max_line_chars = chars[(b >> 3) & 7];
	opts->max_output = output[(c >> 0) & 7];
	/* Images: mostly no fitting (libvips is not under test), sometimes a tiny limit. */
	if ((c >> 3) & 1) {
		opts->image_max_dim = 1 + ((c >> 4) & 7) * 4;
		opts->image_max_b64 = 4096;
	} else {
		opts->image_max_dim = UINT32_MAX;
		opts->image_max_b64 = UINT64_MAX;
	}
	opts->max_image_size = (c >> 7) ? 200 : opts->max_image_size;
	opts->max_pdf_pages = 1 + ((b >> 6) & 1);
	opts->max_notebook_size = (b >> 7) ? 300 : opts->max_notebook_size;
	/* No OCR: Tesseract reads pixels toolfs drew itself, at seconds a page (tests/readers/test_ocr.py
	 * covers it); the PDF targets' time goes to parsing. */
	opts->ocr = TR_OCR_OFF;
}

int fuzz_memfd(const void *data, size_t len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	const char *p = data;

	if (fd < 0)
		fuzz_fail("memfd_create failed");
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			fuzz_fail("write to memfd failed");
		p += n;
		len -= (size_t)n;
	}
	return fd;
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_sequence(const unsigned char *s, size_t len)
{
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static bool utf8_valid(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = utf8_sequence(s + i, len - i);

		if (!n)
			return false;
		i += n;
	}
	return true;
}

void fuzz_check_utf8(const char *what, const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = utf8_sequence(s + i, len - i);

		if (!n)
			fuzz_fail("%s: invalid UTF-8 at byte %zu of %zu", what, i, len);
		i += n;
	}
}

char *fuzz_check_doc(const struct tr_doc *doc, uint64_t *size_out)
{
	uint64_t size = tr_doc_size(doc);
	char *whole, *piece;
	size_t got;
	cJSON *root;

	if (size > (64u << 20))
		fuzz_fail("document of %llu bytes", (unsigned long long)size);
	whole = malloc((size_t)size + 1);
	piece = malloc(16);
	if (!whole || !piece)
		fuzz_fail("out of memory");
	got = tr_doc_read(doc, 0, whole, (size_t)size + 1);
	if (got != size)
		fuzz_fail("tr_doc_size says %llu, tr_doc_read gave %zu", (unsigned long long)size,
			  got);
	whole[size] = '\0';
	/* Reads of every small length at every offset must agree with the whole (only the base64
	 * groups a range covers are encoded, so piecewise reads take other paths). */
	for (uint64_t off = 0, step = 1; off < size; off += step, step = step % 7 + 1) {
		size_t n = tr_doc_read(doc, off, piece, (size_t)step);
		size_t want = size - off < step ? (size_t)(size - off) : (size_t)step;

		if (n != want || memcmp(piece, whole + off, n) != 0)
			fuzz_fail("tr_doc_read(%llu, %zu) differs from the whole",
				  (unsigned long long)off, (size_t)step);
	}
	if (tr_doc_read(doc, size, piece, 16) != 0 || tr_doc_read(doc, size + 5, piece, 16) != 0)
		fuzz_fail("tr_doc_read past the end returned bytes");
	free(piece);
	fuzz_check_utf8("rendered document", (const unsigned char *)whole, (size_t)size);
	if (size < 2 || whole[size - 1] != '\n' || whole[size - 2] == '\n')
		fuzz_fail("document does not end in exactly one newline");
	root = cJSON_ParseWithLengthOpts(whole, (size_t)size, NULL, false);
	if (!root || !cJSON_IsObject(root))
		fuzz_fail("cJSON does not parse the document as an object: %.200s", whole);
	cJSON_Delete(root);
	/* Compact: one line, nothing after the object but the newline. */
	if (memchr(whole, '\n', (size_t)size - 1))
		fuzz_fail("document has a raw newline before its end");
	*size_out = size;
	return whole;
}

/* The string value of key in obj; aborts when missing or not a string. */
static const char *string_key(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsString(item))
		fuzz_fail("ToolResult has no string \"%s\"", key);
	return item->valuestring;
}

/* When s is valid UTF-8 without NUL, the JSON string must give it back exactly. */
static void check_round_trip(const char *key, const char *parsed, const char *s, size_t len)
{
	if (!s || memchr(s, '\0', len) || !utf8_valid((const unsigned char *)s, len))
		return;
	if (strlen(parsed) != len || memcmp(parsed, s, len) != 0)
		fuzz_fail("\"%s\" does not round-trip through the JSON", key);
}

static void check_tool_object(const struct tr_result *res, const char *text, uint64_t size)
{
	cJSON *root = cJSON_ParseWithLength(text, (size_t)size);
	const cJSON *success, *truncated;

	if (!root)
		fuzz_fail("ToolResult does not parse");
	success = cJSON_GetObjectItemCaseSensitive(root, "success");
	truncated = cJSON_GetObjectItemCaseSensitive(root, "truncated");
	if (!cJSON_IsBool(success) || !cJSON_IsBool(truncated))
		fuzz_fail("ToolResult lacks success or truncated");
	if (cJSON_IsTrue(success) != res->success)
		fuzz_fail("success does not match the result");
	string_key(root, "contentType");
	check_round_trip("path", string_key(root, "path"), res->path,
			 res->path ? strlen(res->path) : 0);
	check_round_trip("content", string_key(root, "content"), res->content.data,
			 res->content.len);
	check_round_trip("shortResult", string_key(root, "shortResult"), res->short_result,
			 res->short_result ? strlen(res->short_result) : 0);
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");

	if (!cJSON_IsObject(meta))
		fuzz_fail("ToolResult has no metadata object");
	if (res->meta.has_stat) {
		/* RFC 3339 UTC, as docs/toolresult.schema.json says: YYYY-MM-DDTHH:MM:SSZ. */
		const char *when = string_key(meta, "modified");
		static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";

		for (size_t i = 0; i < sizeof(shape); i++)
			if (shape[i] == 'd' ? !(when[i] >= '0' && when[i] <= '9')
					    : when[i] != shape[i])
				fuzz_fail("metadata.modified \"%s\" is not RFC 3339", when);
	}
	if (!res->success) {
		string_key(root, "error");
		string_key(root, "errorCode");
	} else if (cJSON_GetObjectItemCaseSensitive(root, "error") ||
		   cJSON_GetObjectItemCaseSensitive(root, "errorCode")) {
		fuzz_fail("a successful ToolResult has an error");
	}
	cJSON_Delete(root);
}

void fuzz_check_result(const struct tr_result *res)
{
	static const enum tr_format formats[] = {TR_FORMAT_TOOL, TR_FORMAT_ANTHROPIC,
						 TR_FORMAT_OPENAI, TR_FORMAT_MCP};

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		struct tr_doc *doc = tr_render(res, formats[i]);
		uint64_t size;
		char *text;

		if (!doc)
			fuzz_fail("tr_render failed");
		text = fuzz_check_doc(doc, &size);
		if (formats[i] == TR_FORMAT_TOOL)
			check_tool_object(res, text, size);
		free(text);
		tr_doc_unref(doc);
	}
	/* txt: the text and footers, as many bytes as tr_doc_size says, ending in a newline. */
	struct tr_doc *txt = tr_render(res, TR_FORMAT_TXT);
	uint64_t txt_size;
	char *whole;

	if (!txt)
		fuzz_fail("tr_render txt failed");
	txt_size = tr_doc_size(txt);
	whole = malloc((size_t)txt_size + 1);
	if (!whole)
		fuzz_fail("out of memory");
	if (tr_doc_read(txt, 0, whole, (size_t)txt_size + 1) != txt_size)
		fuzz_fail("txt: tr_doc_read differs from tr_doc_size");
	if (txt_size && whole[txt_size - 1] != '\n')
		fuzz_fail("txt does not end in a newline");
	free(whole);
	tr_doc_unref(txt);
}

/* The readers run in this process, not in toolfs-reader-worker (docs/SPEC.md §8): so that the
 * parsers they reach are instrumented and fuzzed here. */
__attribute__((constructor)) static void fuzz_readers_in_process(void)
{
	tr_sandbox_inside = true;
}
