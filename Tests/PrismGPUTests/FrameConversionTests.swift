import XCTest
import CGLES
import PrismCore
@testable import PrismGPU

/// Upload → RGBA → readback for every input format, and RGBA → packed planes for every output format,
/// against CPU conversions written out here from the colour-space maths.
final class FrameConversionTests: XCTestCase {
    static let size = Size(width: 38, height: 22)   // odd chroma widths, padding in the packed rows

    func testEveryInputFormatConvertsToRGBAWithinTwoCodeValues() throws {
        let context = try GPUContext()
        let spaces = [YUVColorSpace(matrix: .bt709, range: .limited), YUVColorSpace(matrix: .bt601, range: .full)]
        for format in [PixelFormat.yuv420p, .nv12, .yuyv422, .rgba, .bgra, .yuv420p10le, .yuv422p, .yuv444p,
                       .yuv422p10le, .gray] {
            for space in (format.isYUV ? spaces : [spaces[0]]) {
                let planes = TestPlanes.make(format: format, size: Self.size, seed: 7)
                let expected = CPUConversion.rgba(from: planes, format: format, size: Self.size, colorSpace: space)
                let actual = try context.perform {
                    try GPUConversionHarness.convert(planes: planes, format: format, size: Self.size, colorSpace: space,
                                                     to: .rgba)
                }
                let layout = PackedFrameLayout(format: .rgba, size: Self.size)!
                let error = maxError(actual, expected, layout: layout, channels: 4)
                XCTAssertLessThanOrEqual(error, 2, "\(format) \(space.matrix) \(space.range): max error \(error)")
            }
        }
    }

    func testPackingRGBAIntoEncoderLayoutsWithinTwoCodeValues() throws {
        let context = try GPUContext()
        let rgba = TestPlanes.make(format: .rgba, size: Self.size, seed: 3)
        let space = YUVColorSpace(matrix: .bt709, range: .limited)
        for format in [PixelFormat.yuv420p, .nv12, .yuv422p10le, .yuv420p10le, .yuv444p, .bgra, .rgba, .gray] {
            let layout = try XCTUnwrap(PackedFrameLayout(format: format, size: Self.size))
            let actual = try context.perform {
                try GPUConversionHarness.convert(planes: rgba, format: .rgba, size: Self.size, colorSpace: space,
                                                 to: format)
            }
            let expected = CPUConversion.pack(rgba: rgba[0], size: Self.size, layout: layout, colorSpace: space)
            let wide = format.bitDepth > 8
            let error = maxSampleError(actual, expected, layout: layout, wide: wide)
            XCTAssertLessThanOrEqual(error, wide ? 5 : 2, "\(format): max error \(error)")
        }
    }

    func testBatchedPackingEqualsPerPixelPacking() throws {
        let context = try GPUContext()
        let space = YUVColorSpace(matrix: .bt709, range: .limited)
        for input in [PixelFormat.yuv420p, .nv12, .yuyv422, .yuv444p, .rgba, .gray] {
            for output in [PixelFormat.nv12, .yuv420p, .yuv422p, .yuv444p, .gray] {
                for size in [Self.size, Size(width: 40, height: 24)] {
                    let planes = TestPlanes.make(format: input, size: size, seed: 5)
                    let generic = try context.perform {
                        try GPUConversionHarness.convert(planes: planes, format: input, size: size, colorSpace: space, to: output)
                    }
                    let batched = try context.perform {
                        try GPUConversionHarness.convert(planes: planes, format: input, size: size, colorSpace: space,
                                                         to: output, batched: true)
                    }
                    XCTAssertEqual(generic, batched, "\(input) → \(output) at \(size)")
                }
            }
        }
    }

