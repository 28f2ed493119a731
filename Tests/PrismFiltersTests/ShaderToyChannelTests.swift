import Foundation
import Synchronization
import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// ShaderToy parity: what iChannel0…3 read (the input, the previous frame, an image, a buffer pass) and
/// the uniforms ShaderToy shaders expect, rendered on the GPU (llvmpipe) over several frames and checked
/// against CPU references. The shaders are in `ISFCorpus/shadertoy/`.
final class ShaderToyChannelTests: XCTestCase {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("ISFCorpus/shadertoy").path

    func file(_ name: String) -> String { Self.corpus + "/" + name }

    /// The 2×2 image the tests' loader hands over for any file: red, green / blue, white (top row first),
    /// as `quad.png` beside the shaders holds (the tool reads it with libavcodec; see ImportedImageTests).
    static let quad: [UInt8] = [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255]

    /// The paths the loader was asked for.
    final class Asked: Sendable {
        let paths = Mutex<[String]>([])
    }

    func binder(asked: Asked? = nil) -> GraphBinder {
        GraphBinder(imageLoader: { path in
            asked?.paths.withLock { $0.append(path) }
            return (Size(width: 2, height: 2), Self.quad)
        })
    }

    /// Three different frames (the same size), so an output that ignored a frame would show it.
    let frames: [TestImage] = [TestImage.varied(width: 96, height: 60), TestImage.noise(width: 96, height: 60, seed: 7),
                               TestImage.noise(width: 96, height: 60, seed: 11)]

    /// out = previous × 0.5 + input × 0.5 over three frames: 0.125·I0 + 0.25·I1 + 0.5·I2 (the first
    /// frame's previous is transparent black), alpha 0.875.
    func feedbackReference() -> TestImage {
        TestImage.from(size: frames[0].size) { x, y in
            var sum = SIMD4<Double>(repeating: 0)
            for image in self.frames { sum = sum * 0.5 + image.pixel(x, y) * 0.5 }
            return sum
        }
    }

    func testPreviousFrameFromTheFileAccumulatesOverFrames() throws {
        let graph = try binder().bind("'\(file("feedback.frag"))'")
        assertClose(try renderFrames(graph, frames), feedbackReference(), tolerance: 1, "iChannel1=previous (file)")
        // One frame: half the input, nothing left over from an earlier renderer.
        let once = TestImage.from(size: frames[0].size) { x, y in self.frames[0].pixel(x, y) * 0.5 }
        assertClose(try renderFrames(graph, [frames[0]]), once, tolerance: 1, "first frame: previous is transparent black")
    }

    func testPreviousFrameFromTheGraph() throws {
        // Without the binding, iChannel1 is empty: the output is half of the last input.
        let plain = try binder().bind("'\(file("mix.frag"))'")
        let half = TestImage.from(size: frames[0].size) { x, y in self.frames[2].pixel(x, y) * 0.5 }
        assertClose(try renderFrames(plain, frames), half, tolerance: 1, "iChannel1 unbound")
        let bound = try binder().bind("'\(file("mix.frag"))'(iChannel1=previous)")
        assertClose(try renderFrames(bound, frames), feedbackReference(), tolerance: 1, "iChannel1=previous (graph)")
    }

    func testAnotherGraphStreamOnAChannel() throws {
        // iChannel1 = the graph's second stream into the shader, the inverted input: half of each is grey.
        let graph = try binder().bind("[in]invert[b]; [in][b]'\(file("mix.frag"))'(iChannel1=input2)")
        XCTAssertEqual(graph.nodes.last?.kernel.inputCount, 2)
        let grey = TestImage.from(size: frames[0].size) { _, _ in SIMD4(0.5, 0.5, 0.5, 1) }
        assertClose(try renderFrames(graph, [frames[0]]), grey, tolerance: 1, "input2")
        // Not connected by the graph: transparent black, as an unconnected ISF image.
        let alone = try binder().bind("'\(file("mix.frag"))'(iChannel1=input2)")
        let half = TestImage.from(size: frames[0].size) { x, y in self.frames[0].pixel(x, y) * 0.5 }
        assertClose(try renderFrames(alone, [frames[0]]), half, tolerance: 1, "input2 unconnected")
    }

