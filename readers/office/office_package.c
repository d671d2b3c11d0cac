/* SPDX-License-Identifier: MIT */
/* office_package.c - the Office package read of docs/SPEC.md §3 "Office documents" (module
 * toolfs-office.so): loads the archive, finds its main part from [Content_Types].xml or the ODF
 * mimetype entry, and hands it to the renderer of its kind. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "office.h"
#include "office_api.h"
#include "util.h"

/* The OOXML kinds, by the content type of their main part. */
static const struct office_kind {
	const char *content_type; /* prefix of the main part's content type */
	const char *mime_type;
	const char *noun; /* for sentences */
	int (*render)(const struct tr_office_doc *d, struct tr_result *res);
} office_kinds[] = {
	{"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main",
	 "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "Word document",
	 tr_office_docx},
	{"application/vnd.openxmlformats-officedocument.wordprocessingml.template.main",
	 "application/vnd.openxmlformats-officedocument.wordprocessingml.template", "Word document",
	 tr_office_docx},
	{"application/vnd.ms-word.document.macroEnabled.main",
	 "application/vnd.ms-word.document.macroEnabled.12", "Word document", tr_office_docx},
	{"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main",
	 "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "Excel workbook",
	 tr_office_xlsx},
	{"application/vnd.openxmlformats-officedocument.spreadsheetml.template.main",
	 "application/vnd.openxmlformats-officedocument.spreadsheetml.template", "Excel workbook",
	 tr_office_xlsx},
	{"application/vnd.ms-excel.sheet.macroEnabled.main",
	 "application/vnd.ms-excel.sheet.macroEnabled.12", "Excel workbook", tr_office_xlsx},
	{"application/vnd.openxmlformats-officedocument.presentationml.presentation.main",
	 "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	 "PowerPoint presentation", tr_office_pptx},
	{"application/vnd.openxmlformats-officedocument.presentationml.slideshow.main",
	 "application/vnd.openxmlformats-officedocument.presentationml.slideshow",
	 "PowerPoint presentation", tr_office_pptx},
	{"application/vnd.ms-powerpoint.presentation.macroEnabled.main",
	 "application/vnd.ms-powerpoint.presentation.macroEnabled.12", "PowerPoint presentation",
	 tr_office_pptx},
};

/* The kind whose main-part content type type starts with, or NULL. */
static const struct office_kind *kind_of_type(const char *type)
{
	for (size_t i = 0; type && i < sizeof(office_kinds) / sizeof(office_kinds[0]); i++)
		if (strncmp(type, office_kinds[i].content_type,
			    strlen(office_kinds[i].content_type)) == 0)
			return &office_kinds[i];
	return NULL;
}

/* The package's main part as its relationships name it (_rels/.rels, type officeDocument),
 * malloc'd, or NULL (none, or out of memory: z->oom). */
static char *office_document_target(struct tr_office_zip *z)
{
	struct tr_office_rels rels;
	const struct tr_office_rel *rel;
	char *target = NULL;

	if (tr_office_rels_load(z, "", &rels) < 0)
		return NULL;
	rel = tr_office_rels_by_type(&rels, "/officeDocument");
	if (rel && !rel->external && !(target = strdup(rel->target)))
		z->oom = true;
	tr_office_rels_free(&rels);
	return target;
}

/* What a pass over [Content_Types].xml looks for and finds. */
struct types_walk {
	const char *target, *dot;
	char **part;
	const struct office_kind **kind;
	const struct office_kind *by_default;
	bool overridden;
};

/* An Override or a Default; the walk stops at the first main part found. */
static int on_content_type(void *ctx, struct tr_office_xml *x)
{
	struct types_walk *w = ctx;
	bool is_override = !strcmp(tr_office_xml_name(x), "Override");
	char *type = tr_office_xml_attr(x, "ContentType");
	char *name = tr_office_xml_attr(x, is_override ? "PartName" : "Extension");

	if (type && name && is_override && !w->target) {
		*w->kind = kind_of_type(type);
		if (*w->kind && !(*w->part = strdup(name[0] == '/' ? name + 1 : name)))
			x->z->oom = true;
	} else if (type && name && is_override) {
		w->overridden |= !strcmp(name[0] == '/' ? name + 1 : name, w->target);
	} else if (type && name && w->dot && !strcasecmp(name, w->dot + 1)) {
		w->by_default = kind_of_type(type);
	}
	free(type);
	free(name);
	return *w->kind ? 1 : 0;
}

/* One pass over [Content_Types].xml. Without target: the first Override of a main-part type
 * sets *kind and *part (malloc'd). With target (the part _rels/.rels names): the Default of its
 * extension sets *kind when no Override types target otherwise. Returns 0, 1 when there is no
 * [Content_Types].xml, or -1 with the failure recorded in z. */
static int scan_content_types(struct tr_office_zip *z, const char *target, char **part,
			      const struct office_kind **kind)
{
	static const struct tr_office_rule rules[] = {
		{"Override", on_content_type, NULL},
		{"Default", on_content_type, NULL},
	};
	struct types_walk w = {
		.target = target,
		.dot = target ? strrchr(target, '.') : NULL,
		.part = part,
		.kind = kind,
	};
	const struct tr_office_walk walk = {rules, 2, NULL, &w};
	int rc = tr_office_walk_part(z, "[Content_Types].xml", false, NULL, &walk);

	if (rc)
		return rc;
	if (target && w.by_default && !w.overridden) {
		*kind = w.by_default;
		if (!(*part = strdup(target)))
			z->oom = true;
	}
	return rc < 0 || z->oom ? -1 : 0;
}

/* Finds the main part in [Content_Types].xml: its name (malloc'd into *part) and kind, from an
 * Override of a main-part type, or else from the Default of the extension of the part that
 * _rels/.rels names. Returns 0, 1 when there is none of a known kind, or -1 with the failure
 * recorded in z. */
static int find_main_part(struct tr_office_zip *z, char **part, const struct office_kind **kind)
{
	char *target;
	int rc;

	*part = NULL;
	*kind = NULL;
	rc = scan_content_types(z, NULL, part, kind);
	if (rc || *kind)
		return rc < 0 ? -1 : rc > 0 ? 1 : 0;
	target = office_document_target(z);
	if (target)
		rc = scan_content_types(z, target, part, kind);
	free(target);
	if (rc < 0 || z->oom || z->error)
		return -1;
	return *kind ? 0 : 1;
}

/* ODF packages by their mimetype entry: text, spreadsheets and presentations. */
static const struct office_kind odf_kinds[] = {
	{"application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.text",
	 "OpenDocument text", tr_office_odt},
	{"application/vnd.oasis.opendocument.spreadsheet",
	 "application/vnd.oasis.opendocument.spreadsheet", "OpenDocument spreadsheet",
	 tr_office_ods},
	{"application/vnd.oasis.opendocument.presentation",
	 "application/vnd.oasis.opendocument.presentation", "OpenDocument presentation",
	 tr_office_odp},
};

/* Finds the kind of an ODF package from its mimetype entry; the main part is content.xml.
 * Returns 0, 1 when the type is not one of odf_kinds, or -1 with the failure recorded in z. */
static int find_odf_kind(struct tr_office_zip *z, char **part, const struct office_kind **kind)
{
	struct tr_buf type = {0};
	int rc = tr_office_zip_read(z, "mimetype", 256, &type);

	*kind = NULL;
	*part = NULL;
	for (size_t i = 0; rc == 0 && i < sizeof(odf_kinds) / sizeof(odf_kinds[0]); i++) {
		size_t len = strlen(odf_kinds[i].content_type);

		/* Templates add "-template" to the type. */
		if (type.len >= len && !memcmp(type.data, odf_kinds[i].content_type, len) &&
		    (type.len == len || !strcmp(type.data + len, "-template")))
			*kind = &odf_kinds[i];
	}
	tr_buf_free(&type);
	if (rc != 0)
		return rc;
	if (!*kind)
		return 1;
	*part = strdup("content.xml");
	if (!*part) {
		z->oom = true;
		return -1;
	}
	return 0;
}

/* What the walk of a manifest looks for: encryption data of one part. */
struct manifest_walk {
	const char *part;
	bool in_part, encrypted;
};

static int on_file_entry(void *ctx, struct tr_office_xml *x)
{
	struct manifest_walk *w = ctx;
	char *path = tr_office_xml_attr(x, "full-path");

	w->in_part = path && !strcmp(path[0] == '/' ? path + 1 : path, w->part);
	free(path);
	return 0;
}

static int on_encryption_data(void *ctx, struct tr_office_xml *x)
{
	struct manifest_walk *w = ctx;

	(void)x;
	w->encrypted = w->in_part;
	return w->encrypted ? 1 : 0;
}

/* True when META-INF/manifest.xml gives part encryption data (a password-protected ODF
 * package: its XML parts are ciphertext). A manifest that cannot be read says no. */
static bool odf_encrypted(struct tr_office_zip *z, const char *part)
{
	static const struct tr_office_rule rules[] = {
		{"file-entry", on_file_entry, NULL},
		{"encryption-data", on_encryption_data, NULL},
	};
	struct manifest_walk w = {.part = part};
	const struct tr_office_walk walk = {rules, 2, NULL, &w};

	if (z->error != TR_OK)
		return false;
	/* A manifest missing or unreadable is not a failure of the document (the walk stops at
	 * the encryption data, so a failure means there was none before it). */
	tr_office_walk_part(z, "META-INF/manifest.xml", false, NULL, &walk);
	z->error = TR_OK;
	z->reason[0] = '\0';
	return w.encrypted;
}

/* Turns the failure recorded in z into res (images dropped). Returns 0, or -1 when out of
 * memory. */
static int fail_from_zip(struct tr_office_zip *z, const char *path, const char *noun,
			 struct tr_result *res)
{
	if (z->oom)
		return -1;
	for (size_t i = 0; i < res->n_images; i++)
		tr_blob_unref(res->images[i].data);
	free(res->images);
	res->images = NULL;
	res->n_images = 0;
	tr_result_fail(res, z->error != TR_OK ? z->error : TR_E_CORRUPT, "Failed to read %s %s: %s",
		       noun, path, z->reason[0] ? z->reason : "the archive is malformed");
	return res->short_result ? 0 : -1;
}

static int package_read(const struct tr_file *file, const struct tr_selector *sel,
			const struct tr_options *opts, struct tr_result *res)
{
	uint64_t size = (uint64_t)file->st.st_size;
	const struct office_kind *kind = NULL;
	struct tr_office_zip z = {0};
	struct tr_blob *blob = NULL;
	char *main_part = NULL;
	bool odf;
	int rc;

	if (tr_load_file(file->fd, size, &blob, &res->meta) < 0) {
		tr_result_fail(res, tr_error_from_errno(errno), "I/O error reading %s",
			       file->src->path);
		return res->short_result ? 0 : -1;
	}
	if (tr_office_zip_open(&z, blob->data, blob->len) < 0) {
		rc = fail_from_zip(&z, file->src->path, "Office document", res);
		goto out;
	}
	z.deadline = file->deadline;
	odf = tr_office_is_odf(file->head, file->head_len) ||
	      (!tr_office_zip_has(&z, "[Content_Types].xml") && tr_office_zip_has(&z, "mimetype"));
	if (odf)
		rc = find_odf_kind(&z, &main_part, &kind);
	else
		rc = find_main_part(&z, &main_part, &kind);
	if (rc > 0 && tr_office_zip_has(&z, "[Content_Types].xml")) {
		/* Another Open Packaging file (Visio, XPS, ...): known, not shown. */
		tr_office_zip_fail(
			&z, TR_E_UNSUPPORTED,
			"it is an Open Packaging (OOXML) file, but not a Word, Excel or "
			"PowerPoint one ([Content_Types].xml names no document, workbook "
			"or presentation)");
	} else if (rc > 0) {
		tr_office_zip_fail(&z, TR_E_CORRUPT,
				   "it is a zip archive without the parts of a Word, Excel or "
				   "PowerPoint file (no [Content_Types].xml)");
	}
	if (rc != 0) {
		rc = fail_from_zip(&z, file->src->path, "Office document", res);
		goto out;
	}
	if (odf && odf_encrypted(&z, main_part)) {
		tr_result_fail(res, TR_E_ENCRYPTED, "Office document is password-protected: %s",
			       file->src->path);
		rc = res->short_result ? 0 : -1;
		goto out;
	}
	free(res->mime_type);
	res->mime_type = strdup(kind->mime_type);
	{
		struct tr_office_doc d = {.z = &z,
					  .main_part = main_part,
					  .name = file->src->name,
					  .sel = sel,
					  .opts = opts};

		rc = kind->render(&d, res);
	}
	if (rc < 0)
		rc = fail_from_zip(&z, file->src->path, kind->noun, res);
out:
	free(main_part);
	tr_office_zip_close(&z);
	tr_blob_unref(blob);
	return rc;
}

const struct tr_office_api tr_office_api = {
	.abi = TR_OFFICE_ABI,
	.read = package_read,
};
