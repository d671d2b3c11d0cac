/* SPDX-License-Identifier: MIT */
/* util.h - the shared helpers of the reader core (private to readers/): file I/O, SHA-256, CRC-32,
 * the pipe, libmagic and its memo, base64, UTF-8, charsets, and the GLib/libvips start-up
 * glue. */
#ifndef TR_UTIL_PRIVATE_H
#define TR_UTIL_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* --- sha256 --- */
/* SHA-256 as 64 hex digits (own code: SHA-NI or portable C), one-shot or incremental. Pure: no
 * I/O. */

/* docs/SPEC.md §2: metadata.sha256 is given for files up to 256 MiB. */
#define TR_SHA256_MAX_SIZE (256ull * 1024 * 1024)

/* Hex SHA-256 (65 bytes with NUL) of a buffer. */
void tr_sha256_hex(const void *data, size_t len, char *hex);
/* The 32-byte SHA-256 of data[0..len) into digest; always true. */
bool tr_sha256_raw(const void *data, size_t len, unsigned char digest[32]);

/* Incremental SHA-256 for streaming readers; ctx is opaque, NULL when out of memory. */
struct tr_sha256;
struct tr_sha256 *tr_sha256_new(void);
void tr_sha256_update(struct tr_sha256 *ctx, const void *data, size_t len);
/* Writes the hex digest and frees ctx. NULL ctx is a no-op. */
void tr_sha256_finish(struct tr_sha256 *ctx, char *hex);
void tr_sha256_free(struct tr_sha256 *ctx);
/* For tests: the portable code even where the CPU has the SHA extensions (on), or the fastest
 * the CPU runs (off, the default). Not for use while other threads hash. */
void tr_sha256_use_portable(bool on);

/* --- crc32 --- */
/* CRC-32 as ISO 3309, PNG and zlib define it (PCLMULQDQ where the CPU has it: about 20 GB/s). */

/* Continues crc (0 to start) over data[0..len): tr_crc32(0, p, n) equals zlib's crc32(0, p, n). */
uint32_t tr_crc32(uint32_t crc, const void *data, size_t len);

/* --- sha_memo --- */
/* a file's SHA-256 remembered for its version, process-wide. */

/* When the SHA-256 of st's version (st_dev, st_ino, st_size, st_mtim, st_ctim all equal) is
 * remembered, copies its 64 hex digits and NUL into hex and returns true. Thread-safe. */
bool tr_sha_memo_get(const struct stat *st, char hex[65]);

/* Remembers hex (64 digits) as the SHA-256 of st's version, replacing whatever shared its slot
 * (a fixed table of 512). Versions stamped within the last 2 s are not remembered: the
 * kernel's coarse timestamps could let a write right after the hash keep the same version.
 * Only regular files. Thread-safe. */
void tr_sha_memo_put(const struct stat *st, const char *hex);

/* Forgets every remembered digest (tr_library_shutdown). Thread-safe. */
void tr_sha_memo_forget(void);

/* --- file_io --- */
/* Positional reads, file digests and name helpers shared by the readers. */

/* Reads exactly len bytes at offset unless EOF comes first, retrying EINTR and short reads.
 * Returns the count read, or -1 with errno. */
ssize_t tr_pread_full(int fd, void *buf, size_t len, off_t offset);

/* Reads exactly len bytes from the stream fd (a pipe or socket of a render's child), waiting no
 * later than deadline (0: none). Returns 0, 1 when the deadline came first, -1 when the stream
 * ended or failed first. */
int tr_read_full_before(int fd, void *buf, size_t len, uint64_t deadline);

/* Sends all len bytes of buf on the stream socket sock (a worker's), retrying EINTR and short
 * sends; a peer that is gone is an error, never SIGPIPE. Returns 0, or -1 with errno. */
int tr_send_full(int sock, const void *buf, size_t len);

/* Streams the whole file through SHA-256 (hex out). Returns 0, or -1 with errno. */
int tr_sha256_fd(int fd, uint64_t size, char *hex);

/* True when name ends in "." followed by ext, compared case-insensitively ("a.PNG", "png"). */
bool tr_has_extension(const char *name, const char *ext);

/* The last component of path ("src/a.c" -> "a.c"; "a/" -> "a/"); borrowed from path. */
const char *tr_path_base_name(const char *path);

/* --- magic --- */
/* libmagic's answers: cookies loaded on first use and lent to one thread at a time (one for
 * descriptions, up to two for mime types, so two renders may ask at once); mime answers for a
 * file's head go through the memo below. Thread-safe. */

