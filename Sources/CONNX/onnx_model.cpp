// See include/CONNX.h. Everything the graph exposes is copied into vectors this object owns, so the C view
// is plain arrays of pointers into them.
#include "CONNX.h"

#include <onnx/checker.h>
#include <onnx/common/version.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <deque>
#include <exception>
#include <string>
#include <vector>

namespace {

void write_error(char *error, size_t size, const std::string &message) {
    if (!error || size == 0) return;
    // One line: the checker's messages span several.
    std::string line = message;
    for (char &c : line) if (c == '\n' || c == '\r') c = ' ';
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::snprintf(error, size, "%s", line.c_str());
}

float half_to_float(uint16_t h) {
    uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits;
    if (exponent == 0) {
        if (mantissa == 0) bits = sign;
        else {  // subnormal: normalise
            exponent = 127 - 15 + 1;
            while (!(mantissa & 0x400)) { mantissa <<= 1; exponent--; }
            bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
        }
    } else if (exponent == 31) bits = sign | 0x7f800000u | (mantissa << 13);
    else bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

/// Sizes that ONNX's own shape inference divides by or multiplies with: a crafted 0 or a huge value makes it
/// divide by zero or overflow (SIGFPE inside the library), so they are checked before it runs.
void check_size_attributes(const onnx::GraphProto &graph) {
    static const char *positive[] = {"strides", "dilations", "kernel_shape", "blocksize", "group"};
    for (const auto &node : graph.node()) {
        for (const auto &a : node.attribute()) {
            bool must_be_positive = false;
            for (const char *name : positive) if (a.name() == name) must_be_positive = true;
            bool unbounded = a.name() == "starts" || a.name() == "ends";
            auto check = [&](int64_t v) {
                if ((must_be_positive && v < 1) || (!unbounded && (v > (int64_t(1) << 24) || v < -(int64_t(1) << 24))))
                    throw std::runtime_error("node '" + node.name() + "' (" + node.op_type() + "): attribute " + a.name() + " = " +
                                             std::to_string(v) + " is out of range");
            };
            if (a.type() == onnx::AttributeProto::INT) check(a.i());
            if (a.type() == onnx::AttributeProto::INTS) for (int64_t v : a.ints()) check(v);
            if (a.has_g()) check_size_attributes(a.g());
        }
    }
}

}  // namespace

struct prism_onnx_model {
    onnx::ModelProto proto;
    prism_onnx_graph graph{};
    /// What could not be checked (a file newer than the library), for the caller to say; "" when all was.
    std::string notes;
    // Storage the C view points into. Deques keep element addresses stable as they grow.
    std::deque<std::string> strings;
    std::deque<std::vector<float>> float_arrays;
    std::deque<std::vector<int64_t>> int_arrays;
    std::deque<std::vector<const char *>> name_arrays;
    std::vector<prism_onnx_value> inputs, outputs, values;
    std::vector<prism_onnx_tensor> tensors;
    std::deque<std::vector<prism_onnx_attribute>> attribute_arrays;
    std::vector<prism_onnx_node> nodes;
    std::vector<const char *> metadata_keys, metadata_values;

    const char *keep(const std::string &s) {
        strings.push_back(s);
        return strings.back().c_str();
    }

    prism_onnx_value value_of(const onnx::ValueInfoProto &info) {
        prism_onnx_value v{};
        v.name = keep(info.name());
        v.rank = -1;
        if (info.type().has_tensor_type()) {
            const auto &t = info.type().tensor_type();
            v.elem_type = t.elem_type();
            if (t.has_shape()) {
                if (t.shape().dim_size() > PRISM_ONNX_MAX_RANK) throw std::runtime_error("value '" + info.name() + "' has more than 8 dimensions");
                v.rank = t.shape().dim_size();
                for (int d = 0; d < v.rank; d++) {
                    const auto &dim = t.shape().dim(d);
                    v.dims[d] = dim.has_dim_value() ? dim.dim_value() : -1;
                }
            }
        }
        return v;
    }

