/* SPDX-License-Identifier: MIT */
/* magic_rule.c - one top-level rule of libmagic's compiled database at a time: what decides it
 * (its first test, read from its .mgc entry as libmagic would run it) and whether a text head
 * can pass that test. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "magic_rule.h"

/* Fills r from the integer test e as libmagic runs it (softmagic.c, mconvert and magiccheck):
 * the head's integer of the type's width and byte order, `&` its mask truncated to that width,
 * sign-extended unless the test is unsigned, compared with the value (sign-extended when it was
 * parsed) by `=`, `<` or `>`, signed or not. False for any other integer test. */
static bool integer_test(struct rule *r, const unsigned char *e)
{
	static const struct {
		uint8_t type, width;
		bool big_endian;
	} types[] = {
		{T_BYTE, 1, false},   {T_SHORT, 2, false}, {T_LESHORT, 2, false},
		{T_BESHORT, 2, true}, {T_LONG, 4, false},  {T_LELONG, 4, false},
		{T_BELONG, 4, true},  {T_QUAD, 8, false},  {T_LEQUAD, 8, false},
		{T_BEQUAD, 8, true},
	};
	uint64_t mask;

	r->width = 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (types[i].type == e[AT_TYPE]) {
			r->width = types[i].width;
			r->big_endian = types[i].big_endian;
		}
	}
	if (!r->width)
		return false;
	memcpy(&mask, e + AT_MASK, sizeof(mask));
	if (e[AT_MASK_OP] != FILE_OPAND || !e[AT_RELN] || !strchr("=<>", e[AT_RELN]))
		return false;
	r->number_mask = mask ? mask : UINT64_MAX;
	/* the database is little-endian here, as the host */
	memcpy(&r->number, e + AT_VALUE, sizeof(r->number));
	r->reln = e[AT_RELN];
	r->is_unsigned = e[AT_FLAG] & UNSIGNED_FLAG;
	return true;
}

/* Ends the current run of literal characters; keeps it in best when it is the longest yet. */
static void end_run(const unsigned char *run, size_t *n, unsigned char *best, size_t *n_best)
{
	if (*n > *n_best) {
		memcpy(best, run, *n);
		*n_best = *n;
	}
	*n = 0;
}

/* The index just past the bracket expression that starts at re[i] ('['); len when unclosed. */
static size_t skip_bracket(const unsigned char *re, size_t len, size_t i)
{
	size_t j = i + 1;

	if (j < len && re[j] == '^')
		j++;
	if (j < len && re[j] == ']')
		j++;
	while (j < len && re[j] != ']') {
		if (re[j] == '[' && j + 1 < len && re[j + 1] && strchr(":.=", re[j + 1])) {
			unsigned char end = re[j + 1];

			for (j += 2; j + 1 < len && !(re[j] == end && re[j + 1] == ']'); j++)
				;
			j += 2;
		} else {
			j++;
		}
	}
	return j < len ? j + 1 : len;
}

/* The index of the ')' closing the group that opens at re[i]; len when it is not closed. */
static size_t group_end(const unsigned char *re, size_t len, size_t i)
{
	size_t depth = 0;

	while (i < len) {
		if (re[i] == '[') {
			i = skip_bracket(re, len, i);
			continue;
		}
		if (re[i] == '(')
			depth++;
		else if (re[i] == ')' && --depth == 0)
			return i;
		i += re[i] == '\\' ? 2 : 1;
	}
	return len;
}

/* True when the quantifier at re[i] lets what it follows be absent: *, ?, {0...}. */
static bool optional_after(const unsigned char *re, size_t len, size_t i)
{
	return i < len &&
	       (re[i] == '*' || re[i] == '?' || (re[i] == '{' && i + 1 < len && re[i + 1] == '0'));
}

/* The longest run of characters that every match of the POSIX extended regex re[0..len) holds
 * (libmagic compiles with REG_EXTENDED | REG_NEWLINE); its length into out, 0 when there is
 * none for sure: an alternation at the top, an unclosed bracket or group. A group counts when
 * it must occur (no *, ? or {0 after it) and is not an alternation itself. */
static size_t required_literal(const unsigned char *re, size_t len, unsigned char *out)
{
	unsigned char run[VALUE_SIZE], inner[VALUE_SIZE];
	size_t n = 0, n_best = 0, i = 0;

	while (i < len) {
		unsigned char c = re[i];

		if (c == '[') {
			end_run(run, &n, out, &n_best);
			if ((i = skip_bracket(re, len, i)) == len && re[len - 1] != ']')
				return 0;
		} else if (c == '(') {
			size_t close = group_end(re, len, i), n_inner;

			if (close >= len)
				return 0;
			end_run(run, &n, out, &n_best);
			n_inner = optional_after(re, len, close + 1)
					  ? 0
					  : required_literal(re + i + 1, close - i - 1, inner);
			end_run(inner, &n_inner, out, &n_best);
			i = close + 1;
		} else if (c == ')' || c == '|') {
			return 0;
		} else if (c == '*' || c == '?' || c == '{' || c == '+') {
			if (c != '+' && n > 0)
				n--; /* the character before is optional */
			end_run(run, &n, out, &n_best);
			while (c == '{' && i < len && re[i] != '}')
				i++;
			i++;
		} else if (c == '.' || c == '^' || c == '$') {
			end_run(run, &n, out, &n_best);
			i++;
		} else if (c == '\\') {
			unsigned char next = i + 1 < len ? re[i + 1] : 0;

			if (!next)
				return 0;
			if ((next >= '0' && next <= '9') || (next >= 'A' && next <= 'Z') ||
			    (next >= 'a' && next <= 'z') || strchr("<>`'", next))
				end_run(run, &n, out, &n_best); /* \w, \b, a back-reference, ... */
			else
				run[n++] = next;
			i += 2;
		} else {
			run[n++] = c;
			i++;
		}
	}
	end_run(run, &n, out, &n_best);
	return n_best;
}

