/* SPDX-License-Identifier: MIT */
/* pdf_page_render.c - the renders a PDF read adds to its result: each shown page's image or its
 * timeout note, and a region selector's rectangle of one page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <poppler.h>

#include "core.h"
#include "pdf.h"
#include "util.h"

/* The long edge of page renders: docs/SPEC.md §3, 1568 px or less when image_max_dim says so. */
static uint32_t render_long_edge(const struct tr_options *opts)
{
	uint32_t long_edge = opts->image_max_dim < TR_PDF_RENDER_LONG_EDGE
				     ? (uint32_t)opts->image_max_dim
				     : TR_PDF_RENDER_LONG_EDGE;

	return long_edge ? long_edge : 1;
}

/* Appends to out the one wording of a page's timeout (docs/SPEC.md §3 "Render time"):
 * "[page P: timeout: not DONE within max_render_ms (N ms), WHY]", followed by "; read
 * NAME:P.tool.json to ALONE it alone" when alone is not NULL (earlier pages used the time: the
 * page alone may still make it). Returns 0, or -1 when out of memory. */
int tr_pdf_timeout_note(struct pdf_read *rd, struct tr_buf *out, uint64_t p, const char *done,
			const char *why, const char *alone)
{
	char hint[128] = "";

	if (alone)
		snprintf(hint, sizeof(hint), "; read %s:%llu.tool.json to %s it alone",
			 rd->file->src->name, (unsigned long long)p, alone);
	return tr_buf_printf(out,
			     "[page %llu: timeout: not %s within max_render_ms (%llu ms), %s%s]",
			     (unsigned long long)p, done,
			     (unsigned long long)rd->opts->max_render_ms, why, hint) < 0
		       ? -1
		       : 0;
}

/* Renders page p into images[]; a page cairo cannot render is noted in content instead. The
 * render is left to the watchdog (struct tr_watch): a drawing operation cairo does not return
 * from is stopped by the read's answer. Finishing, nothing is drawn: the page being drawn is
 * stopped, later ones are not started. Returns 0, or -1 when out of memory. */
int tr_pdf_add_render(struct pdf_read *rd, uint64_t p)
{
	struct tr_pdf_render img;
	char err[160] = "";
	int rc = 2;

	if (rd->finishing) {
		snprintf(err, sizeof(err), "%s",
			 p == rd->rendering ? TR_PDF_DRAWING_STOPPED : TR_PDF_NOT_STARTED);
	} else {
		PopplerPage *page;

		rd->rendering = p;
		tr_watch_leave(rd->file);
		page = poppler_document_get_page(rd->doc, (int)(p - 1));
		if (page) {
			rc = tr_pdf_render_page(page, render_long_edge(rd->opts),
						rd->opts->image_max_b64, rd->file->deadline, &img,
						err, sizeof(err));
			g_object_unref(page);
		} else {
			rc = 1;
			snprintf(err, sizeof(err), "the page could not be loaded");
		}
		tr_watch_enter(rd->file);
		rd->rendering = 0;
	}
	if (rc < 0)
		return -1;
	if (rc == 2) {
		/* docs/SPEC.md §3: the page is listed as a timeout; its text stays. */
		bool alone = rd->rendered + rd->timeouts > 0;

		rd->timeouts++;
		if (tr_pdf_timeout_note(rd, &rd->res->content, p, "rendered", err,
					alone ? "render" : NULL) < 0 ||
		    tr_buf_append(&rd->res->content, "\n", 1) < 0)
			return -1;
		return 0;
	}
	if (rc > 0)
		return tr_buf_printf(&rd->res->content, "[page %llu: could not be rendered: %s]\n",
				     (unsigned long long)p, err);
	rd->rendered++;
	return tr_result_add_image(rd->res, img.data, img.media_type, img.width, img.height,
				   (uint32_t)p, 0);
}