/* Return malloc'd strings, or NULL when libmagic has no answer or memory ran out. */
char *tr_magic_description_fd(int fd);
char *tr_magic_mime_fd(int fd);
char *tr_magic_mime_buffer(const void *data, size_t len);
/* libmagic's mime type of a text head from a copy of its database without the rules the head
 * cannot match (magic_subset.c): the same answer at a fraction of the cost. NULL when the head
 * is not one it can type surely (the caller asks the full database then) or on failure. */
char *tr_magic_subset_mime(const void *data, size_t len);
void tr_magic_subset_close(void);
/* Closes every cookie (tr_library_shutdown: no thread may be asking); the next question loads
 * one again. */
void tr_magic_close_all(void);

/* --- pipe --- */
/* A ring of buffers between the caller, who fills them in turn, and a helper thread that consumes
 * them in order: a file's SHA-256 beside its scan, a PNG's rows summed beside their inflate. */

struct tr_pipe;

/* Consumes buf[0..len), one submitted buffer, on the pipe's thread; it may also change those
 * bytes when the caller does not read them after submitting. */
typedef void (*tr_pipe_consume_fn)(void *ctx, unsigned char *buf, size_t len);

/* Starts a thread that calls consume(ctx, ...) for every buffer submitted, in order; the pipe
 * owns n_slots buffers of slot_size bytes, used in turn (rings of one size are kept for reuse).
 * ctx is borrowed until tr_pipe_finish. Returns NULL when memory or the thread cannot be had. */
struct tr_pipe *tr_pipe_new(size_t n_slots, size_t slot_size, tr_pipe_consume_fn consume,
			    void *ctx);

/* Frees the rings kept for reuse (tr_library_shutdown). Thread-safe. */
void tr_pipe_spares_free(void);

/* Returns the next buffer to fill (slot_size bytes), waiting until the thread has consumed what
 * it held before. Borrowed: valid until n_slots further acquires. */
unsigned char *tr_pipe_acquire(struct tr_pipe *pipe);

/* Queues the first len bytes of the last acquired buffer for the thread. The caller may go on
 * reading them (not writing) while they are consumed. */
void tr_pipe_submit(struct tr_pipe *pipe, size_t len);

/* Waits for everything submitted to be consumed, stops the thread and frees pipe. NULL is a
 * no-op. */
void tr_pipe_finish(struct tr_pipe *pipe);

/* --- mime_memo --- */
/* libmagic's mime answers for byte strings, remembered by a keyed hash of them. */

/* A key is the SipHash-2-4-128 of the bytes under a key drawn once per process from getrandom:
 * collisions stay out of reach at the memo's size, and bytes cannot be made to collide. */
enum { TR_MIME_MEMO_KEY_LEN = 16 };

/* SipHash-2-4 with 128 bits of output (the reference's byte order) of the len bytes of data
 * under the key k (k[0]: the key's first 8 bytes, little-endian). */
void tr_siphash128(const void *data, size_t len, const uint64_t k[2], unsigned char out[16]);

/* Fills key with the memo key of the len bytes of data. Returns false when the process has no
 * hash key (getrandom failed; then nothing may be remembered or looked up). */
bool tr_mime_memo_key(const void *data, size_t len, unsigned char key[TR_MIME_MEMO_KEY_LEN]);

/* Returns a new copy (caller frees) of the mime type remembered for key, or NULL. Thread-safe. */
char *tr_mime_memo_get(const unsigned char key[TR_MIME_MEMO_KEY_LEN]);

/* Remembers mime (borrowed; each distinct type is copied once) for key, replacing whatever
 * shared its slot; out of memory remembers nothing. The memo is a fixed table of
 * TR_MIME_MEMO_SLOTS slots, so its memory is bounded. Thread-safe. */
void tr_mime_memo_put(const unsigned char key[TR_MIME_MEMO_KEY_LEN], const char *mime);

/* Forgets every answer and frees the interned types (tr_library_shutdown: no thread may be
 * asking). */
void tr_mime_memo_forget(void);

enum { TR_MIME_MEMO_SLOTS = 32768 }; /* 20 bytes each, touched only when used */

/* --- base64 --- */
/* standard base64 (RFC 4648, "+/") of whole 3-byte groups, as fast as the CPU allows. */

