/* SPDX-License-Identifier: MIT */
/* ocr_tess.c - recognition on Tesseract's C API (toolfs-ocr.so): a pool of engines initialised
 * once per process and language, a cache of answers, and the deadline through Tesseract's
 * cancel callback. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tesseract/capi.h>

#include "ocr.h"
#include "util.h"

/* Tesseract's handles are not thread-safe: one engine serves one recognition at a time. The
 * pool keeps idle engines for reuse and creates at most one per CPU (a caller waits for a free
 * one beyond that); an idle engine of another language is replaced when the pool is full. */
struct engine {
	TessBaseAPI *api;
	char lang[sizeof(((struct tr_option_word *)0)->text)];
	struct engine *next;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_free = PTHREAD_COND_INITIALIZER;
static struct engine *idle;
static unsigned n_engines;

static unsigned pool_max(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
}

/* Where the traineddata files are: $TESSDATA_PREFIX (as Tesseract reads it: the folder itself
 * or its tessdata/), else Debian's folder. */
static void tessdata_dir(char *buf, size_t size)
{
	const char *env = secure_getenv("TESSDATA_PREFIX");
	int n;

	if (env && *env) {
		n = snprintf(buf, size, "%s/tessdata", env);
		if (n < 0 || (size_t)n >= size || access(buf, F_OK) != 0)
			snprintf(buf, size, "%s", env);
		return;
	}
	snprintf(buf, size, "%s", TR_TESSDATA_DIR);
}

/* Writes the Debian package suffix of the len bytes of language code lang into out: Debian spells
 * Tesseract's "chi_sim" tesseract-ocr-chi-sim. */
static void debian_package_suffix(const char *lang, size_t len, char *out, size_t out_size)
{
	size_t i;

	for (i = 0; i < len && i + 1 < out_size; i++)
		out[i] = lang[i] == '_' ? '-' : lang[i];
	if (out_size)
		out[i] = '\0';
}

int tr_ocr_check(const char *lang, char *err, size_t err_size)
{
	char dir[2048], path[2048 + 64 + 16];
	const char *p = lang;

	tessdata_dir(dir, sizeof(dir));
	while (*p) {
		size_t len = strcspn(p, "+");

		snprintf(path, sizeof(path), "%s/%.*s.traineddata", dir, (int)len, p);
		if (access(path, R_OK) != 0) {
			char package[64];

			debian_package_suffix(p, len, package, sizeof(package));
			snprintf(err, err_size,
				 "OCR language %.*s is not installed (no %.*s.traineddata in %s): "
				 "install the Debian package tesseract-ocr-%s, or set ocr_lang",
				 (int)len, p, (int)len, p, dir, package);
			return 1;
		}
		p += len + (p[len] == '+');
	}
	return 0;
}

/* A new engine for lang, or NULL with err. */
static struct engine *engine_new(const char *lang, char *err, size_t err_size)
{
	struct engine *e = calloc(1, sizeof(*e));
	char dir[2048];

	if (!e) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	tessdata_dir(dir, sizeof(dir));
	snprintf(e->lang, sizeof(e->lang), "%s", lang);
	e->api = TessBaseAPICreate();
	/* Tesseract writes its warnings to stderr unless told otherwise; the core never prints. */
	if (e->api)
		TessBaseAPISetVariable(e->api, "debug_file", "/dev/null");
	if (!e->api || TessBaseAPIInit3(e->api, dir, lang) != 0) {
		snprintf(err, err_size, "Tesseract could not load language %s from %s", lang, dir);
		if (e->api)
			TessBaseAPIDelete(e->api);
		free(e);
		return NULL;
	}
	return e;
}

static void engine_free(struct engine *e)
{
	TessBaseAPIEnd(e->api);
	TessBaseAPIDelete(e->api);
	free(e);
}

/* An engine for lang for the caller alone (give it back with engine_put); NULL with err, or with
 * *late when deadline (0: none) came while every engine was busy. */
static struct engine *engine_take(const char *lang, uint64_t deadline, bool *late, char *err,
				  size_t err_size)
{
	struct engine *e = NULL, *other = NULL;
	struct timespec until = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};