    func testIdentityPassKeepsYUVPlanes() throws {
        // Sample-and-hold up, box down: chroma comes back unchanged, luma within rounding.
        let context = try GPUContext()
        let space = YUVColorSpace(matrix: .bt709, range: .limited)
        let size = Size(width: 40, height: 24)
        // Keep the test signal inside the RGB cube so that clamping plays no part.
        var planes = TestPlanes.make(format: .yuv420p, size: size, seed: 9)
        for i in planes[0].indices { planes[0][i] = 100 + planes[0][i] / 4 }
        for p in 1...2 { for i in planes[p].indices { planes[p][i] = 118 + planes[p][i] / 12 } }
        for output in [PixelFormat.yuv420p, .nv12] {
            let packed = try context.perform {
                try GPUConversionHarness.convert(planes: planes, format: .yuv420p, size: size, colorSpace: space,
                                                 to: output, batched: true)
            }
            let layout = PackedFrameLayout(format: output, size: size)!
            var worstLuma = 0, worstChroma = 0
            for y in 0..<size.height { for x in 0..<size.width {
                worstLuma = max(worstLuma, abs(Int(packed[y * layout.rowBytes + x]) - Int(planes[0][y * size.width + x])))
            } }
            for cy in 0..<(size.height / 2) { for cx in 0..<(size.width / 2) {
                let u = Int(planes[1][cy * size.width / 2 + cx]), v = Int(planes[2][cy * size.width / 2 + cx])
                let (pu, pv): (Int, Int)
                if output == .nv12 {
                    let i = layout.planes[1].offset + cy * layout.rowBytes + cx * 2
                    (pu, pv) = (Int(packed[i]), Int(packed[i + 1]))
                } else {
                    (pu, pv) = (Int(packed[layout.planes[1].offset + cy * layout.rowBytes + cx]),
                                Int(packed[layout.planes[2].offset + cy * layout.rowBytes + cx]))
                }
                worstChroma = max(worstChroma, abs(pu - u), abs(pv - v))
            } }
            XCTAssertLessThanOrEqual(worstLuma, 1, "\(output) luma")
            XCTAssertLessThanOrEqual(worstChroma, 1, "\(output) chroma")
        }
    }

    func testPixelBufferObjectRingMatchesSynchronousReadback() throws {
        let context = try GPUContext()
        let planes = TestPlanes.make(format: .yuv420p, size: Self.size, seed: 11)
        let space = YUVColorSpace(matrix: .bt709, range: .limited)
        let sync = try context.perform {
            try GPUConversionHarness.convert(planes: planes, format: .yuv420p, size: Self.size, colorSpace: space,
                                             to: .nv12, readback: .sync)
        }
        let pbo = try context.perform {
            try GPUConversionHarness.convert(planes: planes, format: .yuv420p, size: Self.size, colorSpace: space,
                                             to: .nv12, readback: .pbo)
        }
        XCTAssertEqual(sync, pbo)
        XCTAssertTrue(sync.contains { $0 != 0 })
    }

    private func maxError(_ a: [UInt8], _ b: [UInt8], layout: PackedFrameLayout, channels: Int) -> Int {
        var worst = 0
        let plane = layout.planes[0]
        for y in 0..<plane.rows {
            for x in 0..<plane.usedRowBytes {
                let i = plane.offset + y * plane.rowBytes + x
                worst = max(worst, abs(Int(a[i]) - Int(b[i])))
            }
        }
        return worst
    }

    private func maxSampleError(_ a: [UInt8], _ b: [UInt8], layout: PackedFrameLayout, wide: Bool) -> Int {
        var worst = 0
        for plane in layout.planes {
            for y in 0..<plane.rows {
                var x = 0
                while x < plane.usedRowBytes {
                    let i = plane.offset + y * plane.rowBytes + x
                    let va = wide ? Int(a[i]) | Int(a[i + 1]) << 8 : Int(a[i])
                    let vb = wide ? Int(b[i]) | Int(b[i + 1]) << 8 : Int(b[i])
                    worst = max(worst, abs(va - vb))
                    x += wide ? 2 : 1
                }
            }
        }
        return worst
    }
}

