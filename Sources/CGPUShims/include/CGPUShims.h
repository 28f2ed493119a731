// CGPUShims: what Swift cannot import from EGL and GLES. Only PrismGPU uses it (and links EGL/GLESv2
// through it); media code never sees these headers.
#ifndef PRISM_CGPUSHIMS_H
#define PRISM_CGPUSHIMS_H

#include <stdint.h>
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

#endif