    int32_t add_tensor(const onnx::TensorProto &t, const std::string &fallback_name) {
        if (t.data_location() == onnx::TensorProto::EXTERNAL)
            throw std::runtime_error("tensor '" + t.name() + "' keeps its data in an external file (not supported; save the model with the weights inside)");
        if (t.dims_size() > PRISM_ONNX_MAX_RANK) throw std::runtime_error("tensor '" + t.name() + "' has more than 8 dimensions");
        prism_onnx_tensor out{};
        out.name = keep(t.name().empty() ? fallback_name : t.name());
        out.elem_type = t.data_type();
        out.rank = t.dims_size();
        int64_t count = 1;
        for (int d = 0; d < out.rank; d++) {
            out.dims[d] = t.dims(d);
            if (t.dims(d) < 0) throw std::runtime_error("tensor '" + t.name() + "' has a negative dimension");
            count *= t.dims(d);
        }
        std::vector<float> data;
        data.reserve(count);
        const std::string &raw = t.raw_data();
        auto from_raw = [&](auto sample) {
            using T = decltype(sample);
            if (raw.size() != size_t(count) * sizeof(T)) throw std::runtime_error("tensor '" + t.name() + "' holds " + std::to_string(raw.size()) + " bytes for " + std::to_string(count) + " elements");
            for (int64_t k = 0; k < count; k++) {
                T v;
                std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));
                data.push_back(float(v));
            }
        };
        using TP = onnx::TensorProto;
        bool has_raw = t.has_raw_data();
        switch (t.data_type()) {
        case TP::FLOAT:
            if (has_raw) from_raw(float());
            else for (float v : t.float_data()) data.push_back(v);
            break;
        case TP::DOUBLE:
            if (has_raw) from_raw(double());
            else for (double v : t.double_data()) data.push_back(float(v));
            break;
        case TP::FLOAT16:
            if (has_raw) {
                if (raw.size() != size_t(count) * 2) throw std::runtime_error("tensor '" + t.name() + "' has the wrong raw size");
                for (int64_t k = 0; k < count; k++) {
                    uint16_t h;
                    std::memcpy(&h, raw.data() + k * 2, 2);
                    data.push_back(half_to_float(h));
                }
            } else for (int32_t v : t.int32_data()) data.push_back(half_to_float(uint16_t(v)));
            break;
        case TP::INT64:
            if (has_raw) from_raw(int64_t());
            else for (int64_t v : t.int64_data()) data.push_back(float(v));
            break;
        case TP::INT32: case TP::INT16: case TP::INT8: case TP::UINT8: case TP::UINT16: case TP::BOOL:
            if (has_raw) {
                switch (t.data_type()) {
                case TP::INT32: from_raw(int32_t()); break;
                case TP::INT16: from_raw(int16_t()); break;
                case TP::INT8: from_raw(int8_t()); break;
                case TP::UINT16: from_raw(uint16_t()); break;
                default: from_raw(uint8_t()); break;
                }
            } else for (int32_t v : t.int32_data()) data.push_back(float(v));
            break;
        default:
            throw std::runtime_error("tensor '" + t.name() + "' has data type " + std::to_string(t.data_type()) + ", which Prism does not read");
        }
        if (int64_t(data.size()) != count) throw std::runtime_error("tensor '" + t.name() + "' holds " + std::to_string(data.size()) + " values for " + std::to_string(count) + " elements");
        out.count = count;
        float_arrays.push_back(std::move(data));
        out.data = float_arrays.back().data();
        tensors.push_back(out);
        return int32_t(tensors.size() - 1);
    }

    void build() {
        const auto &g = proto.graph();
        for (const auto &t : g.initializer()) add_tensor(t, t.name());
        graph.initializer_count = int32_t(tensors.size());
        std::vector<std::string> initializer_names;
        for (const auto &t : g.initializer()) initializer_names.push_back(t.name());
        for (const auto &in : g.input()) {
            bool is_initializer = false;
            for (const auto &n : initializer_names) if (n == in.name()) is_initializer = true;
            if (!is_initializer) inputs.push_back(value_of(in));
        }
        for (const auto &out : g.output()) outputs.push_back(value_of(out));
        for (const auto &info : g.value_info()) values.push_back(value_of(info));
        for (int n = 0; n < g.node_size(); n++) {
            const auto &node = g.node(n);
            prism_onnx_node c{};
            std::string label = node.name().empty() ? node.op_type() + "#" + std::to_string(n) : node.name();
            c.name = keep(label);
            c.op_type = keep(node.op_type());
            c.domain = keep(node.domain());
            std::vector<const char *> ins, outs;
            for (const auto &i : node.input()) ins.push_back(keep(i));
            for (const auto &o : node.output()) outs.push_back(keep(o));
            name_arrays.push_back(std::move(ins));
            c.inputs = name_arrays.back().data();
            c.input_count = int32_t(name_arrays.back().size());
            name_arrays.push_back(std::move(outs));
            c.outputs = name_arrays.back().data();
            c.output_count = int32_t(name_arrays.back().size());
            std::vector<prism_onnx_attribute> attributes;
            for (const auto &a : node.attribute()) {
                prism_onnx_attribute attr{};
                attr.name = keep(a.name());
                attr.type = a.type();
                attr.tensor = -1;
                attr.f = a.f();
                attr.i = a.i();
                attr.s = keep(a.s());
                if (a.floats_size()) {
                    float_arrays.emplace_back(a.floats().begin(), a.floats().end());
                    attr.floats = float_arrays.back().data();
                    attr.count = a.floats_size();
                }
                if (a.ints_size()) {
                    int_arrays.emplace_back(a.ints().begin(), a.ints().end());
                    attr.ints = int_arrays.back().data();
                    attr.count = a.ints_size();
                }
                if (a.strings_size()) {
                    std::vector<const char *> names;
                    for (const auto &s : a.strings()) names.push_back(keep(s));
                    name_arrays.push_back(std::move(names));
                    attr.strings = name_arrays.back().data();
                    attr.count = a.strings_size();
                }
                if (a.has_t()) attr.tensor = add_tensor(a.t(), label + "." + a.name());
                attributes.push_back(attr);
            }
            attribute_arrays.push_back(std::move(attributes));
            c.attributes = attribute_arrays.back().data();
            c.attribute_count = int32_t(attribute_arrays.back().size());
            nodes.push_back(c);
        }
        for (const auto &p : proto.metadata_props()) {
            metadata_keys.push_back(keep(p.key()));
            metadata_values.push_back(keep(p.value()));
        }
        graph.opset = -1;
        for (const auto &o : proto.opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx") graph.opset = o.version();
        graph.ir_version = proto.ir_version();
        graph.producer = keep(proto.producer_name());
        graph.input_count = int32_t(inputs.size());
        graph.inputs = inputs.data();
        graph.output_count = int32_t(outputs.size());
        graph.outputs = outputs.data();
        graph.value_count = int32_t(values.size());
        graph.values = values.data();
        graph.node_count = int32_t(nodes.size());
        graph.nodes = nodes.data();
        graph.tensor_count = int32_t(tensors.size());
        graph.tensors = tensors.data();
        graph.metadata_count = int32_t(metadata_keys.size());
        graph.metadata_keys = metadata_keys.data();
        graph.metadata_values = metadata_values.data();
    }
};

