/* SPDX-License-Identifier: MIT */
/* office.h - the Office reader's private parts: zip archives read under bomb limits, XML parts
 * streamed with libxml2's reader API without entities or DTDs, and the renderers of .docx,
 * .xlsx, .pptx and their ODF kin (.odt, .ods, .odp). */
#ifndef TR_OFFICE_PRIVATE_H
#define TR_OFFICE_PRIVATE_H

#include <libxml/xmlreader.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zip.h>

#include "reader.h"
#include "tr_options.h"
#include "tr_result.h"
#include "tr_selector.h"

/* --- office_zip --- */
/* the zip container: opened from memory, entries inflated under limits that stop zip bombs. */

#define TR_OFFICE_MAX_ENTRIES 10000                 /* entries in one archive */
#define TR_OFFICE_MAX_PART (512ull * 1024 * 1024)   /* inflated bytes of one entry */
#define TR_OFFICE_MAX_TOTAL (2048ull * 1024 * 1024) /* inflated bytes of all entries read */
#define TR_OFFICE_MAX_RATIO 200                     /* inflated:compressed, for entries ... */
#define TR_OFFICE_RATIO_FROM (1024ull * 1024)       /* ... that inflate to more than 1 MiB */
#define TR_OFFICE_MAX_DEPTH 128                     /* element nesting in an XML part */
#define TR_OFFICE_MAX_IMAGES 20                     /* pictures attached to one result */

/* An open archive and the first failure seen while reading it. */
struct tr_office_zip {
	zip_t *zip;
	uint64_t inflated;   /* bytes inflated so far, against TR_OFFICE_MAX_TOTAL */
	enum tr_error error; /* TR_OK until a failure: too_large, corrupt or timeout */
	bool oom;
	char reason[320];  /* the failure as a sentence */
	uint64_t deadline; /* tr_file.deadline: XML parts stop with timeout past it; 0: none */
};

/* Opens the archive in data[0..len) (borrowed; must outlive z). Returns 0, or -1 with z->error
 * and z->reason set (corrupt: not a zip archive; too_large: too many entries) or z->oom. */
int tr_office_zip_open(struct tr_office_zip *z, const unsigned char *data, size_t len);

/* Closes the archive; safe on a zeroed or failed z. */
void tr_office_zip_close(struct tr_office_zip *z);

/* True when the archive holds an entry named name. */
bool tr_office_zip_has(struct tr_office_zip *z, const char *name);

