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
 * database again on a shifted buffer). How one rule is decided and looked at: magic_rule.c. */
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

#include "magic_rule.h"
#include "util.h"

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
			tr_magic_rule_classify(r, entry(r->first));
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
		    !tr_magic_rule_may_match(&rules[p->rule], s, len, bytes, pairs))
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
		tr_magic_pairs_fill(pairs, s, len);
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