extern "C" prism_onnx_model *prism_onnx_open_bytes(const void *bytes, size_t size, char *error, size_t error_size) {
    auto *model = new prism_onnx_model();
    try {
        if (bytes == nullptr || size == 0) {
            write_error(error, error_size, "the file is empty");
            delete model;
            return nullptr;
        }
        // A truncated or foreign file fails to parse, or parses into a model with no graph (protobuf reads
        // many byte strings as a few unknown fields).
        if (size > size_t(INT32_MAX) || !model->proto.ParseFromArray(bytes, int(size)) || !model->proto.has_graph() ||
            model->proto.graph().node_size() == 0) {
            write_error(error, error_size, "not an ONNX model (it does not parse as one, or is truncated)");
            delete model;
            return nullptr;
        }
        // A file newer than this library: its checker refuses the IR version number alone, although the
        // structures it checks are unchanged. Check the graph as the newest IR this library knows, and say so.
        const int64_t known_ir = onnx::IR_VERSION;
        const int64_t ir = model->proto.ir_version();
        if (ir > known_ir) {
            onnx::ModelProto checked = model->proto;
            checked.set_ir_version(known_ir);
            onnx::checker::check_model(checked);
            model->notes = "IR version " + std::to_string(ir) + " is newer than this ONNX library (" +
                           onnx::LAST_RELEASE_VERSION + ", IR " + std::to_string(known_ir) +
                           "): the graph was checked as IR " + std::to_string(known_ir) +
                           "; what later IR versions added (new data types, functions' attributes) is not checked";
        } else {
            onnx::checker::check_model(model->proto);
        }
        check_size_attributes(model->proto.graph());
        const int opset_known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().LastReleaseVersionMap().at(onnx::ONNX_DOMAIN);
        for (const auto &o : model->proto.opset_import())
            if ((o.domain().empty() || o.domain() == "ai.onnx") && o.version() > opset_known)
                model->notes += std::string(model->notes.empty() ? "" : "; ") + "opset " + std::to_string(o.version()) +
                                " is newer than this ONNX library's " + std::to_string(opset_known) +
                                ": each operator was checked against its newest schema the library has";
        onnx::ShapeInferenceOptions options(/*check_type*/ true, /*strict*/ 1, /*data propagation*/ true);
        onnx::shape_inference::InferShapes(model->proto, onnx::OpSchemaRegistry::Instance(), options);
        model->build();
        model->graph.notes = model->notes.c_str();
        return model;
    } catch (const std::exception &e) {
        write_error(error, error_size, e.what());
    } catch (...) {
        write_error(error, error_size, "unknown error reading the model");
    }
    delete model;
    return nullptr;
}

extern "C" void prism_onnx_close(prism_onnx_model *model) { delete model; }

extern "C" const prism_onnx_graph *prism_onnx_graph_of(const prism_onnx_model *model) { return &model->graph; }

extern "C" const char *prism_onnx_library_version(void) { return onnx::LAST_RELEASE_VERSION; }
