// CShims: the few things Swift cannot import from the C libraries Prism uses.
// Each group says why it exists. Keep this small: everything else is imported directly.
#ifndef PRISM_CSHIMS_H
#define PRISM_CSHIMS_H

#include <stdint.h>
#include <stddef.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>

// MARK: EGL
// Extension entry points are only reachable through eglGetProcAddress; the helpers below load them
// lazily and return false / 0 when the implementation lacks the extension.
// EGL_NO_* and EGL_DEFAULT_DISPLAY are pointer-cast macros, which Swift does not import.
static inline EGLDisplay prism_egl_no_display(void) { return EGL_NO_DISPLAY; }
static inline EGLContext prism_egl_no_context(void) { return EGL_NO_CONTEXT; }
static inline EGLSurface prism_egl_no_surface(void) { return EGL_NO_SURFACE; }
static inline EGLSync prism_egl_no_sync(void) { return EGL_NO_SYNC; }

/// eglQueryDevicesEXT; returns false when EGL_EXT_device_enumeration is missing.
int prism_egl_query_devices(EGLint max, EGLDeviceEXT *devices, EGLint *count);
/// eglQueryDeviceStringEXT; NULL when unavailable.
const char *prism_egl_query_device_string(EGLDeviceEXT device, EGLint name);
/// eglGetPlatformDisplayEXT (or the EGL 1.5 core eglGetPlatformDisplay).
EGLDisplay prism_egl_get_platform_display(EGLenum platform, void *native, const EGLint *attribs);

// MARK: GL timer queries (GL_EXT_disjoint_timer_query), loaded through eglGetProcAddress.
int prism_gl_timer_queries_load(void);
void prism_gl_query_counter(GLuint query);
uint64_t prism_gl_query_result_u64(GLuint query);
int prism_gl_query_result_available(GLuint query);
int prism_gl_gpu_disjoint(void);

// MARK: FFmpeg
// AVERROR(), AV_NOPTS_VALUE and av_err2str are macros Swift cannot import.
int prism_averror(int posix_errno);
int prism_averror_eof(void);
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

// MARK: threads
/// Names the calling thread (pthread_setname_np is a GNU extension Swift does not see); at most 15 bytes.
void prism_set_current_thread_name(const char *name);

// MARK: process
/// ioctl with one pointer argument, retried on EINTR (ioctl is variadic, which Swift cannot call).
int prism_ioctl(int fd, unsigned long request, void *arg);

#endif
