import XCTest
import Foundation
import CGLES
import PrismCore
import PrismGPU
import PrismFilters
import PrismMedia

final class ScratchPerf: XCTestCase {
    func testPerf() throws {
        guard ProcessInfo.processInfo.environment["PRISM_SCRATCH"] != nil else { return }
        let context = try GPUContext()
        let size = Size(width: 1280, height: 720)
        let pattern = try TestPatternSource(size: size, frameRate: Rational(30, 1), frameCount: 10)
        let frame = pattern.nextFrame()!
        for (label, text, sink, fuse, maxCost) in [
            ("pack only yuv420p", "", PixelFormat.yuv420p, true, 8),
            ("pack only nv12", "", PixelFormat.nv12, true, 8),
            ("invert fused nv12", "invert", PixelFormat.nv12, true, 8),
            ("invert materialized nv12", "invert", PixelFormat.nv12, true, 0),
            ("invert materialized yuv420p", "invert", PixelFormat.yuv420p, true, 0),
            ("rgba out", "invert", PixelFormat.rgba, true, 8),
            ("invert,mono,pixellate fused nv12", "invert, mono, pixellate(16)", PixelFormat.nv12, true, 8),
            ("invert,mono,pixellate unfused nv12", "invert, mono, pixellate(16)", PixelFormat.nv12, false, 8),
        ] {
            let graph = try GraphBinder().bind(text)
            try context.perform {
                let uploader = FrameUploader()
                let renderer = try GraphRenderer(graph: graph, sourceFormat: .yuv420p, sourceSize: size, sinks: [sink],
                                                 options: CompileOptions(fuse: fuse, maxPackCost: maxCost))
                let layout = renderer.sinkLayouts[0]
                var buffer = [UInt8](repeating: 0, count: layout.byteCount)
                let readback = try FrameReadback<Int>(strategy: .sync, layout: layout)
                var up = 0.0, render = 0.0, read = 0.0
                let n = 20
                for i in 0..<(n + 3) {
                    var t = DispatchTime.now().uptimeNanoseconds
                    let uploaded = try uploader.upload(CPUFramePlanes(format: frame.format, size: frame.size, colorSpace: frame.colorSpace, planes: frame.planes))
                    glFinish()
                    let t1 = DispatchTime.now().uptimeNanoseconds
                    try renderer.render(uploaded, context: FrameContext())
                    glFinish()
                    let t2 = DispatchTime.now().uptimeNanoseconds
                    _ = try buffer.withUnsafeMutableBytes { try readback.submit(renderer.sinkTarget(), into: $0.baseAddress!, tag: 0) }
                    let t3 = DispatchTime.now().uptimeNanoseconds
                    if i >= 3 { up += Double(t1 - t); render += Double(t2 - t1); read += Double(t3 - t2) }
                    t = 0
                }
                print(String(format: "PERF %-40@ passes %d  upload %.2f  render %.2f  readback %.2f ms  => %.0f fps", label as NSString, renderer.passCount,
                             up / Double(n) / 1e6, render / Double(n) / 1e6, read / Double(n) / 1e6, 1e9 * Double(n) / (up + render + read)))
            }
        }
    }
}
