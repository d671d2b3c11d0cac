/* SPDX-License-Identifier: MIT */
/* options_doc.c - writes the options sections of the manual pages and docs/SPEC.md §4 from the option
 * table include/tr_options.def, or checks that the checked-in ones are what it writes:
 *   options-doc --check SOURCE_ROOT   exit 1, naming the file, when a section differs
 *   options-doc --write SOURCE_ROOT   rewrite the sections in place
 * Each section sits between a BEGIN and an END marker line (a roff or HTML comment). The table's
 * TR_MOUNT_OPTION rows, the daemon's own options, close the sections of toolfs(1) and SPEC.md. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_options.h"

#define ROFF_BEGIN                                                                               \
	".\\\" {{ options: generated from include/tr_options.def by build/docs/man/options-doc " \
	"--write"
#define ROFF_END ".\\\" }} options"
#define MD_BEGIN                                                                                \
	"<!-- {{ options: generated from include/tr_options.def by build/docs/man/options-doc " \
	"--write -->"
#define MD_END "<!-- }} options -->"

/* Which options a list holds, by the front ends they serve. */
enum pick {
	PICK_MOUNT,
	PICK_CLI,
	PICK_SHARED, /* every front end */
	PICK_MOUNT_ONLY,
	PICK_MCP_ONLY,
	PICK_MCP_DEFAULT, /* not toolfs-mcp's own, and its default there differs */
};

static const char *default_of(const char *name, enum tr_front front, char *buf, size_t size);

static bool picked(const struct tr_option_doc *doc, enum pick pick)
{
	unsigned all = TR_FRONT_MOUNT | TR_FRONT_CLI | TR_FRONT_MCP;
	char mcp[32], mount[32];

	switch (pick) {
	case PICK_MOUNT: return doc->fronts & TR_FRONT_MOUNT;
	case PICK_CLI: return doc->fronts & TR_FRONT_CLI;
	case PICK_SHARED: return doc->fronts == all;
	case PICK_MOUNT_ONLY: return doc->fronts == TR_FRONT_MOUNT;
	case PICK_MCP_ONLY: return doc->fronts == TR_FRONT_MCP;
	case PICK_MCP_DEFAULT:
		return doc->fronts != TR_FRONT_MCP &&
		       strcmp(default_of(doc->name, TR_FRONT_MCP, mcp, sizeof(mcp)),
			      default_of(doc->name, TR_FRONT_MOUNT, mount, sizeof(mount))) != 0;
	}
	return false;
}

static size_t count(enum pick pick)
{
	size_t n = 0;

	for (size_t i = 0; tr_option_names[i]; i++)
		n += picked(tr_option_describe(tr_option_names[i], NULL, 0), pick);
	return n;
}

/* Option name's default in front end front, as a user gives it. */
static const char *default_of(const char *name, enum tr_front front, char *buf, size_t size)
{
	struct tr_options opts;

	tr_options_init_for(&opts, front);
	tr_option_format(&opts, name, buf, size);
	return buf;
}

/* The front end whose default an option's documentation gives: toolfs-mcp's for its own. */
static enum tr_front home_front(const struct tr_option_doc *doc)
{
	return doc->fronts == TR_FRONT_MCP ? TR_FRONT_MCP : TR_FRONT_MOUNT;
}

/* The picked names as roff, one a line, each followed by a comma: the last by close instead, and
 * in an English list (english) the one before it by "and"; open (e.g. "(") goes before the
 * first when not NULL. */
static void roff_names(FILE *out, enum pick pick, bool english, const char *open, const char *close)
{
	size_t n = count(pick), k = 0;

	for (size_t i = 0; tr_option_names[i]; i++) {
		const char *name = tr_option_names[i], *punct;

		if (!picked(tr_option_describe(name, NULL, 0), pick))
			continue;
		k++;
		punct = k == n ? close : english && k == n - 1 ? "" : ",";
		if (k == 1 && open)
			fprintf(out, ".RB %s %s%s%s\n", open, name, *punct ? " " : "", punct);
		else
			fprintf(out, "%s %s%s%s\n", *punct ? ".BR" : ".B", name, *punct ? " " : "",
				punct);
		if (english && k == n - 1)
			fputs("and\n", out);
	}
}

