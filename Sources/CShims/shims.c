#define _GNU_SOURCE  // pthread_setname_np
#include <pthread.h>
#include "CShims.h"
#include <errno.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>
#include <libavutil/error.h>
#include <libavutil/avutil.h>
#include <libavutil/buffer.h>
#include <GLES2/gl2ext.h>

int prism_egl_query_devices(EGLint max, EGLDeviceEXT *devices, EGLint *count) {
    PFNEGLQUERYDEVICESEXTPROC fn = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    if (!fn) return 0;
    return fn(max, devices, count) == EGL_TRUE;
}

const char *prism_egl_query_device_string(EGLDeviceEXT device, EGLint name) {
    PFNEGLQUERYDEVICESTRINGEXTPROC fn =
        (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
    return fn ? fn(device, name) : NULL;
}

EGLDisplay prism_egl_get_platform_display(EGLenum platform, void *native, const EGLint *attribs) {
    PFNEGLGETPLATFORMDISPLAYEXTPROC fn =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (!fn) return EGL_NO_DISPLAY;
    return fn(platform, native, attribs);
}

// Loaded once per process; the pointers are the same for every context of one EGL implementation.
static PFNGLQUERYCOUNTEREXTPROC query_counter;
static PFNGLGETQUERYOBJECTUI64VEXTPROC query_u64;
static PFNGLGETQUERYOBJECTUIVEXTPROC query_uiv;

int prism_gl_timer_queries_load(void) {
    query_counter = (PFNGLQUERYCOUNTEREXTPROC)eglGetProcAddress("glQueryCounterEXT");
    query_u64 = (PFNGLGETQUERYOBJECTUI64VEXTPROC)eglGetProcAddress("glGetQueryObjectui64vEXT");
    query_uiv = (PFNGLGETQUERYOBJECTUIVEXTPROC)eglGetProcAddress("glGetQueryObjectuivEXT");
    return query_counter && query_u64 && query_uiv;
}

void prism_gl_query_counter(GLuint query) { query_counter(query, GL_TIMESTAMP_EXT); }

uint64_t prism_gl_query_result_u64(GLuint query) {
    GLuint64 value = 0;
    query_u64(query, GL_QUERY_RESULT_EXT, &value);
    return value;
}

int prism_gl_query_result_available(GLuint query) {
    GLuint available = 0;
    query_uiv(query, GL_QUERY_RESULT_AVAILABLE_EXT, &available);
    return available != 0;
}

int prism_gl_gpu_disjoint(void) {
    GLint disjoint = 0;
    glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
    return disjoint != 0;
}

int prism_averror(int posix_errno) { return AVERROR(posix_errno); }
int prism_averror_eof(void) { return AVERROR_EOF; }
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

int prism_ioctl(int fd, unsigned long request, void *arg) {
    int result;
    do { result = ioctl(fd, request, arg); } while (result == -1 && errno == EINTR);
    return result;
}

void prism_set_current_thread_name(const char *name) {
    char truncated[16];
    snprintf(truncated, sizeof truncated, "%s", name);
    pthread_setname_np(pthread_self(), truncated);
}
