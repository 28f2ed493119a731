import PrismCore
import PrismGPU

/// Runs a graph once on an RGBA8 image: `prism render`, and the filter tests.
public enum StillRenderer {
    /// `rgba` is tightly packed, top row first. Returns the output the same way.
    public static func render(_ graph: FilterGraph, rgba: [UInt8], size: Size, on context: GPUContext,
                              options: CompileOptions = CompileOptions(),
                              frame: FrameContext = FrameContext()) throws -> (rgba: [UInt8], size: Size) {
        precondition(rgba.count == size.pixelCount * 4, "RGBA8 image of \(size) expected")
        return try context.perform {
            let uploader = FrameUploader(ringSize: 1)
            let uploaded = try rgba.withUnsafeBytes { bytes in
                try uploader.upload(CPUFramePlanes(format: .rgba, size: size,
                                                   colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full),
                                                   planes: [(bytes.baseAddress!, size.width * 4)]))
            }
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba],
                                             options: options)
            try renderer.render(uploaded, context: frame)
            let layout = renderer.sinkLayouts[0]
            var packed = [UInt8](repeating: 0, count: layout.byteCount)
            let readback = try FrameReadback<Int>(strategy: .sync, layout: layout)
            _ = try packed.withUnsafeMutableBytes { try readback.submit(renderer.sinkTarget(), into: $0.baseAddress!, tag: 0) }
            let out = renderer.outputSize
            var result = [UInt8](repeating: 0, count: out.pixelCount * 4)
            for row in 0..<out.height {
                let from = row * layout.rowBytes, to = row * out.width * 4
                result[to..<(to + out.width * 4)] = packed[from..<(from + out.width * 4)]
            }
            return (result, out)
        }
    }
}
