import CONNX
import Foundation
import PrismCore

/// A problem with a neural network file: which file, which node (when one is to blame) and why, on one line.
package struct NetworkError: PrismError {
    package let file: String
    package let node: String?
    package let reason: String
    package init(file: String, node: String? = nil, _ reason: String) {
        self.file = file
        self.node = node
        self.reason = reason
    }
    package var description: String {
        "\(file): " + (node.map { "node '\($0)': " } ?? "") + reason
    }
}

/// An ONNX model as plain Swift data: read by ONNX's own library (`CONNX`: protobuf schema, checker and shape
/// inference), copied out once; nothing here refers back to the C++ objects.
package struct NetworkGraph: Sendable {
    package struct Value: Sendable {
        package let name: String
        /// ONNX's TensorProto.DataType (1: float).
        package let elementType: Int
        /// Dimensions, -1 where symbolic or unknown; nil when the rank is unknown.
        package let dims: [Int]?
    }

    package struct Tensor: Sendable {
        package let name: String
        /// ONNX's TensorProto.DataType of the stored values (1 float, 7 int64, 9 bool, …).
        package let elementType: Int
        package let dims: [Int]
        /// The values as float32, row-major.
        package let values: [Float]
        package var count: Int { values.count }
    }

    package enum Attribute: Sendable {
        case float(Float), int(Int), string(String), floats([Float]), ints([Int]), strings([String]), tensor(Tensor)
        case other(type: Int)
    }

    package struct Node: Sendable {
        package let name: String
        package let op: String
        package let domain: String
        /// Value names ("" for an omitted optional input).
        package let inputs: [String]
        package let outputs: [String]
        package let attributes: [String: Attribute]

        package func int(_ name: String) -> Int? {
            if case .int(let v)? = attributes[name] { return v }
            return nil
        }
        package func float(_ name: String) -> Float? {
            switch attributes[name] {
            case .float(let v)?: return v
            case .int(let v)?: return Float(v)
            default: return nil
            }
        }
        package func ints(_ name: String) -> [Int]? {
            if case .ints(let v)? = attributes[name] { return v }
            return nil
        }
        package func floats(_ name: String) -> [Float]? {
            if case .floats(let v)? = attributes[name] { return v }
            return nil
        }
        package func string(_ name: String) -> String? {
            if case .string(let v)? = attributes[name] { return v }
            return nil
        }
    }

    package let path: String
    package let inputs: [Value]
    package let outputs: [Value]
    /// Shapes shape inference found for intermediate values, by name.
    package let values: [String: Value]
    package let nodes: [Node]
    /// Initializers by name.
    package let initializers: [String: Tensor]
    package let metadata: [String: String]
    package let opset: Int
    package let irVersion: Int
    package let producer: String
    /// What ONNX's library could not check in a file newer than itself ("" when it checked everything).
    package let notes: String
    /// The weights, wherever the file keeps them: float initializers and float Constant nodes (exporters
    /// write either), not the integer shapes and indices.
    package var weightCount: Int {
        let stored = initializers.values.filter { !NetworkFolding.integerTypes.contains($0.elementType) }.reduce(0) { $0 + $1.count }
        let constants = nodes.filter { $0.op == "Constant" }.reduce(0) { sum, node in
            if case .tensor(let t)? = node.attributes["value"], !NetworkFolding.integerTypes.contains(t.elementType) { return sum + t.count }
            return sum
        }
        return stored + constants
    }

    /// Reads, checks and shape-infers `path` (a regular file, to `ModelFile`'s bound; ONNX's checker: a
    /// truncated file, a foreign file or an invalid graph fails here, naming the file).
    package static func load(path: String) throws -> NetworkGraph {
        let bytes: [UInt8]
        do { bytes = try ModelFile.read(path) } catch { throw NetworkError(file: path, error.message) }
        var error = [CChar](repeating: 0, count: 1024)
        guard let model = bytes.withUnsafeBytes({ prism_onnx_open_bytes($0.baseAddress, $0.count, &error, error.count) }) else {
            throw NetworkError(file: path, String(cMessage: error))
        }
        defer { prism_onnx_close(model) }
        let g = prism_onnx_graph_of(model)!.pointee

        func string(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
        func strings(_ p: UnsafePointer<UnsafePointer<CChar>?>?, _ n: Int32) -> [String] {
            (0..<Int(n)).map { string(p![$0]) }
        }
        func dims<T>(_ tuple: T, rank: Int32) -> [Int] {
            withUnsafeBytes(of: tuple) { raw in (0..<Int(max(rank, 0))).map { Int(raw.load(fromByteOffset: $0 * 8, as: Int64.self)) } }
        }
        func value(_ v: prism_onnx_value) -> Value {
            Value(name: string(v.name), elementType: Int(v.elem_type), dims: v.rank < 0 ? nil : dims(v.dims, rank: v.rank))
        }
        func values(_ p: UnsafePointer<prism_onnx_value>?, _ n: Int32) -> [Value] { (0..<Int(n)).map { value(p![$0]) } }
        let tensors: [Tensor] = (0..<Int(g.tensor_count)).map { i in
            let t = g.tensors[i]
            return Tensor(name: string(t.name), elementType: Int(t.elem_type), dims: dims(t.dims, rank: t.rank),
                          values: Array(UnsafeBufferPointer(start: t.data, count: Int(t.count))))
        }
        let nodes: [Node] = (0..<Int(g.node_count)).map { n in
            let node = g.nodes[n]
            var attributes: [String: Attribute] = [:]
            for a in 0..<Int(node.attribute_count) {
                let attr = node.attributes[a]
                let value: Attribute
                switch attr.type {
                case 1: value = .float(attr.f)
                case 2: value = .int(Int(attr.i))
                case 3: value = .string(string(attr.s))
                case 4: value = attr.tensor >= 0 ? .tensor(tensors[Int(attr.tensor)]) : .other(type: 4)
                case 6: value = .floats(Array(UnsafeBufferPointer(start: attr.floats, count: Int(attr.count))))
                case 7: value = .ints(UnsafeBufferPointer(start: attr.ints, count: Int(attr.count)).map { Int($0) })
                case 8: value = .strings(strings(attr.strings, attr.count))
                default: value = .other(type: Int(attr.type))
                }
                attributes[string(attr.name)] = value
            }
            return Node(name: string(node.name), op: string(node.op_type), domain: string(node.domain),
                        inputs: strings(node.inputs, node.input_count), outputs: strings(node.outputs, node.output_count),
                        attributes: attributes)
        }
        var initializers: [String: Tensor] = [:]
        for t in tensors.prefix(Int(g.initializer_count)) { initializers[t.name] = t }
        var metadata: [String: String] = [:]
        for i in 0..<Int(g.metadata_count) { metadata[string(g.metadata_keys[i])] = string(g.metadata_values[i]) }
        var inferred: [String: Value] = [:]
        for v in values(g.values, g.value_count) { inferred[v.name] = v }
        return NetworkGraph(path: path, inputs: values(g.inputs, g.input_count), outputs: values(g.outputs, g.output_count),
                            values: inferred, nodes: nodes, initializers: initializers, metadata: metadata,
                            opset: Int(g.opset), irVersion: Int(g.ir_version), producer: string(g.producer), notes: string(g.notes))
    }
}
