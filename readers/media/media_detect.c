/* SPDX-License-Identifier: MIT */
/* media_detect.c - audio and video containers by their first bytes, never by the name: the
 * signatures of the containers FFmpeg demuxes, frame syncs checked twice (three times after junk). */
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

/* MPEG audio with bytes before its first frame (a tag of another kind, a damaged start):
 * three frames in a row anywhere in the head, where a stray pair is no evidence. */
static bool mpa_after_junk(const unsigned char *head, size_t len)
{
	for (size_t off = 1; off + 4 <= len; off++) {
		size_t first = head[off] == 0xff ? mpa_frame(head + off) : 0;
		size_t second = first && off + first + 4 <= len ? mpa_frame(head + off + first) : 0;

		if (second && off + first + second + 4 <= len &&
		    mpa_frame(head + off + first + second))
			return true;
	}
	return false;
}

/* ADTS AAC frame header at p (12-bit sync, layer 0, a length past its own header): its
 * length, or 0. */
static size_t adts_frame(const unsigned char *p)
{
	size_t n = ((size_t)(p[3] & 3) << 11) | ((size_t)p[4] << 3) | (p[5] >> 5);

	if (p[0] != 0xff || (p[1] & 0xf6) != 0xf0 || ((p[2] >> 2) & 15) > 12 || n < 7)
		return 0;
	return n;
}

/* AC-3 or E-AC-3 sync frame at p: its length in bytes (A/52 table 5.18; E-AC-3's frmsiz),
 * or 0. */
static size_t ac3_frame(const unsigned char *p)
{
	static const int kbps[19] = {32,  40,  48,  56,  64,  80,  96,  112, 128, 160,
				     192, 224, 256, 320, 384, 448, 512, 576, 640};
	static const int rates[3] = {48000, 44100, 32000};
	int bsid = p[5] >> 3, fscod = p[4] >> 6, code = p[4] & 0x3f;

	if (p[0] != 0x0b || p[1] != 0x77 || bsid > 16)
		return 0;
	if (bsid > 10) /* E-AC-3: the frame's size in 16-bit words, minus one */
		return ((((size_t)(p[2] & 7) << 8) | p[3]) + 1) * 2;
	if (fscod == 3 || code >= 38)
		return 0;
	return 2 * (size_t)(kbps[code / 2] * 96000 / rates[fscod] + (fscod == 1 ? (code & 1) : 0));
}

/* Two frames in a row at the start, by the frame parser given. */
static bool frames(const unsigned char *head, size_t len, size_t (*frame)(const unsigned char *))
{
	size_t first = len >= 6 ? frame(head) : 0;

	return first && len >= first + 6 && frame(head + first);
}

/* What a signature of letters alone needs besides, so that no text is taken for audio. */
enum signature_check {
	CHECK_NONE,
	CHECK_BINARY,  /* a byte no text holds within its first 64 */
	CHECK_SHORTEN, /* Shorten's version byte, 1 to 3 */
	CHECK_SV7,     /* Musepack SV7.0 or 7.1 (0x07, 0x17) */
};

/* Containers known by a fixed signature (with a second field checked where the first could
 * start a text: a version, a byte no text holds), in the order tried. */
struct signature {
	size_t off;
	const char *sig;
	size_t len;
	size_t off2; /* a second signature, sig2 of len2 bytes at off2, when len2 > 0 */
	const char *sig2;
	size_t len2;
	enum tr_content_type type;
	const char *mime; /* when libmagic has none */
	enum signature_check check;
};

