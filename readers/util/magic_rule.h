/* SPDX-License-Identifier: MIT */
/* magic_rule.h - the layout of libmagic's compiled database (.mgc) and how one of its top-level
 * rules is decided on a text head: shared by magic_subset.c and magic_rule.c only. */
#ifndef TOOLFS_MAGIC_RULE_H
#define TOOLFS_MAGIC_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The compiled database: a header entry, then MAGIC_SETS arrays of struct magic (file.h). */
enum {
	ENTRY_SIZE = 376,
	MAGIC_SETS = 2,
	MGC_MAGIC = 0xF11E041C,
	MGC_VERSION = 18,
	/* struct magic's fields, as byte offsets */
	AT_CONT_LEVEL = 0,
	AT_FLAG = 2,
	AT_RELN = 4,
	AT_VALLEN = 5,
	AT_TYPE = 6,
	AT_MASK_OP = 9,
	AT_OFFSET = 12,
	AT_MASK = 24, /* uint64 num_mask; for strings, str_range then str_flags */
	AT_STR_FLAGS = 28,
	AT_VALUE = 32, /* 128 bytes */
	VALUE_SIZE = 128,
	/* flag bits that move the offset: INDIR, OFFADD, INDIROFFADD, OFFNEGATIVE */
	OFFSET_FLAGS = 0x01 | 0x02 | 0x04 | 0x80,
	/* str_flags that do not change an exact comparison: REGEX_OFFSET_START (where the next
	 * offset starts), STRING_TEXTTEST, STRING_BINTEST */
	PLAIN_STR_FLAGS = 0x10 | 0x20 | 0x40,
	FILE_OPAND = 0, /* mask_op of `&` (or of no mask, num_mask 0) */
	UNSIGNED_FLAG = 0x08,
	/* types */
	T_BYTE = 1,
	T_SHORT = 2,
	T_LONG = 4,
	T_STRING = 5,
	T_BESHORT = 7,
	T_BELONG = 8,
	T_LESHORT = 10,
	T_LELONG = 11,
	T_SEARCH = 20,
	T_QUAD = 24,
	T_LEQUAD = 25,
	T_BEQUAD = 26,
	T_REGEX = 17,
	T_INDIRECT = 41,
	T_NAME = 45,
	T_USE = 46,
	/* str_flags of a regex that keep it case-sensitive: REGEX_OFFSET_START, the text/binary
	 * marks, REGEX_LINE_COUNT */
	PLAIN_REGEX_FLAGS = 0x10 | 0x20 | 0x40 | 0x800,
	CACHED_SUBSETS = 8,
	PAIRS_SPAN = 256, /* searches of a longer span look at the byte pairs first */
	/* A search whose string more than one head in COMMON_SHARE held, once COMMON_AFTER heads
	 * were decided, is kept from then on without a look: the sets of rules kept then vary only
	 * by the rare strings, and heads of one tree share a few subsets instead of one each. */
	COMMON_AFTER = 32,
	COMMON_SHARE = 16,
};

enum rule_kind {
	RULE_KEEP,   /* not decided here: always in the subset */
	RULE_EXACT,  /* value[0..len) must be the head's bytes at offset */
	RULE_NUMBER, /* the integer at offset, masked, must compare with number by reln */
	RULE_SEARCH, /* value[0..len) must occur within the head's bytes [offset, offset + span) */
};

/* A top-level rule: its entries, and what decides it. */
struct rule {
	uint32_t first, count; /* entries[first .. first + count) of the whole file */
	uint8_t set;
	uint8_t kind;
	uint8_t len;
	bool reaches_indirect; /* it or a rule it uses holds an `indirect` test */
	uint32_t uses, n_uses; /* the named rules it uses: used[uses .. uses + n_uses) */
	uint32_t offset, span;
	unsigned char value[VALUE_SIZE];
	uint64_t number, number_mask; /* RULE_NUMBER: the value and the mask (all ones: none) */
	uint8_t width, reln;
	bool big_endian, is_unsigned;
	uint32_t found; /* RULE_SEARCH: heads that held the string (atomic) */
};

static inline uint32_t read32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}
/* The pairs of adjacent bytes a head holds, a bit each: a string none of whose pairs is missing
 * may occur in it, one with a pair missing cannot; a cheap first look before memmem, as a
 * head is searched for some 300 strings. */
struct byte_pairs {
	uint64_t bits[65536 / 64];
};

/* The bytes a head holds, a bit each. */
struct byte_set {
	uint64_t bits[4];
};

/* True when the test of width bytes at offset runs past the head: mget fails such a test of a
 * byte, short, long or string ("Verify we have enough data"; a quad is read zero-padded). */
static inline bool out_of_bounds(uint32_t offset, size_t width, size_t len)
{
	return offset > len || len - offset < width;
}

static inline bool byte_in(const struct byte_set *set, unsigned char c)
{
	return set->bits[c / 64] >> (c % 64) & 1;
}

/* Fills pairs with the byte pairs of s[0..len). */
void tr_magic_pairs_fill(struct byte_pairs *pairs, const unsigned char *s, size_t len);
/* Fills how rule r (its first entry e, borrowed) is decided. */
void tr_magic_rule_classify(struct rule *r, const unsigned char *e);
/* False when rule r's first test fails on the head s[0..len) (bytes: the bytes it holds; pairs:
 * its byte pairs, or NULL); true when it may match. */
bool tr_magic_rule_may_match(const struct rule *r, const unsigned char *s, size_t len,
			     const struct byte_set *bytes, const struct byte_pairs *pairs);

#endif
