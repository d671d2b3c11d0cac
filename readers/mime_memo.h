/* mime_memo.h - libmagic's mime answers for byte strings, remembered by their SHA-256. */
#ifndef TR_MIME_MEMO_H
#define TR_MIME_MEMO_H

#include <stdbool.h>
#include <stddef.h>

/* A key is the first 128 bits of the SHA-256 of the bytes: collisions stay out of reach at the
 * memo's size. */
enum { TR_MIME_MEMO_KEY_LEN = 16 };

/* Fills key with the memo key of the len bytes of data. Returns false when the digest could not
 * be computed (then nothing may be remembered or looked up for these bytes). */
bool tr_mime_memo_key(const void *data, size_t len, unsigned char key[TR_MIME_MEMO_KEY_LEN]);

/* Returns a new copy (caller frees) of the mime type remembered for key, or NULL. Thread-safe. */
char *tr_mime_memo_get(const unsigned char key[TR_MIME_MEMO_KEY_LEN]);

/* Remembers mime (borrowed; each distinct type is copied once) for key, replacing whatever
 * shared its slot; out of memory remembers nothing. The memo is a fixed table of
 * TR_MIME_MEMO_SLOTS slots, so its memory is bounded. Thread-safe. */
void tr_mime_memo_put(const unsigned char key[TR_MIME_MEMO_KEY_LEN], const char *mime);

enum { TR_MIME_MEMO_SLOTS = 32768 }; /* 20 bytes each, touched only when used */

#endif
