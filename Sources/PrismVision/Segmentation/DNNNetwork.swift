import CModelDNN
import Foundation
import PrismCore

/// An ONNX network run on the CPU by OpenCV DNN (`Sources/CModelDNN`): the segmentation side input's CPU back
/// end, and the independent reference the GPU lowering of `model(file=…)` is tested against. One owner at a
/// time: OpenCV's net keeps state between forwards.
package final class DNNNetwork {
    package let path: String
    private let net: OpaquePointer

    /// A tensor in NCHW order: `shape` is N, C, H, W.
    package struct Tensor: Sendable {
        package var values: [Float]
        package var shape: [Int]
        package var channels: Int { shape[1] }
        package var size: Size { Size(width: shape[3], height: shape[2]) }
        package init(values: [Float], shape: [Int]) {
            self.values = values
            self.shape = shape
        }
    }

    package struct Failure: PrismError, CustomStringConvertible {
        package let description: String
    }

    /// Reads `path` (a regular file, to `ModelFile`'s bound) and loads it.
    package init(path: String) throws {
        self.path = path
        let bytes = try ModelFile.read(path)
        var error = [CChar](repeating: 0, count: 1024)
        guard let net = bytes.withUnsafeBytes({ prism_dnn_open_bytes($0.baseAddress, $0.count, &error, error.count) }) else {
            throw Failure(description: "\(path): \(String(cMessage: error))")
        }
        self.net = net
    }

    deinit { prism_dnn_close(net) }

    /// Runs the network on `input` ([1, channels, height, width] floats) and returns the graph output named
    /// `output` (nil: OpenCV's last layer); `capacity` bounds the output's floats.
    package func forward(_ input: [Float], channels: Int, size: Size, output: String? = nil, capacity: Int) throws -> Tensor {
        precondition(input.count == channels * size.pixelCount, "input needs channels × pixels floats")
        var out = [Float](repeating: 0, count: capacity)
        var dims: [Int32] = [0, 0, 0, 0]
        var error = [CChar](repeating: 0, count: 1024)
        let status = prism_dnn_forward(net, input, Int32(channels), Int32(size.height), Int32(size.width), output, &out,
                                       out.count, &dims, &error, error.count)
        guard status == 0 else { throw Failure(description: "\(path): \(String(cMessage: error))") }
        let shape = dims.map(Int.init)
        let count = shape.reduce(1, *)
        guard count <= capacity else { throw Failure(description: "\(path): output \(shape) exceeds \(capacity) floats") }
        return Tensor(values: Array(out.prefix(count)), shape: shape)
    }

    /// Runs the network once on `input` and returns the outputs named `outputs` (ONNX output names), in that
    /// order; `capacity` bounds their floats together.
    package func forward(_ input: [Float], channels: Int, size: Size, outputs: [String], capacity: Int) throws -> [Tensor] {
        precondition(input.count == channels * size.pixelCount, "input needs channels × pixels floats")
        var out = [Float](repeating: 0, count: capacity)
        var dims = [Int32](repeating: 0, count: 4 * outputs.count)
        var error = [CChar](repeating: 0, count: 1024)
        let names = outputs.map { strdup($0) }
        defer { names.forEach { free($0) } }
        let status = names.map { UnsafePointer($0) }.withUnsafeBufferPointer { pointers in
            prism_dnn_forward_named(net, input, Int32(channels), Int32(size.height), Int32(size.width), pointers.baseAddress,
                                    Int32(outputs.count), &out, out.count, &dims, &error, error.count)
        }
        guard status == 0 else { throw Failure(description: "\(path): \(String(cMessage: error))") }
        var tensors: [Tensor] = [], offset = 0
        for index in outputs.indices {
            let shape = dims[(4 * index)..<(4 * index + 4)].map(Int.init)
            let count = shape.reduce(1, *)
            tensors.append(Tensor(values: Array(out[offset..<(offset + count)]), shape: shape))
            offset += count
        }
        return tensors
    }
}