/* The tag line of a roff .TP list for option name with value (NULL: none); dashed: as
 * --NAME VALUE. */
static void roff_tag(FILE *out, const char *name, const char *value, bool dashed)
{
	fputs(".TP\n", out);
	if (dashed && value)
		fprintf(out, ".BI \\-\\-%s \" %s\"\n", name, value);
	else if (dashed)
		fprintf(out, ".B \\-\\-%s\n", name);
	else if (!value)
		fprintf(out, ".B %s\n", name);
	else if (strchr(value, '|')) {
		fprintf(out, ".BR %s=", name);
		for (const char *p = value; *p; p++)
			fputs(*p == '|' ? " | " : (char[]){*p, '\0'}, out);
		fputc('\n', out);
	} else
		fprintf(out, ".BI %s= %s\n", name, value);
}

/* One option's tag and paragraph of a roff .TP list; dashed: as --NAME VALUE. */
static void roff_entry(FILE *out, const struct tr_option_doc *doc, bool dashed)
{
	char value[32];

	roff_tag(out, doc->name, doc->value, dashed);
	default_of(doc->name, home_front(doc), value, sizeof(value));
	tr_option_text_print(out, doc->man, value, "\n");
	fputc('\n', out);
}

static void entries(FILE *out, enum pick pick, bool dashed)
{
	for (size_t i = 0; tr_option_names[i]; i++) {
		const struct tr_option_doc *doc = tr_option_describe(tr_option_names[i], NULL, 0);

		if (picked(doc, pick))
			roff_entry(out, doc, dashed);
	}
}

/* toolfs(1), MOUNT OPTIONS: every option the mount serves, then the daemon's own. */
static void section_toolfs_1(FILE *out)
{
	entries(out, PICK_MOUNT, false);
	for (size_t i = 0; i < tr_mount_options_count; i++) {
		const struct tr_mount_option_doc *doc = &tr_mount_options[i];

		roff_tag(out, doc->name, doc->value, false);
		tr_option_text_print(out, doc->man, doc->deflt, "\n");
		fputc('\n', out);
	}
}

/* toolfs-read(1): the reader options it takes, and those it ignores. */
static void section_toolfs_read_1(FILE *out)
{
	roff_names(out, PICK_CLI, false, NULL, ",");
	fputs("described with their defaults under MOUNT OPTIONS in\n.BR toolfs (1).\n", out);
	if (count(PICK_MOUNT_ONLY)) {
		fputs("The mount's own options\n", out);
		roff_names(out, PICK_MOUNT_ONLY, false, "(", ")");
		fputs("are accepted and ignored.\n", out);
	}
	if (count(PICK_MCP_ONLY)) {
		fputs("So are those of\n.BR toolfs\\-mcp (1)\nalone\n", out);
		roff_names(out, PICK_MCP_ONLY, false, "(", ").");
	}
}

/* toolfs-mcp(1): the shared options, the defaults chosen for MCP clients, and its own. */
static void section_toolfs_mcp_1(FILE *out)
{
	static const char *const numbers[] = {"No",  "One",   "Two",   "Three", "Four", "Five",
					      "Six", "Seven", "Eight", "Nine",  "Ten"};
	size_t differ = count(PICK_MCP_DEFAULT), k = 0;
	char value[32];

	roff_names(out, PICK_SHARED, false, NULL, ",");
	fputs("described under MOUNT OPTIONS in\n.BR toolfs (1).\n", out);
	if (differ < sizeof(numbers) / sizeof(numbers[0]))
		fprintf(out, "%s", numbers[differ]);
	else
		fprintf(out, "%zu", differ);
	fprintf(out, " default%s differ%s, chosen for MCP clients:\n", differ == 1 ? "" : "s",
		differ == 1 ? "s" : "");
	for (size_t i = 0; tr_option_names[i]; i++) {
		const char *name = tr_option_names[i];

		if (!picked(tr_option_describe(name, NULL, 0), PICK_MCP_DEFAULT))
			continue;
		k++;
		fprintf(out, ".B %s\n%s%s\n", name,
			default_of(name, TR_FRONT_MCP, value, sizeof(value)),
			k == differ       ? "."
			: k == differ - 1 ? " and"
					  : ",");
	}
	entries(out, PICK_MCP_ONLY, true);
}

