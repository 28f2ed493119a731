import Foundation
import XCTest

/// `prism dev` takes every input `prism run` takes (the pattern, a movie file, raw frames or a movie on
/// stdin, a network URL, several inputs), and renders frames from each.
final class DevInputsTests: XCTestCase {
    let dir = ScratchDirectory()

    private var ffmpeg: String {
        get throws {
            guard let path = Tools.which("ffmpeg") else { throw XCTSkip("these tests need ffmpeg on PATH") }
            return path
        }
    }

    private func make(_ name: String, _ arguments: [String]) throws -> String {
        let path = dir.path(name)
        let run = try Tools.run(try ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x48:r=30:d=10"] + arguments + [path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return path
    }

    func testDevRendersFramesFromEveryKindOfInput() throws {
        let cube = dir.path("invert.cube")
        try DevTests.invertCube.write(toFile: cube, atomically: true, encoding: .utf8)
        let clip = try make("clip.mkv", ["-c:v", "ffv1"])
        let raw = try make("frames.rgba", ["-f", "rawvideo", "-pix_fmt", "rgba"])
        // A server that sends the clip to the one client that connects, in real time.
        let port = Loopback.freePort()
        let url = "http://127.0.0.1:\(port)/clip.mkv"
        let server = try Running(try ffmpeg, ["-hide_banner", "-loglevel", "error", "-re", "-i", clip, "-c", "copy",
                                              "-f", "matroska", "-listen", "1", url], deadline: 60)
        defer { server.stop() }
        XCTAssertTrue(Loopback.waitForListener(port: port), "the HTTP server did not start")
        let cases: [(name: String, arguments: [String], stdin: String?)] = [
            ("the pattern", [], nil),
            ("a movie file", [clip], nil),
            ("raw frames on stdin", ["-", "--input-format", "64x48:rgba:30"], raw),
            ("a movie on pipe:0", ["pipe:0"], clip),
            ("an HTTP URL", [url], nil),
            ("a second input", ["pattern", clip, "--filter", "[1]overlay(x=4, y=4)"], nil),
        ]
        for (name, arguments, stdin) in cases {
            let input = try stdin.map { try FileHandle(forReadingFrom: URL(fileURLWithPath: $0)) }
            let dev: DevProcess
            do {
                dev = try DevProcess(arguments: [cube] + arguments + ["--size", "64x48"], standardInput: input)
            } catch {
                XCTFail("\(name): \(error)")
                continue
            }
            defer { dev.stop() }
            do {
                let state = try dev.waitForState("frames from \(name)") { ($0["frames"] as? Int ?? 0) > 5 }
                XCTAssertNil(state["error"] as? [String: Any], "\(name): \(state)")
            } catch {
                XCTFail("\(name): \(error)")
            }
        }
    }
}
