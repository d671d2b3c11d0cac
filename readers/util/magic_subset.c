/* SPDX-License-Identifier: MIT */
/* magic_subset.c - libmagic's mime type of a text head at a fraction of its cost, with the same
 * answer. libmagic runs every rule of its compiled database (about 3,800 top-level rules, 22,000
 * entries) on every buffer, most of them tests of bytes a text does not hold: that loop is most
 * of its 200 us for a one-line text. Here each top-level rule whose first test toolfs can run
 * exactly or bound (an integer or a string at a fixed offset; a search for a plain string; a
 * regex, by a string that every match of it holds) is looked at on the head, and libmagic then
 * runs, with the same flags, on a copy of its database without the rules whose first test fails
 * (a rule whose first test fails adds nothing to libmagic's answer nor to its state) and without
 * the named rules no kept rule uses. The copies are cached by the set of rules kept: heads that
 * keep the same rules share one cookie (and its compiled regexes).
 *
 * Only heads for which the decisions are sure take this path (tr_magic_subset_mime returns NULL
 * for the others, which the full database types): text that libmagic's text pass sees unchanged
 * (printable ASCII and the controls it calls text, or strict UTF-8 of them, without a BOM), the
 * database magic_load(NULL) loads being one .mgc of the layout read here (version 18, file
 * 5.39-5.45) and nothing else, and no kept rule able to reach an `indirect` test (which runs the
 * database again on a shifted buffer). */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <magic.h>

#include "util.h"

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

/* The first look at a decided rule, packed for the pass over all of them that each head makes
 * (a few thousand; most fail on one byte without reaching their struct rule). */
struct probe {
	uint32_t offset;
	uint32_t rule;
	uint8_t kind;
	uint8_t len;        /* the bytes the test reads at offset (a search: at least) */
	uint8_t first;      /* the head's byte at offset, & first_mask, must be this ... */
	uint8_t first_mask; /* ... unless 0; for a search, the string's first byte */
	bool reaches_indirect;
	bool padded; /* a quad, which libmagic reads past the head's end as zeros */
	bool common; /* a search whose string is common: kept without a look (atomic) */
};

/* One cookie on a subset, and the decisions that made it. */
struct subset {
	magic_t cookie;
	unsigned char *db;
	uint64_t *kept; /* a bit per decided rule */
	uint64_t hash;
	unsigned long used;
};

static pthread_mutex_t subset_lock = PTHREAD_MUTEX_INITIALIZER;
static bool subset_tried; /* subset_init ran (under subset_lock); tr_magic_subset_close clears it */
static const unsigned char *mgc; /* the mapped database; NULL: the subset path is off */
static size_t mgc_len;
static struct rule *rules;
static uint32_t n_rules, n_decided; /* decided rules are numbered 0 .. n_decided - 1 */
static uint32_t *decided_index;     /* per rule: its number among the decided ones */
static struct probe *probes;        /* per decided rule, by its number */
/* Decided rules are numbered so that those comparing the head's first byte with a value (most
 * of them: 2,756 of 3,225 fixed tests in file 5.44) come in runs by that byte:
 * [first_runs[b], first_runs[b + 1]) for byte b; the others from first_runs[256] on. */
static uint32_t first_runs[258];
static uint32_t *used, n_used; /* rule numbers of the named rules each rule uses */
static size_t kept_words;
static uint32_t heads_decided; /* atomic */
static struct subset cache[CACHED_SUBSETS];
static unsigned long clock_hand;

static const unsigned char *entry(uint32_t i)
{
	return mgc + (size_t)(i + 1) * ENTRY_SIZE;
}