#define SIG(s) s, sizeof(s) - 1
#define NO_SIG 0, "", 0
static const struct signature signatures[] = {
	/* ASF: WMA or WMV (the worker tells a video with no picture stream as audio) */
	{0, SIG("\x30\x26\xb2\x75\x8e\x66\xcf\x11\xa6\xd9\x00\xaa\x00\x62\xce\x6c"), NO_SIG,
	 TR_TYPE_VIDEO, "video/x-ms-asf", CHECK_NONE},
	{0, SIG("RF64"), 8, SIG("WAVE"), TR_TYPE_AUDIO, "audio/x-wav", CHECK_NONE},
	{0, SIG("BW64"), 8, SIG("WAVE"), TR_TYPE_AUDIO, "audio/x-wav", CHECK_NONE},
	{0, SIG("riff\x2e\x91\xcf\x11"), 24, SIG("wave\xf3\xac\xd3\x11"), TR_TYPE_AUDIO,
	 "audio/x-w64", CHECK_NONE},
	{0, SIG("caff\x00\x01"), NO_SIG, TR_TYPE_AUDIO, "audio/x-caf", CHECK_NONE},
	{0, SIG(".snd\x00\x00\x00"), NO_SIG, TR_TYPE_AUDIO, "audio/basic", CHECK_NONE},
	{0, SIG("Creative Voice File\x1a"), NO_SIG, TR_TYPE_AUDIO, "audio/x-voc", CHECK_NONE},
	{0, SIG("#!AMR"), NO_SIG, TR_TYPE_AUDIO, "audio/AMR", CHECK_BINARY},
	/* WavPack 4.x, Monkey's Audio 3.8x and 3.9x: their versions' high bytes */
	{0, SIG("wvpk"), 9, SIG("\x04"), TR_TYPE_AUDIO, "audio/x-wavpack", CHECK_NONE},
	{0, SIG("MAC "), 5, SIG("\x0f"), TR_TYPE_AUDIO, "audio/x-ape", CHECK_NONE},
	{0, SIG("MAC "), 5, SIG("\x0e"), TR_TYPE_AUDIO, "audio/x-ape", CHECK_NONE},
	/* TTA's format (1 or 2, little-endian), TAK's first metadata block's type */
	{0, SIG("TTA1"), 5, SIG("\x00"), TR_TYPE_AUDIO, "audio/x-tta", CHECK_NONE},
	{0, SIG("tBaK"), NO_SIG, TR_TYPE_AUDIO, "audio/x-tak", CHECK_BINARY},
	{0, SIG("ajkg"), NO_SIG, TR_TYPE_AUDIO, "audio/x-shorten", CHECK_SHORTEN},
	{0, SIG("MPCK"), NO_SIG, TR_TYPE_AUDIO, "audio/x-musepack", CHECK_BINARY},
	{0, SIG("MP+"), NO_SIG, TR_TYPE_AUDIO, "audio/x-musepack", CHECK_SV7},
	{0, SIG("DSD \x1c\x00\x00\x00"), 28, SIG("fmt "), TR_TYPE_AUDIO, "audio/x-dsf", CHECK_NONE},
	{0, SIG("FRM8"), 12, SIG("DSD "), TR_TYPE_AUDIO, "audio/x-dff", CHECK_NONE},
	{0, SIG("Extended Module: "), 37, SIG("\x1a"), TR_TYPE_AUDIO, "audio/x-xm", CHECK_NONE},
	{0, SIG("IMPM"), NO_SIG, TR_TYPE_AUDIO, "audio/x-it", CHECK_BINARY},
	{44, SIG("SCRM"), 28, SIG("\x1a\x10"), TR_TYPE_AUDIO, "audio/x-s3m", CHECK_NONE},
	{1080, SIG("M.K."), NO_SIG, TR_TYPE_AUDIO, "audio/x-mod", CHECK_NONE},
	{1080, SIG("M!K!"), NO_SIG, TR_TYPE_AUDIO, "audio/x-mod", CHECK_NONE},
	{1080, SIG("FLT4"), NO_SIG, TR_TYPE_AUDIO, "audio/x-mod", CHECK_NONE},
	{1080, SIG("FLT8"), NO_SIG, TR_TYPE_AUDIO, "audio/x-mod", CHECK_NONE},
	{1080, SIG("4CHN"), NO_SIG, TR_TYPE_AUDIO, "audio/x-mod", CHECK_NONE},
	{1080, SIG("6CHN"), NO_SIG, TR_TYPE_AUDIO, "audio/x-mod", CHECK_NONE},
	{1080, SIG("8CHN"), NO_SIG, TR_TYPE_AUDIO, "audio/x-mod", CHECK_NONE},
};

/* A byte no text holds (a control character but tab, line breaks and escape) in the first 64. */
static bool binary_bytes(const unsigned char *head, size_t len)
{
	for (size_t i = 0; i < len && i < 64; i++)
		if (head[i] < 0x20 && head[i] != '\t' && head[i] != '\n' && head[i] != '\r' &&
		    head[i] != 0x1b)
			return true;
	return false;
}

static bool signature_matches(const struct signature *g, const unsigned char *head, size_t len)
{
	if (len < g->off + g->len || memcmp(head + g->off, g->sig, g->len) != 0)
		return false;
	if (g->len2 && (len < g->off2 + g->len2 || memcmp(head + g->off2, g->sig2, g->len2) != 0))
		return false;
	switch (g->check) {
	case CHECK_BINARY: return binary_bytes(head, len);
	case CHECK_SHORTEN: return len > 4 && head[4] >= 1 && head[4] <= 3;
	case CHECK_SV7: return len > 3 && (head[3] == 0x07 || head[3] == 0x17);
	default: return true;
	}
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
	for (size_t i = 0; i < sizeof(signatures) / sizeof(signatures[0]); i++) {
		if (signature_matches(&signatures[i], head, len)) {
			*mime = signatures[i].mime;
			return signatures[i].type;
		}
	}
	if (frames(head, len, adts_frame)) {
		*mime = "audio/aac";
		return TR_TYPE_AUDIO;
	}
	if (frames(head, len, ac3_frame)) {
		*mime = "audio/ac3";
		return TR_TYPE_AUDIO;
	}
	if (mpa_after_junk(head, len)) {
		*mime = "audio/mpeg";
		return TR_TYPE_AUDIO;
	}
	return TR_TYPE_UNKNOWN;
}
