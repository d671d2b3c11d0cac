/* utf8.h - UTF-8 validation, code point counting and byte counting for the text reader. */
#ifndef TR_UTF8_H
#define TR_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The UTF-8 bytes of U+FFFD, which stands for every invalid byte sequence shown. */
#define TR_UTF8_REPLACEMENT "\xEF\xBF\xBD"

/* Classifies the sequence that starts at s[0] (len >= 1). Returns its length (1-4) when it is a
 * complete valid sequence; 0 when s[0..len) is a valid but unfinished prefix of one; or minus
 * the length of its maximal invalid subpart (Unicode's "U+FFFD substitution of maximal
 * subparts", as Python's errors="replace" does), which one U+FFFD replaces. */
int tr_utf8_check_seq(const unsigned char *s, size_t len);

/* Length of the longest prefix of s[0..len) made only of complete, valid sequences. */
size_t tr_utf8_valid_len(const unsigned char *s, size_t len);

/* Number of code points in the valid UTF-8 s[0..len). */
uint64_t tr_utf8_count(const unsigned char *s, size_t len);

/* Advances over at most n code points of the valid UTF-8 s[0..len): returns the byte offset
 * reached and stores the number of code points passed in *passed. */
size_t tr_utf8_advance(const unsigned char *s, size_t len, uint64_t n, uint64_t *passed);

/* Number of bytes equal to c in s[0..len) (vectorised). */
uint64_t tr_count_byte(const unsigned char *s, size_t len, unsigned char c);

/* Streaming repair of UTF-8: feeds arbitrary byte pieces, hands valid UTF-8 pieces on to a
 * sink, with one U+FFFD per maximal invalid subpart; a sequence split between two pieces is
 * held back (at most 3 bytes) until the next piece or the flush. */
struct tr_utf8_repair {
	unsigned char pending[4];
	size_t n_pending;
};

/* Receives a piece of valid UTF-8 (never split inside a sequence); returns 0, or -1 to stop. */
typedef int (*tr_utf8_sink)(void *ctx, const unsigned char *data, size_t len);

/* Feeds s[0..len) through rep to sink. Returns 0, or -1 when the sink did. */
int tr_utf8_repair_feed(struct tr_utf8_repair *rep, const unsigned char *s, size_t len,
			tr_utf8_sink sink, void *ctx);

/* Ends the stream: an unfinished held-back sequence becomes one U+FFFD. Returns as feed. */
int tr_utf8_repair_flush(struct tr_utf8_repair *rep, tr_utf8_sink sink, void *ctx);

#endif
