import Foundation
import PrismCore
@testable import PrismMedia
import XCTest

/// The pieces behind inputs as they come: image-sequence patterns, a movie's display matrix, a camera's
/// format choice and its Motion-JPEG decoder.
final class InputFormatTests: XCTestCase {
    func testImageSequencePatterns() throws {
        XCTAssertTrue(ImageSequence.isPattern("img%03d.png"))
        XCTAssertTrue(ImageSequence.isPattern("shots/frame%d.jpg"))
        XCTAssertTrue(ImageSequence.isPattern("100%%-%04d.png"))
        XCTAssertFalse(ImageSequence.isPattern("plain.png"))
        XCTAssertFalse(ImageSequence.isPattern("100%%.png"), "an escaped percent sign is no pattern")
        XCTAssertFalse(ImageSequence.isPattern("a%03d-%03d.png"), "two numbers: not image2's pattern")
        XCTAssertFalse(ImageSequence.isPattern("odd%s.png"))
        XCTAssertFalse(ImageSequence.isPattern("http://host/img%03d.png"), "URLs go to libavformat as they are")
        XCTAssertEqual(ImageSequence.path("img%03d.png", number: 7), "img007.png")
        XCTAssertEqual(ImageSequence.path("img%03d.png", number: 1234), "img1234.png")
        XCTAssertEqual(ImageSequence.path("f%d.png", number: 12), "f12.png")
        XCTAssertEqual(ImageSequence.path("100%%-%02d.png", number: 3), "100%-03.png")

        let dir = try TempDirectory()
        defer { dir.cleanUp() }
        XCTAssertNil(ImageSequence.firstFile(dir.path("img%03d.png")))
        for number in [2, 3] { FileManager.default.createFile(atPath: dir.path(String(format: "img%03d.png", number)), contents: Data()) }
        XCTAssertEqual(ImageSequence.firstFile(dir.path("img%03d.png")), dir.path("img002.png"))
    }

    /// The display matrix FFmpeg 5.1 writes for `rotate=N` (stream copy) is read as a turn, as FFmpeg's
    /// own autorotation applies it (the end-to-end test compares pictures with FFmpeg's).
    func testDisplayMatrixBecomesTheOrientation() throws {
        let dir = try TempDirectory()
        defer { dir.cleanUp() }
        let plain = dir.path("plain.mp4")
        try runFFmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10", "-frames:v", "2", "-c:v", "libx264", plain])
        XCTAssertEqual(try MovieSource(url: plain).info.orientation, .upright)
        for (tag, turn) in [(90, 270), (180, 180), (270, 90)] {
            let rotated = dir.path("r\(tag).mp4")
            try runFFmpeg(["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=\(tag)", rotated])
            let source = try MovieSource(url: rotated)
            XCTAssertEqual(source.info.orientation.clockwiseDegrees, turn, "rotate=\(tag)")
            XCTAssert(source.info.summary.contains("rotated \(turn)° clockwise"), source.info.summary)
            XCTAssertEqual(source.info.size, Size(width: 96, height: 64), "frames stay as stored; the GPU turns them")
        }
    }