    func testBufferPassReadsItsOwnPreviousFrameAndFeedsTheImage() throws {
        // Buffer A: A = A' + I/4 each frame; the image: A/2 as it is this frame.
        let graph = try binder().bind("'\(file("buffered.frag"))'")
        let expected = TestImage.from(size: frames[0].size) { x, y in
            var buffer = SIMD4<Double>(repeating: 0)
            for image in self.frames { buffer += image.pixel(x, y) * 0.25 }
            return buffer * 0.5
        }
        assertClose(try renderFrames(graph, frames), expected, tolerance: 1, "buffer pass")
        // The same buffer named in the graph, on a shader without channel lines: iChannel1 = A, iChannel0 = input.
        let named = try binder().bind("'\(file("mix.frag"))'(iChannel1=buffer:\(file("bufA.frag")))")
        let expected2 = TestImage.from(size: frames[0].size) { x, y in
            var buffer = SIMD4<Double>(repeating: 0)
            for image in self.frames { buffer += image.pixel(x, y) * 0.25 }
            return buffer * 0.5 + self.frames[2].pixel(x, y) * 0.5
        }
        assertClose(try renderFrames(named, frames), expected2, tolerance: 1, "buffer named in the graph")
        // A buffer's own @param uniform keeps its default.
        let level = try binder().bind("'\(file("mix.frag"))'(iChannel1=buffer:\(file("level.frag")))")
        let expected3 = TestImage.from(size: frames[0].size) { x, y in SIMD4(repeating: 0.25) + self.frames[0].pixel(x, y) * 0.5 }
        assertClose(try renderFrames(level, [frames[0]]), expected3, tolerance: 1, "a buffer's parameter at its default")
    }

