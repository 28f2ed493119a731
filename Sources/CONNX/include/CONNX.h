// A C API over ONNX's own library (Debian libonnx-dev: the official protobuf schema, the checker and shape
// inference), so Swift can read a model: Swift cannot import ONNX's C++ headers. `prism_onnx_open` parses,
// checks and infers shapes once, then exposes the graph as plain arrays owned by the model object: every
// pointer below stays valid until `prism_onnx_close`.
#ifndef PRISM_CONNX_H
#define PRISM_CONNX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The most dimensions a value may have here (image networks use 4).
#define PRISM_ONNX_MAX_RANK 8

/// A named tensor's type: ONNX's TensorProto.DataType (1 float, 7 int64, …) and its shape. A dimension that
/// is symbolic (dim_param) or unknown is -1; `rank` is -1 when the shape is unknown altogether.
typedef struct {
    const char *name;
    int32_t elem_type;
    int32_t rank;
    int64_t dims[PRISM_ONNX_MAX_RANK];
} prism_onnx_value;

/// A tensor's data (an initializer, or a Constant node's / attribute's value), converted to float32
/// whatever its stored type (float, double, float16, int8…int64, bool), raw_data or typed fields alike.
typedef struct {
    const char *name;
    int32_t elem_type;
    int32_t rank;
    int64_t dims[PRISM_ONNX_MAX_RANK];
    int64_t count;
    const float *data;
} prism_onnx_tensor;

/// A node attribute: `type` is ONNX's AttributeProto.AttributeType (1 FLOAT, 2 INT, 3 STRING, 4 TENSOR,
/// 6 FLOATS, 7 INTS, 8 STRINGS; others are reported with their type and no value).
typedef struct {
    const char *name;
    int32_t type;
    float f;
    int64_t i;
    const char *s;
    int32_t count;            // FLOATS / INTS / STRINGS: how many
    const float *floats;
    const int64_t *ints;
    const char *const *strings;
    int32_t tensor;           // TENSOR: index into prism_onnx_graph.tensors, else -1
} prism_onnx_attribute;

/// A node: inputs and outputs are value names (an omitted optional input is "").
typedef struct {
    const char *name;
    const char *op_type;
    const char *domain;
    int32_t input_count;
    const char *const *inputs;
    int32_t output_count;
    const char *const *outputs;
    int32_t attribute_count;
    const prism_onnx_attribute *attributes;
} prism_onnx_node;

typedef struct {
    /// Graph inputs that are not initializers (the image input, usually one).
    int32_t input_count;
    const prism_onnx_value *inputs;
    int32_t output_count;
    const prism_onnx_value *outputs;
    /// Every intermediate value shape inference typed (value_info after inference).
    int32_t value_count;
    const prism_onnx_value *values;
    int32_t node_count;
    const prism_onnx_node *nodes;
    /// Initializers first (`initializer_count` of them), then tensors held by attributes.
    int32_t tensor_count;
    int32_t initializer_count;
    const prism_onnx_tensor *tensors;
    int32_t metadata_count;
    const char *const *metadata_keys;
    const char *const *metadata_values;
    /// The default domain's opset ("" or "ai.onnx"), ir_version, producer_name.
    int64_t opset;
    int64_t ir_version;
    const char *producer;
    /// What the library could not check, on one line ("" when it checked everything): a file whose IR
    /// version or opset is newer than the library is checked as the newest it knows, and this says so.
    const char *notes;
} prism_onnx_graph;

typedef struct prism_onnx_model prism_onnx_model;

/// Parses a model file's bytes (the caller reads the file: a regular file, to a bound), refusing external
/// data, runs onnx::checker::check_model and shape inference. NULL with a one-line message in `error` when
/// the bytes are not ONNX, are truncated or fail the checker. A file newer than the library is checked as
/// the newest IR version it knows (never refused for the number alone; `notes` says what was not checked).
prism_onnx_model *prism_onnx_open_bytes(const void *bytes, size_t size, char *error, size_t error_size);
void prism_onnx_close(prism_onnx_model *model);
const prism_onnx_graph *prism_onnx_graph_of(const prism_onnx_model *model);

/// The ONNX library's version ("1.12.0"); a static string.
const char *prism_onnx_library_version(void);

#ifdef __cplusplus
}
#endif

#endif
