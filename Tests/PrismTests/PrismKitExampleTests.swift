import Foundation
import XCTest
import PrismMedia

/// `Examples/PrismKitExample` is a separate package that depends on Prism's `PrismKit` library product,
/// as a user's program would: it must build against the public API and do what it says.
final class PrismKitExampleTests: XCTestCase {
    func testTheExamplePackageBuildsAndRuns() throws {
        let root = Tools.repositoryRoot
        let package = root.appendingPathComponent("Examples/PrismKitExample").path
        let scratch = root.appendingPathComponent(".build/examples").path
        let build = try Tools.run("/usr/bin/env", ["swift", "build", "--package-path", package, "--scratch-path", scratch],
                                  timeout: 900)
        XCTAssertEqual(build.status, 0, build.stderr + String(decoding: build.stdout, as: UTF8.self))
        let directory = ScratchDirectory()
        let output = directory.path("example.mp4")
        let result = try Tools.run(scratch + "/debug/prism-kit-example", [output, "12"], timeout: 120)
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
}
