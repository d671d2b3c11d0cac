/* SPDX-License-Identifier: MIT */
/* charset.c - binary sniffing, BOM and legacy charset detection (uchardet), iconv to UTF-8.
 * uchardet is C++ and brings libstdc++ with it, about 0.5-1 ms of loading and relocation at
 * exec (docs/PERFORMANCE.md, issue 29), while only text that is not UTF-8 needs it: it is
 * opened with dlopen the first time such text is read (linked in sanitizer builds, whose leak
 * checker trips on the thread-local storage of libraries loaded later). */
#include <dlfcn.h>
#include <errno.h>
#include <iconv.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <uchardet/uchardet.h>

#include "util.h"

#define DECODE_OUT_CAP (256 * 1024)

const char *const tr_legacy_charsets[] = {
	"big5",         "euc-jp",       "euc-kr",       "euc-tw",
	"gb18030",      "ibm852",       "ibm855",       "ibm866",
	"iso-2022-cn",  "iso-2022-jp",  "iso-2022-kr",  "iso-8859-1",
	"iso-8859-2",   "iso-8859-3",   "iso-8859-4",   "iso-8859-5",
	"iso-8859-6",   "iso-8859-7",   "iso-8859-8",   "iso-8859-9",
	"iso-8859-10",  "iso-8859-11",  "iso-8859-13",  "iso-8859-15",
	"iso-8859-16",  "koi8-r",       "koi8-u",       "mac-centraleurope",
	"mac-cyrillic", "shift_jis",    "tis-620",      "uhc",
	"viscii",       "windows-1250", "windows-1251", "windows-1252",
	"windows-1253", "windows-1254", "windows-1255", "windows-1256",
	"windows-1257", "windows-1258", NULL,
};

enum tr_bom tr_bom_detect(const unsigned char *s, size_t len, size_t *bom_len)
{
	*bom_len = 0;
	if (len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) {
		*bom_len = 3;
		return TR_BOM_UTF8;
	}
	if (len >= 4 && s[0] == 0xFF && s[1] == 0xFE && s[2] == 0 && s[3] == 0) {
		*bom_len = 4;
		return TR_BOM_UTF32LE;
	}
	if (len >= 4 && s[0] == 0 && s[1] == 0 && s[2] == 0xFE && s[3] == 0xFF) {
		*bom_len = 4;
		return TR_BOM_UTF32BE;
	}
	if (len >= 2 && s[0] == 0xFF && s[1] == 0xFE) {
		*bom_len = 2;
		return TR_BOM_UTF16LE;
	}
	if (len >= 2 && s[0] == 0xFE && s[1] == 0xFF) {
		*bom_len = 2;
		return TR_BOM_UTF16BE;
	}
	return TR_BOM_NONE;
}

bool tr_head_is_binary(const unsigned char *head, size_t len)
{
	size_t bom_len, control = 0;
	enum tr_bom bom = tr_bom_detect(head, len, &bom_len);

	if (bom != TR_BOM_NONE && bom != TR_BOM_UTF8)
		return false;
	if (memchr(head, 0, len))
		return true;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = head[i];

		if ((c < 0x20 && !(c >= '\t' && c <= '\r') && c != 0x1B) || c == 0x7F)
			control++;
	}
	return control * 10 > len * 3;
}

/* The canonical name of uchardet's answer, or NULL when it is UTF-8, ASCII or unknown. */
static const char *canonical_charset(const char *detected)
{
	if (!detected || !*detected)
		return NULL;
	if (!strcasecmp(detected, "GB2312") || !strcasecmp(detected, "GBK"))
		return "gb18030";
	for (size_t i = 0; tr_legacy_charsets[i]; i++)
		if (!strcasecmp(detected, tr_legacy_charsets[i]))
			return tr_legacy_charsets[i];
	return NULL;
}

/* True when s[0..len) is valid UTF-8, allowing a sequence cut off by the end of the sample. */
static bool sample_is_utf8(const unsigned char *s, size_t len)
{
	size_t valid = tr_utf8_valid_len(s, len);

	return valid == len || tr_utf8_check_seq(s + valid, len - valid) == 0;
}

