import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// `tonemap` on the GPU against `ColorConversion.apply` in doubles, pixel by pixel, for every direction
/// and curve (the maths itself is checked against the standards in ColorMathsTests, and whole runs
/// against libplacebo in HDRRunTests).
final class ToneMapFilterTests: XCTestCase {
    func testEveryConversionMatchesTheCPUMaths() throws {
        let image = TestImage.varied()
        let cases: [ColorConversion] = [
            ColorConversion(from: .pq, to: .sdr, sourcePrimaries: .bt2020, targetPrimaries: .bt709, sourcePeak: 1000),
            ColorConversion(from: .pq, to: .sdr, sourcePrimaries: .bt2020, targetPrimaries: .bt709, sourcePeak: 4000, curve: .reinhard),
            ColorConversion(from: .pq, to: .sdr, sourcePrimaries: .p3, targetPrimaries: .bt709, sourcePeak: 1000, curve: .clip),
            ColorConversion(from: .hlg, to: .sdr, sourcePrimaries: .bt2020, targetPrimaries: .bt709, sourcePeak: 1000),
            ColorConversion(from: .hlg, to: .pq, sourcePrimaries: .bt2020, targetPrimaries: .bt2020, sourcePeak: 1000, curve: .clip),
            ColorConversion(from: .pq, to: .hlg, sourcePrimaries: .bt2020, targetPrimaries: .bt2020, sourcePeak: 4000),
            ColorConversion(from: .pq, to: .linear, sourcePrimaries: .bt2020, targetPrimaries: .bt709, sourcePeak: 1000),
            ColorConversion(from: .linear, to: .sdr, sourcePrimaries: .bt709, targetPrimaries: .bt709, sourcePeak: 1000),
        ]
        for conversion in cases {
            let out = try render(chain([("tonemap", ColorConversionFilter.parameters(for: conversion))]), image)
            let expected = TestImage.from(size: image.size) { x, y in
                let p = image.pixel(x, y)
                let c = conversion.apply(SIMD3(p.x, p.y, p.z))
                return SIMD4(c.x, c.y, c.z, p.w)
            }
            assertClose(out, expected, tolerance: 1, "\(ColorConversionGLSL.key(conversion))")
        }
    }

    /// The curve matters: a PQ picture tone mapped differs from the same signal clipped, above the knee.
    func testTheCurveChangesHighlightsOnly() throws {
        var bt2390 = ColorConversion(from: .pq, to: .sdr, sourcePrimaries: .bt2020, targetPrimaries: .bt709, sourcePeak: 1000)
        var clip = bt2390
        clip.curve = .clip
        let grey = { (nits: Double) in SIMD3<Double>(repeating: TransferMaths.nitsToPQ(nits)) }
        XCTAssertEqual(bt2390.apply(grey(10)).x, clip.apply(grey(10)).x, accuracy: 0.03)
        XCTAssertLessThan(bt2390.apply(grey(190)).x, clip.apply(grey(190)).x - 0.05)
        bt2390.sourcePeak = 4000
        XCTAssertLessThan(bt2390.apply(grey(1000)).x, 1)
    }
}
