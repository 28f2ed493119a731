import CGLES
import Foundation
import XCTest
import PrismKit
import PrismVision
import TestFixtures

/// Every frame of a run, to its end.
func collect(_ sequence: FrameSequence) async throws -> [Frame] { try await sequence.reduce(into: []) { $0.append($1) } }

/// `Session`, PrismKit's one-call API, on llvmpipe: frames as an `AsyncSequence` of CPU memory, `write(to:)`,
/// the policies it carries (faces for a graph that draws them), and how a run ends when its consumer goes.
final class SessionTests: XCTestCase {
    static let patternSize = Size(width: 320, height: 180)

    func patternOptions(frames: Int?) -> Session.Options {
        var options = Session.Options()
        options.size = Self.patternSize
        options.frameRate = Rational(30, 1)
        options.frameLimit = frames
        return options
    }

    /// `invert` through a session against the same pattern frames unfiltered, inverted on the CPU.
    func testFramesArriveInOrderAndAreTheGraphsOutput() async throws {
        let plain = try await collect(try Session(input: .pattern, graph: "", options: patternOptions(frames: 8)).frames())
        let sequence = try Session(input: .pattern, graph: "invert", options: patternOptions(frames: 8)).frames()
        let inverted = try await collect(sequence)
        XCTAssertEqual(inverted.map(\.index), Array(0..<8))
        XCTAssertEqual(inverted.map(\.pts), plain.map(\.pts))
        XCTAssert(zip(inverted.dropFirst(), inverted).allSatisfy { $0.pts > $1.pts }, "pts increase")
        XCTAssertEqual(sequence.report?.framesOut, 8)
        for (filtered, source) in zip(inverted, plain) {
            XCTAssertEqual(filtered.size, Self.patternSize)
            var worst = 0
            filtered.withPlane(0) { out, rowBytes in
                source.withPlane(0) { input, _ in
                    for y in 0..<Self.patternSize.height {
                        for x in 0..<Self.patternSize.width {
                            for channel in 0..<3 {
                                let offset = y * rowBytes + x * 4 + channel
                                worst = max(worst, abs(Int(out[offset]) - (255 - Int(input[offset]))))
                            }
                        }
                    }
                }
            }
            XCTAssertLessThanOrEqual(worst, 1, "frame \(filtered.index): invert is 255 − v per channel")
        }
    }

    /// The loop may iterate a sequence it holds no reference to (the iteration keeps the run going).
    func testALoopOverATemporarySequenceSeesEveryFrame() async throws {
        var indices: [Int] = []
        for try await frame in try Session(input: .pattern, graph: "mono", options: patternOptions(frames: 6)).frames() {
            indices.append(frame.index)
        }
        XCTAssertEqual(indices, Array(0..<6))
    }