/* toolfs(7), OPTIONS: the names, shared and each front end's own. */
static void section_toolfs_7(FILE *out)
{
	roff_names(out, PICK_SHARED, true, NULL, count(PICK_MOUNT_ONLY) ? ";" : ".");
	if (count(PICK_MOUNT_ONLY)) {
		fputs("the mount's own are\n", out);
		roff_names(out, PICK_MOUNT_ONLY, true, NULL, count(PICK_MCP_ONLY) ? ";" : ".");
	}
	if (count(PICK_MCP_ONLY)) {
		fputs("toolfs\\-mcp's own are\n", out);
		roff_names(out, PICK_MCP_ONLY, true, NULL, ".");
	}
	fputs("Each is described with its default under MOUNT OPTIONS in\n.BR toolfs (1)", out);
	if (count(PICK_MCP_ONLY))
		fputs(",\ntoolfs\\-mcp's own under OPTIONS in\n.BR toolfs\\-mcp (1)", out);
	fputs(".\n", out);
}

/* Appends word to the paragraph being written in out, wrapping lines at 100 columns. */
static void md_word(FILE *out, size_t *column, const char *word)
{
	size_t len = strlen(word);

	if (*column && strchr(",;.", word[0])) {
		/* punctuation stays on its word's line */
	} else if (*column && *column + 1 + len > 100) {
		fputc('\n', out);
		*column = 0;
	} else if (*column) {
		fputc(' ', out);
		(*column)++;
	}
	fputs(word, out);
	*column += len;
}

/* Appends text to the paragraph, word by word. */
static void md_words(FILE *out, size_t *column, const char *text)
{
	char word[256];

	while (*text) {
		size_t len = strcspn(text, " ");

		if (len && len < sizeof(word)) {
			memcpy(word, text, len);
			word[len] = '\0';
			md_word(out, column, word);
		}
		text += len + (text[len] == ' ');
	}
}

/* Appends the picked names to the paragraph as an English list: `a`, `b` and `c`. */
static void md_names(FILE *out, size_t *column, enum pick pick)
{
	size_t n = count(pick), k = 0;
	char word[128];

	for (size_t i = 0; tr_option_names[i]; i++) {
		if (!picked(tr_option_describe(tr_option_names[i], NULL, 0), pick))
			continue;
		k++;
		snprintf(word, sizeof(word), "`%s`%s", tr_option_names[i],
			 k == n       ? ""
			 : k == n - 1 ? " and"
				      : ",");
		md_words(out, column, word);
	}
}

/* docs/SPEC.md §4: every option with its default (the test suite reads this paragraph), then
 * which front ends use which and toolfs-mcp's defaults, then the daemon's own options. */
static void section_spec(FILE *out)
{
	size_t column = 0;
	char word[128], value[32];

	md_words(out, &column,
		 "Options (`-o` for the daemon, `--` flags for the CLI, same names):");
	for (size_t i = 0; tr_option_names[i]; i++) {
		const struct tr_option_doc *doc = tr_option_describe(tr_option_names[i], NULL, 0);
		bool last = !tr_option_names[i + 1];

		default_of(doc->name, home_front(doc), value, sizeof(value));
		snprintf(word, sizeof(word), "`%s%s%s`", doc->name,
			 doc->value && strchr(doc->value, '|') ? "=" : "",
			 doc->value && strchr(doc->value, '|') ? doc->value : "");
		md_word(out, &column, word);
		snprintf(word, sizeof(word), "(%s)%s", value, last ? "." : ",");
		md_word(out, &column, word);
	}
	fputs("\n\n", out);
	column = 0;
	md_words(out, &column, "Only the mount uses");
	md_names(out, &column, PICK_MOUNT_ONLY);
	md_words(out, &column, "(`toolfs-read` and `toolfs-mcp` accept and ignore them)");
	if (count(PICK_MCP_ONLY)) {
		md_words(out, &column, "and only `toolfs-mcp` uses");
		md_names(out, &column, PICK_MCP_ONLY);
		md_words(out, &column, "(the others accept and ignore them)");
	}
	md_words(out, &column, "; `toolfs-mcp` starts from defaults chosen for MCP clients:");
	for (size_t i = 0; tr_option_names[i]; i++) {
		const char *name = tr_option_names[i];

		if (!picked(tr_option_describe(name, NULL, 0), PICK_MCP_DEFAULT))
			continue;
		snprintf(word, sizeof(word), "`%s=%s`,", name,
			 default_of(name, TR_FRONT_MCP, value, sizeof(value)));
		md_word(out, &column, word);
	}
	md_words(out, &column, "the others as above.");
	fputs("\n\n", out);
	column = 0;
	md_words(out, &column, "Daemon-only options (`-o`):");
	for (size_t i = 0; i < tr_mount_options_count; i++) {
		const struct tr_mount_option_doc *doc = &tr_mount_options[i];
		bool last = i + 1 == tr_mount_options_count;

		snprintf(word, sizeof(word), "`%s%s%s`", doc->name, doc->value ? "=" : "",
			 doc->value ? doc->value : "");
		md_word(out, &column, word);
		snprintf(word, sizeof(word), "(%s)%s", doc->deflt, last ? "." : ",");
		md_words(out, &column, word);
	}
	fputc('\n', out);
}

