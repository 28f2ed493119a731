// A C API over OpenCV's cv::CascadeClassifier (Haar and LBP cascades), so Swift can call it: Swift
// cannot import OpenCV's C++ headers. One detector object per thread; nothing here is global.
#ifndef PRISM_CFACEDETECT_H
#define PRISM_CFACEDETECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prism_face_detector prism_face_detector;

/// One detection in the pixels of the image given to `prism_face_detector_detect`.
typedef struct {
    int32_t x, y, width, height;
    /// How many overlapping raw detections were merged into this one (OpenCV's numDetections):
    /// a confidence that grows with how clearly the cascade fires.
    int32_t neighbours;
} prism_face_box;

/// Loads a cascade (an OpenCV XML file). Returns NULL and writes a message into `error` when the file
/// is missing, unreadable or not a cascade.
prism_face_detector *prism_face_detector_open(const char *path, char *error, size_t error_size);

/// Loads OpenCV's FaceDetectorYN (YuNet) from an ONNX file and runs it once on a blank image, so a file that
/// is not an ONNX model, or a model of another kind, fails here. NULL and a message in `error` then.
/// `prism_face_detector_detect` then runs YuNet (its scale, neighbour and size arguments are ignored; each
/// box's `neighbours` is YuNet's score × 100).
prism_face_detector *prism_face_detector_open_yunet(const char *path, char *error, size_t error_size);

void prism_face_detector_close(prism_face_detector *detector);

/// Detects faces in an 8-bit grayscale image (`stride` bytes per row), as it is (no equalisation).
/// Writes up to `capacity` boxes, largest first, and returns how many
/// there were in all (which may exceed `capacity`), or -1 with a message in `error`.
int prism_face_detector_detect(prism_face_detector *detector, const uint8_t *gray, int width, int height,
                               int stride, double scale_factor, int min_neighbours, int min_size,
                               prism_face_box *boxes, int capacity, char *error, size_t error_size);

/// The version of the OpenCV library loaded (cv::getVersionString(), "4.6.0"); a static string.
const char *prism_face_detector_opencv_version(void);

#ifdef __cplusplus
}
#endif

#endif