    /// `textures()`: each frame's output texture read with the program's own GL calls on the GPU thread is
    /// the CPU path's frame (the pattern inverted, checked on the CPU); a frame let go refuses its texture.
    func testTexturesAreTheGraphsOutputOnTheGPU() async throws {
        let plain = try await collect(try Session(input: .pattern, graph: "", options: patternOptions(frames: 4)).frames())
        var seen = 0
        var previous: GPUFrame?
        for try await frame in try Session(input: .pattern, graph: "invert", options: patternOptions(frames: 4)).textures() {
            XCTAssertEqual(frame.index, seen)
            XCTAssertEqual(frame.pts, plain[seen].pts)
            if let previous {
                do {
                    _ = try await previous.withTexture { $0.glName }
                    XCTFail("frame \(previous.index)'s texture was handed out after the next frame")
                } catch {
                    XCTAssert("\(error)".contains("texture is gone"), "\(error)")
                }
            }
            let size = frame.size
            XCTAssertEqual(size, Self.patternSize)
            let pixels = try await frame.withTexture { texture -> [UInt8] in
                var bound: GLint = 0
                glGetIntegerv(GLenum(GL_FRAMEBUFFER_BINDING), &bound)
                var framebuffer: GLuint = 0
                glGenFramebuffers(1, &framebuffer)
                glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffer)
                glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_TEXTURE_2D), texture.glName, 0)
                var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
                glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
                glReadPixels(0, 0, GLsizei(size.width), GLsizei(size.height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), &pixels)
                glBindFramebuffer(GLenum(GL_FRAMEBUFFER), GLuint(bound))
                glDeleteFramebuffers(1, &framebuffer)
                return pixels
            }
            var worst = 0
            plain[seen].withPlane(0) { input, rowBytes in
                for y in 0..<size.height { for x in 0..<size.width { for channel in 0..<3 {
                    let got = Int(pixels[(y * size.width + x) * 4 + channel])
                    worst = max(worst, abs(got - (255 - Int(input[y * rowBytes + x * 4 + channel]))))
                } } }
            }
            XCTAssertLessThanOrEqual(worst, 1, "frame \(seen): the texture holds the inverted pattern")
            previous = frame
            seen += 1
        }
        XCTAssertEqual(seen, 4)
    }

    /// Leaving the loop early stops an endless run (the pattern without a limit) within the buffered frames,
    /// and its report says why; `cancel()` does the same for a consumer that is not in a loop.
    func testLeavingTheLoopStopsTheRun() async throws {
        var options = patternOptions(frames: nil)
        options.patternSeconds = nil
        for viaCancel in [false, true] {
            let sequence = try Session(input: .pattern, graph: "mono", options: options).frames()
            if viaCancel {
                var iterator = sequence.makeAsyncIterator()
                for index in 0..<3 { let next = try await iterator.next(); XCTAssertEqual(next?.index, index) }
                sequence.cancel()
                let after = try await iterator.next()
                XCTAssertNil(after, "nothing after the consumer stopped")
            } else {
                var seen = 0
                for try await frame in sequence {
                    XCTAssertEqual(frame.index, seen)
                    seen += 1
                    if seen == 3 { break }
                }
            }
            let deadline = Date().addingTimeInterval(30)
            while sequence.report == nil, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
            let report = try XCTUnwrap(sequence.report, "the run ended (cancel: \(viaCancel))")
            XCTAssertEqual(report.stopReason, .outputClosed)
            // What was in flight when the consumer went (the channel, the sink queue, the GPU jobs, readback) still
            // counts; an endless run that did not stop would never report at all.
            XCTAssertLessThan(report.framesOut, 3 + 30, "the run stopped within the frames in flight")
        }
    }

    /// `face-pixellate` through a session finds faces by itself (the detector is a policy the session
    /// carries): the astronaut's face, found here on the CPU by OpenCV from the decoded photo, is blocky in the
    /// output, and the picture away from it is the input's.
    func testAFaceGraphFindsItsFaces() async throws {
        let photo = try TestFixtures.path("astronaut.png")
        let input = try await collect(try Session(input: .movie(photo), graph: "").frames())
        let output = try await collect(try Session(input: .movie(photo), graph: "face-pixellate(scale=16)").frames())
        XCTAssertEqual(output.count, 1)
        XCTAssertEqual(input.count, 1)
        let size = input[0].size
        var pixels = [UInt8](repeating: 0, count: size.width * size.height)
        input[0].withPlane(0) { rgba, rowBytes in
            for y in 0..<size.height {
                for x in 0..<size.width {
                    let o = y * rowBytes + x * 4
                    let weighted: Int = 299 * Int(rgba[o]) + 587 * Int(rgba[o + 1]) + 114 * Int(rgba[o + 2])
                    pixels[y * size.width + x] = UInt8(weighted / 1000)
                }
            }
        }
        let luma = LumaImage(size: size, pixels: pixels, frameSize: size)
        let face = try XCTUnwrap(try CascadeFaceDetector().detect(DetectionImage(luma)).max { $0.box.width < $1.box.width }?.box,
                                 "OpenCV finds the astronaut's face")
        /// Mean |difference| between horizontal neighbours in a box: pixellation leaves only block edges.
        func roughness(_ frame: Frame, x0: Int, y0: Int, x1: Int, y1: Int) -> Double {
            frame.withPlane(0) { rgba, rowBytes in
                var sum = 0, count = 0
                for y in y0..<y1 { for x in x0..<(x1 - 1) {
                    sum += abs(Int(rgba[y * rowBytes + x * 4]) - Int(rgba[y * rowBytes + (x + 1) * 4])); count += 1
                } }
                return Double(sum) / Double(count)
            }
        }
        let inner = (x0: Int(face.x + face.width * 0.3), y0: Int(face.y + face.height * 0.3),
                     x1: Int(face.x + face.width * 0.7), y1: Int(face.y + face.height * 0.7))
        let before = roughness(input[0], x0: inner.x0, y0: inner.y0, x1: inner.x1, y1: inner.y1)
        let after = roughness(output[0], x0: inner.x0, y0: inner.y0, x1: inner.x1, y1: inner.y1)
        XCTAssertLessThan(after, before * 0.5, "the face is pixellated (roughness \(before) → \(after))")
        // Away from the face (the bottom rows, well below it), the output is the input.
        let below = Int(face.y + face.height * 2)
        XCTAssertLessThan(below, size.height - 16)
        var worst = 0
        output[0].withPlane(0) { out, rowBytes in
            input[0].withPlane(0) { source, _ in
                for y in below..<size.height { for x in 0..<(size.width * 4) {
                    worst = max(worst, abs(Int(out[y * rowBytes + x]) - Int(source[y * rowBytes + x])))
                } }
            }
        }
        XCTAssertLessThanOrEqual(worst, 1, "below the face the picture is untouched")
    }

    /// `write(to:)` picks a photo for .png and a movie otherwise; a session runs once.
    func testWriteMakesAPhotoOrAMovieAndRunsOnce() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("prism-session-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let session = try Session(input: .pattern, graph: "mono", options: patternOptions(frames: 5))
        let report = try session.write(to: folder + "/out.mkv")
        XCTAssertEqual(report.framesOut, 5)
        let movie = try MediaInspector.inspect(folder + "/out.mkv")
        XCTAssertEqual(movie.videoFrameCount, 5)
        XCTAssertEqual(movie.size, Self.patternSize)
        XCTAssertThrowsError(try session.write(to: folder + "/again.mkv")) { error in
            XCTAssert("\(error)".contains("already run"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/again.mkv"))
        let photo = try Session(input: .pattern, graph: "invert", options: patternOptions(frames: nil)).write(to: folder + "/still.png")
        XCTAssertEqual(photo.framesOut, 1)
        XCTAssertEqual(try ImageFile.read(path: folder + "/still.png").size, Self.patternSize)
    }

    /// A bad graph or a missing input fails in `init`, before anything runs.
    func testBadInputFailsAtOnce() {
        XCTAssertThrowsError(try Session(input: .pattern, graph: "no-such-filter")) { error in
            XCTAssert("\(error)".contains("no-such-filter"), "\(error)")
        }
        XCTAssertThrowsError(try Session(input: .movie("/nonexistent/in.mp4"), graph: "invert")) { error in
            XCTAssert("\(error)".contains("/nonexistent/in.mp4"), "\(error)")
        }
    }
}
