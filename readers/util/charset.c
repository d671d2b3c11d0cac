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
	"big5",         "cp737",        "euc-jp",
	"euc-tw",       "gb18030",      "ibm852",
	"ibm855",       "ibm862",       "ibm866",
	"iso-2022-cn",  "iso-2022-jp",  "iso-2022-kr",
	"iso-8859-2",   "iso-8859-3",   "iso-8859-4",
	"iso-8859-5",   "iso-8859-6",   "iso-8859-7",
	"iso-8859-8",   "iso-8859-10",  "iso-8859-13",
	"iso-8859-15",  "iso-8859-16",  "johab",
	"koi8-r",       "koi8-u",       "mac-centraleurope",
	"mac-cyrillic", "uhc",          "viscii",
	"windows-31j",  "windows-874",  "windows-1250",
	"windows-1251", "windows-1252", "windows-1253",
	"windows-1254", "windows-1255", "windows-1256",
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

/* Bytes of a file's start the BOM-less UTF-16/32 test looks at: the binary test's head. */
#define UNICODE_SNIFF (8 * 1024)

/* Whitespace code units (tab, LF, CR, space) in s[0..len) read as UTF-16 (unit 2) or UTF-32
 * (unit 4) in the byte order big_endian, or -1 when a unit is not text: U+0000, another C0 or a
 * C1 control (ESC, \v and \f allowed), a noncharacter U+FFFE/U+FFFF, a lone surrogate, or past
 * U+10FFFF. A unit or surrogate pair cut by the end of s is allowed. */
static long unicode_whitespace(const unsigned char *s, size_t len, size_t unit, bool big_endian)
{
	size_t n = len / unit;
	long ws = 0;
	bool high = false; /* the previous unit was a high surrogate */

	for (size_t i = 0; i < n; i++) {
		const unsigned char *u = s + i * unit;
		uint32_t c = 0;

		for (size_t b = 0; b < unit; b++)
			c |= (uint32_t)u[big_endian ? unit - 1 - b : b] << (8 * b);
		if (high != (c >= 0xDC00 && c <= 0xDFFF) ||
		    (unit == 4 && c >= 0xD800 && c <= 0xDFFF))
			return -1;
		high = unit == 2 && c >= 0xD800 && c <= 0xDBFF;
		if (c == '\t' || c == '\n' || c == '\r' || c == ' ')
			ws++;
		else if ((c < 0x20 && c != '\v' && c != '\f' && c != 0x1B) ||
			 (c >= 0x7F && c <= 0x9F) || c == 0xFFFE || c == 0xFFFF || c > 0x10FFFF)
			return -1;
	}
	return ws;
}

/* The encoding of BOM-less text that is plainly UTF-32 or UTF-16 (docs/SPEC.md §3): every unit
 * of s[0..len) text in that reading, at least one whitespace unit per 256 units, and for
 * UTF-16 more whitespace than in the other byte order (a swapped LF is U+0A00). UTF-32 is tried
 * first: its units read as UTF-16 hold U+0000. TR_BOM_NONE when neither. */
static enum tr_bom unicode_without_bom(const unsigned char *s, size_t len)
{
	static const struct {
		size_t unit;
		bool big_endian;
		enum tr_bom bom;
	} order[] = {{4, false, TR_BOM_UTF32LE},
		     {4, true, TR_BOM_UTF32BE},
		     {2, false, TR_BOM_UTF16LE},
		     {2, true, TR_BOM_UTF16BE}};
	long ws[4];