struct page {
	const char *path, *begin, *end;
	void (*section)(FILE *out);
};

static const struct page pages[] = {
	{"docs/man/toolfs.1.in", ROFF_BEGIN, ROFF_END, section_toolfs_1},
	{"docs/man/toolfs-read.1.in", ROFF_BEGIN, ROFF_END, section_toolfs_read_1},
	{"docs/man/toolfs-mcp.1.in", ROFF_BEGIN, ROFF_END, section_toolfs_mcp_1},
	{"docs/man/toolfs.7.in", ROFF_BEGIN, ROFF_END, section_toolfs_7},
	{"docs/SPEC.md", MD_BEGIN, MD_END, section_spec},
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t cap = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len + 4096 + 1 > cap) {
			char *bigger = realloc(text, cap = cap * 2 + 8192);

			if (!bigger) {
				free(text);
				fclose(f);
				return NULL;
			}
			text = bigger;
		}
		size_t n = fread(text + *len, 1, 4096, f);

		*len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	text[*len] = '\0';
	return text;
}

/* Checks or rewrites the section of one page. Returns 0 when it matches (or was written). */
static int do_page(const char *root, const struct page *page, bool write)
{
	char path[4096], *text, *generated = NULL, *begin, *end;
	size_t len, gen_len = 0;
	FILE *out;
	int rc = 1;

	snprintf(path, sizeof(path), "%s/%s", root, page->path);
	text = slurp(path, &len);
	if (!text) {
		fprintf(stderr, "options-doc: cannot read %s\n", path);
		return 1;
	}
	begin = strstr(text, page->begin);
	end = begin ? strstr(begin, page->end) : NULL;
	if (!begin || !end || !strchr(begin, '\n')) {
		fprintf(stderr, "options-doc: %s has no %s ... %s lines\n", path, page->begin,
			page->end);
		goto out;
	}
	begin = strchr(begin, '\n') + 1;
	out = open_memstream(&generated, &gen_len);
	if (!out)
		goto out;
	page->section(out);
	fclose(out);
	if ((size_t)(end - begin) == gen_len && memcmp(begin, generated, gen_len) == 0) {
		rc = 0;
	} else if (write) {
		out = fopen(path, "wb");
		if (out) {
			fwrite(text, 1, (size_t)(begin - text), out);
			fwrite(generated, 1, gen_len, out);
			fputs(end, out);
			rc = fclose(out) == 0 ? 0 : 1;
			printf("options-doc: wrote %s\n", page->path);
		}
	} else {
		fprintf(stderr,
			"options-doc: the options section of %s differs from "
			"include/tr_options.def;\n"
			"  run build/docs/man/options-doc --write . and review the diff. It should "
			"be:\n%s",
			page->path, generated);
	}
out:
	free(generated);
	free(text);
	return rc;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc != 3 || (strcmp(argv[1], "--check") != 0 && strcmp(argv[1], "--write") != 0)) {
		fputs("Usage: options-doc --check|--write SOURCE_ROOT\n", stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		failed |= do_page(argv[2], &pages[i], strcmp(argv[1], "--write") == 0);
	return failed;
}
