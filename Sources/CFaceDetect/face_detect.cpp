// The C API of CFaceDetect.h over cv::CascadeClassifier and cv::FaceDetectorYN. OpenCV reports failures
// with exceptions; none may cross into Swift, so each entry point catches them and returns a message instead.
#include "CFaceDetect.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

struct prism_face_detector {
    cv::CascadeClassifier cascade;
    cv::Ptr<cv::FaceDetectorYN> yunet;  // set instead of the cascade for an ONNX model
    cv::Mat colour;                      // YuNet takes 3 channels: the luma repeated, reused between frames
};

static void write_error(char *error, size_t size, const char *message) {
    if (error != nullptr && size > 0) std::snprintf(error, size, "%s", message);
}

/// A detector to load `path` into, once the file is known to open (OpenCV's own loaders say less when
/// it does not); nullptr with `error` written otherwise. `what` names the file in the message.
static prism_face_detector *new_detector(const char *path, const char *what, char *error, size_t error_size) {
    std::FILE *file = std::fopen(path, "rb");
    if (file == nullptr) {
        write_error(error, error_size, (std::string("cannot open the ") + what).c_str());
        return nullptr;
    }
    std::fclose(file);
    prism_face_detector *detector = new (std::nothrow) prism_face_detector();
    if (detector == nullptr) write_error(error, error_size, "out of memory");
    return detector;
}

extern "C" prism_face_detector *prism_face_detector_open(const char *path, char *error, size_t error_size) {
    prism_face_detector *detector = new_detector(path, "cascade file", error, error_size);
    if (detector == nullptr) return nullptr;
    try {
        if (!detector->cascade.load(path) || detector->cascade.empty()) {
            write_error(error, error_size, "not an OpenCV cascade (Haar or LBP XML)");
            delete detector;
            return nullptr;
        }
    } catch (const cv::Exception &e) {
        // Malformed XML makes OpenCV's file storage throw; its own short message (not the source location).
        std::string message = std::string("not an OpenCV cascade (") + e.err + ")";
        std::replace(message.begin(), message.end(), '\n', ' ');
        write_error(error, error_size, message.c_str());
        delete detector;
        return nullptr;
    } catch (const std::exception &e) {
        std::string message = std::string("not an OpenCV cascade: ") + e.what();
        std::replace(message.begin(), message.end(), '\n', ' ');
        write_error(error, error_size, message.c_str());
        delete detector;
        return nullptr;
    }
    return detector;
}

/// Runs YuNet on `image` (grey) and writes its boxes, best first; returns the count or throws.
static int detect_yunet(prism_face_detector *detector, const cv::Mat &image, prism_face_box *boxes, int capacity) {
    cv::cvtColor(image, detector->colour, cv::COLOR_GRAY2BGR);
    detector->yunet->setInputSize(image.size());
    cv::Mat faces;
    detector->yunet->detect(detector->colour, faces);
    // One row per face: x, y, w, h, five landmarks (x, y), score.
    if (!faces.empty() && (faces.cols < 15 || faces.type() != CV_32F)) throw std::runtime_error("unexpected output");
    const int count = faces.rows;
    for (int i = 0; i < count && i < capacity; i++) {
        const float *row = faces.ptr<float>(i);
        boxes[i] = prism_face_box{static_cast<int32_t>(row[0]), static_cast<int32_t>(row[1]), static_cast<int32_t>(row[2]),
                                  static_cast<int32_t>(row[3]), static_cast<int32_t>(row[14] * 100)};
    }
    return count;
}

extern "C" prism_face_detector *prism_face_detector_open_yunet(const char *path, char *error, size_t error_size) {
    prism_face_detector *detector = new_detector(path, "model file", error, error_size);
    if (detector == nullptr) return nullptr;
    try {
        detector->yunet = cv::FaceDetectorYN::create(path, "", cv::Size(320, 320), 0.6f, 0.3f, 5000);
    } catch (const std::exception &) {
        write_error(error, error_size, "not an ONNX model OpenCV can read");
        delete detector;
        return nullptr;
    }
    // A readable ONNX file of another kind loads; only running it shows it is not YuNet. One blank frame now,
    // so a wrong model fails before the first real one.
    try {
        prism_face_box box;
        const cv::Mat blank(320, 320, CV_8UC1, cv::Scalar(128));
        detect_yunet(detector, blank, &box, 1);
    } catch (const std::exception &) {
        write_error(error, error_size, "not a YuNet face detection model (OpenCV's FaceDetectorYN could not run it)");
        delete detector;
        return nullptr;
    }
    return detector;
}

extern "C" void prism_face_detector_close(prism_face_detector *detector) { delete detector; }

extern "C" int prism_face_detector_detect(prism_face_detector *detector, const uint8_t *gray, int width, int height,
                                          int stride, double scale_factor, int min_neighbours, int min_size,
                                          prism_face_box *boxes, int capacity, char *error, size_t error_size) {
    if (detector == nullptr || gray == nullptr || width <= 0 || height <= 0 || stride < width) {
        write_error(error, error_size, "invalid image");
        return -1;
    }
    try {
        const cv::Mat image(height, width, CV_8UC1, const_cast<uint8_t *>(gray), static_cast<size_t>(stride));
        if (!detector->yunet.empty()) return detect_yunet(detector, image, boxes, capacity);
        std::vector<cv::Rect> found;
        std::vector<int> neighbours;
        // No histogram equalisation: the cascades normalise each window's contrast themselves, and a
        // frame-wide equalisation, dominated by a plain background, flattened small faces (face-bench
        // --recall: Haar found 0% of 49-px faces at 720p with it, 100% without).
        detector->cascade.detectMultiScale(image, found, neighbours, scale_factor, min_neighbours, 0,
                                           cv::Size(min_size, min_size));
        std::vector<size_t> order(found.size());
        for (size_t i = 0; i < order.size(); i++) order[i] = i;
        // Largest first; equal areas keep OpenCV's order, so the result is deterministic.
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return found[a].area() != found[b].area() ? found[a].area() > found[b].area() : a < b;
        });
        const int count = static_cast<int>(found.size());
        for (int i = 0; i < count && i < capacity; i++) {
            const cv::Rect &r = found[order[i]];
            boxes[i] = prism_face_box{r.x, r.y, r.width, r.height, i < static_cast<int>(neighbours.size()) ? neighbours[order[i]] : 0};
        }
        return count;
    } catch (const std::exception &e) {
        std::string message = std::string("face detection failed: ") + e.what();
        std::replace(message.begin(), message.end(), '\n', ' ');
        write_error(error, error_size, message.c_str());
        return -1;
    }
}

extern "C" const char *prism_face_detector_opencv_version(void) {
    // The library's own answer at run time (CV_VERSION would be the headers' at build time).
    static const std::string version = cv::getVersionString();
    return version.c_str();
}