    /// A typical USB webcam: YUYV up to 640x480 at 30 fps but 1280x720 only at 10 fps; MJPG at 30 fps for both.
    func testFormatChoicePrefersWhatTheCameraGivesNatively() {
        let vga = Size(width: 640, height: 480), hd = Size(width: 1280, height: 720)
        let sizes: (FourCC) -> (sizes: [Size], isRange: Bool) = { _ in ([vga, hd], false) }
        let rates: (FourCC, Size) -> [Rational] = { fourcc, size in
            fourcc == .yuyv && size == hd ? [Rational(10, 1), Rational(5, 1)] : [Rational(30, 1), Rational(15, 1)]
        }
        let usable: [FourCC] = [.yuyv, .mjpeg]
        func choice(_ size: Size, _ rate: Rational?) -> (FourCC, Size) {
            CameraSource.chooseFormat(usable, size: size, rate: rate, sizes: sizes, rates: rates)
        }
        XCTAssertTrue(choice(hd, Rational(30, 1)) == (.mjpeg, hd), "720p30 only comes as MJPG")
        XCTAssertTrue(choice(hd, Rational(10, 1)) == (.yuyv, hd), "720p10 comes uncompressed: no decode needed")
        XCTAssertTrue(choice(hd, nil) == (.yuyv, hd))
        XCTAssertTrue(choice(vga, Rational(30, 1)) == (.yuyv, vga))
        XCTAssertTrue(choice(Size(width: 1920, height: 1080), Rational(30, 1)) == (.mjpeg, hd),
                      "no format has 1080p: the closest size, then the rate")
        // A camera with MJPG alone.
        XCTAssertTrue(CameraSource.chooseFormat([.mjpeg], size: vga, rate: Rational(60, 1), sizes: sizes, rates: rates) == (.mjpeg, vga))
    }

    /// A JPEG as a webcam sends it (4:2:2, full range) decodes into a yuv422p frame with JPEG's colour
    /// space and the colour it was made of; damaged data is an error, not a crash.
    func testMJPEGDecoderDecodesAJPEGAndRejectsGarbage() throws {
        let dir = try TempDirectory()
        defer { dir.cleanUp() }
        let jpeg = dir.path("frame.jpg")
        // RGB (48, 128, 192): BT.601 full-range Y' = 0.299·48 + 0.587·128 + 0.114·192 = 111.4.
        try runFFmpeg(["-f", "lavfi", "-i", "color=c=0x3080C0:size=64x48", "-frames:v", "1", "-pix_fmt", "yuvj422p",
                       "-q:v", "2", "-f", "mjpeg", jpeg])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: jpeg))
        let decoder = try MJPEGDecoder(label: "test")
        let pts = MediaTime(value: 5, timescale: 30)
        let frame = try bytes.withUnsafeBytes { try decoder.decode($0, pts: pts, duration: nil) }
        XCTAssertEqual(frame.format, .yuv422p)
        XCTAssertEqual(frame.format, MJPEGDecoder.expectedFormat)
        XCTAssertEqual(frame.size, Size(width: 64, height: 48))
        XCTAssertEqual(frame.colorSpace, YUVColorSpace(matrix: .bt601, range: .full))
        XCTAssertEqual(frame.pts, pts)
        let luma = frame.planes[0].base.advanced(by: 20 * frame.planes[0].rowBytes + 30).load(as: UInt8.self)
        XCTAssertEqual(Double(luma), 0.299 * 48 + 0.587 * 128 + 0.114 * 192, accuracy: 2.5)
        let cb = frame.planes[1].base.advanced(by: 20 * frame.planes[1].rowBytes + 15).load(as: UInt8.self)
        // Cb = 128 + (B - Y')·0.5 / (1 - 0.114)
        XCTAssertEqual(Double(cb), 128 + (192 - 111.4) * 0.5 / 0.886, accuracy: 2.5)

        let garbage = [UInt8](repeating: 0x5A, count: 4096)
        XCTAssertThrowsError(try garbage.withUnsafeBytes { try decoder.decode($0, pts: pts, duration: nil) })
        // The decoder is still usable after a bad frame.
        let again = try bytes.withUnsafeBytes { try decoder.decode($0, pts: pts, duration: nil) }
        XCTAssertEqual(again.size, Size(width: 64, height: 48))
    }

    func testMotionJPEGCameraFormatHasNoFixedLayout() {
        let format = CameraFormat(fourcc: .mjpeg, pixelFormat: .yuv422p, size: Size(width: 640, height: 480), bytesPerLine: 1280,
                                  imageBytes: 100_000, frameRate: Rational(30, 1), colorSpace: YUVColorSpace(matrix: .bt601, range: .full))
        XCTAssertTrue(format.isCompressed)
        XCTAssertNil(format.planeOffsets())
        XCTAssertEqual(format.planeBytes, 0)
    }
}
