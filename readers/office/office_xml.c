/* SPDX-License-Identifier: MIT */
/* office_xml.c - XML parts of an Office archive streamed through libxml2's xmlTextReader: inflated
 * piece by piece, never loaded whole, with no network, no DTD loading and no entity
 * substitution; a part holding a DOCTYPE is refused before the parser sees it, so entity
 * expansion (billion laughs) and external entities (file:///etc/passwd) cannot happen. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"
#include "util.h"

/* Parser options: the reader never substitutes entities (no XML_PARSE_NOENT), never loads or
 * validates a DTD (no XML_PARSE_DTDLOAD/DTDATTR/DTDVALID), never uses the network.
 * XML_PARSE_HUGE lifts libxml2's 10 MB cap on one text node (a long shared string is valid
 * Excel); what it would otherwise bound stays bounded here: a part's inflated size by the bomb
 * limits, nesting by TR_OFFICE_MAX_DEPTH, and entities cannot expand. */
#define XML_OPTIONS                                                                      \
	(XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_COMPACT | \
	 XML_PARSE_HUGE)

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void xml_start(void)
{
	xmlInitParser();
}

static void xml_error(void *ctx, xmlErrorPtr err)
{
	struct tr_office_xml *x = ctx;
	char msg[160];
	size_t len;

	if (!err || err->level < XML_ERR_ERROR || x->failed)
		return;
	snprintf(msg, sizeof(msg), "%s", err->message ? err->message : "malformed");
	len = strlen(msg);
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		msg[--len] = '\0';
	tr_office_zip_fail(x->z, TR_E_CORRUPT, "the XML part %s is malformed at line %d: %s",
			   x->part, err->line, msg);
	x->failed = true;
}

/* True when the bytes, continuing the previous piece's tail, hold a markup declaration that
 * only a DTD has: <!DOCTYPE or <!ENTITY. */
static bool has_declaration(struct tr_office_xml *x, const char *buf, size_t len)
{
	static const char *const marks[] = {"<!DOCTYPE", "<!ENTITY"};
	char joint[2 * sizeof(x->tail)];
	size_t head = len < sizeof(x->tail) ? len : sizeof(x->tail);

	memcpy(joint, x->tail, x->tail_len);
	memcpy(joint + x->tail_len, buf, head);
	for (size_t i = 0; i < 2; i++)
		if (memmem(joint, x->tail_len + head, marks[i], strlen(marks[i])) ||
		    memmem(buf, len, marks[i], strlen(marks[i])))
			return true;
	if (len >= sizeof(x->tail)) {
		memcpy(x->tail, buf + len - sizeof(x->tail), sizeof(x->tail));
		x->tail_len = sizeof(x->tail);
	} else {
		size_t total = x->tail_len + len; /* all of it is in joint */
		size_t keep = total < sizeof(x->tail) ? total : sizeof(x->tail);

		memcpy(x->tail, joint + total - keep, keep);
		x->tail_len = keep;
	}
	return false;
}

static int xml_read(void *ctx, char *buf, int len)
{
	struct tr_office_xml *x = ctx;
	zip_int64_t n;

	if (x->failed || len <= 0)
		return -1;
	n = zip_fread(x->file, buf, (zip_uint64_t)len);
	if (n < 0) {
		tr_office_zip_fail(x->z, TR_E_CORRUPT, "the zip entry %s is corrupt (%s)", x->part,
				   zip_file_strerror(x->file));
		x->failed = true;
		return -1;
	}
	x->got += (uint64_t)n;
	x->z->inflated += (uint64_t)n;
	/* The time budget (max_render_ms) is checked as each piece of XML is inflated: the
	 * renderers' work is proportional to it. */
	if (tr_deadline_passed(x->z->deadline)) {
		tr_office_zip_fail(x->z, TR_E_TIMEOUT,
				   "timeout: not read within the time for renders (max_render_ms), "
				   "at %s",
				   x->part);
		x->failed = true;
		return -1;
	}
	if (x->got > x->declared) {
		tr_office_zip_fail(
			x->z, TR_E_CORRUPT,
			"the zip entry %s inflates past the %llu bytes its directory says", x->part,
			(unsigned long long)x->declared);
		x->failed = true;
		return -1;
	}
	if (has_declaration(x, buf, (size_t)n)) {
		tr_office_zip_fail(
			x->z, TR_E_CORRUPT,
			"the XML part %s has a DOCTYPE or ENTITY declaration, which Office "
			"files never need (entities are not expanded)",
			x->part);
		x->failed = true;
		return -1;
	}
	return (int)n;
}