	pthread_mutex_lock(&pool_lock);
	for (;;) {
		struct engine **link = &idle;

		for (; *link; link = &(*link)->next)
			if (strcmp((*link)->lang, lang) == 0)
				break;
		if (*link) {
			e = *link;
			*link = e->next;
			break;
		}
		if (n_engines < pool_max()) {
			n_engines++;
			break;
		}
		if (idle) { /* full of other languages: replace one */
			other = idle;
			idle = other->next;
			break;
		}
		/* every engine busy: waits for one, no later than the read's deadline */
		if (!deadline) {
			pthread_cond_wait(&pool_free, &pool_lock);
		} else if (pthread_cond_clockwait(&pool_free, &pool_lock, CLOCK_MONOTONIC,
						  &until) == ETIMEDOUT) {
			*late = true;
			pthread_mutex_unlock(&pool_lock);
			return NULL;
		}
	}
	pthread_mutex_unlock(&pool_lock);
	if (e)
		return e;
	if (other)
		engine_free(other);
	e = engine_new(lang, err, err_size);
	if (!e) {
		pthread_mutex_lock(&pool_lock);
		n_engines--;
		pthread_cond_signal(&pool_free);
		pthread_mutex_unlock(&pool_lock);
	}
	return e;
}

static void engine_put(struct engine *e)
{
	TessBaseAPIClear(e->api);
	pthread_mutex_lock(&pool_lock);
	e->next = idle;
	idle = e;
	pthread_cond_signal(&pool_free);
	pthread_mutex_unlock(&pool_lock);
}

void tr_ocr_warm(void)
{
	struct tr_options opts;
	struct engine *e;
	bool late = false;
	char err[256];

	tr_options_init(&opts);
	e = engine_take(opts.ocr_lang.text, 0, &late, err, sizeof(err));
	if (e)
		engine_put(e);
}

/* --- the cache: answers by key, the oldest dropped first beyond CACHE_SLOTS or CACHE_BYTES */
#define CACHE_SLOTS 256
#define CACHE_BYTES (8u << 20)

