/* SPDX-License-Identifier: MIT */
/* media_detect.c - audio and video containers by their first bytes, never by the name. */
#include <string.h>

#include "media.h"

static bool at(const unsigned char *head, size_t len, size_t off, const char *sig)
{
	size_t n = strlen(sig);

	return len >= off + n && memcmp(head + off, sig, n) == 0;
}

/* ISO BMFF brands that are pictures (HEIF, AVIF), read by the image readers. */
static bool picture_brand(const unsigned char *brand)
{
	static const char *const pictures[] = {"heic", "heix", "heim", "heis", "hevc", "hevx",
					       "mif1", "msf1", "avif", "avis", "crx "};

	for (size_t i = 0; i < sizeof(pictures) / sizeof(pictures[0]); i++)
		if (memcmp(brand, pictures[i], 4) == 0)
			return true;
	return false;
}

/* MPEG audio frame header at p: its length in bytes, or 0 when it is not one. */
static size_t mpa_frame(const unsigned char *p)
{
	static const int kbps[2][3][16] = {
		{{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 0},
		 {0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 0},
		 {0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0}},
		{{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256, 0},
		 {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0},
		 {0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0}}};
	static const int rates[3] = {44100, 48000, 32000};
	int version = (p[1] >> 3) & 3, layer = 4 - ((p[1] >> 1) & 3);
	int bitrate = (p[2] >> 4) & 15, rate_index = (p[2] >> 2) & 3, pad = (p[2] >> 1) & 1;
	int rate, kb;

	if (p[0] != 0xff || (p[1] & 0xe0) != 0xe0 || version == 1 || layer == 4 || bitrate == 0 ||
	    bitrate == 15 || rate_index == 3)
		return 0;
	rate = rates[rate_index] >> (version == 3 ? 0 : version == 2 ? 1 : 2);
	kb = kbps[version == 3 ? 0 : 1][layer - 1][bitrate];
	if (layer == 1)
		return (size_t)((12 * kb * 1000 / rate + pad) * 4);
	return (size_t)((layer == 3 && version != 3 ? 72 : 144) * kb * 1000 / rate + pad);
}

/* Two MPEG audio frames in a row at the start: MP3 without an ID3 tag. */
static bool mpa_stream(const unsigned char *head, size_t len)
{
	size_t first = len >= 4 ? mpa_frame(head) : 0;

	return first && len >= first + 4 && mpa_frame(head + first);
}

/* Three TS packets in a row (188 bytes; 192 for M2TS with its 4-byte stamp). */
static bool transport_stream(const unsigned char *head, size_t len)
{
	for (size_t off = 0; off <= 4; off += 4) {
		size_t step = off ? 192 : 188;

		if (len >= off + 2 * step + 1 && head[off] == 0x47 && head[off + step] == 0x47 &&
		    head[off + 2 * step] == 0x47)
			return true;
	}
	return false;
}

enum tr_content_type media_detect(const unsigned char *head, size_t len, const char **mime)
{
	if (at(head, len, 4, "ftyp") && len >= 12 && !picture_brand(head + 8)) {
		if (at(head, len, 8, "M4A ") || at(head, len, 8, "M4B ") ||
		    at(head, len, 8, "M4P ")) {
			*mime = "audio/x-m4a"; /* libmagic's name */
			return TR_TYPE_AUDIO;
		}
		*mime = at(head, len, 8, "qt  ") ? "video/quicktime" : "video/mp4";
		return TR_TYPE_VIDEO;
	}
	if (at(head, len, 0, "\x1a\x45\xdf\xa3")) {
		*mime = memmem(head, len < 64 ? len : 64, "webm", 4) ? "video/webm"
								     : "video/x-matroska";
		return TR_TYPE_VIDEO;
	}
	if (at(head, len, 0, "RIFF") && at(head, len, 8, "AVI ")) {
		*mime = "video/x-msvideo";
		return TR_TYPE_VIDEO;
	}
	if (at(head, len, 0, "RIFF") && at(head, len, 8, "WAVE")) {
		*mime = "audio/x-wav";
		return TR_TYPE_AUDIO;
	}
	if (at(head, len, 0, "FORM") && (at(head, len, 8, "AIFF") || at(head, len, 8, "AIFC"))) {
		*mime = "audio/x-aiff";
		return TR_TYPE_AUDIO;
	}
	if (at(head, len, 0, "fLaC")) {
		*mime = "audio/flac";
		return TR_TYPE_AUDIO;
	}
	if (at(head, len, 0, "OggS")) {
		bool video = memmem(head, len < 128 ? len : 128, "\x80theora", 7) != NULL;

		*mime = video ? "video/ogg" : "audio/ogg";
		return video ? TR_TYPE_VIDEO : TR_TYPE_AUDIO;
	}
	if (at(head, len, 0, "ID3") || mpa_stream(head, len)) {
		*mime = "audio/mpeg";
		return TR_TYPE_AUDIO;
	}
	if (transport_stream(head, len)) {
		*mime = "video/MP2T";
		return TR_TYPE_VIDEO;
	}
	return TR_TYPE_UNKNOWN;
}
