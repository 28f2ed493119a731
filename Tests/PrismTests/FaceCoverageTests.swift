import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Small and moving faces stay covered. Clips are made here from the astronaut photo (its head,
/// cropped around the face the detector finds in the still, scaled so the face has a chosen width) moving
/// in straight lines over the coffee photo, so every face's position in every frame is known. Each clip is
/// run three times, all ffv1 (lossless): with `face-pixellate(scale=10)`, with nothing, and with the whole
/// frame pixellated. A face is covered in a frame when the disc of 0.3 face widths around its true centre
/// (eyes, nose, mouth) is the pixellated picture (95% of its pixels within 2 code values); a frame shows a
/// false region when any pixel farther than 2 face widths from every face differs from the plain run (the mask
/// covers the face's box and the margins of its uncertainty, up to about 1.5 widths out between detections).
final class FaceCoverageTests: XCTestCase {
    let dir = ScratchDirectory()

    /// A face moving in a straight line: centre (x0 + vx·n, y0 + vy·n) in frame n, `width` px wide.
    struct Face { var width: Int; var x0: Int; var y0: Int; var vx: Int; var vy: Int; var until: Int? = nil
        /// Frames in which the face is shown blurred beyond recognition (still there: it must stay covered).
        var blurred: ClosedRange<Int>? = nil
        func centre(_ n: Int) -> SIMD2<Double> { SIMD2(Double(x0 + vx * n), Double(y0 + vy * n)) }
        func shown(_ n: Int) -> Bool { until.map { n < $0 } ?? true }
    }
    struct Scene { var size: Size; var frames: Int; var faces: [Face] }

    /// The still's face box from the detector itself (`prism render`), as FaceRunTests does.
    func stillFace(_ photo: String) throws -> (centre: SIMD2<Int>, width: Double) {
        let sidecar = dir.path("still.jsonl")
        let result = try Tools.run(Tools.prism, ["render", "--filter", "face-mask", photo, "-o", dir.path("still.png"), "--faces-out", sidecar])
        XCTAssertEqual(result.status, 0, result.stderr)
        let line = try XCTUnwrap(try FaceRunTests.read(sidecar).first?.faces.first)
        return (SIMD2(Int((line.x + line.w / 2).rounded()), Int((line.y + line.h / 2).rounded())), line.w)
    }

    /// Writes the scene as an ffv1 clip: each face's tile (2 face widths square, the face at its centre)
    /// overlaid at its position in each frame, over the coffee photo stretched to the frame.
    func makeClip(_ scene: Scene, _ path: String) throws {
        let astronaut = try Tools.fixture("astronaut.png"), coffee = try Tools.fixture("coffee.png")
        let still = try stillFace(astronaut)
        let crop = Int(2 * still.width) / 2 * 2
        var graph = "[1]crop=\(crop):\(crop):\(still.centre.x - crop / 2):\(still.centre.y - crop / 2),split=\(scene.faces.count)"
            + scene.faces.indices.map { "[c\($0)]" }.joined() + ";"
        graph += "[0]scale=\(scene.size.width):\(scene.size.height),setsar=1[bg0];"
        for (i, face) in scene.faces.enumerated() {
            let tile = 2 * face.width
            var enable = face.until.map { ":enable='lt(n,\($0))'" } ?? ""
            let place = "x='\(face.x0 - face.width)+\(face.vx)*n':y='\(face.y0 - face.width)+\(face.vy)*n':eval=frame"
            if let blurred = face.blurred {
                // The sharp tile outside those frames, a blurred one (the same face, unrecognisable) inside them.
                enable = ":enable='not(between(n,\(blurred.lowerBound),\(blurred.upperBound)))'"
                graph += "[c\(i)]scale=\(tile):\(tile),split[t\(i)][u\(i)];[u\(i)]boxblur=luma_radius=\(face.width / 3):luma_power=4[v\(i)];"
                    + "[bg\(i)][v\(i)]overlay=\(place):enable='between(n,\(blurred.lowerBound),\(blurred.upperBound))'[w\(i)];"
                    + "[w\(i)][t\(i)]overlay=\(place)\(enable)[bg\(i + 1)];"
            } else {
                graph += "[c\(i)]scale=\(tile):\(tile)[t\(i)];[bg\(i)][t\(i)]overlay=\(place)\(enable)[bg\(i + 1)];"
            }
        }
        graph += "[bg\(scene.faces.count)]format=yuv420p"
        try Tools.ffmpeg(["-loop", "1", "-framerate", "30", "-i", coffee, "-loop", "1", "-framerate", "30", "-i", astronaut,
                          "-filter_complex", graph, "-frames:v", "\(scene.frames)", "-c:v", "ffv1", path])
    }

    /// Luma planes of every frame of a movie, decoded again by ffmpeg into a raw file.
    final class Frames {
        let handle: FileHandle, size: Size
        init(_ movie: String, size: Size, scratch: String) throws {
            try Tools.ffmpeg(["-i", movie, "-f", "rawvideo", "-pix_fmt", "gray", scratch])
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: scratch))
            self.size = size
        }
        func frame(_ n: Int) throws -> [UInt8] {
            try handle.seek(toOffset: UInt64(n * size.pixelCount))
            return [UInt8](try handle.read(upToCount: size.pixelCount) ?? Data())
        }
    }

    struct Coverage { var faceFrames = 0, covered = 0, frames = 0, falseFrames = 0, misses: [String] = [] }

    /// Runs `prism run` with `flags` on the scene's clip and measures coverage against the two references.
    func measure(_ scene: Scene, name: String, flags: [String] = []) throws -> (Coverage, ProcessResult) {
        let clip = dir.path("\(name).mkv")
        try makeClip(scene, clip)
        func run(_ filter: String?, _ out: String, _ extra: [String] = []) throws -> ProcessResult {
            let result = try Tools.run(Tools.prism, ["run", clip, "-o", out, "--codec", "ffv1"] + (filter.map { ["--filter", $0] } ?? []) + extra,
                                       timeout: 300)
            XCTAssertEqual(result.status, 0, result.stderr)
            return result
        }
        let faced = try run("face-pixellate(scale=10)", dir.path("\(name)-faces.mkv"), flags + ["--faces-out", dir.path("\(name).jsonl")])
        _ = try run(nil, dir.path("\(name)-plain.mkv"), ["--quiet"])
        _ = try run("pixellate(scale=10)", dir.path("\(name)-pixellated.mkv"), ["--quiet"])
        XCTAssertEqual(try MediaInspector.inspect(dir.path("\(name)-faces.mkv")).videoFrameCount, scene.frames)
        let out = try Frames(dir.path("\(name)-faces.mkv"), size: scene.size, scratch: dir.path("\(name)-faces.gray"))
        let plain = try Frames(dir.path("\(name)-plain.mkv"), size: scene.size, scratch: dir.path("\(name)-plain.gray"))
        let pixellated = try Frames(dir.path("\(name)-pixellated.mkv"), size: scene.size, scratch: dir.path("\(name)-pixellated.gray"))
        var coverage = Coverage()
        let w = scene.size.width, h = scene.size.height
        for n in 0..<scene.frames {
            let o = try out.frame(n), p = try plain.frame(n), x = try pixellated.frame(n)
            XCTAssertEqual(o.count, scene.size.pixelCount, "frame \(n) decoded")
            guard o.count == scene.size.pixelCount else { return (coverage, faced) }
            for face in scene.faces where face.shown(n) {
                let c = face.centre(n), half = Double(face.width) / 2
                // Only faces wholly in the frame count (a face half out of it is for the strict mode).
                guard c.x - half >= 0, c.x + half <= Double(w), c.y - half >= 0, c.y + half <= Double(h) else { continue }
                let r = 0.3 * Double(face.width)
                var inside = 0, pixellatedThere = 0
                for py in Int(c.y - r)...Int(c.y + r) { for px in Int(c.x - r)...Int(c.x + r) {
                    let dx = Double(px) + 0.5 - c.x, dy = Double(py) + 0.5 - c.y
                    guard dx * dx + dy * dy <= r * r else { continue }
                    inside += 1
                    if abs(Int(o[py * w + px]) - Int(x[py * w + px])) <= 2 { pixellatedThere += 1 }
                } }
                coverage.faceFrames += 1
                if Double(pixellatedThere) >= 0.95 * Double(inside) { coverage.covered += 1 } else {
                    coverage.misses.append("frame \(n): face \(face.width) px at \(c): \(pixellatedThere)/\(inside)")
                }
            }
            coverage.frames += 1
            var falseRegion = false
            scan: for py in stride(from: 0, to: h, by: 2) { for px in stride(from: 0, to: w, by: 2) where o[py * w + px] != p[py * w + px] {
                let far = scene.faces.allSatisfy { face in
                    let d = SIMD2(Double(px), Double(py)) - face.centre(n)
                    return !face.shown(n) || (d * d).sum().squareRoot() > 2 * Double(face.width)
                }
                if far { falseRegion = true; break scan }
            } }
            if falseRegion { coverage.falseFrames += 1; coverage.misses.append("frame \(n): pixellated away from every face") }
        }
        return (coverage, faced)
    }

    func check(_ coverage: Coverage, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        let covered = Double(coverage.covered) / Double(max(coverage.faceFrames, 1))
        let falseShare = Double(coverage.falseFrames) / Double(max(coverage.frames, 1))
        print("\(label): faces covered in \(coverage.covered)/\(coverage.faceFrames) face-frames, false regions in \(coverage.falseFrames)/\(coverage.frames) frames")
        XCTAssertGreaterThan(coverage.faceFrames, 0, label, file: file, line: line)
        XCTAssertEqual(coverage.covered, coverage.faceFrames, "\(label): every face in every frame: \(coverage.misses.prefix(12))", file: file, line: line)
        XCTAssertLessThanOrEqual(falseShare, 0.02, "\(label): \(coverage.misses.prefix(12))", file: file, line: line)
    }

    /// 720p: the face (49 px, moving right 9 px a frame) and an 80-px face entering from the right
    /// edge at 10 px a frame.
    func testSmallAndEnteringFacesAreCoveredAt720p() throws {
        let scene = Scene(size: Size(width: 1280, height: 720), frames: 60, faces: [
            Face(width: 49, x0: 120, y0: 200, vx: 9, vy: 0),
            Face(width: 80, x0: 1330, y0: 480, vx: -10, vy: -1),
        ])
        let (coverage, result) = try measure(scene, name: "small720")
        check(coverage, "720p")
        // The summary says how many frames had a face predicted rather than detected.
        XCTAssertTrue(result.stderr.contains("frame(s) with a face predicted, not detected"), result.stderr)
    }

    /// The face seen once and then missed: 49 px wide, moving 9 px a frame on a 720p frame, detected on
    /// every frame (`--face-every 1`); in frames 1 and 2 it is blurred beyond recognition, so the detector sees it
    /// once and then misses it twice. It stays covered (its grace time), and is found again from frame 3.
    func testAFaceSeenOnceThenMissedStaysCovered() throws {
        let scene = Scene(size: Size(width: 1280, height: 720), frames: 30, faces: [
            Face(width: 49, x0: 120, y0: 200, vx: 9, vy: 0, blurred: 1...2),
        ])
        let (coverage, result) = try measure(scene, name: "seenOnce", flags: ["--face-every", "1", "--progress", "json"])
        check(coverage, "seen once, then missed")
        // The detector did miss it: a face predicted, not detected, in at least those two frames.
        let last = try XCTUnwrap(String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").last)
        let progress = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        XCTAssertGreaterThanOrEqual(progress["faces_predicted_frames"] as? Int ?? 0, 2, "\(progress)")
    }

    /// 1080p: a 60-px and a 100-px face crossing (8 px a frame each way, 140 px apart vertically) and a
    /// 44-px face moving diagonally.
    func testCrossingFacesAreCoveredAt1080p() throws {
        let scene = Scene(size: Size(width: 1920, height: 1080), frames: 50, faces: [
            Face(width: 60, x0: 700, y0: 480, vx: 8, vy: 0),
            Face(width: 100, x0: 1300, y0: 620, vx: -8, vy: 0),
            Face(width: 44, x0: 300, y0: 200, vx: 6, vy: 4),
        ])
        let (coverage, _) = try measure(scene, name: "cross1080")
        check(coverage, "1080p")
    }

    /// A face that vanishes in the middle of the frame (frame 15 on): it is predicted for a second, then
    /// lost. The run says so (summary, `--progress json`), and `--faces-strict` pixellates the whole frame
    /// from then on, since nothing found it again.
    func testALostFaceIsReportedAndStrictCoversTheWholeFrame() throws {
        let scene = Scene(size: Size(width: 640, height: 360), frames: 60, faces: [Face(width: 60, x0: 200, y0: 170, vx: 2, vy: 0, until: 15)])
        let clip = dir.path("lost.mkv")
        try makeClip(scene, clip)
        func run(_ filter: String?, _ name: String, _ extra: [String] = []) throws -> (ProcessResult, Frames) {
            let out = dir.path("\(name).mkv")
            let result = try Tools.run(Tools.prism, ["run", clip, "-o", out, "--codec", "ffv1"] + (filter.map { ["--filter", $0] } ?? []) + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
            return (result, try Frames(out, size: scene.size, scratch: dir.path("\(name).gray")))
        }
        let (strict, strictFrames) = try run("face-pixellate(scale=10)", "strict", ["--faces-strict", "--progress", "json", "--faces-out", dir.path("strict.jsonl")])
        let (lenient, lenientFrames) = try run("face-pixellate(scale=10)", "lenient", ["--faces-out", dir.path("lenient.jsonl")])
        let (_, plain) = try run(nil, "plain", ["--quiet"])
        let (_, pixellated) = try run("pixellate(scale=10)", "pixellated", ["--quiet"])
        // The last progress object counts the frames after the loss and those with a predicted face.
        let last = try XCTUnwrap(String(decoding: strict.stdout, as: UTF8.self).split(separator: "\n").last)
        let progress = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        XCTAssertEqual(progress["status"] as? String, "finished")
        XCTAssertEqual(progress["faces_lost"] as? Int, 1, "\(progress)")
        let lostFrames = try XCTUnwrap(progress["faces_lost_frames"] as? Int)
        // Last seen on frame 14 (or 13): lost once unseen for more than the stated second, 30 frames later.
        XCTAssertTrue((14...16).contains(lostFrames), "\(progress)")
        XCTAssertGreaterThanOrEqual(progress["faces_predicted_frames"] as? Int ?? 0, 28, "\(progress)")
        XCTAssertGreaterThan(progress["face_detect_ms"] as? Double ?? 0, 0, "\(progress)")
        XCTAssertTrue(lenient.stderr.contains("\(lostFrames) frame(s) after 1 face(s) lost"), lenient.stderr)
        // Strict: those last frames are the pixellated picture everywhere, and the sidecar has the whole-frame
        // cover (id 0) on exactly those; without --faces-strict they are the plain picture.
        let firstLost = scene.frames - lostFrames
        let strictLines = try FaceRunTests.read(dir.path("strict.jsonl"))
        XCTAssertEqual(strictLines.filter { $0.faces.contains { $0.id == 0 } }.map(\.frame), Array(firstLost..<scene.frames))
        XCTAssertFalse(try FaceRunTests.read(dir.path("lenient.jsonl")).contains { $0.faces.contains { $0.id == 0 } })
        for n in [0, 10, firstLost - 1, firstLost, scene.frames - 1] {
            let s = try strictFrames.frame(n), l = try lenientFrames.frame(n), p = try plain.frame(n), x = try pixellated.frame(n)
            let wholly = zip(s, x).filter { abs(Int($0) - Int($1)) <= 2 }.count
            if n >= firstLost {
                XCTAssertEqual(wholly, s.count, "frame \(n): strict pixellates the whole frame")
                XCTAssertEqual(l, p, "frame \(n): without --faces-strict, nothing is covered once the face is lost")
            } else {
                XCTAssertLessThan(zip(s, p).filter { $0 != $1 }.count, s.count / 4, "frame \(n): before the loss only the face is covered")
                XCTAssertEqual(s, l, "frame \(n): strict changes nothing before the loss")
            }
        }
    }

    /// A camera at 640x360, 5 fps (time enough per frame for a debug build on a loaded 2-core box; at 720p
    /// the GPU path and the detector together outran the two cores and the camera dropped frames): a 48-px
    /// face moving 6 px a frame and a 60-px face entering from the right edge. No frame is dropped (detection
    /// never holds frames back), the progress lines carry the detector's cost, and the boxes the frames were
    /// drawn with cover the faces once a detection that saw them is in: a live frame uses the newest finished
    /// detection, so a face is not covered before then (the first 5 frames of each face, 1 s, are not counted).
    /// Frame k of the camera is frame k of the clip.
    func testALiveCameraCoversSmallMovingFacesWithoutDroppingFrames() throws {
        let scene = Scene(size: Size(width: 640, height: 360), frames: 40, faces: [
            Face(width: 48, x0: 60, y0: 100, vx: 6, vy: 0),
            Face(width: 60, x0: 670, y0: 250, vx: -8, vy: -1),
        ])
        let clip = dir.path("live.mkv"), raw = dir.path("live.yuv")
        try makeClip(scene, clip)
        try Tools.ffmpeg(["-i", clip, "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        let library = try CameraTests.fakeLibrary()
        let sidecar = dir.path("live.jsonl"), out = dir.path("live-out.mkv")
        let result = try Tools.run(Tools.prism, ["run", "/dev/video61", "--size", "640x360", "--fps", "5", "--frames", "\(scene.frames)",
                                                 "-o", out, "--codec", "ffv1", "--filter", "face-pixellate(scale=10)", "--faces-out", sidecar,
                                                 "--progress", "json"],
                                   environment: ["LD_PRELOAD": library, "PRISM_FAKE_V4L2": "/dev/video61",
                                                 "PRISM_FAKE_V4L2_SIZES": "640x360", "PRISM_FAKE_V4L2_FPS": "5",
                                                 "PRISM_FAKE_V4L2_FORMATS": "YU12", "PRISM_FAKE_V4L2_CLIP": "640x360:\(raw)"],
                                   timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(result.stderr.contains("dropped"), result.stderr)
        XCTAssertEqual(try MediaInspector.inspect(out).videoFrameCount, scene.frames)
        let progress = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let final = try XCTUnwrap(progress.last)
        XCTAssertEqual(final["dropped"] as? Int, 0, "\(final)")
        XCTAssertGreaterThan(final["face_detect_ms"] as? Double ?? 0, 0, "the detector's cost per frame: \(final)")
        XCTAssertNotNil(final["face_regions_age"], "\(final)")
        // Coverage from the boxes drawn: face-pixellate's opaque disc (size 1.2, feather 0.25: 0.45 box widths)
        // holds the face's core (0.3 face widths around its true centre); a box centred farther than 1.5
        // face widths from every face is a stray one.
        let lines = try FaceRunTests.read(sidecar)
        XCTAssertEqual(lines.map(\.frame), Array(0..<scene.frames))
        var faceFrames = 0, covered = 0, falseFrames = 0, misses: [String] = []
        func inFrame(_ face: Face, _ n: Int) -> Bool {
            let c = face.centre(n), half = Double(face.width) / 2
            return c.x - half >= 0 && c.x + half <= 640 && c.y - half >= 0 && c.y + half <= 360
        }
        for line in lines.dropFirst(2) {
            let n = line.frame
            for face in scene.faces {
                let c = face.centre(n)
                guard n >= 5, (n - 5...n).allSatisfy({ inFrame(face, $0) }) else { continue }
                faceFrames += 1
                let hit = line.faces.contains { box in
                    let d = SIMD2(box.x + box.w / 2, box.y + box.h / 2) - c
                    return (d * d).sum().squareRoot() + 0.3 * Double(face.width) <= 0.45 * box.w
                }
                if hit { covered += 1 } else { misses.append("frame \(n): \(face.width)-px face at \(c): \(line.faces)") }
            }
            let stray = line.faces.contains { box in
                !scene.faces.contains { face in
                    let d = SIMD2(box.x + box.w / 2, box.y + box.h / 2) - face.centre(n)
                    return (d * d).sum().squareRoot() <= 1.5 * Double(face.width)
                }
            }
            if stray { falseFrames += 1; misses.append("frame \(n): a box away from every face: \(line.faces)") }
        }
        print("live 360p: faces covered in \(covered)/\(faceFrames) face-frames, stray boxes in \(falseFrames)/\(lines.count - 2) frames")
        XCTAssertGreaterThanOrEqual(Double(covered), 0.98 * Double(faceFrames), "\(misses.prefix(10))")
        XCTAssertLessThanOrEqual(Double(falseFrames), 0.02 * Double(lines.count - 2), "\(misses.prefix(10))")
    }

    /// `--face-model FILE.onnx` is YuNet. No YuNet file can be had here, but bad ones can: a missing file, a
    /// text file, and a real ONNX model of another kind (one Identity node, written below). Each is one line
    /// naming the file, a non-zero exit, and no output or sidecar left.
    func testABadYuNetModelIsOneLineAndWritesNothing() throws {
        let clip = dir.path("still.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:s=320x180:r=30:d=0.2", "-c:v", "ffv1", clip])
        let text = dir.path("text.onnx"), identity = dir.path("identity.onnx")
        try Data("this is not a model\n".utf8).write(to: URL(fileURLWithPath: text))
        try Self.identityONNX().write(to: URL(fileURLWithPath: identity))
        let cases = [(dir.path("missing.onnx"), "no such file"), (text, "not an ONNX model"),
                     (identity, "not a face model (neither CenterFace nor YuNet")]
        for (model, reason) in cases {
            let out = dir.path("yunet.mkv"), sidecar = dir.path("yunet.jsonl")
            let result = try Tools.run(Tools.prism, ["run", clip, "-o", out, "--codec", "ffv1", "--filter", "face-pixellate",
                                                     "--face-model", model, "--faces-out", sidecar])
            XCTAssertNotEqual(result.status, 0, model)
            let errors = result.stderrLines.filter { $0.hasPrefix("prism: ") && !$0.hasPrefix("prism: GPU") && !$0.hasPrefix("prism: input") }
            XCTAssertEqual(errors.count, 1, result.stderr)
            XCTAssertEqual(result.stderrLines.count, 1, "nothing else on stderr (OpenCV logs none): \(result.stderr)")
            XCTAssertTrue(errors.first?.hasPrefix("prism: face model \(model): \(reason)") == true, result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(model) left an output")
            XCTAssertFalse(FileManager.default.fileExists(atPath: sidecar), "\(model) left a sidecar")
        }
    }

    /// A valid ONNX model (protobuf, by hand): y = Identity(x), x and y float [1, 3, 320, 320], opset 13.
    static func identityONNX() -> Data {
        func varint(_ value: Int) -> [UInt8] {
            var v = UInt64(value), bytes: [UInt8] = []
            repeat { bytes.append(UInt8(v & 0x7f) | (v > 0x7f ? 0x80 : 0)); v >>= 7 } while v > 0
            return bytes
        }
        func number(_ field: Int, _ value: Int) -> [UInt8] { varint(field << 3) + varint(value) }
        func bytes(_ field: Int, _ content: [UInt8]) -> [UInt8] { varint(field << 3 | 2) + varint(content.count) + content }
        func string(_ field: Int, _ text: String) -> [UInt8] { bytes(field, Array(text.utf8)) }
        let shape = [1, 3, 320, 320].flatMap { bytes(1, number(1, $0)) }
        let type = bytes(1, number(1, 1) + bytes(2, shape))  // tensor_type: FLOAT, shape
        func value(_ name: String) -> [UInt8] { string(1, name) + bytes(2, type) }
        let node = string(1, "x") + string(2, "y") + string(4, "Identity")
        let graph = bytes(1, node) + string(2, "identity") + bytes(11, value("x")) + bytes(12, value("y"))
        return Data(number(1, 7) + bytes(7, graph) + bytes(8, number(2, 13)))
    }
}