int tr_office_xml_open(struct tr_office_xml *x, struct tr_office_zip *z, const char *part)
{
	zip_int64_t idx;
	int rc;

	memset(x, 0, sizeof(*x));
	x->z = z;
	snprintf(x->part, sizeof(x->part), "%s", part);
	pthread_once(&xml_once, xml_start);
	rc = tr_office_zip_entry(z, part, 0, &idx, &x->declared);
	if (rc)
		return rc;
	x->file = zip_fopen_index(z->zip, (zip_uint64_t)idx, 0);
	if (!x->file)
		return tr_office_zip_fail(z, TR_E_CORRUPT, "the zip entry %s cannot be opened (%s)",
					  part, zip_strerror(z->zip));
	x->reader = xmlReaderForIO(xml_read, NULL, x, NULL, NULL, XML_OPTIONS);
	if (!x->reader) {
		zip_fclose(x->file);
		x->file = NULL;
		z->oom = true;
		return -1;
	}
	xmlTextReaderSetStructuredErrorHandler(x->reader, xml_error, x);
	return 0;
}

static int after_move(struct tr_office_xml *x, int rc)
{
	if (rc < 0 || x->failed) {
		if (!x->failed)
			tr_office_zip_fail(x->z, TR_E_CORRUPT, "the XML part %s is malformed",
					   x->part);
		x->failed = true;
		return -1;
	}
	if (rc == 1 && xmlTextReaderNodeType(x->reader) == XML_READER_TYPE_DOCUMENT_TYPE) {
		x->failed = true;
		return tr_office_zip_fail(x->z, TR_E_CORRUPT, "the XML part %s has a DOCTYPE",
					  x->part);
	}
	if (rc == 1 && xmlTextReaderDepth(x->reader) > TR_OFFICE_MAX_DEPTH) {
		x->failed = true;
		return tr_office_zip_fail(x->z, TR_E_CORRUPT,
					  "the XML part %s nests elements deeper than %d levels",
					  x->part, TR_OFFICE_MAX_DEPTH);
	}
	return rc;
}

int tr_office_xml_next(struct tr_office_xml *x)
{
	if (!x->reader || x->failed)
		return -1;
	return after_move(x, xmlTextReaderRead(x->reader));
}

int tr_office_xml_skip(struct tr_office_xml *x)
{
	int depth;

	if (!x->reader || x->failed)
		return -1;
	if (xmlTextReaderNodeType(x->reader) != XML_READER_TYPE_ELEMENT ||
	    xmlTextReaderIsEmptyElement(x->reader))
		return 1;
	/* Reads through the subtree (xmlTextReaderNext would build it in memory first). */
	depth = xmlTextReaderDepth(x->reader);
	for (;;) {
		int rc = tr_office_xml_next(x);

		if (rc <= 0)
			return rc < 0 ? -1 : 0;
		if (xmlTextReaderDepth(x->reader) == depth &&
		    xmlTextReaderNodeType(x->reader) == XML_READER_TYPE_END_ELEMENT)
			return 1;
	}
}

static const struct tr_office_rule *find_rule(const struct tr_office_walk *w, const char *name)
{
	for (size_t i = 0; i < w->n_rules; i++)
		if (!w->rules[i].name || !strcmp(w->rules[i].name, name))
			return &w->rules[i];
	return NULL;
}

