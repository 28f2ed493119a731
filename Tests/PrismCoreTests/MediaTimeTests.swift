import XCTest
import PrismCore

final class MediaTimeTests: XCTestCase {
    func testTicksRoundTripAcrossTimeBases() {
        let t = MediaTime(value: 3003, timescale: 90000)
        XCTAssertEqual(t.ticks(in: Rational(1, 30000)), 1001)
        XCTAssertEqual(MediaTime(value: 1001, timeBase: Rational(1, 30000)), t)
        XCTAssertEqual(MediaTime(value: 2, timeBase: Rational(1001, 30000)).value, 2002)
    }

    func testOrderingAndArithmetic() {
        let a = MediaTime(value: 1, timescale: 3), b = MediaTime(value: 1, timescale: 2)
        XCTAssertLessThan(a, b)
        XCTAssertEqual((b - a).seconds, 1.0 / 6.0, accuracy: 1e-6)
        XCTAssertEqual(MediaTime(value: 61_500, timescale: 1000).clockDescription, "01:01.500")
    }

    func testParsing() {
        XCTAssertEqual(Rational(parsing: "30000/1001"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "29.97"), Rational(30000, 1001))
        XCTAssertEqual(Rational(parsing: "25"), Rational(25, 1))
        XCTAssertNil(Rational(parsing: "fast"))
        XCTAssertEqual(Size(parsing: "720p"), Size(width: 1280, height: 720))
        XCTAssertEqual(Size(parsing: "64x48"), Size(width: 64, height: 48))
        XCTAssertNil(Size(parsing: "64by48"))
    }

    func testColorSpaceRoundTrip() {
        for matrix in [ColorMatrix.bt601, .bt709] {
            for range in [ColorRange.limited, .full] {
                let cs = YUVColorSpace(matrix: matrix, range: range)
                let yuv = cs.yuv(fromRGB: 0.9, 0.2, 0.4)
                let rgb = cs.rgb(fromY: yuv.y, cb: yuv.cb, cr: yuv.cr)
                XCTAssertEqual(rgb.r, 0.9, accuracy: 1e-9)
                XCTAssertEqual(rgb.g, 0.2, accuracy: 1e-9)
                XCTAssertEqual(rgb.b, 0.4, accuracy: 1e-9)
            }
        }
        // Limited-range white and black land on 235 and 16.
        let limited = YUVColorSpace(matrix: .bt709, range: .limited)
        XCTAssertEqual(limited.yuv(fromRGB: 1, 1, 1).y * 255, 235, accuracy: 1e-9)
        XCTAssertEqual(limited.yuv(fromRGB: 0, 0, 0).y * 255, 16, accuracy: 1e-9)
    }
}

final class PackedFrameLayoutTests: XCTestCase {
    func testYUV420PlanesSitSideBySideBelowLuma() throws {
        let layout = try XCTUnwrap(PackedFrameLayout(format: .yuv420p, size: Size(width: 10, height: 6)))
        XCTAssertEqual(layout.rowBytes, 16)            // 10 rounded up to 8, and 2 * 5 chroma bytes fit
        XCTAssertEqual(layout.textureSize, Size(width: 4, height: 9))
        XCTAssertEqual(layout.planes.map(\.offset), [0, 96, 104])
        XCTAssertEqual(layout.planes.map(\.usedRowBytes), [10, 5, 5])
        XCTAssertEqual(layout.byteCount, 16 * 9)
    }

    func testTenBitAndRGB() throws {
        let prores = try XCTUnwrap(PackedFrameLayout(format: .yuv422p10le, size: Size(width: 64, height: 4)))
        XCTAssertEqual(prores.rowBytes, 128)
        XCTAssertEqual(prores.chromaRows, 4)
        XCTAssertEqual(prores.planes[2].offset - prores.planes[1].offset, 64)
        let bgra = try XCTUnwrap(PackedFrameLayout(format: .bgra, size: Size(width: 3, height: 2)))
        XCTAssertEqual(bgra.rowBytes, 16)
        XCTAssertNil(PackedFrameLayout(format: .yuyv422, size: Size(width: 4, height: 4)))
    }
}
