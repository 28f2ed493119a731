import XCTest
import PrismCore
import PrismMedia

/// `prism render` with faces, end to end: the built tool detects on the fixture photographs, writes the
/// sidecar, and its output is checked against a CPU reference built from the detector's own boxes.
final class FaceRenderTests: XCTestCase {
    struct Face { var id: Int; var x, y, w, h: Double; var score: Double }

    static func faces(in sidecar: String) throws -> [Face] {
        let line = try String(contentsOfFile: sidecar, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(line.count, 1, "a still is one frame")
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line[0].utf8)) as? [String: Any])
        XCTAssertEqual(object["pts"] as? String, "0/1")
        let list = try XCTUnwrap(object["faces"] as? [[String: Any]])
        return try list.map { face in
            let box = try XCTUnwrap(face["box"] as? [Double])
            return Face(id: try XCTUnwrap(face["id"] as? Int), x: box[0], y: box[1], w: box[2], h: box[3],
                        score: try XCTUnwrap(face["score"] as? Double))
        }
    }

    /// Pixellate (blocks of `scale` centred on the frame centre, each the mean of its pixels) blended
    /// through one soft ellipse per face (half-axes size·w/2 and size·h/2, opaque inside 1 − feather of it)
    /// joined with source-over.
    static func reference(_ image: RGBAImage, faces: [Face], scale: Double, size: Double, feather: Double) -> (rgba: [Double], mask: [Double]) {
        let w = image.size.width, h = image.size.height
        let ox0 = 0.5 * Double(w) - scale / 2, oy0 = 0.5 * Double(h) - scale / 2
        let origin = SIMD2(ox0 - scale * (ox0 / scale).rounded(.up), oy0 - scale * (oy0 / scale).rounded(.up))
        func block(_ x: Int, _ y: Int) -> Int {
            let bx = Int(((Double(x) + 0.5 - origin.x) / scale).rounded(.down)), by = Int(((Double(y) + 0.5 - origin.y) / scale).rounded(.down))
            return by * 10_000 + bx
        }
        var sums: [Int: (SIMD4<Double>, Int)] = [:]
        func pixel(_ x: Int, _ y: Int) -> SIMD4<Double> {
            let i = (y * w + x) * 4
            return SIMD4(Double(image.pixels[i]), Double(image.pixels[i + 1]), Double(image.pixels[i + 2]), Double(image.pixels[i + 3]))
        }
        for y in 0..<h { for x in 0..<w {
            let (s, n) = sums[block(x, y)] ?? (.zero, 0)
            sums[block(x, y)] = (s + pixel(x, y), n + 1)
        } }
        var rgba = [Double](repeating: 0, count: w * h * 4), mask = [Double](repeating: 0, count: w * h)
        for y in 0..<h { for x in 0..<w {
            var m = 0.0
            for face in faces {
                let dx = (Double(x) + 0.5 - (face.x + face.w / 2)) / (size * face.w / 2)
                let dy = (Double(y) + 0.5 - (face.y + face.h / 2)) / (size * face.h / 2)
                let a = 1 - min(max(((dx * dx + dy * dy).squareRoot() - (1 - feather)) / feather, 0), 1)
                m = a + m * (1 - a)
            }
            let (s, n) = sums[block(x, y)]!
            let out = pixel(x, y) * (1 - m) + s / Double(n) * m
            for c in 0..<4 { rgba[(y * w + x) * 4 + c] = out[c] }
            mask[y * w + x] = m
        } }
        return (rgba, mask)
    }

    /// Outside every mask exactly the input; elsewhere the reference within `tolerance` code values.
    func check(_ output: RGBAImage, input: RGBAImage, faces: [Face], scale: Double, size: Double, feather: Double,
               file: StaticString = #filePath, line: UInt = #line) {
        let (expected, mask) = Self.reference(input, faces: faces, scale: scale, size: size, feather: feather)
        var untouched = 0, worst = 0.0, changedInside = 0
        for p in 0..<(input.size.pixelCount) {
            for c in 0..<4 {
                let actual = Double(output.pixels[p * 4 + c])
                if mask[p] == 0 {
                    if output.pixels[p * 4 + c] != input.pixels[p * 4 + c] { worst = max(worst, 999) }
                } else {
                    worst = max(worst, abs(actual - expected[p * 4 + c]))
                }
            }
            if mask[p] == 0 { untouched += 1 }
            if mask[p] == 1, output.pixels[(p * 4)..<(p * 4 + 3)] != input.pixels[(p * 4)..<(p * 4 + 3)] { changedInside += 1 }
        }
        XCTAssertLessThanOrEqual(worst, 1.5, "max error (999: a pixel outside the masks changed)", file: file, line: line)
        XCTAssertGreaterThan(untouched, input.size.pixelCount / 2, file: file, line: line)
        XCTAssertGreaterThan(changedInside, 0, "nothing pixellated inside the faces", file: file, line: line)
    }

    func testRenderPixellatesTheAstronautsFaceAndNothingElse() throws {
        let scratch = ScratchDirectory()
        let input = try Tools.fixture("astronaut.png")
        let out = scratch.path("out.png"), sidecar = scratch.path("faces.jsonl")
        let result = try Tools.run(Tools.prism, ["render", "--filter", "face-pixellate(scale=12, size=1.2, feather=0.25)", input,
                                                 "-o", out, "--faces-out", sidecar])
        XCTAssertEqual(result.status, 0, result.stderr)
        let faces = try Self.faces(in: sidecar)
        XCTAssertEqual(faces.count, 1, "one frontal face")
        guard let face = faces.first else { return }
        // The detector's box is on the face (eyes and mouth around (225, 120) of 512).
        XCTAssertEqual(face.x + face.w / 2, 225, accuracy: 20)
        XCTAssertEqual(face.y + face.h / 2, 120, accuracy: 25)
        XCTAssertEqual(face.w, 100, accuracy: 30)
        XCTAssertEqual(face.id, 1)
        let image = try ImageFile.read(path: input), output = try ImageFile.read(path: out)
        check(output, input: image, faces: faces, scale: 12, size: 1.2, feather: 0.25)
        // The same faces from the sidecar instead of the detector: the same picture, byte for byte.
        let again = scratch.path("again.png")
        let replay = try Tools.run(Tools.prism, ["render", "--filter", "face-pixellate(scale=12, size=1.2, feather=0.25)", input,
                                                 "-o", again, "--faces-in", sidecar])
        XCTAssertEqual(replay.status, 0, replay.stderr)
        XCTAssertEqual(try ImageFile.read(path: again), output)
    }

    func testEveryFaceInATiledPictureIsMasked() throws {
        let scratch = ScratchDirectory()
        let tiled = scratch.path("tiled.png")
        try Tools.ffmpeg(["-i", Tools.fixture("astronaut.png"), "-filter_complex", "[0]split[a][b];[a][b]hstack,split[c][d];[c][d]vstack", tiled])
        let out = scratch.path("out.png"), sidecar = scratch.path("faces.jsonl")
        let result = try Tools.run(Tools.prism, ["render", "--filter", "face-pixellate(scale=16, size=1.3, feather=0.2)", tiled,
                                                 "-o", out, "--faces-out", sidecar])
        XCTAssertEqual(result.status, 0, result.stderr)
        let faces = try Self.faces(in: sidecar)
        XCTAssertEqual(faces.count, 4, "\(faces)")
        XCTAssertEqual(Set(faces.map(\.id)), [1, 2, 3, 4])
        // One per tile, each on the tile's face.
        for (tx, ty) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            let hit = faces.filter { abs($0.x + $0.w / 2 - (225 + 512 * Double(tx))) < 25 && abs($0.y + $0.h / 2 - (120 + 512 * Double(ty))) < 30 }
            XCTAssertEqual(hit.count, 1, "tile (\(tx), \(ty)): \(faces)")
        }
        check(try ImageFile.read(path: out), input: try ImageFile.read(path: tiled), faces: faces, scale: 16, size: 1.3, feather: 0.2)
    }

    func testBadFaceInputsAreOneLineAndWriteNothing() throws {
        let scratch = ScratchDirectory()
        let input = try Tools.fixture("astronaut.png")
        let notCascade = scratch.path("model.xml")
        try Data("<?xml version=\"1.0\"?>\n<opencv_storage></opencv_storage>\n".utf8).write(to: URL(fileURLWithPath: notCascade))
        let malformed = scratch.path("bad.jsonl")
        try Data("{\"pts\":\"0/1\",\"faces\":[]}\n{\"pts\":\"1/30\",\"faces\":[{\"id\":1}]}\n".utf8).write(to: URL(fileURLWithPath: malformed))
        let otherPts = scratch.path("other.jsonl")
        try Data("{\"pts\":\"1/30\",\"faces\":[]}\n".utf8).write(to: URL(fileURLWithPath: otherPts))
        let cases: [([String], String)] = [
            (["--face-model", scratch.path("missing.xml")], "prism: face model \(scratch.path("missing.xml")): cannot open the cascade file"),
            (["--face-model", scratch.path("missing.onnx")], "prism: face model \(scratch.path("missing.onnx")): no such file"),
            (["--face-model", notCascade], "prism: face model \(notCascade): not an OpenCV cascade"),
            (["--faces-in", scratch.path("missing.jsonl")], "prism: \(scratch.path("missing.jsonl")): no such file"),
            (["--faces-in", scratch.url.path], "prism: \(scratch.url.path): cannot read it"),
            (["--faces-in", malformed], "prism: \(malformed):2: face 1: \"box\" must be"),
            (["--faces-in", otherPts], "prism: \(otherPts): no line for frame 0 at pts 0/1"),
            (["--faces-in", otherPts, "--face-model", "haar"], "prism: --faces-in replaces the detector"),
            (["--face-every", "0"], "prism: --face-every takes a whole number"),
            (["--faces-out", scratch.path("nodir/f.jsonl")], "prism: \(scratch.path("nodir/f.jsonl")): the directory"),
        ]
        for (flags, message) in cases {
            let out = scratch.path("out.png"), sidecar = scratch.path("written.jsonl")
            try Data("an earlier result".utf8).write(to: URL(fileURLWithPath: out))
            let sidecarFlags = flags.contains("--faces-out") ? [] : ["--faces-out", sidecar]
            let result = try Tools.run(Tools.prism, ["render", "--filter", "face-pixellate", input, "-o", out] + flags + sidecarFlags)
            XCTAssertNotEqual(result.status, 0, "\(flags)")
            XCTAssertEqual(result.stderrLines.count, 1, "\(flags): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix(message), "\(flags): \(result.stderr)")
            XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "an earlier result", "\(flags) touched the output")
            XCTAssertFalse(FileManager.default.fileExists(atPath: sidecar), "\(flags) left a sidecar")
            XCTAssertFalse(scratch.contents().contains { $0.hasSuffix(".partial") }, "\(flags): \(scratch.contents())")
        }
    }

    func testFiltersDescribesTheFaceFilters() throws {
        let list = try Tools.run(Tools.prism, ["filters"])
        let text = String(decoding: list.stdout, as: UTF8.self)
        for name in ["face-mask", "face-pixellate", "face-blur"] { XCTAssertTrue(text.contains("\n\(name) — "), name) }
        let one = try Tools.run(Tools.prism, ["filters", "face-pixellate"])
        let detail = String(decoding: one.stdout, as: UTF8.self)
        XCTAssertEqual(one.status, 0)
        XCTAssertTrue(detail.contains("blocks: float in 2...64, default 6"), detail)
        XCTAssertTrue(detail.contains("scale: float in 0...512, default 0"), detail)
        XCTAssertTrue(detail.contains("face-mask(size=…, feather=…)"), detail)
        XCTAssertTrue(detail.contains("example: prism run clip.mp4 -o out.mp4 --filter 'face-pixellate(blocks=6)'"), detail)
    }
}
