import XCTest
import PrismCore

/// The colour maths against the standards' own published values (not against itself).
final class ColorMathsTests: XCTestCase {
    func testPQMatchesST2084AndBT2408() {
        XCTAssertEqual(TransferMaths.pqToNits(1), 10000, accuracy: 1e-6)
        XCTAssertEqual(TransferMaths.pqToNits(0), 0, accuracy: 1e-9)
        // BT.2100 / BT.2408 tables: 100 cd/m² is 50.8 %, 1000 is 75.2 %, SDR reference white (203) 58 %.
        XCTAssertEqual(TransferMaths.nitsToPQ(100), 0.5081, accuracy: 0.0005)
        XCTAssertEqual(TransferMaths.nitsToPQ(1000), 0.7518, accuracy: 0.0005)
        XCTAssertEqual(TransferMaths.nitsToPQ(203), 0.58, accuracy: 0.001)
        for nits in [0.01, 0.5, 48, 203, 600, 4000] {
            XCTAssertEqual(TransferMaths.pqToNits(TransferMaths.nitsToPQ(nits)), nits, accuracy: nits * 1e-9)
        }
    }

    func testHLGMatchesBT2100AndBT2408() {
        // BT.2100: E = 1/12 is the signal's midpoint, E = 1 its top.
        XCTAssertEqual(TransferMaths.hlgOETF(1.0 / 12), 0.5, accuracy: 1e-9)
        XCTAssertEqual(TransferMaths.hlgOETF(1), 1, accuracy: 1e-6)
        XCTAssertEqual(TransferMaths.hlgSystemGamma(peak: 1000), 1.2, accuracy: 1e-12)
        // BT.2408: HLG reference white, 75 %, is 203 cd/m² on a 1000 cd/m² display (OOTF γ = 1.2, grey).
        let scene = TransferMaths.hlgInverseOETF(0.75)
        XCTAssertEqual(1000 * pow(scene, 1.2), 203, accuracy: 0.5)
        for e in [0.0, 0.01, 1.0 / 12, 0.3, 0.9] {
            XCTAssertEqual(TransferMaths.hlgInverseOETF(TransferMaths.hlgOETF(e)), e, accuracy: 1e-12)
        }
    }

    func testPrimariesGiveThePublishedLumaWeightsAndBT2087Matrix() {
        let w709 = ColorPrimaries.bt709.luminanceWeights, w2020 = ColorPrimaries.bt2020.luminanceWeights
        for (got, want) in zip([w709.x, w709.y, w709.z, w2020.x, w2020.y, w2020.z], [0.2126, 0.7152, 0.0722, 0.2627, 0.6780, 0.0593]) {
            XCTAssertEqual(got, want, accuracy: 1e-4)
        }
        XCTAssertEqual(ColorMatrix.bt2020.kr, w2020.x, accuracy: 1e-4)
        // ITU-R BT.2087's linear BT.2020 → BT.709 matrix.
        let m = ColorPrimaries.bt2020.conversion(to: .bt709)
        let published: [[Double]] = [[1.6605, -0.5876, -0.0728], [-0.1246, 1.1329, -0.0083], [-0.0182, -0.1006, 1.1187]]
        for i in 0..<3 { for j in 0..<3 { XCTAssertEqual(m.rows[i][j], published[i][j], accuracy: 2e-4, "[\(i)][\(j)]") } }
    }

    func testBT2390KeepsDarkTonesAndBringsThePeakToTheTarget() {
        let conversion = ColorConversion(from: .pq, to: .sdr, sourcePrimaries: .bt2020, targetPrimaries: .bt709, sourcePeak: 1000)
        // Below the knee (PQ space) the curve is the identity, bar BT.2390's black lift, which fades upwards.
        XCTAssertEqual(conversion.toneMap(nits: 50), 50, accuracy: 1.5)
        XCTAssertGreaterThan(conversion.toneMap(nits: 0.005), 0.1)
        // BT.2390's black lift adds minLum·(1 - E)⁴ at the top too: a fraction of a cd/m² (clipped after).
        XCTAssertEqual(conversion.toneMap(nits: 1000), ColorConversion.referenceWhite, accuracy: 0.5)
        var last = 0.0
        for nits in stride(from: 0.01, through: 1000, by: 7) {
            let mapped = conversion.toneMap(nits: nits)
            XCTAssertGreaterThanOrEqual(mapped, last)
            XCTAssertLessThanOrEqual(mapped, ColorConversion.referenceWhite + 0.5)
            last = mapped
        }
        // Reinhard and clip bring the peak to white too.
        for curve in [ColorConversion.Curve.reinhard, .clip] {
            var other = conversion
            other.curve = curve
            XCTAssertEqual(other.toneMap(nits: 1000), ColorConversion.referenceWhite, accuracy: 0.01, "\(curve)")
        }
        // SDR white stays SDR white through the whole conversion (grey, BT.2020 → BT.709): code 1.0 at
        // the peak; PQ 58 % (203 cd/m²) lands below white, where the knee has taken it.
        let white = conversion.apply(SIMD3(repeating: TransferMaths.nitsToPQ(1000)))
        XCTAssertEqual(white.x, 1, accuracy: 1e-6)
        XCTAssertEqual(white.y, 1, accuracy: 1e-6)
    }

    func testColorOverrideParsing() throws {
        let hdr10 = try ColorOverride(parsing: "hdr10,peak=4000")
        XCTAssertEqual(hdr10.transfer, .pq)
        XCTAssertEqual(hdr10.matrix, .bt2020)
        XCTAssertEqual(hdr10.peak, 4000)
        let fields = try ColorOverride(parsing: "matrix=bt709,range=full,transfer=hlg")
        XCTAssertEqual(fields.matrix, .bt709)
        XCTAssertEqual(fields.range, .full)
        XCTAssertEqual(fields.transfer, .hlg)
        XCTAssertNil(fields.primaries)
        // `=` and `hdr10,=` trapped (an item with nothing either side of its `=`); empty sides are named.
        for bad in ["transfer=log", "matrix=ycgco", "peak=5", "hdr11", "gamma=2", "=", "hdr10,=", "=5", "peak=", "matrix="] {
            XCTAssertThrowsError(try ColorOverride(parsing: bad), bad) { error in
                XCTAssertTrue("\(error)".contains("\(Setting.inputColor)"), "\(error)")
            }
        }
        let untagged = VideoColor(space: YUVColorSpace(matrix: .bt709, range: .limited), primaries: .bt709, transfer: .bt709,
                                  guessed: ["matrix", "primaries", "transfer"])
        let applied = try ColorOverride(parsing: "transfer=pq").applied(to: untagged)
        XCTAssertEqual(applied.transfer, .pq)
        XCTAssertEqual(applied.guessed, ["matrix", "primaries"])
    }
}