/* Encodes groups whole 3-byte groups of in into 4 * groups characters at out (no padding, no
 * NUL), reading and writing nothing outside them. Takes the fastest path the CPU and the OS
 * support (asked of CPUID and XGETBV once); the output is the same on every path. */
void tr_base64_groups(const unsigned char *in, size_t groups, unsigned char *out);

/* The encoders, slowest first; tr_base64_groups takes the last usable one. */
enum tr_base64_path {
	TR_BASE64_SCALAR,     /* portable: two lookups in a 4096-entry table per group */
	TR_BASE64_AVX2,       /* 8 groups per step */
	TR_BASE64_AVX512VBMI, /* 16 groups per step: vpermb and vpmultishiftqb */
	TR_BASE64_PATHS
};

/* Nonzero when path runs on this CPU under this OS; the scalar path always does. */
int tr_base64_path_usable(enum tr_base64_path path);

/* tr_base64_groups on the given path, for tests that compare them; an unusable path falls back
 * to the scalar one. */
void tr_base64_groups_path(enum tr_base64_path path, const unsigned char *in, size_t groups,
			   unsigned char *out);

/* --- utf8 --- */
/* UTF-8 validation, code point counting, cutting and repair, for every reader and the JSON
 * writer. */

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

/* Length in bytes of the longest prefix of s[0..len) holding at most max_chars code points (as
 * tr_utf8_count counts them) and at most max_bytes bytes, never ending inside a sequence. */
size_t tr_utf8_prefix(const unsigned char *s, size_t len, uint64_t max_chars, uint64_t max_bytes);

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

/* --- charset --- */
/* text or binary, which encoding, and streaming transcoding to UTF-8. */

/* Canonical (lowercase) names of the legacy charsets decoded (uchardet's answers as read, and
 * the fallback's), each also the name given to iconv_open but iso-2022-jp (read as glibc's
 * ISO-2022-JP-3, for its half-width katakana); NULL-terminated. */
extern const char *const tr_legacy_charsets[];

/* Bytes of the file's start that encoding detection looks at (cut at a sequence boundary). */
#define TR_CHARSET_SAMPLE (64 * 1024)

enum tr_bom {
	TR_BOM_NONE,
	TR_BOM_UTF8,
	TR_BOM_UTF16LE,
	TR_BOM_UTF16BE,
	TR_BOM_UTF32LE,
	TR_BOM_UTF32BE
};

/* The byte order mark s[0..len) starts with (UTF-32LE wins over UTF-16LE); *bom_len gets its
 * length (0 for none). */
enum tr_bom tr_bom_detect(const unsigned char *s, size_t len, size_t *bom_len);

/* docs/SPEC.md §3: true when head (the file's first bytes, up to 8 KiB) holds a NUL byte and no
 * UTF-16/32 byte order mark and is not plainly BOM-less UTF-16/32, or more than 30% control
 * bytes (below 0x20 except \t \n \v \f \r and ESC, plus 0x7f). A UTF-16/32 BOM makes it
 * text; an empty head is text. */
bool tr_head_is_binary(const unsigned char *head, size_t len);

/* Receives decoded text (UTF-8; not necessarily valid when the source claims UTF-8). */
typedef int (*tr_decoder_sink)(void *ctx, const unsigned char *data, size_t len);

/* A streaming decoder from the file's encoding to UTF-8. */
struct tr_decoder {
	const char *encoding;    /* static: "utf-8", "utf-8-bom", "utf-16le", "windows-1252", ... */
	void *cd;                /* iconv_t; NULL for UTF-8 sources, which pass through unchanged */
	size_t unit;             /* bytes skipped per undecodable unit: 1, or 2/4 for UTF-16/32 */
	bool won_is_backslash;   /* Johab: iconv's U+20A9 for 0x5C shown as the backslash */
	size_t skip;             /* BOM bytes still to drop */
	unsigned char carry[32]; /* an unfinished sequence held over to the next piece */
	size_t n_carry;
	unsigned char *out; /* owned iconv output buffer */
	size_t out_cap;
};

/* Chooses the encoding from sample (the file's first bytes: at least TR_CHARSET_SAMPLE of them
 * unless the file is shorter), as docs/SPEC.md §3 "Text" says: a BOM; else BOM-less UTF-16/32
 * when plainly that; else UTF-8 when the first 64 KiB are valid UTF-8 (unless uchardet names
 * 7-bit ISO-2022); else uchardet's guess or a fallback charset the character-class model
 * prefers (Johab, CP737, CP869, IBM862), transcoded with iconv; else UTF-8. Returns 0, or -1
 * when out of memory (dec is then safe to destroy). */
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

