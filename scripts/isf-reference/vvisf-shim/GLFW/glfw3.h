// Stands in for GLFW when VVGL is built with VVGL_SDK_GLFW for vvisf-render: VVGL only makes a "window"
// current and asks which one is; vvisf-render.cpp implements both over a surfaceless EGL context.
#pragma once
typedef struct GLFWwindow GLFWwindow;
GLFWwindow *glfwGetCurrentContext(void);
void glfwMakeContextCurrent(GLFWwindow *window);
