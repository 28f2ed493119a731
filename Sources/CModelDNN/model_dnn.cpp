// The C API of model_dnn.h over cv::dnn. OpenCV reports failures with exceptions; none may cross into
// Swift, so each entry point catches them and returns a one-line message instead.
#include "model_dnn.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

struct prism_dnn_net {
    cv::dnn::Net net;
};

static void write_error(char *error, size_t size, const std::string &message) {
    if (error == nullptr || size == 0) return;
    std::string line = message;
    std::replace(line.begin(), line.end(), '\n', ' ');
    std::snprintf(error, size, "%s", line.c_str());
}

/// OpenCV's own short reason (cv::Exception::err), not what() with its source file and line. The ONNX
/// importer wraps a layer's exception in its own, text and all ("> Node [Conv]:(z) parse error: OpenCV(4.6.0)
/// FILE:LINE: error: (-5:Bad argument) REASON in function 'F'"): keep the node and the reason only.
static std::string reason(const std::exception &e) {
    const cv::Exception *cv_error = dynamic_cast<const cv::Exception *>(&e);
    std::string text = cv_error != nullptr ? cv_error->err : e.what();
    size_t inner = text.find(" OpenCV(");
    size_t code = text.find("error: (", inner == std::string::npos ? 0 : inner);
    if (inner != std::string::npos && code != std::string::npos) {
        size_t close = text.find(") ", code);
        std::string tail = close == std::string::npos ? text.substr(code) : text.substr(close + 2);
        size_t function = tail.find(" in function");
        if (function != std::string::npos) tail = tail.substr(0, function);
        text = text.substr(0, inner) + " " + tail;
    }
    if (text.rfind("> ", 0) == 0) text = text.substr(2);
    return text;
}

extern "C" prism_dnn_net *prism_dnn_open_bytes(const void *bytes, size_t size, char *error, size_t error_size) {
    if (bytes == nullptr || size == 0) {
        write_error(error, error_size, "the model file is empty");
        return nullptr;
    }
    // The importer also logs each failure to stderr; the caller prints the message it is given, once, so
    // OpenCV's own log is silenced (process-wide, which is what it is).
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    prism_dnn_net *net = new (std::nothrow) prism_dnn_net();
    if (net == nullptr) {
        write_error(error, error_size, "out of memory");
        return nullptr;
    }
    try {
        net->net = cv::dnn::readNetFromONNX(static_cast<const char *>(bytes), size);
        if (net->net.empty()) {
            write_error(error, error_size, "not an ONNX model OpenCV DNN can load");
            delete net;
            return nullptr;
        }
        net->net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        net->net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    } catch (const std::exception &e) {
        write_error(error, error_size, "not an ONNX model OpenCV DNN can load (" + reason(e) + ")");
        delete net;
        return nullptr;
    }
    return net;
}

extern "C" void prism_dnn_close(prism_dnn_net *net) { delete net; }

extern "C" void prism_dnn_set_threads(int n) { cv::setNumThreads(n); }

extern "C" int prism_dnn_forward(prism_dnn_net *net, const float *input, int c, int h, int w, const char *output,
                                 float *out, size_t capacity, int out_dims[4], char *error, size_t error_size) {
    if (net == nullptr || input == nullptr || c <= 0 || h <= 0 || w <= 0) {
        write_error(error, error_size, "no network, or an empty input");
        return -1;
    }
    try {
        int shape[4] = {1, c, h, w};
        // A header over the caller's memory: setInput copies it into the net's own blob.
        cv::Mat blob(4, shape, CV_32F, const_cast<float *>(input));
        net->net.setInput(blob);
        // Without a name, OpenCV gives the output of the net's last layer, which for a model with several
        // outputs is not its first.
        cv::Mat result = output != nullptr && output[0] != 0 ? net->net.forward(output) : net->net.forward();
        if (result.dims > 4) {
            write_error(error, error_size, "the output has " + std::to_string(result.dims) + " dimensions (at most 4)");
            return -1;
        }
        if (result.type() != CV_32F) result.convertTo(result, CV_32F);
        if (!result.isContinuous()) result = result.clone();
        int pad = 4 - result.dims;
        for (int i = 0; i < 4; i++) out_dims[i] = i < pad ? 1 : result.size[i - pad];
        size_t count = result.total();
        if (out != nullptr) std::memcpy(out, result.ptr<float>(), std::min(count, capacity) * sizeof(float));
        return 0;
    } catch (const std::exception &e) {
        write_error(error, error_size, "inference failed (" + reason(e) + ")");
        return -1;
    }
}