/* uchardet's entry points, set once by open_uchardet; all NULL when it could not be loaded. */
static struct {
	uchardet_t (*new_detector)(void);
	int (*handle_data)(uchardet_t, const char *, size_t);
	void (*data_end)(uchardet_t);
	const char *(*get_charset)(uchardet_t);
	void (*delete_detector)(uchardet_t);
} ucd;
static pthread_once_t ucd_once = PTHREAD_ONCE_INIT;

static void open_uchardet(void)
{
#if defined(TR_UCHARDET_LINKED)
	ucd.handle_data = uchardet_handle_data;
	ucd.data_end = uchardet_data_end;
	ucd.get_charset = uchardet_get_charset;
	ucd.delete_detector = uchardet_delete;
	ucd.new_detector = uchardet_new;
#else
	/* Never closed: the process keeps it as it kept the linked library. */
	void *lib = dlopen(TR_UCHARDET_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		return;
	*(void **)&ucd.handle_data = dlsym(lib, "uchardet_handle_data");
	*(void **)&ucd.data_end = dlsym(lib, "uchardet_data_end");
	*(void **)&ucd.get_charset = dlsym(lib, "uchardet_get_charset");
	*(void **)&ucd.delete_detector = dlsym(lib, "uchardet_delete");
	if (ucd.handle_data && ucd.data_end && ucd.get_charset && ucd.delete_detector)
		*(void **)&ucd.new_detector = dlsym(lib, "uchardet_new");
#endif
}

static const char *detect_legacy(const unsigned char *s, size_t len)
{
	const char *name = NULL;
	uchardet_t ud;

	pthread_once(&ucd_once, open_uchardet);
	if (!ucd.new_detector || !(ud = ucd.new_detector()))
		return NULL;
	if (ucd.handle_data(ud, (const char *)s, len) == 0) {
		ucd.data_end(ud);
		name = canonical_charset(ucd.get_charset(ud));
	}
	ucd.delete_detector(ud);
	return name;
}

/* Prepares dec to transcode from charset (an iconv name). Returns 0, 1 when iconv does not
 * know it, -1 when out of memory. */
static int open_iconv(struct tr_decoder *dec, const char *charset, size_t unit)
{
	iconv_t cd = iconv_open("UTF-8", charset);

	if (cd == (iconv_t)-1)
		return errno == ENOMEM ? -1 : 1;
	dec->out = malloc(DECODE_OUT_CAP);
	if (!dec->out) {
		iconv_close(cd);
		return -1;
	}
	dec->cd = cd;
	dec->out_cap = DECODE_OUT_CAP;
	dec->unit = unit;
	return 0;
}

int tr_decoder_init(struct tr_decoder *dec, const unsigned char *sample, size_t len)
{
	static const struct {
		const char *encoding, *iconv_name;
		size_t unit;
	} unicode[] = {
		[TR_BOM_UTF16LE] = {"utf-16le", "UTF-16LE", 2},
		[TR_BOM_UTF16BE] = {"utf-16be", "UTF-16BE", 2},
		[TR_BOM_UTF32LE] = {"utf-32le", "UTF-32LE", 4},
		[TR_BOM_UTF32BE] = {"utf-32be", "UTF-32BE", 4},
	};
	size_t bom_len;
	enum tr_bom bom = tr_bom_detect(sample, len, &bom_len);
	int rc;

	memset(dec, 0, sizeof(*dec));
	dec->encoding = "utf-8";
	dec->unit = 1;
	dec->skip = bom_len;
	if (bom == TR_BOM_UTF8) {
		dec->encoding = "utf-8-bom";
		return 0;
	}
	if (bom != TR_BOM_NONE) {
		rc = open_iconv(dec, unicode[bom].iconv_name, unicode[bom].unit);
		if (rc == 0)
			dec->encoding = unicode[bom].encoding;
		return rc < 0 ? -1 : 0;
	}
	if (len > TR_CHARSET_SAMPLE)
		len = TR_CHARSET_SAMPLE;
	if (sample_is_utf8(sample, len))
		return 0;
	const char *legacy = detect_legacy(sample, len);

	if (!legacy)
		return 0;
	rc = open_iconv(dec, legacy, 1);
	if (rc == 0)
		dec->encoding = legacy;
	return rc < 0 ? -1 : 0;
}

static int emit_replacement(tr_decoder_sink sink, void *ctx)
{
	return sink(ctx, (const unsigned char *)TR_UTF8_REPLACEMENT, 3);
}

/* Runs iconv over data[0..len) into sink. Unless final, an unfinished sequence at the end is
 * left; *used gets the bytes consumed. Returns 0, or -1 when sink failed. */
static int convert(struct tr_decoder *dec, const unsigned char *data, size_t len, bool final,
		   size_t *used, tr_decoder_sink sink, void *ctx)
{
	char *in = (char *)data;
	size_t in_left = len;

	while (in_left) {
		char *out = (char *)dec->out;
		size_t out_left = dec->out_cap;
		size_t rc = iconv((iconv_t)dec->cd, &in, &in_left, &out, &out_left);
		int err = errno;

		if (out_left < dec->out_cap && sink(ctx, dec->out, dec->out_cap - out_left))
			return -1;
		if (rc != (size_t)-1 || err == E2BIG)
			continue;
		if (err == EINVAL && !final)
			break; /* an unfinished sequence: wait for more bytes */
		/* EILSEQ, or an unfinished sequence at the end of the file. */
		size_t bad = err == EINVAL ? in_left : (dec->unit < in_left ? dec->unit : in_left);

		if (emit_replacement(sink, ctx))
			return -1;
		in += bad;
		in_left -= bad;
	}
	*used = len - in_left;
	return 0;
}

int tr_decoder_feed(struct tr_decoder *dec, const unsigned char *data, size_t len,
		    tr_decoder_sink sink, void *ctx)
{
	size_t skip = dec->skip < len ? dec->skip : len, used;

	data += skip;
	len -= skip;
	dec->skip -= skip;
	if (!dec->cd)
		return len ? sink(ctx, data, len) : 0;
	/* Complete the held-over sequence one byte at a time. */
	while (dec->n_carry && len) {
		dec->carry[dec->n_carry++] = *data++;
		len--;
		if (convert(dec, dec->carry, dec->n_carry, false, &used, sink, ctx))
			return -1;
		dec->n_carry -= used;
		memmove(dec->carry, dec->carry + used, dec->n_carry);
		if (dec->n_carry == sizeof(dec->carry)) {
			/* Longer than any character: give up on its first unit. */
			size_t bad = dec->unit;

			if (emit_replacement(sink, ctx))
				return -1;
			dec->n_carry -= bad;
			memmove(dec->carry, dec->carry + bad, dec->n_carry);
		}
	}
	if (convert(dec, data, len, false, &used, sink, ctx))
		return -1;
	data += used;
	len -= used;
	while (len > sizeof(dec->carry)) {
		if (emit_replacement(sink, ctx))
			return -1;
		data += dec->unit;
		len -= dec->unit;
	}
	memcpy(dec->carry + dec->n_carry, data, len);
	dec->n_carry += len;
	return 0;
}

int tr_decoder_finish(struct tr_decoder *dec, tr_decoder_sink sink, void *ctx)
{
	size_t used;

	if (!dec->cd)
		return 0;
	if (dec->n_carry && convert(dec, dec->carry, dec->n_carry, true, &used, sink, ctx))
		return -1;
	dec->n_carry = 0;
	/* Return a stateful encoding (ISO-2022-*) to its initial state. */
	char *out = (char *)dec->out;
	size_t out_left = dec->out_cap;

	iconv((iconv_t)dec->cd, NULL, NULL, &out, &out_left);
	if (out_left < dec->out_cap && sink(ctx, dec->out, dec->out_cap - out_left))
		return -1;
	return 0;
}

void tr_decoder_destroy(struct tr_decoder *dec)
{
	if (dec->cd)
		iconv_close((iconv_t)dec->cd);
	free(dec->out);
	dec->cd = NULL;
	dec->out = NULL;
}
