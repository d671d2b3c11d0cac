/* charset.h - text or binary, which encoding, and streaming transcoding to UTF-8. */
#ifndef TR_CHARSET_H
#define TR_CHARSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of the file's start that encoding detection looks at (cut at a sequence boundary). */
#define TR_CHARSET_SAMPLE (64 * 1024)

enum tr_bom { TR_BOM_NONE, TR_BOM_UTF8, TR_BOM_UTF16LE, TR_BOM_UTF16BE, TR_BOM_UTF32LE,
	      TR_BOM_UTF32BE };

/* The byte order mark s[0..len) starts with (UTF-32LE wins over UTF-16LE); *bom_len gets its
 * length (0 for none). */
enum tr_bom tr_bom_detect(const unsigned char *s, size_t len, size_t *bom_len);

/* SPEC §3: true when head (the file's first bytes, up to 8 KiB) holds a NUL byte and no
 * UTF-16/32 byte order mark, or more than 30% control bytes (below 0x20 except \t \n \v \f \r
 * and ESC, plus 0x7f). A UTF-16/32 BOM makes it text; an empty head is text. */
bool tr_head_is_binary(const unsigned char *head, size_t len);

/* Receives decoded text (UTF-8; not necessarily valid when the source claims UTF-8). */
typedef int (*tr_decoder_sink)(void *ctx, const unsigned char *data, size_t len);

/* A streaming decoder from the file's encoding to UTF-8. */
struct tr_decoder {
	const char *encoding; /* static: "utf-8", "utf-8-bom", "utf-16le", "windows-1252", ... */
	void *cd;             /* iconv_t; NULL for UTF-8 sources, which pass through unchanged */
	size_t unit;          /* bytes skipped per undecodable unit: 1, or 2/4 for UTF-16/32 */
	size_t skip;          /* BOM bytes still to drop */
	unsigned char carry[32]; /* an unfinished sequence held over to the next piece */
	size_t n_carry;
	unsigned char *out;   /* owned iconv output buffer */
	size_t out_cap;
};

/* Chooses the encoding from sample (the file's first bytes: at least TR_CHARSET_SAMPLE of them
 * unless the file is shorter): a BOM; else UTF-8 when the first 64 KiB are valid UTF-8; else
 * uchardet's guess, transcoded with iconv; else UTF-8. Returns 0, or -1 when out of memory
 * (dec is then safe to destroy). */
int tr_decoder_init(struct tr_decoder *dec, const unsigned char *sample, size_t len);

/* Decodes the next piece of the file, data[0..len), handing the UTF-8 to sink in order. Bytes
 * that cannot be decoded become one U+FFFD per bad byte (per unit for UTF-16/32). A sequence
 * split between pieces is held over. Returns 0, or -1 when sink failed. */
int tr_decoder_feed(struct tr_decoder *dec, const unsigned char *data, size_t len,
		    tr_decoder_sink sink, void *ctx);

/* Ends the file: a held-over unfinished sequence becomes one U+FFFD, a stateful encoding is
 * reset. Returns as feed. */
int tr_decoder_finish(struct tr_decoder *dec, tr_decoder_sink sink, void *ctx);

/* Frees what dec owns. Safe on a zeroed or failed decoder. */
void tr_decoder_destroy(struct tr_decoder *dec);

#endif
