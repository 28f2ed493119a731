/// The bytes of a neural network file (ONNX), read as every other file a filter names is: a regular file
/// only (a FIFO, a device or `/dev/zero` is a one-line error, never a hang or an endless read), to a bound.
/// Both readers of models — ONNX's library and OpenCV DNN — parse these bytes, never the path.
package enum ModelFile {
    /// Protocol buffers cannot hold more than 2 GiB; the largest image models are a few hundred MB.
    package static let maximumBytes = 1 << 30

    package static func read(_ path: String) throws(RegularFile.Problem) -> [UInt8] {
        try RegularFile.read(path, what: "an ONNX model", maximumBytes: maximumBytes)
    }
}