struct cached {
	char *key;
	struct tr_ocr_text answer;
	uint64_t age;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached cache[CACHE_SLOTS];
static size_t cache_bytes;
static uint64_t cache_clock;

int tr_ocr_cached(const char *key, struct tr_ocr_text *out)
{
	int rc = 1;

	if (!key)
		return 1;
	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < CACHE_SLOTS && rc; i++) {
		if (cache[i].key && strcmp(cache[i].key, key) == 0) {
			*out = cache[i].answer;
			out->text = strdup(cache[i].answer.text);
			cache[i].age = ++cache_clock;
			rc = out->text ? 0 : 1;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return rc;
}

static void slot_clear(struct cached *c)
{
	if (c->key)
		cache_bytes -= strlen(c->key) + strlen(c->answer.text);
	free(c->key);
	free(c->answer.text);
	*c = (struct cached){0};
}

static void cache_store(const char *key, const struct tr_ocr_text *t)
{
	size_t bytes = strlen(key) + strlen(t->text);
	char *k, *text;

	if (bytes > CACHE_BYTES / 4)
		return;
	k = strdup(key);
	text = strdup(t->text);
	if (!k || !text) {
		free(k);
		free(text);
		return;
	}
	pthread_mutex_lock(&cache_lock);
	for (;;) {
		struct cached *oldest = &cache[0];
		bool free_slot = false;

		for (size_t i = 0; i < CACHE_SLOTS; i++) {
			if (!cache[i].key) {
				oldest = &cache[i];
				free_slot = true;
				break;
			}
			if (cache[i].age < oldest->age)
				oldest = &cache[i];
		}
		if (free_slot && cache_bytes + bytes <= CACHE_BYTES) {
			*oldest = (struct cached){k, *t, ++cache_clock};
			oldest->answer.text = text;
			cache_bytes += bytes;
			break;
		}
		slot_clear(oldest);
	}
	pthread_mutex_unlock(&cache_lock);
}

/* Tesseract asks this between words; true stops the recognition. */
static bool cancel_past_deadline(void *deadline, int words)
{
	(void)words;
	return tr_deadline_passed(*(const uint64_t *)deadline);
}

/* Tesseract's script names and the language of each, for the scripts whose pages the
 * languages of another script read as noise; Latin is every language not listed. */
static const struct {
	const char *script, *lang;
} script_langs[] = {
	{"Arabic", "ara"},   {"Hebrew", "heb"},   {"Cyrillic", "rus"}, {"Greek", "ell"},
	{"Han", "chi_sim"},  {"Japanese", "jpn"}, {"Hangul", "kor"},   {"Devanagari", "hin"},
	{"Thai", "tha"},     {"Bengali", "ben"},  {"Tamil", "tam"},    {"Armenian", "hye"},
	{"Georgian", "kat"}, {"Ethiopic", "amh"}, {"Korean", "kor"},
};

/* Below this script confidence Tesseract's guess is not acted on (measured: 20-30 on a page of
 * Latin or Arabic text, 1.4 on four short Hebrew lines, 0 on a page without text). */
#define MIN_SCRIPT_CONFIDENCE 1.0f

/* The one engine for script detection (osd.traineddata), made on first use and kept: outside
 * the pool, so that it never takes the place of a recognition engine (which would be loaded
 * again for every page), and used by one page at a time (it is a small share of a page). */
static pthread_mutex_t osd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct engine *osd_engine;

/* The language of script: its row of script_langs, "eng" for Latin, NULL when unknown. */
static const char *script_lang(const char *script)
{
	for (size_t i = 0; i < sizeof(script_langs) / sizeof(script_langs[0]); i++)
		if (strcmp(script_langs[i].script, script) == 0)
			return script_langs[i].lang;
	return strcmp(script, "Latin") == 0 ? "eng" : NULL;
}

/* True when one of the languages of lang ("eng+deu") reads script_lang's script: it is that
 * language, or (for Latin) a language script_langs does not list. */
static bool lang_reads(const char *lang, const char *wanted)
{
	bool latin = strcmp(wanted, "eng") == 0;

	while (*lang) {
		size_t len = strcspn(lang, "+");
		bool listed = false;

		for (size_t i = 0; i < sizeof(script_langs) / sizeof(script_langs[0]); i++)
			listed |= strlen(script_langs[i].lang) == len &&
				  strncmp(script_langs[i].lang, lang, len) == 0;
		if ((latin && !listed) ||
		    (strlen(wanted) == len && strncmp(wanted, lang, len) == 0))
			return true;
		lang += len + (lang[len] == '+');
	}
	return false;
}

/* Below this mean word confidence a recognition is checked against the page's script: a
 * language read in its own script scores 80-100 on a clean scan, English on an Arabic scan 24. */
#define LOW_CONFIDENCE 60

/* Tesseract's script detection (osd.traineddata) on the page: when it finds a script that no
 * language of lang reads, sets use to that script's language if it is installed, else
 * out->script and out->missing. Its time is not bounded by the deadline, only proportional to
 * the page's layout analysis, so it runs only after a recognition that finished in time. */
static void script_language(const char *lang, const unsigned char *grey, uint32_t width,
			    uint32_t height, size_t stride, uint32_t dpi, char *use,
			    size_t use_size, struct tr_ocr_text *out)
{
	const char *script = NULL, *wanted;
	float orient_conf = 0, script_conf = 0;
	int degrees = 0;
	char err[256];

	if (tr_ocr_check("osd", err, sizeof(err)) != 0)
		return;
	pthread_mutex_lock(&osd_lock);
	if (!osd_engine)
		osd_engine = engine_new("osd", err, sizeof(err));
	if (!osd_engine) {
		pthread_mutex_unlock(&osd_lock);
		return;
	}
	TessBaseAPISetPageSegMode(osd_engine->api, PSM_OSD_ONLY);
	TessBaseAPISetImage(osd_engine->api, grey, (int)width, (int)height, 1, (int)stride);
	if (dpi)
		TessBaseAPISetSourceResolution(osd_engine->api, (int)dpi);
	if (TessBaseAPIDetectOrientationScript(osd_engine->api, &degrees, &orient_conf, &script,
					       &script_conf) &&
	    script && script_conf >= MIN_SCRIPT_CONFIDENCE && (wanted = script_lang(script)) &&
	    !lang_reads(lang, wanted)) {
		if (tr_ocr_check(wanted, err, sizeof(err)) == 0) {
			snprintf(use, use_size, "%s", wanted);
		} else {
			snprintf(out->script, sizeof(out->script), "%s", script);
			debian_package_suffix(wanted, strlen(wanted), out->missing,
					      sizeof(out->missing));
		}
	}
	/* script points into the engine's character set: capi.h's advice to TessDeleteText it
	 * corrupts the heap. */
	TessBaseAPIClear(osd_engine->api);
	pthread_mutex_unlock(&osd_lock);
}

/* Drops trailing whitespace (Tesseract ends with a newline, the CLI's output with a form feed). */
static void trim_end(char *text)
{
	size_t len = strlen(text);

	while (len && strchr(" \t\r\n\f\v", text[len - 1]))
		text[--len] = '\0';
}

/* One recognition in lang into *out (zeroed first). Returns as tr_ocr_recognize. */
static int recognize_in(const char *lang, const unsigned char *grey, uint32_t width,
			uint32_t height, size_t stride, uint32_t dpi, uint64_t deadline,
			struct tr_ocr_text *out, char *err, size_t err_size)
{
	struct engine *e;
	ETEXT_DESC *monitor;
	bool late = false;
	char *text;
	int rc = 0;

	*out = (struct tr_ocr_text){0};
	snprintf(out->lang, sizeof(out->lang), "%s", lang);
	e = engine_take(lang, deadline, &late, err, err_size);
	if (!e)
		return late ? 2 : 1;
	monitor = TessMonitorCreate();
	if (!monitor) {
		engine_put(e);
		return -1;
	}
	TessMonitorSetCancelFunc(monitor, cancel_past_deadline);
	TessMonitorSetCancelThis(monitor, &deadline);
	TessBaseAPISetImage(e->api, grey, (int)width, (int)height, 1, (int)stride);
	if (dpi) /* else Tesseract estimates it */
		TessBaseAPISetSourceResolution(e->api, (int)dpi);
	if (TessBaseAPIRecognize(e->api, monitor) != 0 && !tr_deadline_passed(deadline)) {
		snprintf(err, err_size, "Tesseract could not recognise the image");
		rc = 1;
	} else if (tr_deadline_passed(deadline)) {
		rc = 2;
	} else {
		text = TessBaseAPIGetUTF8Text(e->api);
		out->text = strdup(text ? text : "");
		out->confidence = TessBaseAPIMeanTextConf(e->api);
		TessDeleteText(text);
		if (!out->text) {
			rc = -1;
		} else {
			trim_end(out->text);
			if (!out->text[0])
				out->confidence = 0;
		}
	}
	TessMonitorDelete(monitor);
	engine_put(e);
	return rc;
}

int tr_ocr_recognize(const char *lang, const unsigned char *grey, uint32_t width, uint32_t height,
		     size_t stride, uint32_t dpi, uint64_t deadline, const char *key,
		     struct tr_ocr_text *out, char *err, size_t err_size)
{
	char other[sizeof(out->lang)] = "";
	int rc;

	if (tr_ocr_cached(key, out) == 0)
		return 0;
	if (tr_deadline_passed(deadline))
		return 2;
	if (width > INT32_MAX || height > INT32_MAX || stride > INT32_MAX) {
		snprintf(err, err_size, "image too large for OCR");
		return 1;
	}
	rc = recognize_in(lang, grey, width, height, stride, dpi, deadline, out, err, err_size);
	/* A poor reading may be a script lang does not read: read again in the script's
	 * language when it is installed and time is left, else say so. */
	if (rc == 0 && out->text[0] && out->confidence < LOW_CONFIDENCE &&
	    !tr_deadline_passed(deadline))
		script_language(lang, grey, width, height, stride, dpi, other, sizeof(other), out);
	if (other[0]) {
		struct tr_ocr_text again;
		char again_err[256];
		int again_rc = recognize_in(other, grey, width, height, stride, dpi, deadline,
					    &again, again_err, sizeof(again_err));

		if (again_rc == 0) {
			free(out->text);
			*out = again;
		} else {
			free(again.text); /* the first reading stays */
			if (again_rc < 0)
				rc = -1;
		}
	}
	if (rc == 0 && key)
		cache_store(key, out);
	return rc;
}
