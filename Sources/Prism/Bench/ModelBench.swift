import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismVision

/// `prism bench --model NET.onnx[,…]`: ms per frame of each network as Prism's GPU passes (half and float
/// intermediates) against OpenCV DNN's CPU inference of the same file, at each size, in one run; and the GPU
/// memory its render targets take with and without liveness reuse. The GPU figure is the wall time of the
/// network's passes on an uploaded frame, ended by glFinish (nothing else in the frame: the pipeline bench,
/// `--filter 'model(file=…)'`, times the passes one by one inside the engine). The CPU figure is
/// `cv::dnn::Net::forward` on the same input tensor with OpenCV's default threads.
///
/// A size is the network's input: `native` is the model's declared size (640x480 for one without), any other
/// runs the model at that size (`size=frame`), which a model whose layers fix its size cannot do (said in the
/// row). Inputs besides the image get 1 (their values do not change the work).
struct ModelBench {
    var paths: [String]
    /// nil: the model's own size.
    var sizes: [Size?]
    var samples: Int
    var gpu: GPUOptions

    struct Row: Encodable {
        var network: String
        var width: Int
        var height: Int
        var native: Bool
        var half: Double?
        var float: Double?
        var dnn: Double?
        /// Bytes of the render targets for the half run: a texture per layer, and with liveness reuse.
        var targetBytesUnshared: Int?
        var targetBytes: Int?
        var floatTargetBytes: Int?
        /// The weight texture's bytes (RGBA32F).
        var weightBytes: Int?
        var note = ""

        init(network: String, size: Size, native: Bool) {
            self.network = network
            (width, height) = (size.width, size.height)
            self.native = native
        }

        var size: Size { Size(width: width, height: height) }

        enum CodingKeys: String, CodingKey {
            case network, width, height, native, half, float, dnn, note
            case targetBytesUnshared = "target_bytes_unshared", targetBytes = "target_bytes", floatTargetBytes = "float_target_bytes"
            case weightBytes = "weight_bytes"
        }
    }

    /// The upper median of `body`'s wall milliseconds over `samples` runs, after one untimed run (warm-up; on the
    /// GPU it also compiles).
    func medianMilliseconds(_ body: () throws -> Void) rethrows -> Double {
        var times: [Double] = []
        for index in 0...samples {
            let started = Date()
            try body()
            if index > 0 { times.append(Date().timeIntervalSince(started) * 1000) }
        }
        times.sort()
        return times.isEmpty ? .nan : times[times.count / 2]
    }