int tr_office_walk(struct tr_office_xml *x, const struct tr_office_walk *w, bool whole)
{
	int depth = whole ? -1 : tr_office_xml_depth(x), rc;

	if (!whole && tr_office_xml_empty(x))
		return 0;
	while ((rc = tr_office_xml_next(x)) == 1) {
		int type = tr_office_xml_type(x);
		const struct tr_office_rule *rule;
		const char *text;

		if (type == XML_READER_TYPE_END_ELEMENT && tr_office_xml_depth(x) == depth)
			return 0;
		rc = 0;
		if (type == XML_READER_TYPE_ELEMENT || type == XML_READER_TYPE_END_ELEMENT) {
			rule = find_rule(w, tr_office_xml_name(x));
			if (rule && type == XML_READER_TYPE_ELEMENT && rule->on_start)
				rc = rule->on_start(w->ctx, x);
			else if (rule && type == XML_READER_TYPE_END_ELEMENT && rule->on_end)
				rc = rule->on_end(w->ctx, x);
		} else if (w->on_text && (text = tr_office_xml_text(x))) {
			rc = w->on_text(w->ctx, x, text);
		}
		if (rc != 0)
			break;
	}
	if (rc < 0 && !x->z->error)
		x->z->oom = true;
	return rc < 0 ? -1 : rc;
}

int tr_office_count(int *depth, const struct tr_office_xml *x)
{
	if (tr_office_xml_type(x) == XML_READER_TYPE_END_ELEMENT) {
		if (*depth)
			--*depth;
	} else if (!tr_office_xml_empty(x)) {
		++*depth;
	}
	return 0;
}

int tr_office_on_skip(void *ctx, struct tr_office_xml *x)
{
	(void)ctx;
	return tr_office_xml_skip(x) < 0 ? -1 : 0;
}

int tr_office_on_stop(void *ctx, struct tr_office_xml *x)
{
	(void)ctx;
	(void)x;
	return 1;
}

void tr_office_xml_close(struct tr_office_xml *x)
{
	if (x->reader)
		xmlFreeTextReader(x->reader);
	if (x->file)
		zip_fclose(x->file);
	x->reader = NULL;
	x->file = NULL;
}

int tr_office_xml_type(const struct tr_office_xml *x)
{
	return xmlTextReaderNodeType(x->reader);
}

const char *tr_office_xml_name(const struct tr_office_xml *x)
{
	const xmlChar *name = xmlTextReaderConstLocalName(x->reader);

	return name ? (const char *)name : "";
}

bool tr_office_xml_empty(const struct tr_office_xml *x)
{
	return xmlTextReaderIsEmptyElement(x->reader) == 1;
}

int tr_office_xml_depth(const struct tr_office_xml *x)
{
	return xmlTextReaderDepth(x->reader);
}

bool tr_office_xml_start(const struct tr_office_xml *x, const char *name)
{
	return xmlTextReaderNodeType(x->reader) == XML_READER_TYPE_ELEMENT &&
	       strcmp(tr_office_xml_name(x), name) == 0;
}

bool tr_office_xml_end(const struct tr_office_xml *x, const char *name)
{
	int type = xmlTextReaderNodeType(x->reader);

	if (strcmp(tr_office_xml_name(x), name) != 0)
		return false;
	return type == XML_READER_TYPE_END_ELEMENT ||
	       (type == XML_READER_TYPE_ELEMENT && xmlTextReaderIsEmptyElement(x->reader) == 1);
}

char *tr_office_xml_attr(struct tr_office_xml *x, const char *name)
{
	char *value = NULL;

	if (xmlTextReaderMoveToFirstAttribute(x->reader) != 1)
		return NULL;
	do {
		const xmlChar *local = xmlTextReaderConstLocalName(x->reader);

		if (local && strcmp((const char *)local, name) == 0) {
			const xmlChar *v = xmlTextReaderConstValue(x->reader);

			value = strdup(v ? (const char *)v : "");
			if (!value)
				x->z->oom = true;
			break;
		}
	} while (xmlTextReaderMoveToNextAttribute(x->reader) == 1);
	xmlTextReaderMoveToElement(x->reader);
	return value;
}

const char *tr_office_xml_text(const struct tr_office_xml *x)
{
	switch (xmlTextReaderNodeType(x->reader)) {
	case XML_READER_TYPE_TEXT:
	case XML_READER_TYPE_CDATA:
	case XML_READER_TYPE_WHITESPACE:
	case XML_READER_TYPE_SIGNIFICANT_WHITESPACE:
		return (const char *)xmlTextReaderConstValue(x->reader);
	default: return NULL;
	}
}

