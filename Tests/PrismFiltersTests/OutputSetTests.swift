import XCTest
import PrismCore
@testable import PrismGPU
@testable import PrismFilters

/// One graph, several outputs: every route (Y'CbCr, R'G'B' fused, R'G'B' unfused, an RGBA input) with one,
/// two and three sinks of different formats, plain graphs and masked ones (a look before a face filter is
/// the README's record-and-stream case), on a frame with no face and on a frame with one. Each sink must
/// hold the graph's picture in its own format: an RGBA sink the reference pixels, a Y'CbCr sink the
/// reference packed on the CPU (luma per pixel, chroma from each 2×2 block's mean R'G'B').
///
/// The reference is computed without the machinery under test: the graph unfused on the R'G'B' route into
/// one RGBA sink, and on the frame without a face the graph's background alone (the look without the face
/// filter), so no masked-output program is involved in it.
final class OutputSetTests: XCTestCase {
    static let size = Size(width: 160, height: 96)
    static let space = YUVColorSpace(matrix: .bt709, range: .limited)
    static let face = FrameContext.Region(center: SIMD2(0.45, 0.5), radius: 0.12)

    /// Graphs as written on the command line, with the background a frame without a face shows.
    static let graphs: [(text: String, background: String)] = [
        ("invert, mono", "invert, mono"),
        ("noir", "noir"),
        ("chrome", "chrome"),
        ("face-pixellate", ""),
        ("invert, face-pixellate", "invert"),
        ("face-blur", ""),
        ("noir, face-pixellate", "noir"),
        ("chrome, face-pixellate", "chrome"),
        ("transfer, face-blur", "transfer"),
    ]

    /// The routes a graph can take: the default (Y'CbCr where the graph allows it), R'G'B' fused, R'G'B'
    /// one pass per filter, and an RGBA input (never Y'CbCr).
    static let routes: [(label: String, source: PixelFormat, options: CompileOptions)] = [
        ("default", .yuv420p, CompileOptions()),
        ("rgb-route", .yuv420p, CompileOptions(yuvRoute: false)),
        ("unfused", .yuv420p, CompileOptions(fuse: false, yuvRoute: false)),
        ("rgba input", .rgba, CompileOptions()),
    ]

    static let sinkSets: [[PixelFormat]] = [[.yuv420p], [.nv12, .rgba], [.yuv420p, .rgba, .nv12]]

    func testEverySinkOfEveryRouteHoldsTheGraphsPicture() throws {
        let binder = GraphBinder()
        let input = Self.input()
        var failures: [String] = []
        for (text, background) in Self.graphs {
            for withFace in [false, true] {
                let context = FrameContext(regions: withFace ? [Self.face] : [])
                for route in Self.routes {
                    // The reference: unfused R'G'B', one RGBA sink; without a face, the background graph alone.
                    let referenceGraph = try binder.bind(withFace || background == text ? text : background)
                    let reference: [UInt8]
                    do {
                        reference = try render(referenceGraph, input, source: route.source, sinks: [.rgba], context: context,
                                               options: CompileOptions(fuse: false, yuvRoute: false))[0]
                    } catch {
                        failures.append("\(text) (\(withFace ? "a face" : "no face"), \(route.label)): the reference: \(error)")
                        continue
                    }
                    for sinks in Self.sinkSets {
                        let label = "\(text) (\(withFace ? "a face" : "no face"), \(route.label), sinks \(sinks.map(\.rawValue)))"
                        let outputs: [[UInt8]]
                        do {
                            outputs = try render(try binder.bind(text), input, source: route.source, sinks: sinks,
                                                 context: context, options: route.options)
                        } catch {
                            failures.append("\(label): \(error)")
                            continue
                        }
                        for (format, output) in zip(sinks, outputs) {
                            // An RGBA input is packed in the Y'CbCr its size calls for; a Y'CbCr input in its own.
                            let packing = YUVColorSpace.packing(sourceFormat: route.source, sourceColorSpace: Self.space,
                                                                outputSize: Self.size)
                            if let problem = Self.compare(output, format: format, reference: reference, space: packing) {
                                failures.append("\(label), \(format.rawValue) sink: \(problem)")
                            }
                        }
                    }
                }
            }
        }
        XCTAssertEqual(failures, [], "\(failures.count) sink(s) wrong:\n" + failures.prefix(20).joined(separator: "\n"))
    }

    // MARK: Helpers

    /// A smooth picture inside the gamut with edges and detail where the face is, as Y'CbCr planes and RGBA.
    struct Input {
        var y: [UInt8], cb: [UInt8], cr: [UInt8], rgba: [UInt8]
    }