    /// A deterministic picture with edges and gradients (the figures do not depend on the content).
    static func picture(_ size: Size) -> [UInt8] {
        var rgba = [UInt8](repeating: 255, count: size.pixelCount * 4)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let i = (y * size.width + x) * 4
                rgba[i] = UInt8(x * 255 / max(size.width - 1, 1))
                rgba[i + 1] = UInt8(y * 255 / max(size.height - 1, 1))
                rgba[i + 2] = ((x / 16 + y / 16) % 2 == 0) ? 220 : 30
            }
        }
        return rgba
    }

    func run(log: (String) -> Void) throws -> [Row] {
        let context = try GPUContext(options: gpu)
        log("bench: \(context.info.renderer)\(context.info.isSoftware ? " (software renderer)" : ""); OpenCV DNN on the CPU, "
            + "\(ProcessInfo.processInfo.activeProcessorCount) cores")
        var rows: [Row] = []
        for path in paths {
            let name = (path as NSString).lastPathComponent
            let probe = try NetworkKernel(path: path, parameters: ParameterValues(specs: NetworkFilter.modelParameters, given: [:]))
            // Inputs besides the image (an exposure ratio): 1.
            let extras = probe.image.extra.map { "\($0.name)=1" }.joined(separator: ";")
            let cpu: DNNNetwork?
            var cpuNote = ""
            do { cpu = try DNNNetwork(path: path) } catch { cpu = nil; cpuNote = "OpenCV DNN cannot load it" }
            for wanted in sizes {
                let native = wanted == nil || wanted == probe.image.declared
                let size = wanted ?? probe.image.declared ?? Size(width: 640, height: 480)
                var row = Row(network: name, size: size, native: native)
                if wanted == nil && probe.image.declared == nil { row.note = "dynamic: measured at 640x480" }
                let spec = "model(file='\(path)'" + (native ? "" : ", size=frame") + (extras.isEmpty ? "" : ", inputs='\(extras)'")
                do {
                    for precision in ["half", "float"] {
                        log("bench: \(name) \(size) GPU \(precision)…")
                        let measured = try gpuMilliseconds(spec + ", precision=\(precision))", size: size, context: context)
                        if precision == "half" {
                            row.half = measured.ms
                            row.targetBytes = measured.bytes
                            row.targetBytesUnshared = measured.unsharedBytes
                            row.weightBytes = measured.weightBytes
                        } else {
                            row.float = measured.ms
                            row.floatTargetBytes = measured.bytes
                        }
                    }
                } catch {
                    row.note += (row.note.isEmpty ? "" : "; ") + "GPU: \(error)"
                }
                if let cpu {
                    log("bench: \(name) \(size) OpenCV DNN…")
                    row.dnn = dnnMilliseconds(cpu, channels: probe.program.inputChannels, size: size, note: &row.note)
                } else {
                    row.note += (row.note.isEmpty ? "" : "; ") + cpuNote
                }
                rows.append(row)
                // Each row as it is measured: a long run stopped early keeps what it measured.
                log("bench: " + Self.table([row]).split(separator: "\n")[1])
            }
        }
        return rows
    }

    func dnnMilliseconds(_ cpu: DNNNetwork, channels: Int, size: Size, note: inout String) -> Double? {
        let input = [Float](repeating: 0.5, count: channels * size.pixelCount)
        do {
            return try medianMilliseconds {
                _ = try cpu.forward(input, channels: channels, size: size, capacity: size.pixelCount * 64)
            }
        } catch {
            note += (note.isEmpty ? "" : "; ") + "OpenCV DNN: \(error)"
            return nil
        }
    }

    /// The median ms of the graph's passes on one frame, and the bytes of its render targets with liveness reuse
    /// and without (the weights' texture apart).
    func gpuMilliseconds(_ spec: String, size: Size, context: GPUContext) throws -> (ms: Double, bytes: Int, unsharedBytes: Int, weightBytes: Int) {
        let graph = try PrismGraphs.bind(spec)
        let rgba = Self.picture(size)
        return try context.perform {
            var unshared = CompileOptions()
            unshared.sharesTargets = false
            let unsharedBytes = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba], options: unshared).targetBytes
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
            let uploaded = try UploadedFrame.rgba(rgba, size: size)
            context.finish()
            let ms = try medianMilliseconds {
                try renderer.render(uploaded, context: FrameContext())
                context.finish()
            }
            let weights = (graph.nodes.first?.kernel as? NetworkKernel)?.program.weights.count ?? 0
            return (ms, renderer.targetBytes, unsharedBytes, ((weights + 2047) / 2048) * 2048 * 16)
        }
    }

    static func table(_ rows: [Row]) -> String {
        func ms(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "—" }
        func mib(_ v: Int?) -> String { v.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "—" }
        var lines = ["network                          size              GPU half ms  GPU float ms  OpenCV DNN ms  DNN / GPU half"
                     + "  targets MiB (half, one per layer → reused)"]
        for row in rows {
            let ratio = (row.half != nil && row.dnn != nil) ? String(format: "%.2f×", row.dnn! / row.half!) : "—"
            lines.append(row.network.padding(toLength: 32, withPad: " ", startingAt: 0) + " "
                         + ("\(row.size)" + (row.native ? " native" : "")).padding(toLength: 17, withPad: " ", startingAt: 0)
                         + BenchTable.pad(ms(row.half), 12, right: true) + BenchTable.pad(ms(row.float), 14, right: true) + BenchTable.pad(ms(row.dnn), 15, right: true)
                         + BenchTable.pad(ratio, 16, right: true) + "  \(mib(row.targetBytesUnshared)) → \(mib(row.targetBytes))"
                         + (row.note.isEmpty ? "" : "   (\(row.note))"))
        }
        lines.append("median of the samples; above 1× the GPU passes are faster than OpenCV DNN on this machine's CPU")
        return lines.joined(separator: "\n")
    }
}
