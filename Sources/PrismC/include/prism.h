/*
 * prism.h — Prism's C API (libprism.so; pkg-config name: prism).
 *
 * A session runs one filter graph over one input — a movie, a stream, a camera, the test pattern, or
 * frames the caller pushes — and either hands back every filtered frame (prism_session_next_frame) or
 * writes an output (prism_session_write). It is PrismKit's Session: the same policies and the same
 * pixels as `prism run`.
 *
 *     prism_session *s;
 *     if (prism_session_open("in.mp4", "face-pixellate", NULL, &s) != PRISM_OK) {
 *         fprintf(stderr, "%s\n", prism_last_error());
 *         return 1;
 *     }
 *     prism_session_start(s, PRISM_FORMAT_RGBA);
 *     prism_frame *f;
 *     while (prism_session_next_frame(s, &f) == PRISM_OK) {
 *         const uint8_t *rgba = prism_frame_plane(f, 0, NULL);   // width × height × 4 bytes
 *         ...
 *         prism_frame_free(f);
 *     }
 *     prism_session_free(s);
 *
 * Errors: every function that can fail returns a prism_status; on failure the calling thread's
 * prism_last_error() holds one line saying what went wrong (valid until that thread's next call into
 * the library).
 *
 * Ownership: handles a function hands out (sessions, options, frames) are the caller's and are freed
 * with their own *_free function; strings the library returns are the library's (see each function).
 *
 * FFmpeg's log: the library sets FFmpeg's level to errors only (av_log_set_level(AV_LOG_ERROR)) when its
 * first session opens, as the prism tool does; a program that wants FFmpeg's warnings sets its level after.
 *
 * Threads: the library starts its own threads (source, GPU, output). A session is used from one thread
 * at a time, with two exceptions: prism_session_push and prism_session_end_input may be called from
 * one other thread while frames are being pulled (a producer and a consumer), and
 * prism_session_cancel may be called from any thread at any time. Frames and options are not shared
 * between threads without the caller's own locking. Different sessions are independent.
 */
#ifndef PRISM_H
#define PRISM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this API; prism_api_version() returns the library's. */
#define PRISM_API_VERSION 1

/* What a call did. Negative values are errors (prism_last_error() says which). */
typedef enum prism_status {
    PRISM_OK = 0,
    /* prism_session_next_frame: the run has ended; there are no more frames. */
    PRISM_END = 1,
    /* A bad argument: a NULL pointer, an unknown option or format, a value out of range. */
    PRISM_ERROR_ARGUMENT = -1,
    /* The input, the graph, a model or an output was refused before the run (a missing file, a graph
     * that does not parse or bind, a shader that does not compile). */
    PRISM_ERROR_USAGE = -2,
    /* The call does not fit the session's state (a second run, pushing to a session that reads a file). */
    PRISM_ERROR_STATE = -3,
    /* The run failed (a read, decode, GPU or write error), or was cancelled. */
    PRISM_ERROR_RUN = -4
} prism_status;

/* Pixel formats of pushed and pulled frames, with FFmpeg's names. Planes are in FFmpeg's order
 * (Y, U, V; Y, UV for NV12); 10-bit samples are little-endian 16-bit words holding 0..1023. */
typedef enum prism_pixel_format {
    PRISM_FORMAT_RGBA = 0,         /* one plane, R G B A bytes                 (GStreamer RGBA)   */
    PRISM_FORMAT_BGRA = 1,         /* one plane, B G R A bytes                 (BGRA)             */
    PRISM_FORMAT_YUV420P = 2,      /* three planes, chroma halved both ways    (I420)             */
    PRISM_FORMAT_NV12 = 3,         /* Y plane, interleaved CbCr plane          (NV12)             */
    PRISM_FORMAT_YUYV422 = 4,      /* one plane, Y0 Cb Y1 Cr                   (YUY2)             */
    PRISM_FORMAT_YUV422P = 5,      /* three planes, chroma halved across       (Y42B)             */
    PRISM_FORMAT_YUV444P = 6,      /* three planes, full chroma                (Y444)             */
    PRISM_FORMAT_YUV420P10LE = 7,  /* as YUV420P, 10 bits in 16-bit words      (I420_10LE)        */
    PRISM_FORMAT_GRAY = 8          /* one plane of luma                        (GRAY8)            */
} prism_pixel_format;

