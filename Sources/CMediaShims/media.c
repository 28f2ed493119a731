#include "CMediaShims.h"
#include <stdio.h>
#include <linux/videodev2.h>
#include <libavutil/error.h>
#include <libavutil/avutil.h>
#include <libavutil/buffer.h>

int prism_averror(int posix_errno) { return AVERROR(posix_errno); }
int prism_averror_eof(void) { return AVERROR_EOF; }
int prism_averror_exit(void) { return AVERROR_EXIT; }
int64_t prism_av_nopts_value(void) { return AV_NOPTS_VALUE; }

void prism_av_strerror(int code, char *buffer, size_t size) {
    if (av_strerror(code, buffer, size) < 0 && size > 0) {
        snprintf(buffer, size, "error %d", code);
    }
}

struct AVBufferRef *prism_av_buffer_wrap(uint8_t *data, size_t size,
                                         void (*release)(void *opaque, uint8_t *data), void *opaque) {
    return av_buffer_create(data, size, release, opaque, 0);
}

unsigned long prism_vidioc_querycap(void) { return VIDIOC_QUERYCAP; }
unsigned long prism_vidioc_enum_fmt(void) { return VIDIOC_ENUM_FMT; }
unsigned long prism_vidioc_g_fmt(void) { return VIDIOC_G_FMT; }
unsigned long prism_vidioc_s_fmt(void) { return VIDIOC_S_FMT; }
unsigned long prism_vidioc_reqbufs(void) { return VIDIOC_REQBUFS; }
unsigned long prism_vidioc_querybuf(void) { return VIDIOC_QUERYBUF; }
unsigned long prism_vidioc_qbuf(void) { return VIDIOC_QBUF; }
unsigned long prism_vidioc_dqbuf(void) { return VIDIOC_DQBUF; }
unsigned long prism_vidioc_streamon(void) { return VIDIOC_STREAMON; }
unsigned long prism_vidioc_streamoff(void) { return VIDIOC_STREAMOFF; }
unsigned long prism_vidioc_s_parm(void) { return VIDIOC_S_PARM; }
unsigned long prism_vidioc_enum_framesizes(void) { return VIDIOC_ENUM_FRAMESIZES; }
unsigned long prism_vidioc_enum_frameintervals(void) { return VIDIOC_ENUM_FRAMEINTERVALS; }
unsigned long prism_vidioc_g_parm(void) { return VIDIOC_G_PARM; }