	if (len > UNICODE_SNIFF)
		len = UNICODE_SNIFF;
	if (len < 8)
		return TR_BOM_NONE;
	for (size_t i = 0; i < 4; i++)
		ws[i] = unicode_whitespace(s, len, order[i].unit, order[i].big_endian);
	for (size_t i = 0; i < 4; i++) {
		if (ws[i] > 0 && (size_t)ws[i] * 256 >= len / order[i].unit &&
		    (order[i].unit == 4 || ws[i] > ws[i ^ 1]))
			return order[i].bom;
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
		return bom != TR_BOM_NONE || unicode_without_bom(head, len) == TR_BOM_NONE;
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
	/* Read as WHATWG's Encoding Standard reads these labels: as the superset that gives text
	 * to the bytes the subset leaves undefined or C1 controls (0x80-0x9F), and Shift_JIS with
	 * 0x5C and 0x7E kept as \ and ~. */
	static const struct {
		const char *detected, *decoded_as;
	} superset[] = {
		{"GB2312", "gb18030"},          {"GBK", "gb18030"},
		{"SHIFT_JIS", "windows-31j"},   {"EUC-KR", "uhc"},
		{"ISO-8859-1", "windows-1252"}, {"ISO-8859-9", "windows-1254"},
		{"TIS-620", "windows-874"},     {"ISO-8859-11", "windows-874"},
	};

	if (!detected || !*detected)
		return NULL;
	for (size_t i = 0; i < sizeof(superset) / sizeof(superset[0]); i++)
		if (!strcasecmp(detected, superset[i].detected))
			return superset[i].decoded_as;
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

/* The name iconv_open is given for charset. glibc's ISO-2022-JP passes a JIS X 0201 katakana
 * designation (ESC ( I) through as text; its ISO-2022-JP-3 reads it as WHATWG does, and
 * ISO-2022-JP's own sets the same. */
static const char *iconv_name(const char *charset)
{
	return strcmp(charset, "iso-2022-jp") ? charset : "ISO-2022-JP-3";
}

/* --- the fallback for charsets uchardet does not know --------------------------------------
 * uchardet 0.0.7 has no model for Johab, CP737, CP869 or IBM862: it names another charset
 * (GB18030 for Johab, windows-1252 for CP737) or none. Its answer and each of these candidates
 * decode the sample's first SCORE_SAMPLE bytes; a character-class model scores each decoding,
 * and the best candidate replaces uchardet's answer only when it reads clearly better. The
 * model knows letters by script and case, not words: it tells a script from mojibake, not two
 * charsets that give the same script (CP737 Greek from windows-1253 Greek is uchardet's job). */

#define SCORE_SAMPLE (16 * 1024)
/* Fewer letters outside ASCII than this and no decoding is judged. */
#define SCORE_MIN_LETTERS 16

static const char *const fallback_charsets[] = {"johab", "cp737", "cp869", "ibm862"};

enum script { SCRIPT_NONE, LATIN, GREEK, CYRILLIC, HEBREW, ARABIC, THAI, CJK };
enum letter_case { CASELESS, UPPER, LOWER };

/* What the model sees of one code point. weight: 0 not a letter (a word break), 1 a mark inside
 * a word, 2 a letter, 3 a Han ideograph (counts half: nearly any byte pair of a CJK multibyte
 * charset is one), 4 a symbol no text in a legacy charset is made of (box drawing, C1
 * controls, private use, U+FFFD), 5 neutral punctuation (a word break that scores nothing). */
struct char_class {
	unsigned char weight, script, letter_case;
};

static struct char_class classify(uint32_t c)
{
	struct char_class k = {2, SCRIPT_NONE, CASELESS};

	if (c < 0x80) {
		if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
			return (struct char_class){2, LATIN, c < 'a' ? UPPER : LOWER};
		return (struct char_class){0, SCRIPT_NONE, CASELESS};
	}
	if (c < 0xA0 || (c >= 0xE000 && c <= 0xF8FF) || c == 0xFFFD ||
	    (c >= 0x2190 && c <= 0x23FF) || (c >= 0x2500 && c <= 0x259F) ||
	    (c >= 0x2B0 && c <= 0x2FF) || c == 0xD7 || c == 0xF7)
		return (struct char_class){4, SCRIPT_NONE, CASELESS};
	if (c < 0xC0) /* Latin-1 punctuation and signs */
		return (struct char_class){(c == 0xA0 || c == 0xA7 || c == 0xA9 || c == 0xAB ||
					    c == 0xAE || c == 0xB0 || c == 0xB7 || c == 0xBB)
						   ? 5
						   : 4,
					   SCRIPT_NONE, CASELESS};
	if (c < 0x250) {
		k.script = LATIN;
		if (c < 0x100)
			k.letter_case = c < 0xDF ? UPPER : LOWER;
		else if (c < 0x180)
			k.letter_case = c % 2 ? LOWER : UPPER;
	} else if (c < 0x2B0) {
		k.script = LATIN;
		k.letter_case = LOWER;
	} else if (c < 0x370) {
		k.weight = 1; /* combining marks */
	} else if (c < 0x400) {
		k.script = GREEK;
		if (c == 0x386 || (c >= 0x388 && c <= 0x3AB))
			k.letter_case = UPPER;
		else if (c >= 0x3AC && c <= 0x3CE)
			k.letter_case = LOWER;
		else if (c < 0x386)
			k.weight = 5;
	} else if (c < 0x530) {
		k.script = CYRILLIC;
		if (c < 0x460)
			k.letter_case = c < 0x430 ? UPPER : LOWER;
		else
			k.letter_case = c % 2 ? LOWER : UPPER;
	} else if (c >= 0x591 && c <= 0x5C7) {
		k.weight = 1;
	} else if (c >= 0x5D0 && c <= 0x5EA) {
		k.script = HEBREW;
	} else if ((c >= 0x621 && c <= 0x64A) || (c >= 0x671 && c <= 0x6D3)) {
		k.script = ARABIC;
	} else if (c >= 0x64B && c <= 0x65F) {
		k.weight = 1;
	} else if ((c >= 0xE01 && c <= 0xE30) || (c >= 0xE32 && c <= 0xE33) ||
		   (c >= 0xE40 && c <= 0xE46)) {
		k.script = THAI;
	} else if ((c >= 0xE31 && c <= 0xE3A) || (c >= 0xE47 && c <= 0xE4E)) {
		k.weight = 1;
	} else if ((c >= 0x1100 && c <= 0x11FF) || (c >= 0x3041 && c <= 0x30FF) ||
		   (c >= 0x3131 && c <= 0x318E) || (c >= 0xAC00 && c <= 0xD7A3) ||
		   (c >= 0xFF66 && c <= 0xFF9F)) {
		k.script = CJK; /* Hangul and kana */
	} else if ((c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
		   (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x3FFFF)) {
		k.weight = 3;
		k.script = CJK;
	} else {
		k.weight = 5; /* punctuation, numbers, signs and other scripts: not judged */
	}
	return k;
}

/* The model's running state over one decoding. */
struct text_score {
	uint64_t judged, good; /* in half letters */
	/* the word being read */
	uint64_t word_letters, word_good;
	unsigned scripts; /* bit per enum script */
	bool word_bad;
	unsigned char prev_case;
	bool prev_ascii;
};

static void end_word(struct text_score *ts)
{
	unsigned mixed = ts->scripts & ~((1u << LATIN) | (1u << CJK));

	/* One script a word, Latin beside CJK allowed ("Python用"). */
	if (mixed && (ts->scripts & ~mixed))
		ts->word_bad = true;
	if (mixed & (mixed - 1))
		ts->word_bad = true;
	ts->judged += ts->word_letters;
	if (!ts->word_bad)
		ts->good += ts->word_good;
	ts->word_letters = ts->word_good = 0;
	ts->scripts = 0;
	ts->word_bad = false;
	ts->prev_case = CASELESS;
}

static void score_char(struct text_score *ts, uint32_t c)
{
	struct char_class k = classify(c);

	if (k.weight == 0 || k.weight == 5) {
		end_word(ts);
		return;
	}
	if (k.weight == 4) {
		end_word(ts);
		ts->judged += 2;
		return;
	}
	if (k.weight == 1)
		return;
	ts->scripts |= 1u << k.script;
	/* lower then upper inside a word, one of them outside ASCII: Hebrew read as Greek */
	if (ts->prev_case == LOWER && k.letter_case == UPPER && (c >= 0x80 || !ts->prev_ascii))
		ts->word_bad = true;
	ts->prev_case = k.letter_case;
	ts->prev_ascii = c < 0x80;
	if (c >= 0x80) {
		ts->word_letters += 2;
		ts->word_good += k.weight == 3 ? 1 : 2;
	}
}

/* The model's score of sample read as charset, in percent of its letters outside ASCII that
 * make sense; every undecodable byte counts as a wrong letter. -1 when iconv does not know
 * charset or the decoding holds too few such letters to judge. */
static int score_charset(const char *charset, const unsigned char *sample, size_t len)
{
	struct text_score ts = {0};
	iconv_t cd = iconv_open("UTF-32LE", iconv_name(charset));
	unsigned char out[4096];
	char *in = (char *)sample;
	size_t in_left = len < SCORE_SAMPLE ? len : SCORE_SAMPLE;

	if (cd == (iconv_t)-1)
		return -1;
	while (in_left) {
		char *o = (char *)out;
		size_t out_left = sizeof(out);
		size_t rc = iconv(cd, &in, &in_left, &o, &out_left);
		int err = errno;

		for (unsigned char *u = out; u + 4 <= (unsigned char *)o; u += 4)
			score_char(&ts, (uint32_t)u[0] | (uint32_t)u[1] << 8 |
						(uint32_t)u[2] << 16 | (uint32_t)u[3] << 24);
		if (rc != (size_t)-1 || err == E2BIG)
			continue;
		if (err == EINVAL)
			break; /* cut by the end of the sample */
		end_word(&ts);
		ts.judged += 2;
		in++;
		in_left--;
	}
	end_word(&ts);
	iconv_close(cd);
	if (ts.judged < 2 * SCORE_MIN_LETTERS)
		return -1;
	return (int)(ts.good * 100 / ts.judged);
}

/* uchardet's answer (NULL for none), or a fallback charset that the model scores at least 90
 * and 10 points above it. */
static const char *with_fallback(const char *detected, const unsigned char *s, size_t len)
{
	const char *best = detected;
	int best_score = detected ? score_charset(detected, s, len) : -1;

	for (size_t i = 0; i < sizeof(fallback_charsets) / sizeof(fallback_charsets[0]); i++) {
		int score = score_charset(fallback_charsets[i], s, len);

		if (score >= 90 && score >= best_score + 10) {
			best = fallback_charsets[i];
			best_score = score;
		}
	}
	return best;
}

/* Prepares dec to transcode from charset (an iconv name). Returns 0, 1 when iconv does not
 * know it, -1 when out of memory. */
static int open_iconv(struct tr_decoder *dec, const char *charset, size_t unit)
{
	iconv_t cd = iconv_open("UTF-8", iconv_name(charset));

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
	/* glibc's Johab reads 0x5C as the won sign (KS C 5636); Windows (CP1361) and Python read
	 * it as ASCII's backslash, as every path and escape in the text needs. */
	dec->won_is_backslash = !strcmp(charset, "johab");
	return 0;
}

/* Rewrites each U+20A9 (UTF-8 E2 82 A9) in buf[0..len) as a backslash; returns the new length. */
static size_t won_to_backslash(unsigned char *buf, size_t len)
{
	size_t w = 0;

	for (size_t r = 0; r < len; r++) {
		if (buf[r] == 0xE2 && r + 2 < len && buf[r + 1] == 0x82 && buf[r + 2] == 0xA9) {
			buf[w++] = '\\';
			r += 2;
		} else {
			buf[w++] = buf[r];
		}
	}
	return w;
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
	bom = memchr(sample, 0, len < UNICODE_SNIFF ? len : UNICODE_SNIFF)
		      ? unicode_without_bom(sample, len)
		      : TR_BOM_NONE;
	if (bom != TR_BOM_NONE) {
		rc = open_iconv(dec, unicode[bom].iconv_name, unicode[bom].unit);
		if (rc == 0)
			dec->encoding = unicode[bom].encoding;
		return rc < 0 ? -1 : 0;
	}
	const char *legacy;

	if (sample_is_utf8(sample, len)) {
		/* 7-bit ISO-2022 is valid UTF-8: uchardet's escape prober names it when a
		 * multibyte set is designated (ESC $), which an ANSI colour code never does. */
		if (!memmem(sample, len, "\x1b$", 2) || tr_utf8_count(sample, len) != len)
			return 0;
		legacy = detect_legacy(sample, len);
		if (!legacy || strncmp(legacy, "iso-2022-", 9))
			return 0;
	} else {
		legacy = with_fallback(detect_legacy(sample, len), sample, len);
	}
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
		size_t n = dec->out_cap - out_left;

		if (dec->won_is_backslash)
			n = won_to_backslash(dec->out, n);
		if (n && sink(ctx, dec->out, n))
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
