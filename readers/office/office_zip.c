/* SPDX-License-Identifier: MIT */
/* office_zip.c - the zip container of OOXML and ODF files, read with libzip from memory under
 * limits that stop zip bombs: entry count, inflated size per entry and in total, and ratio. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "office.h"

int tr_office_zip_fail(struct tr_office_zip *z, enum tr_error code, const char *fmt, ...)
{
	va_list ap;

	if (z->error != TR_OK || z->oom)
		return -1;
	z->error = code;
	va_start(ap, fmt);
	vsnprintf(z->reason, sizeof(z->reason), fmt, ap);
	va_end(ap);
	return -1;
}

int tr_office_zip_open(struct tr_office_zip *z, const unsigned char *data, size_t len)
{
	zip_error_t zerr;
	zip_source_t *src;
	zip_int64_t n;

	memset(z, 0, sizeof(*z));
	zip_error_init(&zerr);
	src = zip_source_buffer_create(data, len, 0, &zerr);
	if (!src) {
		zip_error_fini(&zerr);
		z->oom = true;
		return -1;
	}
	/* Without ZIP_CHECKCONS: it refuses archives that zip -T, Python's zipfile and Office read
	 * (a local header whose time differs from the central directory's, bytes after the end
	 * record). What matters is checked where an entry is read: its sizes against the bomb
	 * limits, its inflated length against the directory, its CRC (libzip). */
	z->zip = zip_open_from_source(src, ZIP_RDONLY, &zerr);
	if (!z->zip) {
		zip_source_free(src);
		tr_office_zip_fail(z, TR_E_CORRUPT, "the zip archive is unreadable (%s)",
				   zip_error_strerror(&zerr));
		zip_error_fini(&zerr);
		return -1;
	}
	zip_error_fini(&zerr);
	n = zip_get_num_entries(z->zip, 0);
	if (n > TR_OFFICE_MAX_ENTRIES)
		return tr_office_zip_fail(z, TR_E_TOO_LARGE,
					  "the zip archive has %lld entries (at most %d are read)",
					  (long long)n, TR_OFFICE_MAX_ENTRIES);
	return 0;
}

void tr_office_zip_close(struct tr_office_zip *z)
{
	if (z->zip)
		zip_discard(z->zip);
	z->zip = NULL;
}

bool tr_office_zip_has(struct tr_office_zip *z, const char *name)
{
	return z->zip && zip_name_locate(z->zip, name, 0) >= 0;
}

int tr_office_zip_entry(struct tr_office_zip *z, const char *name, uint64_t max, zip_int64_t *idx,
			uint64_t *size)
{
	zip_stat_t st;

	if (!max)
		max = TR_OFFICE_MAX_PART;
	*idx = zip_name_locate(z->zip, name, 0);
	if (*idx < 0)
		return 1;
	zip_stat_init(&st);
	if (zip_stat_index(z->zip, (zip_uint64_t)*idx, 0, &st) < 0 || !(st.valid & ZIP_STAT_SIZE) ||
	    !(st.valid & ZIP_STAT_COMP_SIZE))
		return tr_office_zip_fail(z, TR_E_CORRUPT, "the zip entry %s is unreadable", name);
	if (st.size > max)
		return tr_office_zip_fail(
			z, TR_E_TOO_LARGE, "the zip entry %s inflates to %llu bytes (limit %llu)",
			name, (unsigned long long)st.size, (unsigned long long)max);
	if (st.size > TR_OFFICE_RATIO_FROM &&
	    st.size / (st.comp_size ? st.comp_size : 1) > TR_OFFICE_MAX_RATIO)
		return tr_office_zip_fail(
			z, TR_E_TOO_LARGE,
			"the zip entry %s inflates %llu bytes to %llu (more than %d:1, a zip bomb)",
			name, (unsigned long long)st.comp_size, (unsigned long long)st.size,
			TR_OFFICE_MAX_RATIO);
	if (z->inflated + st.size > TR_OFFICE_MAX_TOTAL)
		return tr_office_zip_fail(z, TR_E_TOO_LARGE,
					  "the zip entries inflate to more than %llu bytes in all",
					  (unsigned long long)TR_OFFICE_MAX_TOTAL);
	*size = st.size;
	return 0;
}

int tr_office_zip_read(struct tr_office_zip *z, const char *name, uint64_t max, struct tr_buf *out)
{
	zip_int64_t idx, n;
	zip_file_t *f;
	uint64_t size;
	int rc;

	rc = tr_office_zip_entry(z, name, max, &idx, &size);
	if (rc)
		return rc;
	f = zip_fopen_index(z->zip, (zip_uint64_t)idx, 0);
	if (!f)
		return tr_office_zip_fail(z, TR_E_CORRUPT, "the zip entry %s cannot be opened (%s)",
					  name, zip_strerror(z->zip));
	/* One byte more than the directory says, to see an entry that inflates past its size. */
	out->data = malloc(size + 2);
	if (!out->data) {
		zip_fclose(f);
		z->oom = true;
		return -1;
	}
	out->cap = size + 2;
	out->len = 0;
	n = zip_fread(f, out->data, size + 1);
	if (n < 0) {
		rc = tr_office_zip_fail(z, TR_E_CORRUPT, "the zip entry %s is corrupt (%s)", name,
					zip_file_strerror(f));
	} else if ((uint64_t)n != size) {
		rc = tr_office_zip_fail(z, TR_E_CORRUPT,
					"the zip entry %s inflates to %lld bytes, not the %llu its "
					"directory says",
					name, (long long)n, (unsigned long long)size);
	} else {
		out->len = (size_t)n;
		out->data[out->len] = '\0';
		z->inflated += size;
	}
	zip_fclose(f);
	return rc;
}

char *tr_office_resolve(const char *source_part, const char *target)
{
	size_t cap = strlen(source_part) + strlen(target) + 2, len = 0;
	char *out = malloc(cap);
	const char *seg = target;

	if (!out)
		return NULL;
	if (target[0] == '/') {
		seg = target + 1;
	} else {
		const char *slash = strrchr(source_part, '/');

		if (slash) {
			len = (size_t)(slash - source_part);
			memcpy(out, source_part, len);
		}
	}
	while (*seg) {
		const char *end = strchr(seg, '/');
		size_t seg_len = end ? (size_t)(end - seg) : strlen(seg);

		if (seg_len == 2 && seg[0] == '.' && seg[1] == '.') {
			char *up;

			if (len == 0) {
				free(out);
				return NULL;
			}
			out[len] = '\0';
			up = strrchr(out, '/');
			len = up ? (size_t)(up - out) : 0;
		} else if (seg_len && !(seg_len == 1 && seg[0] == '.')) {
			if (len)
				out[len++] = '/';
			memcpy(out + len, seg, seg_len);
			len += seg_len;
		}
		seg += seg_len + (end ? 1 : 0);
	}
	out[len] = '\0';
	return out;
}
