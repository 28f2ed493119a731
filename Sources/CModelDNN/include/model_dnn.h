// A C API over OpenCV DNN's ONNX importer and CPU inference, so Swift can call it (Swift cannot import
// OpenCV's C++ headers). Two users: the segmentation side path's CPU back end (PrismVision), and the tests of
// the GPU lowering of networks, which take it as an independent reference implementation. Keep it small and
// stable: both depend on exactly these four functions.
#ifndef PRISM_MODEL_DNN_H
#define PRISM_MODEL_DNN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One loaded network. Not safe to use from two threads at once (OpenCV's Net keeps its blobs between
/// forwards); one owner per net.
typedef struct prism_dnn_net prism_dnn_net;

/// Loads an ONNX model from its file's bytes (read by the caller: a regular file, to a bound) with
/// cv::dnn::readNetFromONNX (CPU back end, 32-bit float). Returns NULL and writes a one-line message into
/// `error` when the bytes are not ONNX, or use what OpenCV cannot import.
prism_dnn_net *prism_dnn_open_bytes(const void *bytes, size_t size, char *error, size_t error_size);

void prism_dnn_close(prism_dnn_net *net);

/// The number of threads OpenCV's parallel loops use, process-wide (cv::setNumThreads; 0 = sequential,
/// a negative value restores OpenCV's default).
void prism_dnn_set_threads(int n);

/// Runs the network on one image: `input` is [1,c,h,w] float, NCHW. Writes up to `capacity` floats of the
/// output named `output` (the ONNX output's name; NULL or "": the net's last layer) into `out` (in its own layout, row-major) and its shape into `out_dims` (N,C,H,W; an output
/// of fewer than four dimensions is padded with 1 at the front, so [h,w] becomes 1,1,h,w). Returns 0, or -1
/// with a one-line message in `error` (an output of more than four dimensions, a shape the network refuses,
/// any OpenCV exception).
int prism_dnn_forward(prism_dnn_net *net, const float *input, int c, int h, int w, const char *output, float *out,
                      size_t capacity, int out_dims[4], char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
