// CMediaShims: what Swift cannot import from FFmpeg and V4L2. Links libavutil only: media code must
// not pull in EGL or GLES (those shims are CGPUShims).
#ifndef PRISM_CMEDIASHIMS_H
#define PRISM_CMEDIASHIMS_H

#include <stdint.h>
#include <stddef.h>

// MARK: FFmpeg
// AVERROR(), AV_NOPTS_VALUE and av_err2str are macros Swift cannot import.
int prism_averror(int posix_errno);
int prism_averror_eof(void);
/// AVERROR_EXIT: what a blocking call returns when its interrupt callback asked it to stop.
int prism_averror_exit(void);
int64_t prism_av_nopts_value(void);
/// Writes FFmpeg's message for `code` into buffer (always NUL-terminated).
void prism_av_strerror(int code, char *buffer, size_t size);
/// Creates an AVBufferRef over caller-owned memory; `release` is called with `opaque` when the last
/// reference drops (how pooled readback buffers return to their pool after the encoder is done).
struct AVBufferRef;
struct AVBufferRef *prism_av_buffer_wrap(uint8_t *data, size_t size,
                                         void (*release)(void *opaque, uint8_t *data), void *opaque);

// MARK: V4L2 ioctl request numbers (function-like _IOWR macros).
unsigned long prism_vidioc_querycap(void);
unsigned long prism_vidioc_enum_fmt(void);
unsigned long prism_vidioc_g_fmt(void);
unsigned long prism_vidioc_s_fmt(void);
unsigned long prism_vidioc_reqbufs(void);
unsigned long prism_vidioc_querybuf(void);
unsigned long prism_vidioc_qbuf(void);
unsigned long prism_vidioc_dqbuf(void);
unsigned long prism_vidioc_streamon(void);
unsigned long prism_vidioc_streamoff(void);
unsigned long prism_vidioc_s_parm(void);
unsigned long prism_vidioc_enum_framesizes(void);
unsigned long prism_vidioc_enum_frameintervals(void);
unsigned long prism_vidioc_g_parm(void);

#endif
