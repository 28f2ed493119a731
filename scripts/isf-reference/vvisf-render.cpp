// vvisf-render: renders one ISF file with Vidvox's VVISF-GL library, headless, for scripts/isf-collection-check
// --compare. A measurement tool only: built by build-vvisf-render against a VVISF-GL checkout the user has,
// never part of Prism.
//
//   vvisf-render FILE.fs IMAGE.rgba WIDTH HEIGHT FRAMES FPS OUT.rgba [NAME=TYPE:VALUE ...]
//
// IMAGE.rgba is WIDTH×HEIGHT RGBA bytes, top row first, given to every image input; FRAMES frames are rendered at
// TIME = frame / FPS (TIMEDELTA 0 on the first, as VVISF gives for time 0), and the last is written to
// OUT.rgba the same way. TYPE is float, long, bool, point2D (x,y) or color (r,g,b,a).
// The GL context is desktop OpenGL 4.1 core on a surfaceless EGL display (Mesa), made current through the two
// GLFW calls VVGL's GLFW flavour makes (implemented below), so no window system is needed.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include "VVISF.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

using namespace std;
using namespace VVGL;
using namespace VVISF;

struct GLFWwindow { EGLDisplay display; EGLContext context; };
static GLFWwindow *currentWindow = nullptr;

GLFWwindow *glfwGetCurrentContext(void) { return currentWindow; }
void glfwMakeContextCurrent(GLFWwindow *window) {
    if (window && eglMakeCurrent(window->display, EGL_NO_SURFACE, EGL_NO_SURFACE, window->context)) currentWindow = window;
}

static GLFWwindow *makeWindow() {
    auto getPlatformDisplay = (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    EGLDisplay display = getPlatformDisplay ? getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr)
                                            : eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (display == EGL_NO_DISPLAY || !eglInitialize(display, nullptr, nullptr)) return nullptr;
    if (!eglBindAPI(EGL_OPENGL_API)) return nullptr;
    // Surfaceless displays offer no configs; nothing is drawn to a surface, so none is needed.
    const EGLint configAttributes[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config = EGL_NO_CONFIG_KHR;
    EGLint count = 0;
    if (!eglChooseConfig(display, configAttributes, &config, 1, &count) || count == 0) config = EGL_NO_CONFIG_KHR;
    const EGLint contextAttributes[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 1,
                                        EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, contextAttributes);
    if (context == EGL_NO_CONTEXT) return nullptr;
    return new GLFWwindow{display, context};
}

static vector<double> numbers(const string &text) {
    vector<double> out;
    stringstream stream(text);
    string item;
    while (getline(stream, item, ',')) out.push_back(atof(item.c_str()));
    return out;
}

static bool setValue(const ISFSceneRef &scene, const string &assignment) {
    size_t equals = assignment.find('='), colon = assignment.find(':', equals);
    if (equals == string::npos || colon == string::npos) return false;
    string name = assignment.substr(0, equals), type = assignment.substr(equals + 1, colon - equals - 1);
    vector<double> v = numbers(assignment.substr(colon + 1));
    if (v.empty()) return false;
    if (type == "float") scene->setValueForInputNamed(ISFFloatVal(v[0]), name);
    else if (type == "long") scene->setValueForInputNamed(ISFLongVal((int32_t)v[0]), name);
    else if (type == "bool") scene->setValueForInputNamed(ISFBoolVal(v[0] != 0), name);
    else if (type == "point2D" && v.size() >= 2) scene->setValueForInputNamed(ISFPoint2DVal(v[0], v[1]), name);
    else if (type == "color" && v.size() >= 4) scene->setValueForInputNamed(ISFColorVal(v[0], v[1], v[2], v[3]), name);
    else return false;
    return true;
}

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: vvisf-render FILE.fs IMAGE.rgba WIDTH HEIGHT FRAMES FPS OUT.rgba [NAME=TYPE:VALUE ...]\n");
        return 2;
    }
    const string path = argv[1], imagePath = argv[2], outPath = argv[7];
    const int width = atoi(argv[3]), height = atoi(argv[4]), frames = atoi(argv[5]);
    const double fps = atof(argv[6]);
    const size_t rowBytes = size_t(width) * 4, bytes = rowBytes * height;

    vector<unsigned char> image(bytes);
    ifstream in(imagePath, ios::binary);
    if (!in.read((char *)image.data(), bytes)) { fprintf(stderr, "vvisf-render: cannot read %s\n", imagePath.c_str()); return 1; }

    GLFWwindow *window = makeWindow();
    if (!window) { fprintf(stderr, "vvisf-render: no EGL OpenGL 4.1 context\n"); return 1; }
    glfwMakeContextCurrent(window);
    GLContextRef context = CreateGLContextRefUsing(window);
    CreateGlobalBufferPool(context);

    ISFSceneRef scene = CreateISFSceneRefUsing(context->newContextSharingMe());
    scene->setThrowExceptions(true);
    try {
        scene->useFile(path);
    } catch (ISFErr &error) {
        string detail;
        for (const auto &entry : error.details) if (entry.first == "fragErrLog" || entry.first == "vertErrLog") detail += " " + entry.second;
        for (auto &c : detail) if (c == '\n') c = ' ';
        fprintf(stderr, "vvisf-render: %s: %s%s\n", error.general.c_str(), error.specific.c_str(), detail.substr(0, 400).c_str());
        return 1;
    }

    // The picture as a GL texture: rows bottom first, as GL keeps them, so the buffer is not flipped.
    GLBufferRef input = CreateRGBATex(VVGL::Size(width, height), true);
    vector<unsigned char> rows(bytes);
    for (int y = 0; y < height; y++) memcpy(&rows[size_t(height - 1 - y) * rowBytes], &image[size_t(y) * rowBytes], rowBytes);
    glBindTexture(input->desc.target, input->name);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexSubImage2D(input->desc.target, 0, 0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rows.data());
    glBindTexture(input->desc.target, 0);
    input->flipped = false;
    for (const auto &attribute : scene->imageInputs()) scene->setBufferForInputNamed(input, attribute->name());

    for (int i = 8; i < argc; i++) {
        if (!setValue(scene, argv[i])) { fprintf(stderr, "vvisf-render: bad value %s\n", argv[i]); return 2; }
    }

    // A new output buffer each frame, as createAndRenderABuffer gives: a last pass with a persistent TARGET
    // keeps the buffer it rendered into, and reads it on the next frame.
    GLBufferRef output;
    try {
        for (int frame = 0; frame < frames; frame++) {
            output = CreateRGBATex(VVGL::Size(width, height), true);
            scene->renderToBuffer(output, VVGL::Size(width, height), frame / fps);
        }
    } catch (ISFErr &error) {
        fprintf(stderr, "vvisf-render: %s: %s\n", error.general.c_str(), error.specific.c_str());
        return 1;
    }
    glFinish();
    glBindTexture(output->desc.target, output->name);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(output->desc.target, 0, GL_RGBA, GL_UNSIGNED_BYTE, rows.data());
    glBindTexture(output->desc.target, 0);
    if (glGetError() != GL_NO_ERROR) { fprintf(stderr, "vvisf-render: reading the output back failed\n"); return 1; }
    for (int y = 0; y < height; y++) memcpy(&image[size_t(y) * rowBytes], &rows[size_t(height - 1 - y) * rowBytes], rowBytes);
    ofstream out(outPath, ios::binary);
    out.write((const char *)image.data(), bytes);
    return out ? 0 : 1;
}