/* --- deadline --- */
/* the time budget of one result's renders (max_render_ms): a CLOCK_MONOTONIC instant in ns. */

/* The instant ms milliseconds from now, or 0 (no deadline) when ms is 0 or too far away. */
uint64_t tr_deadline_after_ms(uint64_t ms);

/* True when deadline (from tr_deadline_after_ms; 0: none) has come. Cheap enough (the vDSO
 * clock) to ask once per drawing operation. */
bool tr_deadline_passed(uint64_t deadline);

/* A poll(2) timeout until deadline: the milliseconds left, rounded up, at most cap_ms (-1: no
 * cap); 0 once it has come; cap_ms when there is no deadline. */
int tr_deadline_wait_ms(uint64_t deadline, int cap_ms);

/* --- module --- */
/* the optional readers' shared modules (toolfs-vips.so, toolfs-pdf.so, toolfs-office.so), loaded
 * on first use. */

/* One shared module and the interface table it exports. Each module has one instance, listed
 * in tr_modules (core/registry.c), e.g. {.file = "toolfs-vips.so", .symbol = "tr_vips_api",
 * .abi = TR_VIPS_ABI}. */
struct tr_module {
	const char *file;   /* file name in the module directory */
	const char *symbol; /* the exported table; it begins with a struct tr_module_head */
	unsigned abi;       /* the table version this core expects */
	const void *linked; /* the table when the module's objects are linked in (tests), or NULL */
	/* set by tr_module_api: */
	int state; /* 0 not tried, 1 loaded, -1 failed */
	const void *api;
	char error[512];
};

/* The interface table of mod: the linked one if any; else, on the first call, dlopens mod->file
 * from $TOOLFS_MODULE_DIR alone when that is set, else from the first of these directories
 * that holds it: the build tree's
 * readers/ when the executable is inside a meson build tree (a folder with meson-private/ up to
 * three levels above it); EXE/../LIBDIR/toolfs; PREFIX/LIBDIR/toolfs (LIBDIR and PREFIX as
 * configured). The answer is kept for the life of the process (the module is never unloaded).
 * Returns the table, or NULL with one sentence in mod->error naming the module and why it
 * could not be loaded (not found, or dlerror's reason, or a table of another version).
 * Thread-safe. */
const void *tr_module_api(struct tr_module *mod);

/* The first members of every module's interface table. warm (or NULL) starts, once in a
 * process, what every read through the module would otherwise start again: the reader
 * worker's fork server calls it before it forks the workers of later reads (libvips and its
 * plug-ins, a Tesseract engine), never a front end. It reads no file
 * a read names and starts no thread that outlives it (the server forks after it). */
struct tr_module_head {
	unsigned abi;
	void (*warm)(void);
};

/* The mask of the modules of list (NULL-terminated, at most 32) this process has loaded. */
uint32_t tr_module_loaded(struct tr_module *const *list);

/* Loads each module of list whose bit mask sets (tr_module_api) and calls its warm. Call once
 * per module: by the reader worker's fork server alone, with the modules it has not warmed. */
void tr_module_warm(struct tr_module *const *list, uint32_t mask);

/* Caps OpenMP (Tesseract's LSTM) at one thread a page before libgomp is first loaded, unless
 * the user set OMP_THREAD_LIMIT; a no-op once it is loaded. Call before any dlopen of a module. */
void tr_module_limit_openmp(void);

/* Finds the executable helper file (toolfs-reader-worker) where modules are looked for and
 * writes its path into path. Returns 0, or -1 with the last directory looked in written there. */
int tr_module_find(const char *file, char *path, size_t size);

/* --- glib_quiet --- */
/* keeps the GLib-based libraries (poppler-glib, libvips) from printing. */

/* Drops every g_log message of domain (borrowed; GLib copies it),
 * fatal ones included: the core never prints, and a library's complaint about a damaged file
 * is already reported in the result. Call once per domain, before the library's first use. */
void tr_glib_quiet_domain(const char *domain);

/* --- vips_start --- */
/* one start-up of libvips for the whole process, shared by every reader. */

/* Starts libvips once (thread-safe), with its operation cache off (toolfs caches results
 * itself) and its log messages dropped (the core never prints). Returns true when it is usable. */
bool tr_vips_start(void);

#endif