typedef struct prism_session prism_session;
typedef struct prism_options prism_options;
typedef struct prism_frame prism_frame;

/* "1.2.3 (commit)". The library's string. Thread-safe. */
const char *prism_version(void);
/* PRISM_API_VERSION of the library. Thread-safe. */
int prism_api_version(void);
/* The calling thread's last error: one line, or "" when the last failing call on this thread left none.
 * The library's string, valid until this thread's next call into the library. Thread-safe. */
const char *prism_last_error(void);

/* ---- Options: a run's settings, by the names `prism run` gives them ---------------------------------
 *
 *   size WxH             the output size (a final scale); with pushed frames too
 *   fps RATE             a constant output rate (30, 29.97, 30000/1001)
 *   frames N             stop after N frames          duration SECONDS   stop after this much input
 *   gpu N                the EGL device (`prism devices`)
 *   params LIST          graph parameters, `NAME=VALUE` or `NODE.NAME=VALUE`, comma separated; NODE is
 *                        a label or a filter name (without it: the first node that has NAME)
 *   mirror 0|1           swap left and right          autorotate 0|1     turn a movie upright (default 1)
 *   face-model M         haar, lbp, a cascade or a YuNet/CenterFace .onnx   face-every N   faces-in F.jsonl
 *   codec C, crf N, preset P                           the movie encoder (prism_session_write)
 *   buffered N           frames the run may be ahead of prism_session_next_frame (default 2)
 * For pushed frames (prism_session_open_frames) also:
 *   color-matrix bt601|bt709|bt2020, color-range limited|full   (default: limited, the size's usual matrix)
 *   time-base N/D        what pushed timestamps count (default 1/rate: frame numbers)
 *   queue N              pushed frames that may wait for the run (default 3)
 * Unknown names and bad values fail here, with the reason in prism_last_error(). */

/* Options are used by one thread at a time. */

/* A new, empty set of options (the caller's; free with prism_options_free). NULL only when out of memory. */
prism_options *prism_options_new(void);
/* Sets `name` to `value` (both copied). */
prism_status prism_options_set(prism_options *options, const char *name, const char *value);
/* Frees options (NULL is fine). Sessions keep their own copy: options may be freed after opening. */
void prism_options_free(prism_options *options);

/* ---- Sessions --------------------------------------------------------------------------------------- *
 * [consumer]: the thread using the session (one at a time); [producer]: that thread or one other;
 * [any]: any thread, at any time. */

/* Opens `input` (a movie path or URL, "pattern", a camera such as /dev/video0) with the filter graph
 * `graph` in Prism's text form ("invert, mono", "face-pixellate", "look.fs(amount=0.3)", "hook.glsl");
 * `options` may be NULL. On success *session is the caller's (free with prism_session_free). Everything
 * the input, graph or options can get wrong fails here, before any frame. [any] */
prism_status prism_session_open(const char *input, const char *graph, const prism_options *options,
                                prism_session **session);

/* A session whose frames the caller pushes (prism_session_push): `width`×`height` in `format` at the
 * nominal rate rate_num/rate_den (used for timestamps the caller leaves out, and the output's rate). [any] */
prism_status prism_session_open_frames(int width, int height, prism_pixel_format format, int rate_num,
                                       int rate_den, const char *graph, const prism_options *options,
                                       prism_session **session);

/* The size of the frames the run will produce (after the graph: upscaling hooks and models change it).
 * [consumer] */
prism_status prism_session_output_size(const prism_session *session, int *width, int *height);
/* The size of the input as opened (a movie's own, or what open_frames was given). [consumer] */
prism_status prism_session_input_size(const prism_session *session, int *width, int *height);

