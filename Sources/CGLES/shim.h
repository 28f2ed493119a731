#include <GLES3/gl3.h>
/* GLES 3.1 (compute shaders, image load/store, memory barriers): declared here, but only called on a
   context that reports 3.1 or newer (GPULimits.supportsCompute). */
#include <GLES3/gl31.h>
#include <GLES2/gl2ext.h>