/* Fails res for a region render that did not succeed (rc 1 or 2 of tr_pdf_render_region). */
void tr_pdf_fail_region_render(struct pdf_read *rd, int rc, uint64_t p, const char *err)
{
	if (rc == 2)
		tr_result_fail(rd->res, TR_E_TIMEOUT,
			       "Timeout: the region of page %llu was not rendered within "
			       "max_render_ms (%llu ms): %s",
			       (unsigned long long)p, (unsigned long long)rd->opts->max_render_ms,
			       err);
	else
		tr_result_fail(rd->res, TR_E_CORRUPT,
			       "The region of page %llu could not be rendered: %s",
			       (unsigned long long)p, err);
}

/* A region selector P@WxH+X+Y (page 1 without P@): the rectangle of page P's page image (the
 * render a page selector attaches) drawn again at the zoom that fills the output. The page's
 * text is not repeated (docs/SPEC.md §3). Returns 0, or -1 when out of memory. */
int tr_pdf_read_region(struct pdf_read *rd, const struct tr_selector *sel, uint64_t n_pages)
{
	struct tr_result *res = rd->res;
	const struct tr_region *asked = &sel->region;
	uint64_t p = sel->start ? sel->start : 1;
	uint32_t long_edge = render_long_edge(rd->opts), grid_w, grid_h;
	struct tr_pdf_render img;
	struct tr_region r;
	PopplerPage *page;
	char err[160] = "";
	double scale;
	int rc;

	if (p > n_pages) {
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Page %llu is past the end of the document (%llu %s)",
			       (unsigned long long)p, (unsigned long long)n_pages,
			       tr_pdf_plural(n_pages, "page", "pages"));
		return 0;
	}
	page = poppler_document_get_page(rd->doc, (int)(p - 1));
	if (!page) {
		tr_result_fail(res, TR_E_CORRUPT, "Page %llu of the PDF could not be loaded",
			       (unsigned long long)p);
		return 0;
	}
	tr_pdf_render_size(page, long_edge, &grid_w, &grid_h);
	if (tr_region_clip(asked, grid_w, grid_h, &r) < 0) {
		g_object_unref(page);
		tr_result_fail(res, TR_E_OUT_OF_RANGE,
			       "Region %ux%u+%u+%u is outside page %llu's %ux%u page image (X must "
			       "be below %u and Y below %u)",
			       asked->width, asked->height, asked->x, asked->y,
			       (unsigned long long)p, grid_w, grid_h, grid_w, grid_h);
		return 0;
	}
	rd->phase = PDF_REGION;
	rd->at = p;
	tr_watch_leave(rd->file);
	rc = tr_pdf_render_region(page, &r, long_edge, rd->opts->image_max_b64, rd->file->deadline,
				  &img, err, sizeof(err));
	g_object_unref(page);
	tr_watch_enter(rd->file);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		tr_pdf_fail_region_render(rd, rc, p, err);
		return 0;
	}
	scale = (double)(r.width > r.height ? r.width : r.height) /
		(img.width > img.height ? img.width : img.height);
	if (tr_result_add_image(res, img.data, img.media_type, img.width, img.height, (uint32_t)p,
				0) < 0)
		return -1;
	res->meta.has_region = true;
	res->meta.region = r;
	tr_buf_printf(&res->content,
		      "--- Page %llu, region %ux%u+%u+%u ---\n[Region %ux%u+%u+%u of page %llu's "
		      "%ux%u page image, rendered again at %ux%u (zoom %.3f); a point (x, y) of "
		      "the attached image is (%u + x * %.3f, %u + y * %.3f) in the page image. "
		      "The page's text is not repeated: read %s:%llu.tool.json for it]\n",
		      (unsigned long long)p, r.width, r.height, r.x, r.y, r.width, r.height, r.x,
		      r.y, (unsigned long long)p, grid_w, grid_h, img.width, img.height, 1 / scale,
		      r.x, scale, r.y, scale, rd->file->src->name, (unsigned long long)p);
	if (res->content.oom)
		return -1;
	res->success = true;
	tr_result_set_short(res,
			    "Read PDF: region %ux%u+%u+%u of page %llu of %llu, shown at %ux%u",
			    r.width, r.height, r.x, r.y, (unsigned long long)p,
			    (unsigned long long)n_pages, img.width, img.height);
	return res->short_result ? 0 : -1;
}
