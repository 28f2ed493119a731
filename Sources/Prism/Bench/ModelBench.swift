import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismVision

/// `prism bench --model NET.onnx[,…]`: ms per frame of each network as Prism's GPU passes (half and float
/// intermediates) against OpenCV DNN's CPU inference of the same file, at each size, in one run. The GPU figure
/// is the wall time of the network's passes on an uploaded frame, ended by glFinish (nothing else in the
/// frame: the pipeline bench, `--filter 'model(file=…)'`, times the passes one by one inside the engine).
/// The CPU figure is `cv::dnn::Net::forward` on the same input tensor with OpenCV's default threads.
struct ModelBench {
    var paths: [String]
    var sizes: [Size]
    var samples: Int
    var gpu: GPUOptions

    struct Row {
        var network: String
        var size: Size
        var half: Double?
        var float: Double?
        var dnn: Double?
        var note = ""
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
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
            let cpu: DNNNetwork?
            var cpuNote = ""
            do { cpu = try DNNNetwork(path: path) } catch { cpu = nil; cpuNote = "OpenCV DNN cannot load it" }
            for size in sizes {
                var row = Row(network: name, size: size)
                let modelSize = probe.program.fixedInputSize ?? size
                if probe.program.fixedInputSize != nil { row.note = "fixed \(modelSize) input: the frame is resized to it" }
                for precision in ["half", "float"] {
                    log("bench: \(name) \(size) GPU \(precision)…")
                    let ms = try gpuMilliseconds(path: path, precision: precision, size: size, context: context)
                    if precision == "half" { row.half = ms } else { row.float = ms }
                }
                if let cpu {
                    log("bench: \(name) \(modelSize) OpenCV DNN…")
                    let channels = probe.program.inputChannels
                    let input = [Float](repeating: 0.5, count: channels * modelSize.pixelCount)
                    let capacity = input.count / channels * 4 * 16
                    do {
                        var times: [Double] = []
                        for index in 0...samples {   // the first is warm-up
                            let started = Date()
                            _ = try cpu.forward(input, channels: channels, size: modelSize, capacity: capacity)
                            if index > 0 { times.append(Date().timeIntervalSince(started) * 1000) }
                        }
                        row.dnn = Self.median(times)
                    } catch {
                        row.note += (row.note.isEmpty ? "" : "; ") + "OpenCV DNN: \(error)"
                    }
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

    func gpuMilliseconds(path: String, precision: String, size: Size, context: GPUContext) throws -> Double {
        let graph = try PrismGraphs.bind("model(file='\(path)', precision=\(precision))")
        let rgba = Self.picture(size)
        return try context.perform {
            let uploader = FrameUploader(ringSize: 1)
            let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: size, sinks: [.rgba])
            let uploaded = try rgba.withUnsafeBytes { bytes in
                try uploader.upload(CPUFramePlanes(format: .rgba, size: size, colorSpace: YUVColorSpace(matrix: .defaultFor(size), range: .full),
                                                   planes: [(bytes.baseAddress!, size.width * 4)]))
            }
            context.finish()
            var times: [Double] = []
            for index in 0...samples {   // the first compiles and warms up
                let started = Date()
                try renderer.render(uploaded, context: FrameContext())
                context.finish()
                if index > 0 { times.append(Date().timeIntervalSince(started) * 1000) }
            }
            return Self.median(times)
        }
    }

    static func table(_ rows: [Row]) -> String {
        func ms(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "—" }
        var lines = ["network                          size          GPU half ms  GPU float ms  OpenCV DNN ms  DNN / GPU half"]
        for row in rows {
            let ratio = (row.half != nil && row.dnn != nil) ? String(format: "%.2f×", row.dnn! / row.half!) : "—"
            lines.append(row.network.padding(toLength: 32, withPad: " ", startingAt: 0) + " "
                         + "\(row.size)".padding(toLength: 13, withPad: " ", startingAt: 0)
                         + ms(row.half).leftPadded(12) + ms(row.float).leftPadded(14) + ms(row.dnn).leftPadded(15)
                         + ratio.leftPadded(16) + (row.note.isEmpty ? "" : "   (\(row.note))"))
        }
        lines.append("median of the samples; above 1× the GPU passes are faster than OpenCV DNN on this machine's CPU")
        return lines.joined(separator: "\n")
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