    static func input() -> Input {
        let w = size.width, h = size.height
        func rgb(_ x: Int, _ y: Int) -> SIMD3<Double> {
            let fx = Double(x) / Double(w), fy = Double(y) / Double(h)
            let stripe = (x / 6 + y / 9) % 2 == 0 ? 0.15 : 0
            return SIMD3(0.2 + 0.6 * fx + stripe, 0.25 + 0.5 * fy, 0.7 - 0.4 * fx + stripe / 2)
        }
        var input = Input(y: [], cb: [], cr: [], rgba: [])
        for y in 0..<h { for x in 0..<w {
            let c = rgb(x, y)
            input.y.append(UInt8((space.yuv(fromRGB: c.x, c.y, c.z).y * 255).rounded()))
            input.rgba += [c.x, c.y, c.z].map { UInt8(($0 * 255).rounded()) } + [255]
        } }
        for y in stride(from: 0, to: h, by: 2) { for x in stride(from: 0, to: w, by: 2) {
            let c = (rgb(x, y) + rgb(x + 1, y) + rgb(x, y + 1) + rgb(x + 1, y + 1)) / 4
            let v = space.yuv(fromRGB: c.x, c.y, c.z)
            input.cb.append(UInt8((v.cb * 255).rounded()))
            input.cr.append(UInt8((v.cr * 255).rounded()))
        } }
        return input
    }

    /// Each sink's packed bytes, planes concatenated without padding (Y, then Cb and Cr or CbCr; RGBA rows).
    func render(_ graph: FilterGraph, _ input: Input, source: PixelFormat, sinks: [PixelFormat], context: FrameContext,
                options: CompileOptions) throws -> [[UInt8]] {
        let size = Self.size, w = size.width
        var planes = source == .rgba ? [input.rgba] : [input.y, input.cb, input.cr]
        let rowBytes = source == .rgba ? [w * 4] : [w, w / 2, w / 2]
        return try SharedGPU.get().perform {
            let renderer = try GraphRenderer(graph: graph, sourceFormat: source, sourceSize: size, sinks: sinks, options: options)
            let uploader = FrameUploader(ringSize: 1)
            let frame = try YUVRouteTests.withPointers(&planes, rowBytes: rowBytes) {
                try uploader.upload(CPUFramePlanes(format: source, size: size, colorSpace: Self.space, planes: $0))
            }
            // Twice: a frame drawn after another (the masked programs switch per frame).
            try renderer.render(frame, context: FrameContext(regions: context.regions.isEmpty ? [Self.face] : []))
            try renderer.render(frame, context: context)
            return try sinks.indices.map { index in
                let layout = renderer.sinkLayouts[index]
                var packed = [UInt8](repeating: 0, count: layout.byteCount)
                let readback = try FrameReadback<Int>(strategy: .sync, layout: layout)
                _ = try packed.withUnsafeMutableBytes { try readback.submit(renderer.sinkTarget(index), into: $0.baseAddress!, tag: 0) }
                return layout.planes.enumerated().flatMap { p, info -> [UInt8] in
                    let width = layout.format.planes[p].minimumRowBytes(for: w), rows = layout.format.planes[p].height(for: size.height)
                    return (0..<rows).flatMap { row in packed[(info.offset + row * info.rowBytes)..<(info.offset + row * info.rowBytes + width)] }
                }
            }
        }
    }

    /// nil when `output` (a sink of `format`) holds `reference` (RGBA): at most 4 codes off anywhere, and
    /// 1.5 on average (fused and unfused chains round at different steps; blurs differ by route).
    static func compare(_ output: [UInt8], format: PixelFormat, reference: [UInt8], space: YUVColorSpace) -> String? {
        let w = size.width, h = size.height
        func at(_ x: Int, _ y: Int) -> SIMD3<Double> {
            let i = (y * w + x) * 4
            return SIMD3(Double(reference[i]), Double(reference[i + 1]), Double(reference[i + 2])) / 255
        }
        var expected: [UInt8] = []
        switch format {
        case .rgba:
            expected = reference
        case .yuv420p, .nv12:
            for y in 0..<h { for x in 0..<w { let c = at(x, y); expected.append(code(space.yuv(fromRGB: c.x, c.y, c.z).y)) } }
            var cb: [UInt8] = [], cr: [UInt8] = []
            for y in stride(from: 0, to: h, by: 2) { for x in stride(from: 0, to: w, by: 2) {
                let c = (at(x, y) + at(x + 1, y) + at(x, y + 1) + at(x + 1, y + 1)) / 4
                let v = space.yuv(fromRGB: c.x, c.y, c.z)
                cb.append(code(v.cb))
                cr.append(code(v.cr))
            } }
            expected += format == .nv12 ? zip(cb, cr).flatMap { [$0, $1] } : cb + cr
        default:
            return "no reference for \(format.rawValue)"
        }
        guard output.count == expected.count else { return "\(output.count) bytes, expected \(expected.count)" }
        let errors = zip(output, expected).map { abs(Int($0) - Int($1)) }
        let worst = errors.max() ?? 0, mean = Double(errors.reduce(0, +)) / Double(errors.count)
        return worst <= 4 && mean <= 1.5 ? nil : "max error \(worst), mean \(String(format: "%.2f", mean))"
    }

    static func code(_ v: Double) -> UInt8 { UInt8(min(max((v * 255).rounded(), 0), 255)) }
}