static uint32_t read32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A path component of MAGIC's search list is harmless when it loads no rule: absent, or a text
 * magic file of comments and blank lines only (Debian's /etc/magic). */
static bool loads_nothing(const char *path)
{
	struct stat st;
	char line[512];
	bool empty = true;
	FILE *f;

	if (stat(path, &st) != 0)
		return true;
	if (!S_ISREG(st.st_mode) || !(f = fopen(path, "re")))
		return false;
	while (empty && fgets(line, sizeof(line), f)) {
		size_t skip = strspn(line, " \t\r\n");

		empty = line[skip] == '\0' || line[skip] == '#';
	}
	fclose(f);
	return empty;
}

/* Maps the one .mgc that magic_load(NULL) loads; false when the search list loads anything else. */
static bool map_database(void)
{
	const char *list = magic_getpath(NULL, 0);
	char *copy = list ? strdup(list) : NULL;
	char *save = NULL, *mgc_path = NULL;
	bool ok = copy != NULL;

	for (char *part = copy ? strtok_r(copy, ":", &save) : NULL; ok && part;
	     part = strtok_r(NULL, ":", &save)) {
		char *compiled = NULL;
		struct stat st;

		if (asprintf(&compiled, "%s.mgc", part) < 0) {
			ok = false;
		} else if (stat(compiled, &st) == 0 && S_ISREG(st.st_mode) && !mgc_path) {
			mgc_path = compiled;
			compiled = NULL;
		} else {
			ok = stat(compiled, &st) != 0 && loads_nothing(part);
		}
		free(compiled);
	}
	if (ok && mgc_path) {
		int fd = open(mgc_path, O_RDONLY | O_CLOEXEC);
		struct stat st;

		ok = fd >= 0 && fstat(fd, &st) == 0 && st.st_size > ENTRY_SIZE &&
		     st.st_size % ENTRY_SIZE == 0;
		if (ok) {
			void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

			ok = map != MAP_FAILED;
			if (ok) {
				mgc = map;
				mgc_len = (size_t)st.st_size;
			}
		}
		if (fd >= 0)
			close(fd);
	}
	free(mgc_path);
	free(copy);
	return ok && mgc;
}

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
static void classify(struct rule *r, const unsigned char *e)
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

/* The name a `use` or `name` entry carries (`use ^name` flips endianness). */
static const char *entry_name(const unsigned char *e)
{
	const char *name = (const char *)e + AT_VALUE;

	return *name == '^' ? name + 1 : name;
}

/* The named rules by name: an open-addressing table of rule numbers + 1 (0: empty). */
enum { NAME_SLOTS = 2048 }; /* a power of two, at least twice the names (263 in file 5.44) */

static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < VALUE_SIZE && name[i]; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

/* The slot of name in table: where it is, or the empty one where it would go. */
static uint32_t *name_slot(uint32_t *table, const char *name);

static bool is_named(const struct rule *r)
{
	return entry(r->first)[AT_TYPE] == T_NAME;
}

static uint32_t *name_slot(uint32_t *table, const char *name)
{
	uint32_t at = name_hash(name) & (NAME_SLOTS - 1);

	while (table[at] &&
	       strncmp(entry_name(entry(rules[table[at] - 1].first)), name, VALUE_SIZE) != 0)
		at = (at + 1) & (NAME_SLOTS - 1);
	return &table[at];
}

/* Fills each rule's list of the named rules it uses, and marks every rule that holds an
 * `indirect` test or uses, through any chain of `use`, a named rule that does. */
static bool link_uses(void)
{
	uint32_t *names = calloc(NAME_SLOTS, sizeof(*names));
	size_t n_names = 0, n_use_entries = 0;
	bool changed = true;

	if (!names)
		return false;
	for (uint32_t r = 0; r < n_rules; r++) {
		if (is_named(&rules[r]) && ++n_names < NAME_SLOTS / 2) {
			uint32_t *slot = name_slot(names, entry_name(entry(rules[r].first)));

			if (!*slot)
				*slot = r + 1; /* the first of a name is the one libmagic finds */
		}
		for (uint32_t i = rules[r].first; i < rules[r].first + rules[r].count; i++) {
			n_use_entries += entry(i)[AT_TYPE] == T_USE;
			rules[r].reaches_indirect |= entry(i)[AT_TYPE] == T_INDIRECT;
		}
	}
	if (n_names >= NAME_SLOTS / 2 || !(used = calloc(n_use_entries + 1, sizeof(*used)))) {
		free(names);
		return false;
	}
	for (uint32_t r = 0; r < n_rules; r++) {
		rules[r].uses = n_used;
		for (uint32_t i = rules[r].first; i < rules[r].first + rules[r].count; i++) {
			uint32_t named;

			if (entry(i)[AT_TYPE] == T_USE &&
			    (named = *name_slot(names, entry_name(entry(i)))))
				used[n_used++] = named - 1;
		}
		rules[r].n_uses = n_used - rules[r].uses;
	}
	free(names);
	while (changed) {
		changed = false;
		for (uint32_t r = 0; r < n_rules; r++)
			for (uint32_t k = 0; k < rules[r].n_uses && !rules[r].reaches_indirect; k++)
				if (rules[used[rules[r].uses + k]].reaches_indirect)
					rules[r].reaches_indirect = changed = true;
	}
	return true;
}

/* The run of probe p: its first byte when it compares the head's first byte with one, else 256. */
static unsigned int run_of(const struct probe *p)
{
	return p->offset == 0 && p->first_mask == 0xff && !p->padded ? p->first : 256;
}

/* Numbers the decided rules again in the order of first_runs (stable within a run), moving
 * their probes and decided_index along; false when out of memory. */
static bool number_by_first_byte(void)
{
	struct probe *sorted = malloc((n_decided ? n_decided : 1) * sizeof(*sorted));
	uint32_t count[257] = {0}, next[257];

	if (!sorted)
		return false;
	for (uint32_t d = 0; d < n_decided; d++)
		count[run_of(&probes[d])]++;
	first_runs[0] = 0;
	for (int b = 0; b < 257; b++) {
		first_runs[b + 1] = first_runs[b] + count[b];
		next[b] = first_runs[b];
	}
	for (uint32_t d = 0; d < n_decided; d++) {
		uint32_t to = next[run_of(&probes[d])]++;

		sorted[to] = probes[d];
		decided_index[probes[d].rule] = to;
	}
	free(probes);
	probes = sorted;
	return true;
}

/* Fills probes; false when a rule kept on every head can reach `indirect` (no head would be
 * sure) or out of memory. */
static bool make_probes(void)
{
	if (!(probes = calloc(n_decided ? n_decided : 1, sizeof(*probes))))
		return false;
	for (uint32_t r = 0; r < n_rules; r++) {
		const struct rule *rule = &rules[r];
		struct probe *p = &probes[decided_index[r]];

		if (rule->kind == RULE_KEEP) {
			if (rule->reaches_indirect && !is_named(rule))
				return false;
			continue;
		}
		*p = (struct probe){.offset = rule->offset,
				    .rule = r,
				    .kind = rule->kind,
				    .reaches_indirect = rule->reaches_indirect};
		if (rule->kind == RULE_NUMBER) {
			unsigned int shift = rule->big_endian ? 8 * (rule->width - 1U) : 0;

			p->len = rule->width;
			p->padded = rule->width > 4;
			if (rule->reln == '=') {
				p->first_mask = (uint8_t)(rule->number_mask >> shift);
				p->first = (uint8_t)(rule->number >> shift) & p->first_mask;
			}
		} else {
			p->len = rule->len;
			p->first = rule->value[0];
			p->first_mask = rule->kind == RULE_EXACT ? 0xff : 0;
		}
	}
	return number_by_first_byte();
}

/* Splits the mapped database into its top-level rules; false when it is not the layout read. */
static bool index_rules(void)
{
	uint32_t n_set[MAGIC_SETS], total = 0, i = 0;

	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ || read32(mgc) != MGC_MAGIC ||
	    read32(mgc + 4) != MGC_VERSION)
		return false; /* the integers are read as a little-endian host's */
	for (int s = 0; s < MAGIC_SETS; s++)
		total += n_set[s] = read32(mgc + 8 + 4 * s);
	if ((size_t)total + 1 != mgc_len / ENTRY_SIZE || !(rules = calloc(total, sizeof(*rules))) ||
	    !(decided_index = calloc(total, sizeof(*decided_index))))
		return false;
	for (int s = 0; s < MAGIC_SETS; s++) {
		uint32_t end = i + n_set[s];

		while (i < end) {
			struct rule *r = &rules[n_rules++];

			r->first = i;
			r->set = (uint8_t)s;
			do
				i++;
			while (i < end &&
			       (entry(i)[AT_CONT_LEVEL] | entry(i)[AT_CONT_LEVEL + 1]) != 0);
			r->count = i - r->first;
			classify(r, entry(r->first));
			if (r->kind != RULE_KEEP)
				decided_index[n_rules - 1] = n_decided++;
		}
	}
	kept_words = (n_decided + 63) / 64;
	return link_uses() && make_probes();
}

