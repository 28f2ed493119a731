#include "CGPUShims.h"
#include <stddef.h>
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
