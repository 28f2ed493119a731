import Foundation
import XCTest
import PrismCore
import PrismMedia

/// A display matrix is read as FFmpeg reads it — a turn and a flip — so a mirrored
/// phone clip comes out mirrored back (not turned upside down), and an angle that is not a quarter turn
/// is said, not silently rounded.
final class DisplayMatrixTests: XCTestCase {
    let dir = ScratchDirectory()

    /// The 16.16 fixed-point matrix of a track header (`tkhd`), the last column 2.30.
    private static func fixed(_ value: Double) -> Int32 { Int32((value * 65536).rounded()) }

    /// `source` with its video track header's matrix replaced by `a b / c d` (the mov demuxer exports it
    /// as the stream's display matrix). The matrix sits 44 bytes after the `tkhd` type in a version 0 box.
    private func withMatrix(_ source: String, _ name: String, a: Double, b: Double, c: Double, d: Double) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let tag = Array("tkhd".utf8)
        let at = try XCTUnwrap((0...(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == tag })
        XCTAssertEqual(bytes[at + 4], 0, "a version 0 track header")
        let values: [Int32] = [Self.fixed(a), Self.fixed(b), 0, Self.fixed(c), Self.fixed(d), 0, 0, 0, 1 << 30]
        for (index, value) in values.enumerated() {
            let word = UInt32(bitPattern: value).bigEndian
            withUnsafeBytes(of: word) { for k in 0..<4 { bytes[at + 44 + index * 4 + k] = $0[k] } }
        }
        let path = dir.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func meanDifference(_ a: RGBAImage, _ b: RGBAImage, mapping: (Int, Int) -> (Int, Int)) -> Double {
        var total = 0
        for y in 0..<a.size.height {
            for x in 0..<a.size.width {
                let (u, v) = mapping(x, y)
                for c in 0..<3 { total += abs(Int(a.pixels[(y * a.size.width + x) * 4 + c]) - Int(b.pixels[(v * b.size.width + u) * 4 + c])) }
            }
        }
        return Double(total) / Double(a.size.pixelCount * 3)
    }

    func testFlipsAreFlipsAndOddAnglesAreSaid() throws {
        let plain = dir.path("plain.mp4")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=10", "-frames:v", "2", "-c:v", "libx264",
                          "-pix_fmt", "yuv420p", "-crf", "10", plain])
        let stored = try MediaInspector.frameRGBA(plain, index: 0)
        let (w, h) = (stored.size.width, stored.size.height)
        // The matrix maps stored (x, y) to shown (x', y') = (a x + c y, b x + d y); the expected picture is
        // read from the stored one at the point each shown pixel came from.
        let cases: [(name: String, a: Double, b: Double, c: Double, d: Double, size: Size, from: (Int, Int) -> (Int, Int))] = [
            ("hflip", -1, 0, 0, 1, Size(width: w, height: h), { (w - 1 - $0, $1) }),
            ("vflip", 1, 0, 0, -1, Size(width: w, height: h), { ($0, h - 1 - $1) }),
            ("transpose", 0, 1, 1, 0, Size(width: h, height: w), { ($1, $0) }),
        ]
        for item in cases {
            let clip = try withMatrix(plain, "\(item.name).mp4", a: item.a, b: item.b, c: item.c, d: item.d)
            let output = dir.path("\(item.name).mkv")
            let result = try Tools.run(Tools.prism, ["run", clip, "-o", output, "--codec", "ffv1"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stderr.contains("turned upright"), result.stderr)
            let frame = try MediaInspector.frameRGBA(output, index: 0)
            XCTAssertEqual(frame.size, item.size, item.name)
            guard frame.size == item.size else { continue }
            // (4:2:0 chroma sits where it sat before the flip, half a sample off: a little colour at edges.)
            XCTAssertLessThan(meanDifference(frame, stored, mapping: item.from), 8, "\(item.name): not the stored picture flipped")
            // The picture is not symmetric: a half turn of it is far from the flip (the check can fail).
            if item.name != "transpose" {
                XCTAssertGreaterThan(meanDifference(frame, stored, mapping: { (w - 1 - $0, h - 1 - $1) }), 20, item.name)
            }
        }
        // 45°: kept as stored, and said.
        let turned = try withMatrix(plain, "45.mp4", a: 0.7071, b: 0.7071, c: -0.7071, d: 0.7071)
        let output = dir.path("45.mkv")
        let result = try Tools.run(Tools.prism, ["run", turned, "-o", output, "--codec", "ffv1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("not a quarter turn: kept as stored"), result.stderr)
        let frame = try MediaInspector.frameRGBA(output, index: 0)
        XCTAssertEqual(frame.size, stored.size)
        guard frame.size == stored.size else { return }
        XCTAssertLessThan(meanDifference(frame, stored, mapping: { ($0, $1) }), 8)
    }
}