/* Pushes one frame: planes[i] and strides[i] (bytes from one row to the next) for each of the format's
 * planes. The bytes are copied before the call returns. `pts` and `duration` count the time base
 * ("time-base"; default 1/rate); pts < 0: the frame after the last at the rate; duration <= 0: unknown.
 * Timestamps must increase. Blocks while "queue" frames wait for the run (a run that is not pulled yet
 * holds them all). PRISM_ERROR_STATE once the run has ended or after prism_session_end_input. [producer] */
prism_status prism_session_push(prism_session *session, const uint8_t *const planes[], const int strides[],
                                int64_t pts, int64_t duration);
/* No more pushed frames: the run ends after the frames already pushed. [producer] */
prism_status prism_session_end_input(prism_session *session);

/* Starts the run with its frames delivered in memory, packed as `format` (any but YUYV422). A session
 * runs once. [consumer] */
prism_status prism_session_start(prism_session *session, prism_pixel_format format);
/* The next frame, in order, waiting for it. PRISM_OK with *frame set (the caller's; prism_frame_free);
 * PRISM_END at the end of the run (*frame NULL); an error if the run failed. [consumer] */
prism_status prism_session_next_frame(prism_session *session, prism_frame **frame);

/* Runs the session into `output` (a movie whose extension picks the container, or a .png/.jpg of the
 * first frame) and returns when it is written. On failure nothing is left at `output`. A session runs
 * once. [consumer] */
prism_status prism_session_write(prism_session *session, const char *output);

/* Stops the run as soon as it can (a started run's next_frame then returns PRISM_END; a write stops and
 * keeps what it wrote, as `prism run` does on Ctrl-C); a blocked prism_session_push returns
 * PRISM_ERROR_STATE. More than once is fine. [any] */
void prism_session_cancel(prism_session *session);

/* What the run did, as one JSON object: frames_in, frames_out, frames_dropped, wall_seconds, fps,
 * stop_reason, renderer, notes (the session's and the run's). Before the run ends: the session's notes
 * only. The library's string, valid until the next call with this session. [consumer] */
const char *prism_session_report(prism_session *session);

/* Stops a run still going, waits for its threads, and frees the session (NULL is fine). Frames already
 * handed out stay valid until they are freed. [consumer], with no other call on the session in progress:
 * a producer blocked in prism_session_push is woken by prism_session_cancel and must have returned. */
void prism_session_free(prism_session *session);

/* ---- Frames ----------------------------------------------------------------------------------------- *
 * A frame is the caller's, independent of its session, used by one thread at a time. */

int prism_frame_width(const prism_frame *frame);
int prism_frame_height(const prism_frame *frame);
prism_pixel_format prism_frame_format(const prism_frame *frame);
/* The frame's place in the run (0 for the first). */
int64_t prism_frame_index(const prism_frame *frame);
/* The presentation time in nanoseconds on the output's time line (a pushed frame keeps the time it was
 * pushed with). */
int64_t prism_frame_pts_ns(const prism_frame *frame);
/* The presentation time exactly: *value ticks of 1 / *timescale seconds. */
void prism_frame_pts(const prism_frame *frame, int64_t *value, int32_t *timescale);
/* Planes (1 for packed formats, 2 for NV12, 3 for planar Y'CbCr). */
int prism_frame_plane_count(const prism_frame *frame);
/* Plane `index`'s first byte (NULL for an index out of range); *stride (may be NULL) gets the bytes
 * from one row to the next. Valid until prism_frame_free. */
const uint8_t *prism_frame_plane(const prism_frame *frame, int index, int *stride);
/* The whole buffer the planes lie in, and its size in bytes. Planes are not one after the other (the
 * rows of YUV420P's Cb and Cr planes sit side by side); find each with prism_frame_plane. */
const uint8_t *prism_frame_data(const prism_frame *frame, size_t *size);
/* Frees the frame (NULL is fine). */
void prism_frame_free(prism_frame *frame);

/* ---- Stills ----------------------------------------------------------------------------------------- */

/* Runs the still image `input` (PNG, JPEG…) through `graph` into `output` (.png/.jpg), as
 * `prism render` does. `options` may be NULL. Blocks until written. [any] */
prism_status prism_render(const char *graph, const char *input, const char *output, const prism_options *options);

#ifdef __cplusplus
}
#endif

#endif /* PRISM_H */