/* Fills how rule r (its first entry e) is decided. */
void tr_magic_rule_classify(struct rule *r, const unsigned char *e)
{
	uint32_t offset = read32(e + AT_OFFSET);

	r->kind = RULE_KEEP;
	if ((e[AT_FLAG] & OFFSET_FLAGS) || offset > INT32_MAX)
		return;
	r->offset = offset;
	if (e[AT_RELN] != '=') {
		if (integer_test(r, e))
			r->kind = RULE_NUMBER;
		return;
	}
	if (e[AT_TYPE] == T_REGEX) {
		if ((read32(e + AT_STR_FLAGS) & ~(uint32_t)PLAIN_REGEX_FLAGS) ||
		    e[AT_VALLEN] > VALUE_SIZE)
			return;
		r->len = (uint8_t)required_literal(e + AT_VALUE, e[AT_VALLEN], r->value);
		r->span = UINT32_MAX;
		r->kind = r->len ? RULE_SEARCH : RULE_KEEP;
		return;
	}
	if (e[AT_TYPE] == T_STRING || e[AT_TYPE] == T_SEARCH) {
		if ((read32(e + AT_STR_FLAGS) & ~(uint32_t)PLAIN_STR_FLAGS) || e[AT_VALLEN] == 0 ||
		    e[AT_VALLEN] > VALUE_SIZE)
			return;
		r->len = e[AT_VALLEN];
		memcpy(r->value, e + AT_VALUE, r->len);
		if (e[AT_TYPE] == T_STRING) {
			r->kind = RULE_EXACT;
		} else {
			uint32_t range = read32(e + AT_MASK);

			r->kind = RULE_SEARCH;
			r->span = range ? range + r->len : UINT32_MAX;
		}
		return;
	}
	if (integer_test(r, e))
		r->kind = RULE_NUMBER;
}

/* The integer test of r on the head s[0..len). */
static bool number_matches(const struct rule *r, const unsigned char *s, size_t len)
{
	uint64_t v = 0, width_mask = r->width == 8 ? UINT64_MAX : (1ULL << (8 * r->width)) - 1;

	if (!out_of_bounds(r->offset, r->width, len)) {
		memcpy(&v, s + r->offset, r->width); /* little-endian host */
		if (r->big_endian)
			v = __builtin_bswap64(v) >> (64 - 8 * r->width);
	} else if (r->width <= 4) {
		return false;
	} else {
		for (unsigned int i = 0; i < r->width; i++) {
			size_t at = (size_t)r->offset + (r->big_endian ? i : r->width - 1U - i);

			v = v << 8 | (at < len ? s[at] : 0);
		}
	}
	v &= r->number_mask & width_mask;
	if (!r->is_unsigned && (v >> (8 * r->width - 1) & 1))
		v |= ~width_mask;
	switch (r->reln) {
	case '=': return v == r->number;
	case '<': return r->is_unsigned ? v < r->number : (int64_t)v < (int64_t)r->number;
	default: return r->is_unsigned ? v > r->number : (int64_t)v > (int64_t)r->number;
	}
}

void tr_magic_pairs_fill(struct byte_pairs *pairs, const unsigned char *s, size_t len)
{
	memset(pairs, 0, sizeof(*pairs));
	for (size_t i = 0; i + 1 < len; i++) {
		unsigned int pair = (unsigned int)s[i] << 8 | s[i + 1];

		pairs->bits[pair / 64] |= 1ULL << (pair % 64);
	}
}

static bool pairs_hold(const struct byte_pairs *pairs, const unsigned char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		unsigned int pair = (unsigned int)s[i] << 8 | s[i + 1];

		if (!(pairs->bits[pair / 64] >> (pair % 64) & 1))
			return false;
	}
	return true;
}

/* False when rule r's first test fails on the head s[0..len) (bytes: the bytes it holds; pairs:
 * its byte pairs, or NULL); true when it may match. */
bool tr_magic_rule_may_match(const struct rule *r, const unsigned char *s, size_t len,
			     const struct byte_set *bytes, const struct byte_pairs *pairs)
{
	if (r->kind == RULE_NUMBER)
		return number_matches(r, s, len);
	if (r->kind == RULE_SEARCH) {
		size_t span;

		if (r->offset >= len)
			return false;
		span = len - r->offset < r->span ? len - r->offset : r->span;
		if (!byte_in(bytes, r->value[0]) || !byte_in(bytes, r->value[r->len - 1]))
			return false;
		if (pairs && span > PAIRS_SPAN && !pairs_hold(pairs, r->value, r->len))
			return false;
		return memmem(s + r->offset, span, r->value, r->len) != NULL;
	}
	return !out_of_bounds(r->offset, r->len, len) && s[r->offset] == r->value[0] &&
	       memcmp(s + r->offset, r->value, r->len) == 0;
}