/* Records a failure in z (the first one wins) and returns -1. */
int tr_office_zip_fail(struct tr_office_zip *z, enum tr_error code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Finds entry name and checks the sizes its directory gives against max (0:
 * TR_OFFICE_MAX_PART) and the bomb limits, before anything is inflated; sets *idx and *size.
 * Returns 0, 1 when there is no such entry, or -1 with the failure recorded in z. */
int tr_office_zip_entry(struct tr_office_zip *z, const char *name, uint64_t max, zip_int64_t *idx,
			uint64_t *size);

/* Inflates entry name whole into out (zeroed by the caller; caller frees it), at most max bytes
 * (0: TR_OFFICE_MAX_PART). Returns 0, 1 when there is no such entry, or -1 with the failure
 * recorded in z (too_large: over max or the bomb limits; corrupt: a bad stream or CRC). */
int tr_office_zip_read(struct tr_office_zip *z, const char *name, uint64_t max, struct tr_buf *out);

/* Resolves a relationship target against the part that names it: ("word/document.xml",
 * "media/a.png") -> "word/media/a.png", ("xl/workbook.xml", "/xl/s.xml") -> "xl/s.xml"; ".."
 * climbs. Returns a malloc'd path or NULL when out of memory or the target leaves the archive. */
char *tr_office_resolve(const char *source_part, const char *target);

/* --- office_xml --- */
/* XML parts streamed through libxml2's xmlTextReader: no network, no DTD, no entities. */

struct tr_office_xml {
	xmlTextReaderPtr reader;
	struct tr_office_zip *z;
	zip_file_t *file;
	char part[256];    /* the entry, for messages */
	uint64_t declared; /* its inflated size as the directory says */
	uint64_t got;      /* bytes inflated so far */
	char tail[10];     /* last bytes of the previous piece, for the DOCTYPE scan */
	size_t tail_len;
	bool failed; /* a failure is recorded in z */
};

/* Opens entry part of z for streaming. Returns 0, 1 when the archive has no such entry, or -1
 * with the failure recorded in z. */
int tr_office_xml_open(struct tr_office_xml *x, struct tr_office_zip *z, const char *part);

/* Moves to the next node. Returns 1 on a node, 0 at the end of the part, -1 with the failure
 * recorded in z: corrupt (malformed XML, a DOCTYPE, nesting over TR_OFFICE_MAX_DEPTH) or
 * too_large. */
int tr_office_xml_next(struct tr_office_xml *x);

/* Skips the subtree of the current element (the reader then stands on its end). Returns as
 * tr_office_xml_next. */
int tr_office_xml_skip(struct tr_office_xml *x);

/* Closes the stream; safe on a zeroed x. */
void tr_office_xml_close(struct tr_office_xml *x);

/* The current node: type (XML_READER_TYPE_*), local name without prefix (borrowed, "" when
 * none), whether an element is empty (<a/>: no end node follows). */
int tr_office_xml_type(const struct tr_office_xml *x);
const char *tr_office_xml_name(const struct tr_office_xml *x);
bool tr_office_xml_empty(const struct tr_office_xml *x);
int tr_office_xml_depth(const struct tr_office_xml *x);

/* True when the current node is a start element with local name name. */
bool tr_office_xml_start(const struct tr_office_xml *x, const char *name);

/* True when the current node is the end of element name (or an empty start element). */
bool tr_office_xml_end(const struct tr_office_xml *x, const char *name);

/* The value of the current element's attribute with local name name (any prefix), malloc'd, or
 * NULL when absent. */
char *tr_office_xml_attr(struct tr_office_xml *x, const char *name);

/* The text of a text, CDATA or whitespace node (borrowed), else NULL. */
const char *tr_office_xml_text(const struct tr_office_xml *x);

/* One row of an element table: what a walk does at an element of this local name (any
 * prefix). on_start runs at its start (an empty element <a/> has no end), on_end at its end;
 * either may be NULL. A handler returns 0 to go on, 1 to stop the walk there, -1 on failure
 * (recorded in the zip, or out of memory). A handler that reads on (tr_office_xml_skip, a nested
 * walk) leaves the reader on the end of the element it stood on. */
struct tr_office_rule {
	const char *name;
	int (*on_start)(void *ctx, struct tr_office_xml *x);
	int (*on_end)(void *ctx, struct tr_office_xml *x);
};

/* A walk: its rules (the first row whose name matches an element is its rule; a row with name
 * NULL matches every element), what it does with text, CDATA and white space (NULL: nothing;
 * returns as a rule's handler) and the context handed to every handler (borrowed). */
struct tr_office_walk {
	const struct tr_office_rule *rules;
	size_t n_rules;
	int (*on_text)(void *ctx, struct tr_office_xml *x, const char *text);
	void *ctx;
};

/* Walks the descendants of the element the reader stands on up to its end (none when it is
 * empty), or with whole set, every node to the end of the part. The reader's limits hold as in
 * tr_office_xml_next (nesting, inflated sizes, the deadline, DOCTYPEs). Returns 0 at the end, 1
 * when a handler stopped the walk, or -1 on failure: recorded in the zip, or the zip's oom set
 * when a handler failed with nothing recorded. */
int tr_office_walk(struct tr_office_xml *x, const struct tr_office_walk *w, bool whole);

/* Counts the nesting of the element the reader stands on in *depth: one more at a start that
 * has an end, one less (never below 0) at its end. Returns 0, as a row's handler does. */
int tr_office_count(int *depth, const struct tr_office_xml *x);

/* Handlers for rows of every walk: skip the element's subtree; stop the walk. */
int tr_office_on_skip(void *ctx, struct tr_office_xml *x);
int tr_office_on_stop(void *ctx, struct tr_office_xml *x);

/* Relationships of a part (its _rels/NAME.rels): id -> resolved target and type. */
struct tr_office_rel {
	char *id, *target, *type; /* owned; target resolved against the part */
	bool external;            /* TargetMode="External": target is a URL, unresolved */
};
struct tr_office_rels {
	struct tr_office_rel *items;
	size_t n;
};

/* Loads the relationships of part (none when the part has no .rels). Returns 0, or -1 (rels
 * then empty) with the failure recorded in z. */
int tr_office_rels_load(struct tr_office_zip *z, const char *part, struct tr_office_rels *rels);
/* The relationship with this id, or NULL. */
const struct tr_office_rel *tr_office_rels_find(const struct tr_office_rels *rels, const char *id);
/* The first relationship whose type ends in suffix (e.g. "/notesSlide"), or NULL. */
const struct tr_office_rel *tr_office_rels_by_type(const struct tr_office_rels *rels,
						   const char *suffix);
void tr_office_rels_free(struct tr_office_rels *rels);

/* Walks part of z whole with w: opens it, walks it, closes it. With rels (else NULL), the
 * relationships of the part are loaded into it first (the caller frees them, even on failure),
 * for the handlers. A missing part is corrupt ("the part P is missing") when required. Returns
 * 0 when walked (to its end or until a handler stopped it), 1 when the part is missing and not
 * required, or -1 with the failure recorded in z (or its oom set). */
int tr_office_walk_part(struct tr_office_zip *z, const char *part, bool required,
			struct tr_office_rels *rels, const struct tr_office_walk *w);

/* --- office_text --- */
/* helpers the renderers share: table cells, pipe tables and pictures. */

/* Appends s[0..len) to out as one pipe-table cell's text: '|' escaped as "\|", line breaks as
 * "<br>", tabs as spaces. Returns as tr_buf_append. */
int tr_office_cell_append(struct tr_buf *out, const char *s, size_t len);

/* As tr_office_cell_append, showing at most max_chars code points of s (0: all) and then
 * " [... cell truncated: N of M chars shown]" (SPEC's line cut, for one spreadsheet cell). */
int tr_office_cell_append_capped(struct tr_buf *out, const char *s, size_t len, uint64_t max_chars);

/* A table being collected: rows of cells, each cell's text already escaped. */
struct tr_office_table {
	struct tr_buf *cells; /* owned, row-major */
	size_t *row_len;      /* cells of each row */
	size_t n_rows, n_cells, cap_cells, cap_rows;
};
/* Starts a new row / a new (empty) cell in the current row. Return 0 or -1 (out of memory). */
int tr_office_table_row(struct tr_office_table *t);
int tr_office_table_cell(struct tr_office_table *t);
/* The current cell (NULL before the first cell of the table). */
struct tr_buf *tr_office_table_current(struct tr_office_table *t);
/* Appends the table to out as a pipe table (the first row as header, rows padded to the widest
 * one), then frees it. Returns 0 or -1 (out of memory). */
int tr_office_table_flush(struct tr_office_table *t, struct tr_buf *out);
void tr_office_table_free(struct tr_office_table *t);

/* Attaches the picture at entry part to res as a fitted image (docs/SPEC.md §3 "Images"; slide set when
 * non-zero) and appends its reference to text: "[image N: image/png 640x480]", or why it was
 * not attached ("[picture media/x.emf: EMF is not shown]"). At most TR_OFFICE_MAX_IMAGES per
 * result. Returns 0, or -1 when out of memory or a bomb limit is hit (recorded in z). */
int tr_office_picture(struct tr_office_zip *z, const char *part, uint32_t slide,
		      const struct tr_options *opts, struct tr_result *res, struct tr_buf *text);

struct tr_office_doc;

/* A document rendered to Markdown-like text (.docx, .odt), with the pictures standing in it. */
struct tr_office_rendering {
	struct tr_buf out; /* the rendering */
	char **parts;      /* owned: the pictures' entries, in order */
	uint64_t *lines;   /* the line of the rendering each stands on (known after finish) */
	size_t n;
	bool prev_list; /* the last block was a list item (no blank line between items) */
};

/* Ends a hyperlink whose text started at para offset start: appends " (URL)" unless the text
 * is the URL itself, then frees *url and clears it. Returns 0 or -1 (out of memory). */
int tr_office_link_end(struct tr_buf *para, size_t start, char **url);

/* Appends the finished table t to the rendering as a block of its own (then frees it). Returns 0
 * or -1 (out of memory). */
int tr_office_rendering_table(struct tr_office_rendering *r, struct tr_office_table *t);

/* True when b holds only spaces, tabs and newlines (or nothing). */
bool tr_office_blank(const struct tr_buf *b);

/* Appends a block (a paragraph, heading or list item) of text[0..len) after prefix ("# ",
 * "  - ", "1. ", ""), separated from the previous block by a blank line unless both are list
 * items. Blank text is skipped; after a marker, leading line breaks and spaces are; a heading's
 * line breaks become spaces. Returns 0 or -1 (out of memory). */
int tr_office_rendering_block(struct tr_office_rendering *r, const char *prefix, const char *text,
			      size_t len, bool list);

/* Appends a reference to the picture at entry part to text ("[image: NAME]" after a marker that
 * finish removes) and records it. Returns 0 or -1 (out of memory). */
int tr_office_rendering_picture(struct tr_office_rendering *r, const char *part,
				struct tr_buf *text);

/* Windows r->out as the text reader windows a file (readers/text), sets type document,
 * metadata.trackedChanges (when ins or del), and attaches the pictures on the window's lines.
 * Returns 0, or -1 with the failure recorded in d->z (or d->z->oom). */
int tr_office_rendering_finish(const struct tr_office_doc *d, struct tr_office_rendering *r,
			       int64_t ins, int64_t del, struct tr_result *res);

void tr_office_rendering_free(struct tr_office_rendering *r);

/* What a spreadsheet renderer showed, for tr_office_sheets_result. */
struct tr_office_sheet_view {
	size_t n_sheets;          /* in the workbook */
	size_t first, last;       /* the selection, 1-based, clamped to n_sheets */
	size_t shown, shown_last; /* sheets shown; the last one (0: none) */
	size_t after;             /* the first visible sheet after last (n_sheets + 1: none) */
	bool hidden_skipped;      /* hidden sheets in the selection were left out */
	bool capped;              /* the row cap or max_output stopped at cap_sheet, cap_row */
	uint64_t cap_sheet, cap_row, rows_shown;
	uint64_t from_row; /* the selection's A.R- row (0: none) */
};

/* Fills a spreadsheet result from v: success, range (sheets), truncated, next ("S.R-" when
 * capped, else the next visible sheet), content (taken from out) and shortResult. Returns 0
 * or -1 (out of memory). */
int tr_office_sheets_result(const struct tr_office_doc *d, const struct tr_office_sheet_view *v,
			    struct tr_buf *out, struct tr_result *res);

/* Records the out_of_range failure of a selector past the last of n sheets. Returns 0 or -1. */
int tr_office_sheets_past_end(const struct tr_office_doc *d, size_t n, struct tr_result *res);

/* "BC" for column 55 (1-based) into buf (8 bytes). */
void tr_office_column_name(uint32_t col, char *buf);

/* Appends paragraph para to the current cell of table, after "<br>" when the cell has text
 * (nothing before the first cell). Returns 0 or -1 (out of memory). */
int tr_office_cell_paragraph(struct tr_office_table *table, const struct tr_buf *para);

/* Appends a slide's paragraph para to the current cell of table (after "<br>" when the cell
 * has text), or when table is NULL to title (after a space; line breaks as spaces). Returns 0
 * or -1 (out of memory). */
int tr_office_paragraph_to(struct tr_office_table *table, struct tr_buf *title,
			   const struct tr_buf *para);

/* Appends one slide to out: "--- Slide N: TITLE ---" (": TITLE" when title is not empty,
 * " (hidden slide)" when hidden), then body, pictures and "Notes:" with notes when not empty.
 * Returns 0 or -1 (out of memory). */
int tr_office_slide_compose(struct tr_buf *out, size_t index, const struct tr_buf *title,
			    bool hidden, const struct tr_buf *body, const struct tr_buf *pictures,
			    const struct tr_buf *notes);

/* Windows a presentation of n_slides by d->sel (A, A-B, A-): render(ctx, index, out) renders
 * slide index (1-based) into out, attaching its pictures to res. Fills type presentation,
 * metadata.slideCount, range (slides), truncated, next, content (capped at max_output: a slide
 * that does not fit is left out with its pictures, the first one is cut) and shortResult; a
 * selector past the end is out_of_range. Returns 0, or -1 with the failure in d->z. */
int tr_office_slides(const struct tr_office_doc *d, size_t n_slides,
		     int (*render)(void *ctx, size_t index, struct tr_buf *out), void *ctx,
		     struct tr_result *res);

/* ODF inline spacing: text:s (c spaces), text:tab, text:line-break at the reader's current
 * start element are appended to out. Returns 1 when handled, 0 when the element is another,
 * -1 when out of memory. */
int tr_office_odf_space(struct tr_office_xml *x, struct tr_buf *out);

/* ODF tables at the reader's current start element: table:table (nesting counted in *depth; the
 * outermost one starts table afresh), and the rows and cells of the outermost one. Returns 1
 * when handled, 0 when the element is another, -1 when out of memory. */
int tr_office_odf_table(struct tr_office_xml *x, int *depth, struct tr_office_table *table);

/* --- office_numfmt --- */
/* spreadsheet number formats: built-in ids and format codes applied to cached values. */

/* Writes value formatted by number format code (NULL: General) into out; date1904 selects the
 * 1904 date system. Dates and times come out as ISO 8601 ("2024-03-01", "13:45:00",
 * "2024-03-01 13:45"). Returns as tr_buf_append. */
int tr_numfmt_format(struct tr_buf *out, double value, const char *code, bool date1904);

/* The format code of a built-in number format id, or NULL for General and unknown ids. */
const char *tr_numfmt_builtin(unsigned id);

/* --- office_xlsx.c (the sheets' cells) and office_xlsx_book.c (sheet list, strings, styles) --- */

struct xlsx_sheet {
	char *name, *part; /* owned */
	bool hidden;
	char *dim;    /* owned: <dimension ref> (or the scanned used range once shown), or NULL */
	bool scanned; /* dim is the used range of the cells, not the file's <dimension> */
};

struct numfmt {
	unsigned id;
	char *code;
};

struct xlsx {
	const struct tr_office_doc *d;
	struct tr_office_zip *z;
	struct xlsx_sheet *sheets;
	size_t n_sheets;
	struct tr_buf pool; /* shared strings, each NUL-terminated */
	size_t *strings;    /* offsets into pool */
	size_t n_strings;
	unsigned *xf_fmt; /* number format id of each cell style */
	size_t n_xf;
	struct numfmt *fmts;
	size_t n_fmts;
	bool date1904;
	size_t cap_strings, cap_xf; /* allocated items of strings, xf_fmt */
	bool in_xfs;                /* inside <cellXfs> of the styles */

	struct tr_buf out;   /* the content */
	uint64_t rows_shown; /* rows in this result */
	bool capped;         /* stopped by the row cap or max_output */
	uint64_t cap_sheet;  /* where to continue when capped: sheet, row */
	uint64_t cap_row;
};

/* Marks x's package out of memory; returns false. */
bool tr_xlsx_oom(struct xlsx *x);
/* Fill x->sheets (owned) from workbook.xml, x->pool and x->strings from the shared strings,
 * x->xf_fmt and x->fmts from the styles. Return 0, or -1 with the failure recorded in x->z. */
int tr_xlsx_load_workbook(struct xlsx *x);
int tr_xlsx_load_strings(struct xlsx *x);
int tr_xlsx_load_styles(struct xlsx *x);
/* The number format code of cell style s (NULL: General), borrowed from x. */
const char *tr_xlsx_style_format(const struct xlsx *x, const char *s);
/* Collects the text of the <si> or <is> element the reader stands on (its <t>s, not the
 * phonetic <rPh>) into out, its _xHHHH_ escapes decoded. Returns 1, or -1 on failure. */
int tr_xlsx_rich_text(struct tr_office_xml *xml, struct tr_buf *out);

/* --- office_docx.c (the body and notes) and office_docx_styles.c (styles, numbering) --- */

struct docx_style {
	char *id;
	int heading;     /* 1-9, 0: not a heading */
	int num_id, lvl; /* the list the style puts paragraphs in (num_id 0: none) */
};

struct docx_level {
	int abstract_id, lvl;
	bool bullet; /* numFmt bullet (or none): "-", else numbered "N." */
};

struct docx_num {
	int num_id, abstract_id;
	unsigned counts[9];
};

/* Text boxes nest at most this deep (a deeper one is skipped). */
#define MAX_BOX_DEPTH 4

/* The paragraph a text box interrupts, put aside while the box's own paragraphs are read. */
struct docx_host {
	struct tr_buf para;
	char *style, *link_url; /* owned */
	size_t link_start;
	int num_id, lvl, outline, run_depth, text_depth;
	bool has_num;
};

struct docx {
	const struct tr_office_doc *d;
	struct tr_office_zip *z;
	struct tr_office_rels rels;
	struct docx_style *styles;
	size_t n_styles;
	struct docx_level *levels;
	size_t n_levels;
	struct docx_num *nums;
	size_t n_nums;
	struct tr_office_rendering r; /* the rendering and its pictures */
	struct tr_buf para;           /* the paragraph being read */
	char *style;                  /* its pStyle, owned */
	int num_id, lvl, outline;
	bool has_num;

	int run_depth, text_depth; /* inside w:r, inside w:t */
	int tbl_depth;
	struct tr_office_table table;
	char *link_url; /* the hyperlink being read, owned */
	size_t link_start;
	int64_t insertions, deletions;
	struct docx_host hosts[MAX_BOX_DEPTH]; /* the paragraphs around the open text boxes */
	int box_depth;
};

/* The attribute name of the element x stands on (malloc'd), or NULL; as an integer, or fallback. */
char *tr_docx_take_attr(struct tr_office_xml *x, const char *name);
int tr_docx_attr_int(struct tr_office_xml *x, const char *name, int fallback);
/* Fill dx->styles from the styles part, dx->levels and dx->nums from the numbering part (part
 * borrowed). Return 0, or -1 with the failure recorded in dx->z. */
int tr_docx_load_styles(struct docx *dx, const char *part);
int tr_docx_load_numbering(struct docx *dx, const char *part);
/* The style of id (borrowed from dx), or NULL. */
const struct docx_style *tr_docx_find_style(const struct docx *dx, const char *id);
/* The list instance num_id (borrowed from dx), or NULL. */
struct docx_num *tr_docx_find_num(struct docx *dx, int num_id);
/* Whether level lvl of abstract list abstract_id is a bullet list (unknown: true). */
bool tr_docx_level_is_bullet(const struct docx *dx, int abstract_id, int lvl);

/* --- office_docx, office_xlsx, office_pptx, office_odf, office_ods, office_odp --- */

/* The open document every renderer reads from. */
struct tr_office_doc {
	struct tr_office_zip *z;
	const char *main_part;         /* the main part named by [Content_Types].xml (borrowed) */
	const char *name;              /* the file's base name, for next (borrowed) */
	const struct tr_selector *sel; /* borrowed */
	const struct tr_options *opts; /* borrowed */
};

/* Fill res (type, content, range, truncated, next, shortResult, images, metadata of their kind)
 * from the document, or record a failure in d->z (the caller turns it into the result).
 * Return 0, or -1 on failure or when out of memory (d->z->oom). */
int tr_office_docx(const struct tr_office_doc *d, struct tr_result *res);
int tr_office_xlsx(const struct tr_office_doc *d, struct tr_result *res);
int tr_office_pptx(const struct tr_office_doc *d, struct tr_result *res);
int tr_office_odt(const struct tr_office_doc *d, struct tr_result *res);
int tr_office_ods(const struct tr_office_doc *d, struct tr_result *res);
int tr_office_odp(const struct tr_office_doc *d, struct tr_result *res);

/* The Office reader (OOXML by its [Content_Types].xml, legacy OLE2 files), for registry.c. */
extern const struct tr_reader tr_reader_office;

#endif
