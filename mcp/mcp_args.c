/* SPDX-License-Identifier: MIT */
/* mcp_args.c - the read tool's arguments from mcp_args.def: the inputSchema that tools/list
 * shows and the checks of a call, so that both say what the row says. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mcp_args.h"

enum arg_type { PATH, COUNT, SELECTOR, CHOICE };

struct arg {
	const char *name;
	enum arg_type type;
	const char *pattern, *description, *expect;
};

static const struct arg args_table[] = {
#define MCP_ARG(name, type, pattern, description, expect) \
	{#name, type, pattern, description, expect},
#include "mcp_args.def"
};

/* What a row's type makes the value: the words before its expect. */
static const char *const type_words[] = {
	[PATH] = "a non-empty string",
	[COUNT] = "an integer >= 1",
	[SELECTOR] = "a string",
};

/* The values of a CHOICE row, its reader option's value form ("off|auto|on"). */
static const char *choice_values(const struct arg *arg)
{
	const struct tr_option_doc *doc = tr_option_describe(arg->name, NULL, 0);

	return doc && doc->value ? doc->value : "";
}

/* Adds description to p with @MAX_LINES@ replaced by max_lines. */
static void add_description(cJSON *p, const char *description, uint64_t max_lines)
{
	const char *at = strstr(description, "@MAX_LINES@");
	char text[1024];

	if (!at) {
		cJSON_AddStringToObject(p, "description", description);
		return;
	}
	snprintf(text, sizeof(text), "%.*s%" PRIu64 "%s", (int)(at - description), description,
		 max_lines, at + strlen("@MAX_LINES@"));
	cJSON_AddStringToObject(p, "description", text);
}

static cJSON *property(const struct arg *arg, uint64_t max_lines)
{
	cJSON *p = cJSON_CreateObject();

	if (!p)
		return NULL;
	cJSON_AddStringToObject(p, "type", arg->type == COUNT ? "integer" : "string");
	if (arg->type == COUNT)
		cJSON_AddNumberToObject(p, "minimum", 1);
	add_description(p, arg->description, max_lines);
	if (arg->pattern)
		cJSON_AddStringToObject(p, "pattern", arg->pattern);
	if (arg->type == CHOICE) {
		cJSON *values = cJSON_AddArrayToObject(p, "enum");
		const char *v = choice_values(arg);

		while (values && *v) {
			size_t len = strcspn(v, "|");
			char value[64];

			snprintf(value, sizeof(value), "%.*s", (int)len, v);
			cJSON_AddItemToArray(values, cJSON_CreateString(value));
			v += len + (v[len] == '|');
		}
	}
	return p;
}

cJSON *mcp_args_schema(uint64_t max_lines)
{
	cJSON *schema = cJSON_CreateObject(), *props, *required;

	if (!schema)
		return NULL;
	cJSON_AddStringToObject(schema, "type", "object");
	props = cJSON_AddObjectToObject(schema, "properties");
	for (size_t i = 0; i < MCP_ARGS_COUNT; i++)
		cJSON_AddItemToObject(props, args_table[i].name,
				      property(&args_table[i], max_lines));
	required = cJSON_AddArrayToObject(schema, "required");
	for (size_t i = 0; i < MCP_ARGS_COUNT; i++)
		if (args_table[i].type == PATH)
			cJSON_AddItemToArray(required, cJSON_CreateString(args_table[i].name));
	cJSON_AddBoolToObject(schema, "additionalProperties", false);
	return schema;
}

const char *mcp_args_invalid(enum mcp_arg_id id, char *buf, size_t size)
{
	const struct arg *arg = &args_table[id];
	char words[256];

	if (arg->type == CHOICE) { /* "off|auto|on": "\"off\", \"auto\" or \"on\"" */
		const char *v = choice_values(arg);
		size_t used = 0;

		words[0] = '\0';
		while (*v && used < sizeof(words)) {
			size_t len = strcspn(v, "|");
			const char *sep = !used ? "" : v[len] ? ", " : " or ";

			used += (size_t)snprintf(words + used, sizeof(words) - used, "%s\"%.*s\"",
						 sep, (int)len, v);
			v += len + (v[len] == '|');
		}
	} else {
		snprintf(words, sizeof(words), "%s", type_words[arg->type]);
	}
	snprintf(buf, size, "Invalid arguments for read: %s must be %s%s%s.", arg->name, words,
		 arg->expect[0] ? " " : "", arg->expect);
	return buf;
}

/* An integer >= 1, or absent (0). Returns 0, or -1 when it is not one. */
static int take_count(const cJSON *item, uint64_t *out)
{
	double v;

	*out = 0;
	if (!item || cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsNumber(item))
		return -1;
	v = item->valuedouble;
	if (!(v >= 1) || v != floor(v) || v > 9007199254740992.0) /* 2^53: exact in JSON */
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* Takes row arg's item into vals and opts. Returns 0, or -1 when it is not what the row says. */
static int take(const struct arg *arg, const cJSON *item, struct mcp_arg_values *vals,
		struct tr_options *opts)
{
	uint64_t *count = &vals->count[arg - args_table];
	char number[24];

	switch (arg->type) {
	case PATH:
		if (!cJSON_IsString(item) || !item->valuestring[0])
			return -1;
		vals->path = item->valuestring;
		return 0;
	case COUNT:
		if (take_count(item, count) < 0)
			return -1;
		if (*count && tr_option_describe(arg->name, NULL, 0)) {
			snprintf(number, sizeof(number), "%" PRIu64, *count);
			return tr_options_set(opts, arg->name, number) == 0 ? 0 : -1;
		}
		return 0;
	case CHOICE:
		if (!item || cJSON_IsNull(item))
			return 0;
		return cJSON_IsString(item) &&
				       tr_options_set(opts, arg->name, item->valuestring) == 0
			       ? 0
			       : -1;
	case SELECTOR: return 0; /* select_args, with the rules between them */
	}
	return -1;
}

int mcp_args_check(const cJSON *args, bool path_nul, struct mcp_arg_values *vals,
		   struct tr_options *opts, char *buf, size_t size)
{
	memset(vals, 0, sizeof(*vals));
	for (size_t i = 0; i < MCP_ARGS_COUNT; i++) {
		const struct arg *arg = &args_table[i];
		const cJSON *item = cJSON_GetObjectItemCaseSensitive(args, arg->name);

		if (take(arg, item, vals, opts) < 0) {
			mcp_args_invalid((enum mcp_arg_id)i, buf, size);
			return -1;
		}
		if (arg->type == PATH && path_nul) {
			snprintf(buf, size,
				 "Invalid arguments for read: %s must not contain a NUL character "
				 "(\\u0000).",
				 arg->name);
			return -1;
		}
	}
	return 0;
}
