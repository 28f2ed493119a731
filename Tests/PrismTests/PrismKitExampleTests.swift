import Foundation
import XCTest
import PrismCore
import PrismMedia

/// `Examples/PrismKitExample` is a separate package that depends on Prism's `PrismKit` library product,
/// as a user's program would: it must build against the public API and do what it says.
final class PrismKitExampleTests: XCTestCase {
    /// Builds the example once per test run.
    static let example: Result<String, any Error> = Result {
        let root = Tools.repositoryRoot
        let package = root.appendingPathComponent("Examples/PrismKitExample").path
        let scratch = root.appendingPathComponent(".build/examples").path
        let build = try Tools.run("/usr/bin/env", ["swift", "build", "--package-path", package, "--scratch-path", scratch],
                                  timeout: 900)
        guard build.status == 0 else {
            throw InvalidRequest("the example does not build: " + build.stderr + String(decoding: build.stdout, as: UTF8.self))
        }
        return scratch + "/debug/prism-kit-example"
    }

    func testTheExamplePackageBuildsAndRuns() throws {
        let directory = ScratchDirectory()
        let output = directory.path("example.mp4")
        let result = try Tools.run(try Self.example.get(), [output, "12"], timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssert(lines.last?.hasPrefix("wrote 12 frames to \(output)") ?? false, lines.joined(separator: "\n"))
        // The movie holds what the closure saw: its mean (R of invert, mono) against the decoded file's.
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, 12)
        XCTAssertEqual(report.size.width, 320)
        for index in [0, 11] {
            let line = try XCTUnwrap(lines.first { $0.hasPrefix("frame \(index) at ") })
            let printed = try XCTUnwrap(Double(line.split(separator: " ").last!))
            let decoded = try MediaInspector.frameRGBA(output, index: index)
            var sum = 0
            for i in stride(from: 0, to: decoded.pixels.count, by: 4) { sum += Int(decoded.pixels[i]) }
            let mean = Double(sum) / Double(decoded.pixels.count / 4)
            XCTAssertEqual(printed, mean, accuracy: 3, "frame \(index): the callback's frame and the movie's agree")
        }
    }

    /// The example pixellates the faces in a movie with nothing but `import PrismKit` and `Session`: its
    /// movie is `prism run --filter face-pixellate`'s (which FaceRunTests checks against the faces), and not
    /// the input's.
    func testTheExamplePixellatesTheFacesInAMovie() throws {
        let directory = ScratchDirectory()
        let clip = directory.path("astronaut.mp4")
        try Tools.ffmpeg(["-loop", "1", "-framerate", "25", "-i", Tools.fixture("astronaut.png"), "-frames:v", "6",
                          "-c:v", "libx264", "-pix_fmt", "yuv420p", clip])
        let output = directory.path("faces.mp4"), reference = directory.path("reference.mp4")
        let result = try Tools.run(try Self.example.get(), [clip, output], timeout: 300)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssert(String(decoding: result.stdout, as: UTF8.self).contains("wrote 6 frames to \(output)"),
                  String(decoding: result.stdout, as: UTF8.self))
        let run = try Tools.run(Tools.prism, ["run", clip, "-o", reference, "--filter", "face-pixellate", "--quiet"], timeout: 300)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, 6)
        for index in [0, 5] {
            let got = try MediaInspector.frameRGBA(output, index: index).pixels
            let want = try MediaInspector.frameRGBA(reference, index: index).pixels
            let source = try MediaInspector.frameRGBA(clip, index: index).pixels
            XCTAssertEqual(got.count, want.count)
            let fromReference = zip(got, want).map { abs(Int($0) - Int($1)) }.max() ?? 255
            XCTAssertLessThanOrEqual(fromReference, 2, "frame \(index): the example's frame is prism run's")
            let changed = zip(got, source).filter { abs(Int($0) - Int($1)) > 24 }.count
            XCTAssertGreaterThan(changed, 2_000, "frame \(index): the face was pixellated (\(changed) bytes changed)")
        }
    }
}
