/* SPDX-License-Identifier: MIT */
/* pdf_ocr.c - OCR of PDF pages without a text layer: rendered in grey at 300 dpi and read by
 * toolfs-ocr.so, several pages at once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ocr.h"
#include "pdf.h"
#include "util.h"

/* The at most max_ocr_pages due pages, shared by the threads that OCR them. */
struct ocr_run {
	PopplerDocument *doc;
	const struct tr_file *file;
	const struct tr_ocr_api *api;
	const char *lang;
	uint64_t deadline;
	struct tr_pdf_ocr_page **jobs;
	size_t n_jobs, next;  /* next: the first job no thread took yet (under lock) */
	pthread_mutex_t lock; /* next, and the document (poppler's is not thread-safe) */
	bool oom;
};

/* Moves answer (its text included) into page. */
static void take_answer(struct tr_pdf_ocr_page *page, const struct tr_ocr_text *answer)
{
	page->text = answer->text;
	page->confidence = answer->confidence;
	snprintf(page->lang, sizeof(page->lang), "%s", answer->lang);
	snprintf(page->script, sizeof(page->script), "%s", answer->script);
	snprintf(page->missing, sizeof(page->missing), "%s", answer->missing);
}

/* OCRs one page: the cached answer (another read may have just made it), or a render under the
 * lock and a recognition outside it. */
static void ocr_one(struct ocr_run *run, struct tr_pdf_ocr_page *job)
{
	struct tr_ocr_text text = {0};
	unsigned char *grey = NULL;
	uint32_t width = 0, height = 0;
	char key[TR_OCR_KEY_SIZE];
	int rc;

	tr_ocr_key(&run->file->st, job->page, run->lang, key, sizeof(key));
	rc = run->api->cached(key, &text);
	if (rc != 0) {
		pthread_mutex_lock(&run->lock);
		PopplerPage *page = poppler_document_get_page(run->doc, (int)(job->page - 1));

		rc = 1;
		if (page) {
			rc = tr_pdf_render_grey(page, TR_OCR_DPI, run->deadline, &grey, &width,
						&height, job->err, sizeof(job->err));
			g_object_unref(page);
		} else {
			snprintf(job->err, sizeof(job->err), "the page could not be loaded");
		}
		pthread_mutex_unlock(&run->lock);
		if (rc == 0)
			rc = run->api->recognize(run->lang, grey, width, height, width, TR_OCR_DPI,
						 run->deadline, key, &text, job->err,
						 sizeof(job->err));
		free(grey);
	}
	if (rc < 0) {
		run->oom = true;
		rc = 1;
	}
	job->status = rc == 0 ? TR_PDF_OCR_DONE : rc == 2 ? TR_PDF_OCR_TIMEOUT : TR_PDF_OCR_FAILED;
	take_answer(job, &text);
}

static void *ocr_thread(void *arg)
{
	struct ocr_run *run = arg;

	for (;;) {
		struct tr_pdf_ocr_page *job = NULL;

		pthread_mutex_lock(&run->lock);
		if (run->next < run->n_jobs)
			job = run->jobs[run->next++];
		pthread_mutex_unlock(&run->lock);
		if (!job)
			return NULL;
		ocr_one(run, job);
	}
}

/* 80% of the time left before deadline (0: none) from now: the rest is for the page images. */
static uint64_t ocr_deadline(uint64_t deadline)
{
	struct timespec now;
	uint64_t ns;

	if (!deadline)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	return deadline > ns ? ns + (deadline - ns) / 10 * 8 : deadline;
}

int tr_pdf_ocr_pages(PopplerDocument *doc, const struct tr_file *file,
		     const struct tr_options *opts, struct tr_pdf_ocr_page *pages, size_t n,
		     bool *lang_missing, char *err, size_t err_size)
{
	struct ocr_run run = {.doc = doc, .file = file, .lang = opts->ocr_lang.text};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t threads[16];
	size_t n_threads = 0;

	*lang_missing = false;
	for (size_t i = 0; i < n; i++)
		if (pages[i].status == TR_PDF_OCR_DUE)
			run.n_jobs++;
	if (!run.n_jobs)
		return 0;
	run.api = tr_ocr_load(err, err_size);
	if (!run.api)
		return 1;
	run.jobs = calloc(run.n_jobs, sizeof(*run.jobs));
	if (!run.jobs)
		return -1;
	run.n_jobs = 0;
	for (size_t i = 0, taken = 0; i < n; i++) {
		struct tr_ocr_text text;
		char key[TR_OCR_KEY_SIZE];

		if (pages[i].status != TR_PDF_OCR_DUE)
			continue;
		if (taken++ >= opts->max_ocr_pages) {
			pages[i].status = TR_PDF_OCR_BUDGET;
			continue;
		}
		/* A page OCR'd before in this process is taken from the cache (it counts in the
		 * budget all the same, so a window is the same on every read). */
		tr_ocr_key(&file->st, pages[i].page, run.lang, key, sizeof(key));
		if (run.api->cached(key, &text) == 0) {
			pages[i].status = TR_PDF_OCR_DONE;
			take_answer(&pages[i], &text);
		} else {
			run.jobs[run.n_jobs++] = &pages[i];
		}
	}
	if (run.n_jobs && run.api->check(run.lang, err, err_size) != 0) {
		*lang_missing = true;
		free(run.jobs);
		return 1;
	}
	run.deadline = ocr_deadline(file->deadline);
	pthread_mutex_init(&run.lock, NULL);
	/* The calling thread works too; the others start only when there is more than a page. */
	while (n_threads + 1 < run.n_jobs && n_threads + 1 < (size_t)(cpus > 0 ? cpus : 1) &&
	       n_threads < sizeof(threads) / sizeof(threads[0]) &&
	       pthread_create(&threads[n_threads], NULL, ocr_thread, &run) == 0)
		n_threads++;
	ocr_thread(&run);
	for (size_t i = 0; i < n_threads; i++)
		pthread_join(threads[i], NULL);
	pthread_mutex_destroy(&run.lock);
	free(run.jobs);
	return run.oom ? -1 : 0;
}
