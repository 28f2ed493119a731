import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Faces in `prism run`, end to end through the CLI flags (`--faces-out`, `--faces-in`, `--face-model`,
/// `--face-every`). These need the engine to take face regions as a side input (PrismVision's
/// `FaceRegionProvider`, the luma thumbnail tap, the `--faces-out` writer); until it is wired they fail.
///
/// What they expect of the wiring: the sidecar has one line per output frame, in order, `frame` counting
/// from 0 and `pts` the frame's own pts (for files, the input's); a run that is not `--quiet` prints the
/// provider's `FaceDetectorStatistics.summary` ("face detector: … ms per detection on 320x180 …, regions N
/// frames old on average (max M)") on stderr; errors are one line and leave no output.
final class FaceRunTests: XCTestCase {
    let dir = ScratchDirectory()

    struct Line { var frame: Int; var pts: MediaTime; var faces: [(id: Int, x: Double, y: Double, w: Double, h: Double)] }

    static func read(_ sidecar: String) throws -> [Line] {
        try String(contentsOfFile: sidecar, encoding: .utf8).split(separator: "\n").map { text in
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            let parts = try XCTUnwrap(object["pts"] as? String).split(separator: "/").compactMap { Int64($0) }
            XCTAssertEqual(parts.count, 2)
            let faces = try XCTUnwrap(object["faces"] as? [[String: Any]]).map { face in
                let box = face["box"] as? [Double] ?? []
                return (id: face["id"] as? Int ?? -1, x: box[0], y: box[1], w: box[2], h: box[3])
            }
            return Line(frame: try XCTUnwrap(object["frame"] as? Int), pts: MediaTime(value: parts[0], timescale: Int32(parts[1])),
                        faces: faces)
        }
    }

    /// The astronaut's face centre in the 512×512 still, and its box's width, from the detector itself (`prism render`).
    func stillFace() throws -> (centre: SIMD2<Double>, width: Double) {
        let sidecar = dir.path("still.jsonl")
        let result = try Tools.run(Tools.prism, ["render", "--filter", "face-mask", Tools.fixture("astronaut.png"),
                                                 "-o", dir.path("still.png"), "--faces-out", sidecar])
        XCTAssertEqual(result.status, 0, result.stderr)
        let face = try XCTUnwrap(try Self.read(sidecar).first?.faces.first)
        return (SIMD2(face.x + face.w / 2, face.y + face.h / 2), face.w)
    }

    /// 640x360, 30 fps, 60 frames: the astronaut scaled from 360 to 478 px while moving right 3 px and
    /// up 0.5 px a frame. Frame n shows the still scaled by s(n)/512 at (x0(n), y0(n)).
    static let clipFrames = 60
    static func geometry(_ n: Int) -> (s: Double, x0: Double, y0: Double) { (Double(360 + 2 * n), Double(20 + 3 * n), Double(10 - n / 2)) }

    func makeClip(_ path: String, extra: [String] = []) throws {
        try Tools.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:s=640x360:r=30:d=2", "-loop", "1", "-framerate", "30",
                          "-i", Tools.fixture("astronaut.png"), "-filter_complex",
                          "[1]scale=w='360+n*2':h='360+n*2':eval=frame[f];[0][f]overlay=x='20+3*n':y='10-trunc(n/2)':eval=frame:shortest=1,format=yuv420p",
                          "-frames:v", "\(Self.clipFrames)"] + extra + [path])
    }

    func testTheMaskFollowsAMovingScalingFace() throws {
        let clip = dir.path("moving.mkv")
        try makeClip(clip, extra: ["-c:v", "ffv1"])
        let (centre, stillWidth) = try stillFace()
        let out = dir.path("out.mkv"), sidecar = dir.path("faces.jsonl")
        let result = try Tools.run(Tools.prism, ["run", clip, "-o", out, "--codec", "ffv1", "--filter", "face-pixellate(scale=10)",
                                                 "--faces-out", sidecar])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("face detector: "), result.stderr)
        let lines = try Self.read(sidecar)
        let input = try MediaInspector.inspect(clip)
        XCTAssertEqual(lines.map(\.frame), Array(0..<Self.clipFrames))
        XCTAssertEqual(lines.map(\.pts), input.videoPTS)
        var worst = 0.0
        for line in lines {
            XCTAssertEqual(line.faces.map(\.id), [1], "frame \(line.frame): one face, always the same id")
            guard let face = line.faces.first else { continue }
            let (s, x0, y0) = Self.geometry(line.frame)
            let truth = SIMD2(x0, y0) + centre * (s / 512)
            let error = ((face.x + face.w / 2 - truth.x) * (face.x + face.w / 2 - truth.x)
                         + (face.y + face.h / 2 - truth.y) * (face.y + face.h / 2 - truth.y)).squareRoot()
            worst = max(worst, error)
            // The box grows with the face (the still's box, scaled); between detections it is wider by the margins
            // that cover the face's motion since (up to half again).
            XCTAssertGreaterThanOrEqual(face.w, 0.8 * stillWidth * s / 512, "frame \(line.frame)")
            XCTAssertLessThanOrEqual(face.w, 1.5 * stillWidth * s / 512, "frame \(line.frame)")
        }
        XCTAssertLessThan(worst, 8, "mask centre vs the face, worst frame (pixels)")
        // The picture: pixellated at the face centre; far from it (rows 250 and below: the suit, the helmet)
        // exactly what the same run without a filter gives (ffv1 stores the RGB Prism made: lossless).
        let plain = try Tools.run(Tools.prism, ["run", clip, "-o", dir.path("plain.mkv"), "--codec", "ffv1", "--quiet"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        for n in [0, 30, 59] {
            let (s, x0, y0) = Self.geometry(n)
            let truth = SIMD2(x0, y0) + centre * (s / 512)
            let original = try MediaInspector.frameRGBA(dir.path("plain.mkv"), index: n), filtered = try MediaInspector.frameRGBA(out, index: n)
            func pixel(_ image: RGBAImage, _ x: Int, _ y: Int) -> [UInt8] { let i = (y * 640 + x) * 4; return Array(image.pixels[i..<(i + 3)]) }
            XCTAssertEqual(Self.maxDifference(original, filtered, rows: 250..<360), 0, "frame \(n), far from the face")
            var differing = 0
            for dy in -8...8 { for dx in -8...8 where pixel(filtered, Int(truth.x) + dx, Int(truth.y) + dy) != pixel(original, Int(truth.x) + dx, Int(truth.y) + dy) {
                differing += 1
            } }
            XCTAssertGreaterThan(differing, 100, "frame \(n): the face is pixellated")
        }
    }

    /// The largest difference of any channel over some rows.
    static func maxDifference(_ a: RGBAImage, _ b: RGBAImage, rows: Range<Int>) -> Int {
        guard a.size == b.size else { return 255 }
        var worst = 0
        for i in (rows.lowerBound * a.size.width * 4)..<(rows.upperBound * a.size.width * 4) {
            worst = max(worst, abs(Int(a.pixels[i]) - Int(b.pixels[i])))
        }
        return worst
    }

    func testFilesAreDeterministicAndSidecarsReplay() throws {
        let clip = dir.path("moving.mp4")
        try makeClip(clip)
        var sidecars: [String] = []
        for run in 0..<2 {
            let sidecar = dir.path("faces\(run).jsonl")
            let result = try Tools.run(Tools.prism, ["run", clip, "-o", dir.path("out\(run).mkv"), "--codec", "ffv1", "--filter", "face-blur(radius=8)",
                                                     "--face-every", "3", "--face-model", "lbp", "--faces-out", sidecar, "--quiet"])
            XCTAssertEqual(result.status, 0, result.stderr)
            sidecars.append(try String(contentsOfFile: sidecar, encoding: .utf8))
        }
        XCTAssertEqual(sidecars[0], sidecars[1], "the same input gives the same faces")
        let lines = try Self.read(dir.path("faces0.jsonl"))
        XCTAssertEqual(lines.count, Self.clipFrames)
        // Detected every third frame: between detections the same faces, moved on at their velocity (the face
        // moves right), never back, and covered more widely the older the detection.
        for line in lines where line.frame % 3 != 0 && !line.faces.isEmpty {
            let detected = lines[line.frame - line.frame % 3]
            XCTAssertEqual(line.faces.map(\.id), detected.faces.map(\.id), "frame \(line.frame)")
            XCTAssertGreaterThanOrEqual(line.faces[0].x + line.faces[0].w / 2, detected.faces[0].x + detected.faces[0].w / 2 - 0.01, "frame \(line.frame)")
            XCTAssertGreaterThan(line.faces[0].w, detected.faces[0].w, "frame \(line.frame)")
        }
        // The sidecar drives a run without the detector, and gives the same picture (boxes are written to
        // 1/100 px, so the mask's edge may differ by a code value).
        let replay = try Tools.run(Tools.prism, ["run", clip, "-o", dir.path("replay.mkv"), "--codec", "ffv1", "--filter", "face-blur(radius=8)",
                                                 "--faces-in", dir.path("faces0.jsonl"), "--faces-out", dir.path("replayed.jsonl"), "--quiet"])
        XCTAssertEqual(replay.status, 0, replay.stderr)
        XCTAssertEqual(try String(contentsOfFile: dir.path("replayed.jsonl"), encoding: .utf8), sidecars[0])
        for n in [0, 31, 59] {
            let replayed = try MediaInspector.frameRGBA(dir.path("replay.mkv"), index: n)
            let detected = try MediaInspector.frameRGBA(dir.path("out0.mkv"), index: n)
            XCTAssertLessThanOrEqual(Self.maxDifference(replayed, detected, rows: 0..<360), 1, "frame \(n)")
        }
    }

    func testEveryFaceInATiledClipGetsItsOwnTrack() throws {
        let clip = dir.path("moving.mp4"), tiled = dir.path("tiled.mp4")
        try makeClip(clip)
        // Stacked, not side by side: the detection image keeps its width, so each face keeps its size in it.
        try Tools.ffmpeg(["-i", clip, "-filter_complex", "[0]split[a][b];[a][b]vstack", tiled])
        let sidecar = dir.path("faces.jsonl")
        let result = try Tools.run(Tools.prism, ["run", tiled, "-o", dir.path("out.mp4"), "--filter", "face-pixellate",
                                                 "--faces-out", sidecar, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try Self.read(sidecar)
        XCTAssertEqual(lines.count, Self.clipFrames)
        // A one-off false detection (the cascade on the large suit, at the detection image's finer scale) is
        // covered for its frame and dropped at the next look; it never becomes a track of its own.
        var frames: [Int: Int] = [:]
        for line in lines { for face in line.faces { frames[face.id, default: 0] += 1 } }
        let oneOff = Set(frames.filter { $0.value == 1 }.keys)
        XCTAssertLessThanOrEqual(oneOff.count, 3, "\(frames)")
        for var line in lines.dropFirst(5) {
            line.faces.removeAll { oneOff.contains($0.id) }
            XCTAssertEqual(line.faces.count, 2, "frame \(line.frame)")
            // One in each half, and the ids do not swap.
            let top = line.faces.first { $0.y + $0.h / 2 < 360 }, bottom = line.faces.first { $0.y + $0.h / 2 >= 360 }
            XCTAssertNotNil(top, "frame \(line.frame)")
            XCTAssertNotNil(bottom, "frame \(line.frame)")
            XCTAssertEqual(top?.id, lines[5].faces.first { $0.y + $0.h / 2 < 360 }?.id, "frame \(line.frame)")
            XCTAssertNotEqual(top?.id, bottom?.id)
        }
    }

    func testLiveCameraNeverDropsFramesForDetection() throws {
        let clip = dir.path("moving.yuv")
        try makeClip(clip, extra: ["-f", "rawvideo", "-pix_fmt", "yuv420p"])
        let library = try CameraTests.fakeLibrary()
        let sidecar = dir.path("faces.jsonl"), out = dir.path("cam.mp4")
        let result = try Tools.run(Tools.prism, ["run", "/dev/video60", "--size", "640x360", "--fps", "5", "--frames", "40",
                                                 "-o", out, "--filter", "face-pixellate", "--faces-out", sidecar],
                                   environment: ["LD_PRELOAD": library, "PRISM_FAKE_V4L2": "/dev/video60",
                                                 "PRISM_FAKE_V4L2_SIZES": "640x360", "PRISM_FAKE_V4L2_FPS": "5",
                                                 "PRISM_FAKE_V4L2_FORMATS": "YU12,NV12", "PRISM_FAKE_V4L2_CLIP": "640x360:\(clip)"],
                                   timeout: 90)
        XCTAssertEqual(result.status, 0, result.stderr)
        // The detector's cost and latency are reported.
        let summary = try XCTUnwrap(result.stderrLines.first { $0.contains("face detector: ") }, result.stderr)
        // The default smallest face (40 px) is CenterFace's 20 px in the detection picture: 320x180 for a
        // 640x360 frame, each side rounded up to a multiple of 32.
        XCTAssertTrue(summary.contains("ms per detection on 320x192"), summary)
        // Frames never wait for detection: each takes the newest faces there are, from an earlier frame (a
        // file's frames wait for their own, 0 frames old). Whether no frame at all is dropped is the box's
        // load, not the detector's (on a loaded box a camera through `pixellate` alone drops some).
        let age = try XCTUnwrap(summary.firstMatch(of: /regions ([0-9.]+) frames old on average \(max (\d+)\)/), summary)
        XCTAssertGreaterThan(Double(age.1)!, 0.5, summary)
        XCTAssertGreaterThanOrEqual(Int(age.2)!, 1, summary)
        XCTAssertEqual(try MediaInspector.inspect(out).videoFrameCount, 40)
        let lines = try Self.read(sidecar)
        XCTAssertEqual(lines.count, 40)
        // Faces arrive a frame or two late (never waited for): once the detector has warmed up, the face.
        XCTAssertGreaterThanOrEqual(lines.dropFirst(5).filter { $0.faces.count == 1 }.count, 30)
    }

    func testBadFaceInputsStopTheRunWithOneLine() throws {
        let clip = dir.path("moving.mp4")
        try makeClip(clip)
        let truncated = dir.path("short.jsonl")
        let good = dir.path("good.jsonl")
        let made = try Tools.run(Tools.prism, ["run", clip, "-o", dir.path("first.mp4"), "--filter", "face-mask", "--faces-out", good, "--quiet"])
        XCTAssertEqual(made.status, 0, made.stderr)
        try (try String(contentsOfFile: good, encoding: .utf8)).split(separator: "\n").prefix(10).joined(separator: "\n")
            .write(toFile: truncated, atomically: true, encoding: .utf8)
        let malformed = dir.path("bad.jsonl")
        try "{\"pts\":\"0/1\",\"faces\":[]}\n{oops\n".write(toFile: malformed, atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            (["--face-model", dir.path("none.xml")], "prism: face model \(dir.path("none.xml")): cannot open the cascade file"),
            (["--face-model", malformed], "prism: face model \(malformed): not an OpenCV cascade"),
            (["--faces-in", malformed], "prism: \(malformed):2: not a JSON object"),
            (["--faces-in", dir.path("none.jsonl")], "prism: \(dir.path("none.jsonl")): no such file"),
            (["--faces-in", truncated], "prism: \(truncated): no line for frame 10 at pts"),
        ]
        for (flags, message) in cases {
            let out = dir.path("out.mp4"), sidecar = dir.path("written.jsonl")
            let result = try Tools.run(Tools.prism, ["run", clip, "-o", out, "--filter", "face-pixellate", "--faces-out", sidecar] + flags)
            XCTAssertNotEqual(result.status, 0, "\(flags)")
            let errors = result.stderrLines.filter { $0.hasPrefix("prism: ") && !$0.hasPrefix("prism: GPU") && !$0.hasPrefix("prism: input") }
            XCTAssertEqual(errors.count, 1, "\(flags): \(result.stderr)")
            XCTAssertTrue(errors.first?.hasPrefix(message) == true, "\(flags): \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(flags) left an output")
            XCTAssertFalse(FileManager.default.fileExists(atPath: sidecar), "\(flags) left a sidecar")
        }
    }

    /// A look before a face filter, several outputs: a movie, a lossless movie and raw frames on stdout, on the
    /// default route and on --rgb-route. The test pattern has no face, so every output is the look alone:
    /// the lossless one is compared with a run of the look by itself, frame by frame.
    func testALookBeforeAFaceFilterFeedsEveryOutput() throws {
        for (look, face) in [("noir", "face-pixellate"), ("chrome", "face-pixellate"), ("transfer", "face-blur")] {
            for route in [[], ["--rgb-route"]] {
                let label = "\(look), \(face) \(route)"
                let common = ["run", "--size", "320x240", "--frames", "10", "--quiet"] + route
                let alone = dir.path("alone.mkv"), movie = dir.path("a.mp4"), lossless = dir.path("b.mkv")
                for path in [alone, movie, lossless] { try? FileManager.default.removeItem(atPath: path) }
                let reference = try Tools.run(Tools.prism, common + ["--filter", look, "-o", alone, "--codec", "ffv1"])
                XCTAssertEqual(reference.status, 0, reference.stderr)
                let result = try Tools.run(Tools.prism, common + ["--filter", "\(look), \(face)", "-o", movie, "--codec", "ffv1",
                                                                  "-o", lossless, "-o", "-"])
                XCTAssertEqual(result.status, 0, "\(label): \(result.stderr)")
                XCTAssertEqual(result.stdout.count, 10 * 320 * 240 * 4, "\(label): ten raw RGBA frames on stdout")
                XCTAssertEqual(try MediaInspector.inspect(movie).videoFrameCount, 10, label)
                let frames = { (path: String) throws -> String in
                    try String(decoding: Tools.run("/usr/bin/ffmpeg", ["-v", "error", "-i", path, "-f", "framemd5", "-"]).stdout, as: UTF8.self)
                        .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",").last ?? "" }.joined(separator: " ")
                }
                XCTAssertEqual(try frames(lossless), try frames(alone), "\(label): no face, so the look alone")
            }
        }
    }
}