/* Frees the index and unmaps the database: the subset path is off from then on. */
static void index_free(void)
{
	free(rules);
	free(decided_index);
	free(used);
	free(probes);
	rules = NULL;
	decided_index = used = NULL;
	probes = NULL;
	n_rules = n_decided = n_used = 0;
	kept_words = 0;
	memset(first_runs, 0, sizeof(first_runs));
	__atomic_store_n(&heads_decided, 0, __ATOMIC_RELAXED);
	if (mgc)
		munmap((void *)mgc, mgc_len);
	mgc = NULL;
	mgc_len = 0;
}

static void subset_init(void)
{
	if (!map_database() || !index_rules())
		index_free();
}

/* True when libmagic's text pass sees these very bytes: printable ASCII and the controls it
 * counts as text (BEL to CR, ESC), or strict UTF-8 of them; no BOM, which its UTF-8 pass drops. */
static bool plain_text(const unsigned char *s, size_t len)
{
	bool ascii = true;

	if (len == 0 || (len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF))
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c >= 0x80)
			ascii = false;
		else if ((c < 0x20 && !(c >= 0x07 && c <= 0x0D) && c != 0x1B) || c == 0x7F)
			return false;
	}
	return ascii || tr_utf8_valid_len(s, len) == len;
}

/* True when the test of width bytes at offset runs past the head: mget fails such a test of a
 * byte, short, long or string ("Verify we have enough data"; a quad is read zero-padded). */