extension FrameConversionTests {
    /// An RGBA still (`UploadedFrame.rgba`, a model's input beside the frame path) owns its texture while it is
    /// held, reuses it for a still of the same size, and leaves nothing behind once dropped.
    func testAnRGBAStillOwnsItsTextureAndReusesItForTheSameSize() throws {
        let context = try GPUContext()
        let (textures, reused, resized) = try context.perform { () throws -> ([Int], Bool, Bool) in
            let size = Size(width: 5, height: 3), pixels = [UInt8](repeating: 200, count: 60)
            var textures = [context.liveObjects.textures]
            var first: UploadedFrame? = try UploadedFrame.rgba(pixels, size: size)
            textures.append(context.liveObjects.textures)
            var again: UploadedFrame? = try UploadedFrame.rgba(pixels, size: size, reusing: first)
            var taller: UploadedFrame? = try UploadedFrame.rgba(pixels + pixels, size: Size(width: 5, height: 6), reusing: first)
            textures.append(context.liveObjects.textures)
            let (reused, resized) = (again === first, taller !== first)
            (first, again, taller) = (nil, nil, nil)
            textures.append(context.liveObjects.textures)
            return (textures, reused, resized)
        }
        XCTAssertTrue(reused, "the same size is uploaded into the same texture")
        XCTAssertTrue(resized, "another size gets a texture of its own")
        XCTAssertEqual(textures.map { $0 - textures[0] }, [0, 1, 2, 0], "one texture per size held, none once dropped")
    }
}

/// Runs one pass: upload planes, `prism_pixel = prism_source`, pack into `output`, read back.
enum GPUConversionHarness {
    static func convert(planes: [[UInt8]], format: PixelFormat, size: Size, colorSpace: YUVColorSpace,
                        to output: PixelFormat, readback: ReadbackStrategy = .sync, batched: Bool = false) throws -> [UInt8] {
        let state = DrawState()
        defer { withExtendedLifetime(state) {} }
        let uploader = FrameUploader(ringSize: 1)
        let layout = PackedFrameLayout(format: output, size: size)!
        let frame = try planes.withPlanePointers(format: format, size: size) { pointers in
            try uploader.upload(CPUFramePlanes(format: format, size: size, colorSpace: colorSpace, planes: pointers))
        }
        let shared = FrameShaders.header + FrameShaders.sourceFunctions(for: format)
            + FrameShaders.sourceAccessor(batched: batched && FrameShaders.canBatch(output))
            + "vec4 prism_pixel(vec2 p) { return prism_source(p); }\n"
        let plan = FrameShaders.packMain(layout: layout, batched: batched)
        let target = try RenderTarget(size: plan.targetSize, attachments: plan.attachments)
        target.readPlan = plan.readPlan
        target.bindForDrawing()
        for draw in plan.draws {
            let program = try ShaderProgram(label: "convert", fragment: shared + draw.main)
            glViewport(0, GLint(draw.rows.lowerBound), GLsizei(target.size.width), GLsizei(draw.rows.count))
            program.use()
            frame.bind(to: program)
            FrameShaders.setPackUniforms(program, layout: layout, colorSpace: colorSpace)
            program.drawFullscreen()
        }
        var result = [UInt8](repeating: 0, count: layout.byteCount)
        let reader = try FrameReadback<Int>(strategy: readback, layout: layout)
        var done: [Int] = []
        try result.withUnsafeMutableBytes { bytes in
            done += try reader.submit(target, into: bytes.baseAddress!, tag: 1)
            done += try reader.drain()
        }
        precondition(done == [1])
        return result
    }
}

extension Array where Element == [UInt8] {
    func withPlanePointers<R>(format: PixelFormat, size: Size,
                              _ body: ([(base: UnsafeRawPointer, rowBytes: Int)]) throws -> R) rethrows -> R {
        let layouts = format.planes
        func recurse(_ index: Int, _ acc: [(base: UnsafeRawPointer, rowBytes: Int)]) throws -> R {
            if index == count { return try body(acc) }
            return try self[index].withUnsafeBytes { bytes in
                try recurse(index + 1, acc + [(bytes.baseAddress!, layouts[index].minimumRowBytes(for: size.width))])
            }
        }
        return try recurse(0, [])
    }
}