/* What a .rels walk fills. */
struct rels_walk {
	const char *part; /* the part the relationships are of */
	struct tr_office_rels *rels;
};

static int on_relationship(void *ctx, struct tr_office_xml *x)
{
	struct rels_walk *rw = ctx;
	struct tr_office_rel rel = {0}, *grown = NULL;
	char *mode;

	rel.id = tr_office_xml_attr(x, "Id");
	rel.target = tr_office_xml_attr(x, "Target");
	rel.type = tr_office_xml_attr(x, "Type");
	mode = tr_office_xml_attr(x, "TargetMode");
	rel.external = mode && strcmp(mode, "External") == 0;
	free(mode);
	if (rel.id && rel.target && !rel.external) {
		char *resolved = tr_office_resolve(rw->part, rel.target);

		free(rel.target);
		rel.target = resolved;
	}
	if (rel.id && rel.target && rel.type) {
		grown = realloc(rw->rels->items, (rw->rels->n + 1) * sizeof(*grown));
		if (!grown)
			x->z->oom = true;
	}
	if (!grown) {
		free(rel.id);
		free(rel.target);
		free(rel.type);
		/* a relationship without its attributes, or leaving the archive */
		return x->z->oom ? -1 : 0;
	}
	rw->rels->items = grown;
	rw->rels->items[rw->rels->n++] = rel;
	return 0;
}

int tr_office_rels_load(struct tr_office_zip *z, const char *part, struct tr_office_rels *rels)
{
	static const struct tr_office_rule rules[] = {{"Relationship", on_relationship, NULL}};
	struct rels_walk rw = {part, rels};
	const struct tr_office_walk walk = {rules, 1, NULL, &rw};
	const char *slash = strrchr(part, '/');
	char path[512];
	int rc;

	memset(rels, 0, sizeof(*rels));
	if (slash)
		snprintf(path, sizeof(path), "%.*s/_rels/%s.rels", (int)(slash - part), part,
			 slash + 1);
	else
		snprintf(path, sizeof(path), "_rels/%s.rels", part);
	rc = tr_office_walk_part(z, path, false, NULL, &walk);
	if (rc < 0 || (rc == 0 && z->oom)) {
		tr_office_rels_free(rels);
		return -1;
	}
	return 0;
}

int tr_office_walk_part(struct tr_office_zip *z, const char *part, bool required,
			struct tr_office_rels *rels, const struct tr_office_walk *w)
{
	struct tr_office_xml x;
	int rc;

	if (rels && tr_office_rels_load(z, part, rels) < 0)
		return -1;
	rc = tr_office_xml_open(&x, z, part);
	if (rc > 0 && required)
		return tr_office_zip_fail(z, TR_E_CORRUPT, "the part %s is missing", part);
	if (rc)
		return rc;
	rc = tr_office_walk(&x, w, true);
	tr_office_xml_close(&x);
	return rc < 0 ? -1 : 0;
}

const struct tr_office_rel *tr_office_rels_find(const struct tr_office_rels *rels, const char *id)
{
	for (size_t i = 0; id && i < rels->n; i++)
		if (strcmp(rels->items[i].id, id) == 0)
			return &rels->items[i];
	return NULL;
}

const struct tr_office_rel *tr_office_rels_by_type(const struct tr_office_rels *rels,
						   const char *suffix)
{
	size_t slen = strlen(suffix);

	for (size_t i = 0; i < rels->n; i++) {
		size_t tlen = strlen(rels->items[i].type);

		if (tlen >= slen && strcmp(rels->items[i].type + tlen - slen, suffix) == 0)
			return &rels->items[i];
	}
	return NULL;
}

void tr_office_rels_free(struct tr_office_rels *rels)
{
	for (size_t i = 0; i < rels->n; i++) {
		free(rels->items[i].id);
		free(rels->items[i].target);
		free(rels->items[i].type);
	}
	free(rels->items);
	memset(rels, 0, sizeof(*rels));
}