static bool out_of_bounds(uint32_t offset, size_t width, size_t len)
{
	return offset > len || len - offset < width;
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

static bool byte_in(const struct byte_set *set, unsigned char c)
{
	return set->bits[c / 64] >> (c % 64) & 1;
}

static void pairs_fill(struct byte_pairs *pairs, const unsigned char *s, size_t len)
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
static bool may_match(const struct rule *r, const unsigned char *s, size_t len,
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

/* True when the probe alone shows its rule's first test fails on the head s[0..len). */
static bool first_look_fails(const struct probe *p, const unsigned char *s, size_t len,
			     const struct byte_set *bytes)
{
	if (p->kind == RULE_SEARCH)
		return !byte_in(bytes, p->first);
	if (out_of_bounds(p->offset, p->len, len))
		return !p->padded;
	return (s[p->offset] & p->first_mask) != p->first;
}

/* Counts a head that holds the string of the search p; marks it common past COMMON_SHARE. */
static void note_found(struct probe *p, uint32_t seen)
{
	uint32_t found = __atomic_add_fetch(&rules[p->rule].found, 1, __ATOMIC_RELAXED);

	if (seen > COMMON_AFTER && found * COMMON_SHARE > seen)
		__atomic_store_n(&p->common, true, __ATOMIC_RELAXED);
}

/* Sets the bit of decided rule d in kept when it may match the head; false when it does and
 * can reach `indirect`. */
static bool decide_one(uint32_t d, const unsigned char *s, size_t len, const struct byte_set *bytes,
		       const struct byte_pairs *pairs, uint32_t seen, uint64_t *kept)
{
	struct probe *p = &probes[d];

	if (!__atomic_load_n(&p->common, __ATOMIC_RELAXED)) {
		if (first_look_fails(p, s, len, bytes) ||
		    !may_match(&rules[p->rule], s, len, bytes, pairs))
			return true;
		if (p->kind == RULE_SEARCH)
			note_found(p, seen);
	}
	kept[d / 64] |= 1ULL << (d % 64);
	return !p->reaches_indirect;
}

/* Fills kept with the decided rules that may match; false when a kept rule reaches `indirect`. */
static bool decide(const unsigned char *s, size_t len, uint64_t *kept, uint64_t *hash)
{
	struct byte_pairs *pairs = len > PAIRS_SPAN ? malloc(sizeof(*pairs)) : NULL;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a over the words of kept */
	struct byte_set bytes = {{0}};
	bool sure = true;
	uint32_t seen;

	for (size_t i = 0; i < len; i++)
		bytes.bits[s[i] / 64] |= 1ULL << (s[i] % 64);
	if (pairs)
		pairs_fill(pairs, s, len);
	memset(kept, 0, kept_words * sizeof(*kept));
	seen = __atomic_add_fetch(&heads_decided, 1, __ATOMIC_RELAXED);
	/* The head's first byte's run, then the probes of no run; the other runs fail on it. */
	for (int part = 0; part < 2 && sure; part++) {
		uint32_t from = part ? first_runs[256] : first_runs[s[0]];
		uint32_t to = part ? first_runs[257] : first_runs[s[0] + 1];

		for (uint32_t d = from; d < to && sure; d++)
			sure = decide_one(d, s, len, &bytes, pairs, seen, kept);
	}
	free(pairs);
	for (size_t w = 0; w < kept_words; w++)
		h = (h ^ kept[w]) * 1099511628211ULL;
	*hash = h;
	return sure;
}

/* Marks in take the rules of the subset for kept: the rules not decided, the decided ones kept,
 * and the named rules they use, through any chain of `use` (the others cannot run). */
static bool select_rules(const uint64_t *kept, bool *take)
{
	uint32_t *stack = malloc(n_rules * sizeof(*stack)), top = 0;

	if (!stack)
		return false;
	for (uint32_t r = 0; r < n_rules; r++) {
		uint32_t d = decided_index[r];

		take[r] = !is_named(&rules[r]) &&
			  (rules[r].kind == RULE_KEEP || (kept[d / 64] >> (d % 64) & 1));
		if (take[r])
			stack[top++] = r;
	}
	while (top > 0) {
		const struct rule *r = &rules[stack[--top]];

		for (uint32_t k = 0; k < r->n_uses; k++) {
			uint32_t named = used[r->uses + k];

			if (!take[named]) {
				take[named] = true;
				stack[top++] = named;
			}
		}
	}
	free(stack);
	return true;
}

/* A database of the header and the rules of the subset for kept, in their order; NULL when
 * out of memory. */
static unsigned char *build_database(const uint64_t *kept, size_t *size)
{
	uint32_t n_set[MAGIC_SETS] = {0};
	bool *take = calloc(n_rules, sizeof(*take));
	unsigned char *db = NULL, *at;
	size_t entries = 0;

	if (!take || !select_rules(kept, take))
		goto out;
	for (uint32_t r = 0; r < n_rules; r++) {
		if (take[r]) {
			n_set[rules[r].set] += rules[r].count;
			entries += rules[r].count;
		}
	}
	*size = (entries + 1) * ENTRY_SIZE;
	if (!(at = db = malloc(*size)))
		goto out;
	memcpy(at, mgc, ENTRY_SIZE);
	memcpy(at + 8, n_set, sizeof(n_set));
	at += ENTRY_SIZE;
	for (uint32_t r = 0; r < n_rules; r++) {
		if (take[r]) {
			memcpy(at, entry(rules[r].first), (size_t)rules[r].count * ENTRY_SIZE);
			at += (size_t)rules[r].count * ENTRY_SIZE;
		}
	}
out:
	free(take);
	return db;
}

static void subset_drop(struct subset *c)
{
	if (c->cookie)
		magic_close(c->cookie);
	free(c->db);
	free(c->kept);
	memset(c, 0, sizeof(*c));
}

/* The cached cookie for kept, made (in place of the least recently used) when missing; NULL
 * when it cannot be made. Under subset_lock. */
static struct subset *subset_for(uint64_t *kept, uint64_t hash)
{
	struct subset *c = NULL;
	void *buffers[1];
	size_t sizes[1];

	for (int i = 0; i < CACHED_SUBSETS; i++)
		if (cache[i].cookie && cache[i].hash == hash &&
		    memcmp(cache[i].kept, kept, kept_words * sizeof(*kept)) == 0)
			c = &cache[i];
	if (c) {
		c->used = ++clock_hand;
		return c;
	}
	c = &cache[0];
	for (int i = 1; i < CACHED_SUBSETS; i++)
		if (cache[i].used < c->used)
			c = &cache[i];
	subset_drop(c);
	c->db = build_database(kept, &sizes[0]);
	c->kept = malloc(kept_words * sizeof(*kept));
	c->cookie = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR);
	buffers[0] = c->db;
	if (!c->db || !c->kept || !c->cookie || magic_load_buffers(c->cookie, buffers, sizes, 1)) {
		subset_drop(c);
		return NULL;
	}
	memcpy(c->kept, kept, kept_words * sizeof(*kept));
	c->hash = hash;
	c->used = ++clock_hand;
	return c;
}

char *tr_magic_subset_mime(const void *data, size_t len)
{
	uint64_t *kept, hash;
	struct subset *c;
	char *out = NULL;

	if (!plain_text(data, len))
		return NULL;
	pthread_mutex_lock(&subset_lock);
	if (!subset_tried) {
		subset_init();
		subset_tried = true;
	}
	pthread_mutex_unlock(&subset_lock);
	if (!mgc || !(kept = malloc(kept_words * sizeof(*kept))))
		return NULL;
	if (decide(data, len, kept, &hash)) {
		pthread_mutex_lock(&subset_lock);
		c = subset_for(kept, hash);
		if (c) {
			const char *mime = magic_buffer(c->cookie, data, len);

			out = mime ? strdup(mime) : NULL;
		}
		pthread_mutex_unlock(&subset_lock);
	}
	free(kept);
	return out;
}

void tr_magic_subset_close(void)
{
	pthread_mutex_lock(&subset_lock);
	for (int i = 0; i < CACHED_SUBSETS; i++)
		subset_drop(&cache[i]);
	index_free();
	subset_tried = false; /* the next question maps and indexes the database again */
	pthread_mutex_unlock(&subset_lock);
}
