#include <GLES3/gl3.h>
#include <GLES2/gl2ext.h>
