import Foundation
import XCTest
import PrismCore
import PrismMedia
import TestFixtures

/// The `prismfilter` element in gst-launch-1.0 pipelines, found through GST_PLUGIN_PATH as installed by
/// `scripts/install-lib`: its frames are `prism run`'s for the same input and graph (pixel for pixel), in the
/// formats it negotiates; an upscaling hook negotiates a larger output; timestamps and durations pass through.
final class GStreamerElementTests: XCTestCase {
    /// Runs gst-launch-1.0 with `pipeline` (one argument per element or property), `-v` when asked.
    static func launch(_ pipeline: [String], verbose: Bool = false) throws -> ProcessResult {
        _ = try InstalledLibrary.prefix.get()
        guard let launcher = Tools.which("gst-launch-1.0") else { throw InvalidRequest("gst-launch-1.0 is missing: run scripts/install-deps --tests") }
        let result = try InstalledLibrary.run(launcher, (verbose ? ["-v"] : ["-q"]) + pipeline)
        XCTAssertEqual(result.status, 0, "gst-launch-1.0 \(pipeline.joined(separator: " ")): \(result.stderr) "
                       + String(decoding: result.stdout, as: UTF8.self).suffix(2000))
        return result
    }

    static func file(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// "PTS DURATION" of each buffer that reached `fakesink name=probe silent=false`, from gst-launch-1.0 -v's log.
    static func probedTimings(_ log: String) -> [String] {
        log.split(separator: "\n").filter { $0.contains("probe: last-message = chain") }.map { line -> String in
            let pts = line.range(of: "pts: ").map { line[$0.upperBound...].prefix(while: { $0 != "," }) } ?? ""
            let duration = line.range(of: "duration: ").map { line[$0.upperBound...].prefix(while: { $0 != "," }) } ?? ""
            return "\(pts) \(duration)"
        }
    }

    /// The test pattern in three formats in and out through `invert, mono`: the element's frames are `prism run`'s
    /// of the same raw frames (written by the same pipeline before the element).
    func testTheTestPatternThroughInvertMonoIsPrismRuns() throws {
        let directory = ScratchDirectory()
        for (input, inputName, output, outputName, frameBytes) in [("I420", "yuv420p", "RGBA", "rgba", 320 * 240 * 4),
                                                                   ("NV12", "nv12", "NV12", "nv12", 320 * 240 * 3 / 2),
                                                                   ("RGBA", "rgba", "I420", "yuv420p", 320 * 240 * 3 / 2)] {
            let raw = directory.path("in.raw"), filtered = directory.path("out.raw")
            _ = try Self.launch(["videotestsrc", "num-buffers=8", "pattern=smpte", "!",
                                 "video/x-raw,format=\(input),width=320,height=240,framerate=30/1", "!", "tee", "name=t",
                                 "t.", "!", "queue", "!", "filesink", "location=\(raw)",
                                 "t.", "!", "queue", "!", "prismfilter", "graph=invert, mono", "!", "video/x-raw,format=\(output)", "!",
                                 "filesink", "location=\(filtered)"])
            let expected = try InstalledLibrary.prismRun("-", "invert, mono", ["--input-format", "320x240:\(inputName):30"],
                                                         format: outputName, stdin: try Self.file(raw))
            XCTAssertEqual(expected.count, 8 * frameBytes)
            InstalledLibrary.assertSameFrames(try Self.file(filtered), expected, frameBytes: frameBytes, "\(input) → \(output)")
        }
    }

    /// A movie of OpenCV's footage through face-pixellate and an ISF shader (a parameter from `params`):
    /// `prism run`'s frames.
    func testAMovieThroughFacesAndAnISFShaderIsPrismRuns() throws {
        let directory = ScratchDirectory()
        let clip = try InstalledLibrary.megamind(frames: 12, in: directory)
        let shader = try InstalledLibrary.isfShader(in: directory)
        for (graph, params, reference) in [("face-pixellate", "", "face-pixellate"),
                                           ("\(shader), mono", "ripple.amount=0.03", "\(shader)(amount=0.03), mono")] {
            let output = directory.path("out.rgba")
            _ = try Self.launch(["filesrc", "location=\(clip)", "!", "decodebin", "!", "prismfilter", "graph=\(graph)"]
                                + (params.isEmpty ? [] : ["params=\(params)"])
                                + ["!", "video/x-raw,format=RGBA", "!", "filesink", "location=\(output)"])
            InstalledLibrary.assertSameFrames(try Self.file(output), try InstalledLibrary.prismRun(clip, reference),
                                              frameBytes: 720 * 528 * 4, "gst-launch-1.0, \(graph)")
        }
    }

    /// A published ONNX model through the element: rembg's U²-Net (small) as background-blur's segmentation
    /// model (one of the default models, `.models/u2netp.onnx`) on two frames of the footage.
    func testAPublishedSegmentationModelThroughTheElementIsPrismRuns() throws {
        let directory = ScratchDirectory()
        let clip = try InstalledLibrary.megamind(frames: 2, in: directory)
        let graph = "background-blur(model=\(try TestFixtures.model("u2netp.onnx")), radius=12)"
        let output = directory.path("out.rgba")
        _ = try Self.launch(["filesrc", "location=\(clip)", "!", "decodebin", "!", "prismfilter", "graph=\(graph)",
                             "!", "video/x-raw,format=RGBA", "!", "filesink", "location=\(output)"])
        let expected = try InstalledLibrary.prismRun(clip, graph)
        InstalledLibrary.assertSameFrames(try Self.file(output), expected, frameBytes: 720 * 528 * 4, "U²-Net background blur")
        XCTAssertNotEqual(expected, try InstalledLibrary.prismRun(clip, ""), "the background is blurred")
    }

    /// The Anime4K-style hook (Tests/Library/anime4k-2x.glsl) between a 640x360 source and a 1280x720 caps
    /// filter: the element negotiates 1280x720 and the hook runs at it (`prism run --size 1280x720`'s frames,
    /// not a plain scale's); timestamps (from 1 s on) and durations are the source's, in the encoded movie too.
    func testAnUpscalingHookNegotiates720pAndKeepsTimestamps() throws {
        let directory = ScratchDirectory()
        let hook = Tools.repositoryRoot.appendingPathComponent("Tests/Library/anime4k-2x.glsl").path
        let raw = directory.path("in.yuv"), filtered = directory.path("out.yuv"), movie = directory.path("out.mkv")
        let result = try Self.launch(["videotestsrc", "num-buffers=8", "pattern=ball", "timestamp-offset=1000000000", "!",
                                      "video/x-raw,format=I420,width=640,height=360,framerate=30/1", "!", "tee", "name=t",
                                      "t.", "!", "queue", "!", "filesink", "location=\(raw)",
                                      "t.", "!", "queue", "!", "prismfilter", "graph=\(hook)", "!", "video/x-raw,width=1280,height=720", "!",
                                      "tee", "name=u",
                                      "u.", "!", "queue", "!", "filesink", "location=\(filtered)",
                                      "u.", "!", "queue", "!", "fakesink", "name=probe", "silent=false",
                                      "u.", "!", "queue", "!", "avenc_ffv1", "!", "matroskamux", "!", "filesink", "location=\(movie)"],
                                     verbose: true)
        let log = String(decoding: result.stdout, as: UTF8.self)
        XCTAssert(log.contains("prismfilter0.GstPad:src: caps = video/x-raw, format=(string)I420, width=(int)1280, height=(int)720"), log)
        let frameBytes = 1280 * 720 * 3 / 2
        let expected = try InstalledLibrary.prismRun("-", hook, ["--input-format", "640x360:yuv420p:30", "--size", "1280x720"],
                                                     format: "yuv420p", stdin: try Self.file(raw))
        InstalledLibrary.assertSameFrames(try Self.file(filtered), expected, frameBytes: frameBytes, "the hook at 1280x720")
        XCTAssertNotEqual(expected, try InstalledLibrary.prismRun("-", "", ["--input-format", "640x360:yuv420p:30", "--size", "1280x720"],
                                                                  format: "yuv420p", stdin: try Self.file(raw)),
                          "the hook is not a plain scale")
        // Every buffer as it left the element: videotestsrc's timestamps and durations (1 s + N/30 s, to the ns).
        let stamps = Self.probedTimings(log)
        func clock(_ ns: Int64) -> String { String(format: "%d:%02d:%02d.%09d", ns / 3_600_000_000_000, ns / 60_000_000_000 % 60, ns / 1_000_000_000 % 60, ns % 1_000_000_000) }
        let times: [Int64] = (0..<9).map { Int64($0) * 1_000_000_000 / 30 }
        let expectedStamps: [String] = (0..<8).map { "\(clock(1_000_000_000 + times[$0])) \(clock(times[$0 + 1] - times[$0]))" }
        XCTAssertEqual(stamps, expectedStamps)
        // Decoded again: 8 frames of 1280x720 at those times (Matroska keeps milliseconds).
        let report = try MediaInspector.inspect(movie)
        XCTAssertEqual(report.size, Size(width: 1280, height: 720))
        XCTAssertEqual(report.videoFrameCount, 8)
        let milliseconds: [Double] = report.videoPTS.map { ($0.seconds * 1000).rounded() }
        let expectedMilliseconds: [Double] = (0..<8).map { (1000 + Double($0) * 1000 / 30).rounded() }
        XCTAssertEqual(milliseconds, expectedMilliseconds)
    }

    /// A graph that doubles the picture by itself (a super-resolution network, written by
    /// scripts/make-test-models) gives its own size downstream when nothing asks for another.
    func testAModelThatDoublesThePictureNegotiatesItsOwnSize() throws {
        let directory = ScratchDirectory()
        let models = directory.path("models")
        let made = try Tools.run("/usr/bin/python3", [Tools.repositoryRoot.appendingPathComponent("scripts/make-test-models").path, models])
        XCTAssertEqual(made.status, 0, made.stderr)
        let graph = "model(file=\(models)/net-sr-resnet-x2-128.onnx)"
        let raw = directory.path("in.rgba"), filtered = directory.path("out.rgba")
        let result = try Self.launch(["videotestsrc", "num-buffers=2", "pattern=smpte", "!", "video/x-raw,format=RGBA,width=128,height=128,framerate=25/1",
                                      "!", "tee", "name=t", "t.", "!", "queue", "!", "filesink", "location=\(raw)",
                                      "t.", "!", "queue", "!", "prismfilter", "graph=\(graph)", "!", "filesink", "location=\(filtered)"],
                                     verbose: true)
        XCTAssert(String(decoding: result.stdout, as: UTF8.self).contains("width=(int)256, height=(int)256"))
        let expected = try InstalledLibrary.prismRun("-", graph, ["--input-format", "128x128:rgba:25"], stdin: try Self.file(raw))
        InstalledLibrary.assertSameFrames(try Self.file(filtered), expected, frameBytes: 256 * 256 * 4, "super-resolution model")
    }

    /// Megamind.avi's packed B-frames come out of GStreamer's AVI demuxer with repeated timestamps (FFmpeg's
    /// give it others): the element takes them (Prism's own must increase) and gives every buffer back with
    /// the timestamp and duration it came with.
    func testRepeatedTimestampsPassThrough() throws {
        let directory = ScratchDirectory()
        let clip = directory.path("packed.avi")
        try Tools.ffmpeg(["-i", try TestFixtures.opencv("Megamind.avi"), "-map", "0:v", "-frames:v", "12", "-c", "copy", clip])
        func stamps(_ element: [String]) throws -> [String] {
            let log = String(decoding: try Self.launch(["filesrc", "location=\(clip)", "!", "decodebin", "!"] + element
                                                       + ["fakesink", "name=probe", "silent=false"], verbose: true).stdout, as: UTF8.self)
            return Self.probedTimings(log)
        }
        let decoded = try stamps([])
        XCTAssertNotEqual(Set(decoded).count, decoded.count, "the demuxer repeats a timestamp: \(decoded)")
        XCTAssertEqual(try stamps(["prismfilter", "graph=invert", "!"]), decoded)
    }

    /// A graph that does not bind fails the pipeline with Prism's line, not a crash or a hang.
    func testABadGraphIsAnElementError() throws {
        _ = try InstalledLibrary.prefix.get()
        let launcher = try XCTUnwrap(Tools.which("gst-launch-1.0"))
        let result = try InstalledLibrary.run(launcher, ["videotestsrc", "num-buffers=3", "!", "prismfilter", "graph=no-such-filter", "!", "fakesink"],
                                              timeout: 60)
        XCTAssertNotEqual(result.status, 0)
        let text = result.stderr + String(decoding: result.stdout, as: UTF8.self)
        XCTAssert(text.contains("Prism: filter graph, column 1: unknown filter 'no-such-filter'"), text)
    }
}
