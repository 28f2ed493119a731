// Stands in for GLEW when VVGL is built with VVGL_SDK_GLFW for vvisf-render: GL's own headers with
// prototypes (GLVND's libOpenGL exports every entry point, so nothing needs loading by hand).
#pragma once
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>
#define GLEW_OK 0
static inline unsigned int glewInit(void) { return GLEW_OK; }
