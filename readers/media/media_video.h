/* SPDX-License-Identifier: MIT */
/* media_video.h - a video's pictures and subtitles from an opened AVFormatContext: one frame by
 * time, a contact sheet, the text of its subtitle tracks. They run inside toolfs-reader-worker
 * (FFmpeg single-threaded, under seccomp): no file is opened, no thread started (codec thread_count 1),
 * every read goes through the context's AVIO, memory is bounded (MEDIA_VIDEO_MAX_PIXELS) and
 * the deadline (CLOCK_MONOTONIC ns, 0 for none) is checked between packets.
 *
 * Times are seconds from the file's start (AVFormatContext.start_time subtracted), as ffmpeg's
 * -ss counts them. Errors: -EINVAL (bad arguments, no such video stream), -EFBIG (dimensions
 * over the caps), -ENOSYS (no decoder for the codec), -ERANGE (the time is past the end),
 * -ENODATA (no picture size, or no frame could be decoded: truncated or corrupt stream),
 * -ETIMEDOUT (deadline), -ENOMEM. */
#ifndef TR_MEDIA_VIDEO_H
#define TR_MEDIA_VIDEO_H

#include <stddef.h>
#include <stdint.h>

#include <libavformat/avformat.h>

/* A coded picture larger than this is refused before decoding (-EFBIG): 8K DCI. The decoder's
 * max_pixels is set to it too, so a stream whose header lies is refused by the decoder. */
#define MEDIA_VIDEO_MAX_SIDE 16384
#define MEDIA_VIDEO_MAX_PIXELS (8192 * 4320)
/* Cells of a contact sheet at most (cols * rows). */
#define MEDIA_SHEET_MAX_CELLS 64
/* Bytes of subtitle text at most; cues past it are left out and a last line says so. */
#define MEDIA_SUBS_MAX_TEXT (4u << 20)

/* A picture: 8-bit RGB, rows packed (stride width * 3). rgb is owned (malloc'd); free it with
 * media_frame_free. */
struct media_frame {
	int width, height;
	unsigned char *rgb; /* width * height * 3 */
	double pts;         /* seconds from the file's start of the frame shown (sheets: 0) */
};

/* Frees frame->rgb and zeroes the struct; NULL and an empty frame are no-ops. */
void media_frame_free(struct media_frame *frame);

/* One video stream's decoder, kept open across several frames (a sheet's cells). */
struct media_video_decoder;

/* Opens a decoder for video stream `stream` of fmt (borrowed; it must outlive the decoder),
 * single-threaded, its pictures capped at MEDIA_VIDEO_MAX_PIXELS. Fills *out (owned: close it
 * with media_video_close); 0, or -errno. */
int media_video_open(AVFormatContext *fmt, int stream, struct media_video_decoder **out);

/* Frees the decoder; NULL is a no-op. */
void media_video_close(struct media_video_decoder *dec);

/* The picture's displayed size: coded size, sample aspect ratio and rotation applied (from the
 * stream's parameters; 0 when the header gives none). */
void media_video_display_size(const struct media_video_decoder *dec, int *width, int *height);

/* The frame of media_video_frame below, from an open decoder. */
int media_video_decode_at(struct media_video_decoder *dec, double t, int max_w, int max_h,
			  uint64_t deadline, struct media_frame *out);

/* The first frame of video stream `stream` whose time is >= t, found by seeking to the keyframe
 * at or before t and decoding forward (the last frame when none is, and t is less than the
 * file's length and within a second of it; out->pts says which frame). Rotation (the stream's display matrix) and the sample aspect ratio are applied, then
 * the picture is scaled (bicubic) to fit max_w x max_h keeping its aspect, never enlarged
 * (0: no limit on that side). Fills *out (owned by the caller); 0, or -errno (header). */
int media_video_frame(AVFormatContext *fmt, int stream, double t, int max_w, int max_h,
		      uint64_t deadline, struct media_frame *out);

/* Fits dw x dh into max_w x max_h (0: no limit on that side) keeping the aspect, never
 * enlarging; at least 1 x 1. */
void media_fit_size(int dw, int dh, int max_w, int max_h, int *fw, int *fh);

/* Times of a cols x rows sheet over [t0, t1): cell i at t0 + i * (t1 - t0) / (cols * rows), the
 * instants ffmpeg's fps=n/(t1-t0) filter picks. Fills times[cols * rows]. */
void media_sheet_times(double t0, double t1, int cols, int rows, double *times);

/* A contact sheet: cols x rows frames (media_video_frame) at media_sheet_times, row by row,
 * each cell the same size, fitted so that the sheet fits max_w x max_h (0: cells at the
 * picture's own size), its time drawn small in the cell's bottom-right corner. Cells whose time
 * is past the end are left out (black), the sheet stops at the first; times[cols * rows] gets
 * every cell's time, *n_frames the cells filled. t1 > t0 (a file without a length has no
 * sheet: ask for a frame). Fills *sheet (owned; pts 0); 0, or -errno. */
int media_video_sheet(AVFormatContext *fmt, int stream, double t0, double t1, int cols, int rows,
		      int max_w, int max_h, uint64_t deadline, struct media_frame *sheet,
		      double *times, int *n_frames);

/* Draws text (digits, ':' and '.'; other characters as spaces) with the built-in 3x5 font,
 * each font pixel scale x scale, white on a black box whose bottom-right corner is (right,
 * bottom) of frame, clipped to it. */
void media_sheet_label(struct media_frame *frame, const char *text, int scale, int right,
		       int bottom);

/* The text subtitle tracks (mov_text, SubRip, WebVTT, ASS/SSA; the first 16) of fmt as timed
 * lines (a cue's text cut at 4096 bytes, a track's at MEDIA_SUBS_MAX_TEXT): for each
 * track a line "Subtitle track N (language, codec):", then one line per cue overlapping
 * [t0, t1) (t1 < 0: to the end), or on screen at t0 when t1 == t0 (start <= t0 < end),
 * "[MM:SS.mmm --> MM:SS.mmm] text\n" (hours as H:MM:SS.mmm),
 * sorted by start, the cue's lines joined with " / ", ASS override tags removed. Times are the
 * packets' own, exact to the millisecond. *text (owned, NUL-terminated, *len bytes) is NULL
 * with *len 0 when there is no text track. Reads the whole file's packets (other streams
 * discarded by the demuxer). 0, or -errno. */
int media_subtitles(AVFormatContext *fmt, double t0, double t1, uint64_t deadline, char **text,
		    size_t *len);

/* ms as "MM:SS.mmm", from an hour on "H:MM:SS.mmm"; negative as 0. buf: 24 bytes suffice. */
void media_time_text(int64_t ms, char *buf, size_t size);

/* True when deadline (CLOCK_MONOTONIC ns; 0: none) has come. */
int media_deadline_passed(uint64_t deadline);

#endif