    func testBufferNamingItselfIsItsPreviousFrameAndFilesAreWatched() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shadertoy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try """
        // @iChannel0 buffer:trail.frag
        // @iChannel1 input
        void mainImage(out vec4 c, in vec2 p) { c = 0.5 * texture(iChannel0, p / iResolution.xy) + 0.5 * texture(iChannel1, p / iResolution.xy); }
        """.write(toFile: directory + "/trail.frag", atomically: true, encoding: .utf8)
        try """
        // @iChannel3 buffer:trail.frag
        void mainImage(out vec4 c, in vec2 p) { c = texture(iChannel3, p / iResolution.xy); }
        """.write(toFile: directory + "/show.frag", atomically: true, encoding: .utf8)
        let graph = try binder().bind("'\(directory)/show.frag'")
        assertClose(try renderFrames(graph, frames), feedbackReference(), tolerance: 1, "a buffer reading itself")
        let shader = try UserShader.load(path: directory + "/show.frag")
        XCTAssertEqual(shader.watchedFiles, [directory + "/show.frag", directory + "/trail.frag"])
        XCTAssertEqual(try UserShader.load(path: file("texture.frag")).watchedFiles, [file("texture.frag"), file("quad.png")])
    }

    func testImageChannelIsUprightRepeatingAndSized() throws {
        let asked = Asked()
        let graph = try binder(asked: asked).bind("'\(file("texture.frag"))'")
        let out = try renderFrames(graph, [frames[0]])
        XCTAssertEqual(asked.paths.withLock { $0 }, [file("quad.png")], "the image is read once, relative to the shader")
        let w = out.size.width, h = out.size.height
        let colors: [SIMD4<Double>] = [SIMD4(1, 0, 0, 0.2), SIMD4(0, 1, 0, 0.2), SIMD4(0, 0, 1, 0.2), SIMD4(1, 1, 1, 0.2)]
        let expected = TestImage.from(size: out.size) { x, y in colors[(y < h / 2 ? 0 : 2) + (x < w / 2 ? 0 : 1)] }
        assertClose(out, expected, tolerance: 1, "quadrants of the image, one period over (repeat), iChannelResolution 2")
    }

    /// A 64×64 one-pixel checkerboard drawn into 8×8 pixels: mipmapped (ShaderToy's default) every pixel is
    /// its average, 0.5; sampled from level 0 alone, the offset fetches would mix neighbours 3:1 (0.25 or 0.75).
    func testImageChannelIsMipmapped() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shadertoy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data().write(to: URL(fileURLWithPath: directory + "/checker.png"))
        try """
        // @iChannel1 checker.png
        void mainImage(out vec4 c, in vec2 p) { c = vec4(texture(iChannel1, p / iResolution.xy + 0.25 / 64.0).rgb, 1.0); }
        """.write(toFile: directory + "/small.frag", atomically: true, encoding: .utf8)
        var checker: [UInt8] = []
        for y in 0..<64 { for x in 0..<64 { checker += (x + y) % 2 == 0 ? [255, 255, 255, 255] : [0, 0, 0, 255] } }
        let loaded = checker
        let graph = try GraphBinder(imageLoader: { _ in (Size(width: 64, height: 64), loaded) }).bind("'\(directory)/small.frag'")
        let input = TestImage.from(size: Size(width: 8, height: 8)) { _, _ in SIMD4(0, 0, 0, 1) }
        let expected = TestImage.from(size: input.size) { _, _ in SIMD4(0.5, 0.5, 0.5, 1) }
        assertClose(try renderFrames(graph, [input]), expected, tolerance: 2, "minified through the mip chain")
    }

    func testUniformValues() throws {
        let graph = try binder().bind("'\(file("uniforms.frag"))'")
        let size = frames[0].size
        let before = Date()
        let out = try renderFrames(graph, frames, context: { index in
            var context = FrameContext(time: Double(index) * 0.04, timeDelta: 0.04, frameIndex: index)
            context.frameRate = 24  // not 1 / timeDelta (25): the run's rate wins
            context.mouse = SIMD4(30, 20, 12, -8)
            return context
        })
        let calendar = Calendar(identifier: .gregorian)
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: before)
        let seconds = Double(c.hour! * 3600 + c.minute! * 60 + c.second!)
        let bands: [SIMD4<Double>] = [
            SIMD4(0.096, 0.060, 0.096, 0.5),                                           // input 96×60, previous at the output size, none → 0
            SIMD4(0.24, 0.2, Double(c.month! - 1) / 12, Double(c.day!) / 31),          // iFrameRate 24, iFrame 2, month from 0, day
            SIMD4(0.30, 0.20, 0.12, 0.08),                                             // iMouse as given
            SIMD4(Double(c.year! - 2000) / 100, seconds / 86400, 0.4, 0.008),          // year, seconds, iTimeDelta, iChannelTime[0]
        ]
        let expected = TestImage.from(size: size) { x, _ in bands[x * 4 / size.width] }
        assertClose(out, expected, tolerance: 1, "uniforms")
    }

    func testMouseParameterHoldsThePointerForRuns() throws {
        let graph = try binder().bind("'\(file("uniforms.frag"))'(iMouse=40:10)")
        let out = try renderFrames(graph, [frames[0]])
        let pixel = out.pixel(out.size.width * 5 / 8, 0)
        XCTAssertEqual(pixel.x, 0.40, accuracy: 0.005)
        XCTAssertEqual(pixel.y, 0.10, accuracy: 0.005)
        XCTAssertEqual(pixel.z, 0.40, accuracy: 0.005, "z > 0: held down")
        XCTAssertEqual(pixel.w, 0.10, accuracy: 0.005, "w < 0: not a new click")
        // Without it (and without a page), iMouse is 0.
        let none = try renderFrames(try binder().bind("'\(file("uniforms.frag"))'"), [frames[0]]).pixel(out.size.width * 5 / 8, 0)
        XCTAssertEqual(none, SIMD4(0, 0, 0, 0))
    }

    // MARK: Errors

    func bindError(_ text: String) -> String {
        do {
            _ = try binder().bind(text)
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    func testBindingErrorsNameTheProblem() throws {
        let mix = file("mix.frag")
        var message = bindError("'\(mix)'(iChannel1=sparkle)")
        XCTAssertTrue(message.contains("iChannel1") && message.contains("unknown channel 'sparkle'"), message)
        message = bindError("'\(mix)'(iChannel2=missing.png)")
        XCTAssertTrue(message.contains("iChannel2") && message.contains("no image file missing.png"), message)
        message = bindError("'\(mix)'(iChannel3=buffer:nowhere.frag)")
        XCTAssertTrue(message.contains("iChannel3") && message.contains("no buffer shader nowhere.frag"), message)
        message = bindError("'\(mix)'(iChannel4=previous)")
        XCTAssertTrue(message.contains("no parameter 'iChannel4'"), message)
        message = bindError("'\(mix)'(iChannel1=buffer:\(file("../two-images.fs")))")
        XCTAssertTrue(message.contains("must be a ShaderToy shader"), message)
        XCTAssertFalse(message.contains("\n"), message)

        // A buffer that does not compile: the error is in the buffer's own file and line.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shadertoy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "void mainImage(out vec4 c, in vec2 p) {\n    c = vec4(1.0) +* 2.0;\n}\n".write(toFile: directory + "/broken.frag", atomically: true, encoding: .utf8)
        let broken = try binder().bind("'\(mix)'(iChannel1=buffer:\(directory)/broken.frag)")
        XCTAssertThrowsError(try renderFrames(broken, [frames[0]])) { error in
            XCTAssertTrue("\(error)".hasPrefix(directory + "/broken.frag:2"), "\(error)")
        }

        // In the file: a bad channel number or kind, at its line.
        XCTAssertThrowsError(try UserShader.load(source: "// @iChannel5 none\nvoid mainImage(out vec4 c, in vec2 p) { c = vec4(1.0); }",
                                                 path: "/t/x.frag")) { error in
            XCTAssertEqual("\(error)", "/t/x.frag:1:4: 'iChannel5' is not a channel: ShaderToy has iChannel0…iChannel3")
        }
        XCTAssertThrowsError(try UserShader.load(source: "void mainImage(out vec4 c, in vec2 p) { c = vec4(1.0); }\n// @iChannel1 wobble",
                                                 path: "/t/x.frag")) { error in
            XCTAssertTrue("\(error)".hasPrefix("/t/x.frag:2:4: iChannel1: unknown channel 'wobble'"), "\(error)")
        }
    }

    func testChannelWordsParseInTheGraph() throws {
        let ast = try GraphParser.parse("'x.frag'(iChannel1=buffer:bufA.frag, iChannel2=../img/a.png, iChannel3=./b.jpg)")
        let element = try XCTUnwrap(ast.elements.first?.1)
        XCTAssertEqual(element.argument("iChannel1")?.value.textValue, "buffer:bufA.frag")
        XCTAssertEqual(element.argument("iChannel2")?.value.textValue, "../img/a.png")
        XCTAssertEqual(element.argument("iChannel3")?.value.textValue, "./b.jpg")
        XCTAssertEqual(try ShaderToyChannel.parse("buffer:bufA.frag", relativeTo: "/s/img.frag"), .buffer("/s/bufA.frag"))
        XCTAssertEqual(try ShaderToyChannel.parse("../a.png", relativeTo: "/s/t/img.frag"), .image("/s/a.png"))
        XCTAssertEqual(try ShaderToyChannel.parse("image:/x/noise"), .image("/x/noise"))
    }

    func testSummaryDescribesChannels() throws {
        let summary = try UserShader.load(path: file("buffered.frag")).summary
        XCTAssertTrue(summary.contains("ShaderToy shader"), summary)
        XCTAssertTrue(summary.contains("iChannel0: buffer:\(file("bufA.frag"))"), summary)
        XCTAssertTrue(summary.contains("iChannel1: none"), summary)
        XCTAssertTrue(summary.contains("reads iChannel0"), summary)
    }
}
