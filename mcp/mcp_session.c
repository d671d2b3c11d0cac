/* SPDX-License-Identifier: MIT */
/* mcp_session.c - the directories a toolfs-mcp session reads: the command line's, replaced by the
 * client's own when it declares roots and answers roots/list. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_internal.h"

#define ROOTS_REQUEST_PREFIX "toolfs-roots-"

int mcp_session_roots_init(struct mcp_session_roots *sr, char *const *dirs, size_t n_dirs)
{
	static char *const here[] = {"."};

	memset(sr, 0, sizeof(*sr));
	pthread_mutex_init(&sr->lock, NULL);
	sr->roots = n_dirs ? mcp_roots_new(dirs, n_dirs, true) : mcp_roots_new(here, 1, true);
	if (sr->roots)
		return 0;
	pthread_mutex_destroy(&sr->lock);
	return -1;
}

void mcp_session_roots_destroy(struct mcp_session_roots *sr)
{
	mcp_roots_unref(sr->roots);
	pthread_mutex_destroy(&sr->lock);
}

struct mcp_roots *mcp_session_roots_get(struct mcp_session_roots *sr)
{
	struct mcp_roots *roots;

	pthread_mutex_lock(&sr->lock);
	roots = mcp_roots_ref(sr->roots);
	pthread_mutex_unlock(&sr->lock);
	return roots;
}

void mcp_session_roots_declare(struct mcp_session_roots *sr, const cJSON *caps)
{
	pthread_mutex_lock(&sr->lock);
	sr->client_roots = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(caps, "roots"));
	pthread_mutex_unlock(&sr->lock);
}

void mcp_session_roots_request(struct mcp_session_roots *sr, struct mcp_wire *wire)
{
	char msg[128];
	unsigned long serial;
	bool ask;

	pthread_mutex_lock(&sr->lock);
	ask = sr->client_roots;
	serial = ask ? ++sr->asked : 0;
	pthread_mutex_unlock(&sr->lock);
	if (!ask)
		return;
	snprintf(msg, sizeof(msg),
		 "{\"jsonrpc\":\"2.0\",\"id\":\"" ROOTS_REQUEST_PREFIX
		 "%lu\",\"method\":\"roots/list\"}\n",
		 serial);
	mcp_wire_send(wire, msg, strlen(msg));
}

/* The roots a roots/list answer gives (list: its array): the file:// URIs, each opened as a
 * directory; NULL when out of memory. */
static struct mcp_roots *roots_of_list(const cJSON *list)
{
	const cJSON *root;
	struct mcp_roots *roots;
	size_t n = 0;
	char **dirs = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(*dirs));

	if (!dirs)
		return NULL;
	cJSON_ArrayForEach(root, list)
	{
		const cJSON *uri = cJSON_GetObjectItemCaseSensitive(root, "uri");
		char *path = cJSON_IsString(uri) ? mcp_file_uri_path(uri->valuestring) : NULL;

		if (path)
			dirs[n++] = path;
		else
			fputs("toolfs-mcp: a client root is not a file:// URI; left out\n", stderr);
	}
	roots = mcp_roots_new(dirs, n, true);
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	return roots;
}

void mcp_session_roots_take(struct mcp_session_roots *sr, const cJSON *id, const cJSON *msg)
{
	const cJSON *result = cJSON_GetObjectItemCaseSensitive(msg, "result");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(result, "roots");
	unsigned long serial;
	struct mcp_roots *roots, *old = NULL;

	if (!cJSON_IsString(id) ||
	    strncmp(id->valuestring, ROOTS_REQUEST_PREFIX, strlen(ROOTS_REQUEST_PREFIX)) != 0)
		return;
	serial = strtoul(id->valuestring + strlen(ROOTS_REQUEST_PREFIX), NULL, 10);
	if (!cJSON_IsArray(list)) {
		fputs("toolfs-mcp: the client's roots/list failed; keeping the directories\n",
		      stderr);
		return;
	}
	roots = roots_of_list(list);
	if (!roots)
		return;
	if (roots->n == 0) {
		/* As the reference server does: no usable root keeps the ones we have. */
		fputs("toolfs-mcp: the client gave no usable root; keeping the directories\n",
		      stderr);
		mcp_roots_unref(roots);
		return;
	}
	pthread_mutex_lock(&sr->lock);
	/* only the answer to the latest request counts: an older one is stale */
	if (serial && serial == sr->asked) {
		old = sr->roots;
		sr->roots = roots;
		roots = NULL;
	}
	pthread_mutex_unlock(&sr->lock);
	mcp_roots_unref(old);
	mcp_roots_unref(roots);
}
