/* SPDX-License-Identifier: MIT */
/* module.c - loads the optional readers' shared modules (libvips fitting, poppler PDFs, Office) with
 * dlopen on first use, so that a process reading text never maps those libraries. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Writes a/b into out; false when it does not fit (the path is then skipped). */
static bool join(char *out, size_t size, const char *a, const char *b)
{
	int n = snprintf(out, size, "%s/%s", a, b);

	return n > 0 && (size_t)n < size;
}

/* Fills dirs[] with the directories to search, in order; returns how many (at most 4). */
static int module_dirs(char dirs[][PATH_MAX])
{
	const char *env = secure_getenv("TOOLFS_MODULE_DIR");
	char exe[PATH_MAX], probe[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int count = 0;

	/* Set, it is the only place looked in (tests use it to take a module away). */
	if (env && *env && strlen(env) < PATH_MAX) {
		memcpy(dirs[0], env, strlen(env) + 1);
		return 1;
	}
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		/* An executable of a build tree (cli, mcp, fs, tests/unit ...) uses the modules
		 * built beside it, never installed ones of another version. */
		for (int up = 0; up < 4; up++) {
			if (join(probe, sizeof(probe), exe, "meson-private") && is_dir(probe) &&
			    join(dirs[count], PATH_MAX, exe, "readers"))
				return count + 1;
			slash = strrchr(exe, '/');
			if (!slash || slash == exe)
				break;
			*slash = '\0';
		}
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0 && TR_MODULE_LIBDIR[0] != '/') {
			exe[n] = '\0';
			slash = strrchr(exe, '/');
			if (slash) {
				*slash = '\0';
				if (join(dirs[count], PATH_MAX, exe, "../" TR_MODULE_LIBDIR))
					count++;
			}
		}
	}
	if (TR_MODULE_LIBDIR[0] == '/')
		snprintf(dirs[count++], PATH_MAX, "%s", TR_MODULE_LIBDIR);
	else
		join(dirs[count++], PATH_MAX, TR_MODULE_PREFIX, TR_MODULE_LIBDIR);
	return count;
}

/* Tesseract's LSTM (toolfs-ocr.so) asks OpenMP for 4 threads per page in a num_threads clause,
 * which only OMP_THREAD_LIMIT caps; toolfs already runs one page per CPU, and the two together
 * oversubscribe the CPUs (a 10-page scan took twice as long). libgomp reads the limit once, when
 * it is loaded, which the first module does (libvips brings it in through libimagequant): so it
 * is set before the first dlopen, unless the user set it: by load() below, and by the reader
 * worker's fork server (readers/sandbox/sandbox_worker.c), which opens the modules itself. */
void tr_module_limit_openmp(void)
{
	static bool done;
	void *gomp;

	if (done)
		return;
	done = true;
	gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (gomp)
		dlclose(gomp); /* loaded already: too late */
	else
		setenv("OMP_THREAD_LIMIT", "1", 0);
}

static void load(struct tr_module *mod)
{
	char dirs[4][PATH_MAX], path[PATH_MAX];
	int n_dirs = module_dirs(dirs);
	void *handle = NULL;
	const unsigned *table;

	for (int i = 0; i < n_dirs && !handle; i++) {
		if (!join(path, sizeof(path), dirs[i], mod->file) || access(path, F_OK) != 0)
			continue;
		tr_module_limit_openmp();
		handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!handle) {
			const char *why = dlerror();

			int n = snprintf(mod->error, sizeof(mod->error),
					 "toolfs's module %s could not be loaded: %s", mod->file,
					 why ? why : "unknown dlopen error");

			(void)n; /* dlerror's text may be cut */
			return;
		}
	}
	if (!handle) {
		int n = snprintf(mod->error, sizeof(mod->error),
				 "toolfs's module %s is not installed in %s", mod->file,
				 dirs[n_dirs - 1]);

		(void)n; /* a long directory is cut, the sentence stays whole enough */
		return;
	}
	table = dlsym(handle, mod->symbol);
	if (!table || *table != mod->abi) {
		snprintf(mod->error, sizeof(mod->error),
			 "toolfs's module %s is of another version than this toolfs", mod->file);
		return;
	}
	mod->api = table;
}

int tr_module_find(const char *file, char *path, size_t size)
{
	char dirs[4][PATH_MAX];
	int n_dirs = module_dirs(dirs);

	for (int i = 0; i < n_dirs; i++)
		if (join(path, size, dirs[i], file) && access(path, X_OK) == 0)
			return 0;
	snprintf(path, size, "%s", dirs[n_dirs - 1]);
	return -1;
}

uint32_t tr_module_loaded(struct tr_module *const *list)
{
	uint32_t mask = 0;

	for (unsigned i = 0; i < 32 && list[i]; i++)
		if (__atomic_load_n(&list[i]->state, __ATOMIC_ACQUIRE) == 1)
			mask |= 1u << i;
	return mask;
}

void tr_module_warm(struct tr_module *const *list, uint32_t mask)
{
	for (unsigned i = 0; i < 32 && list[i]; i++) {
		const struct tr_module_head *head;

		if (!(mask & (1u << i)))
			continue;
		head = tr_module_api(list[i]);
		if (head && head->warm)
			head->warm();
	}
}

const void *tr_module_api(struct tr_module *mod)
{
	if (mod->linked) {
		__atomic_store_n(&mod->state, 1, __ATOMIC_RELEASE); /* used: tr_module_loaded */
		return mod->linked;
	}
	if (__atomic_load_n(&mod->state, __ATOMIC_ACQUIRE) == 0) {
		pthread_mutex_lock(&module_lock);
		if (mod->state == 0) {
			load(mod);
			__atomic_store_n(&mod->state, mod->api ? 1 : -1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&module_lock);
	}
	return mod->api;
}
