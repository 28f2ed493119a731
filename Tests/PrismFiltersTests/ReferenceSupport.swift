import XCTest
import PrismCore
@testable import PrismFilters

/// CPU references for the geometry and blur tests, written from the filters' documented maths and
/// not from their shaders.
extension TestImage {
    /// Deterministic noise with every channel varying, alpha included: a wrong pixel cannot hide.
    static func noise(width: Int, height: Int, seed: UInt64 = 1) -> TestImage {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        for i in rgba.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            rgba[i] = UInt8(truncatingIfNeeded: state >> 24)
        }
        return TestImage(size: Size(width: width, height: height), rgba: rgba)
    }

    /// A constant image with a few rectangles painted in (0...255 values, alpha 255).
    static func painted(width: Int, height: Int, background: UInt8 = 0,
                        rects: [(x: Int, y: Int, w: Int, h: Int, value: UInt8)]) -> TestImage {
        var rgba = [UInt8](repeating: background, count: width * height * 4)
        for i in stride(from: 3, to: rgba.count, by: 4) { rgba[i] = 255 }
        for r in rects {
            for y in r.y..<(r.y + r.h) { for x in r.x..<(r.x + r.w) {
                let i = (y * width + x) * 4
                rgba[i] = r.value; rgba[i + 1] = r.value; rgba[i + 2] = r.value
            } }
        }
        return TestImage(size: Size(width: width, height: height), rgba: rgba)
    }

    /// The raw code values at (x, y) (no clamping).
    func codes(_ x: Int, _ y: Int) -> [UInt8] {
        let i = (y * size.width + x) * 4
        return Array(rgba[i..<(i + 4)])
    }

    /// Sum of one channel's code values.
    func channelSum(_ channel: Int) -> Int {
        stride(from: channel, to: rgba.count, by: 4).reduce(0) { $0 + Int(rgba[$1]) }
    }

    /// Builds an image by copying input pixels: `f(x, y)` names the input pixel for output (x, y).
    func remapped(to size: Size, _ f: (Int, Int) -> (Int, Int)) -> TestImage {
        var out = [UInt8](repeating: 0, count: size.pixelCount * 4)
        for y in 0..<size.height { for x in 0..<size.width {
            let (sx, sy) = f(x, y)
            precondition((0..<self.size.width).contains(sx) && (0..<self.size.height).contains(sy))
            let from = (sy * self.size.width + sx) * 4, to = (y * size.width + x) * 4
            for c in 0..<4 { out[to + c] = rgba[from + c] }
        } }
        return TestImage(size: size, rgba: out)
    }

    /// Clockwise rotation by its forward definition: where input pixel (x, y) of a W×H image lands.
    func rotated(_ angle: Int) -> TestImage {
        let image = self
        let w = image.size.width, h = image.size.height
        let size = angle == 180 ? image.size : Size(width: h, height: w)
        var out = [UInt8](repeating: 0, count: size.pixelCount * 4)
        for y in 0..<h { for x in 0..<w {
            let (ox, oy): (Int, Int)
            switch angle {
            case 90: (ox, oy) = (h - 1 - y, x)       // top row becomes the right column
            case 180: (ox, oy) = (w - 1 - x, h - 1 - y)
            default: (ox, oy) = (y, w - 1 - x)       // top row becomes the left column, read upwards
            }
            let from = (y * w + x) * 4, to = (oy * size.width + ox) * 4
            for c in 0..<4 { out[to + c] = image.rgba[from + c] }
        } }
        return TestImage(size: size, rgba: out)
    }

    /// Inverts RGB, keeps alpha (the `invert` filter's definition).
    var inverted: TestImage {
        var out = rgba
        for i in out.indices where i % 4 != 3 { out[i] = 255 - out[i] }
        return TestImage(size: size, rgba: out)
    }
}

/// One-dimensional resampling weights: for each output index, (input index, weight) pairs summing to 1.
/// `origin` and `ratio` place output sample i's centre at input position origin + (i + 0.5)·ratio.
enum Resample1D {
    /// Shrinking (ratio > 1): each input pixel [k, k+1] weighted by its overlap with the footprint
    /// [c - ratio/2, c + ratio/2]. Otherwise: linear interpolation between pixel centres, edges clamped.
    static func weights(count: Int, inputCount: Int, origin: Double, ratio: Double) -> [[(Int, Double)]] {
        (0..<count).map { i in
            let c = origin + (Double(i) + 0.5) * ratio
            if ratio > 1 {
                let lo = c - ratio / 2, hi = c + ratio / 2
                var list: [(Int, Double)] = []
                for k in 0..<inputCount {
                    let overlap = min(Double(k + 1), hi) - max(Double(k), lo)
                    if overlap > 0 { list.append((k, overlap)) }
                }
                let total = list.reduce(0) { $0 + $1.1 }
                return list.map { ($0.0, $0.1 / total) }
            }
            let t = c - 0.5
            let k = Int(t.rounded(.down)), f = t - Double(k)
            func clamp(_ v: Int) -> Int { min(max(v, 0), inputCount - 1) }
            return [(clamp(k), 1 - f), (clamp(k + 1), f)]
        }
    }

    /// Applies per-axis weights to an image (rows first, then columns), in double, rounding once.
    static func apply(_ image: TestImage, x: [[(Int, Double)]], y: [[(Int, Double)]]) -> [[SIMD4<Double>]] {
        let w = image.size.width, h = image.size.height
        var rows = [[SIMD4<Double>]](repeating: [], count: h)
        for row in 0..<h {
            rows[row] = x.map { taps in taps.reduce(SIMD4<Double>.zero) { $0 + image.pixel($1.0, row) * $1.1 } }
        }
        _ = w
        return y.map { taps in
            (0..<x.count).map { col in taps.reduce(SIMD4<Double>.zero) { $0 + rows[$1.0][col] * $1.1 } }
        }
    }
}

/// The exact Gaussian of the blur definition: σ = radius/2, taps to ±ceil(3σ), normalised, edges repeated.
func gaussianReference(_ image: TestImage, radius: Double) -> TestImage {
    let sigma = radius / 2
    let reach = Int((3 * sigma).rounded(.up))
    var kernel = (-reach...reach).map { k in exp(-Double(k * k) / (2 * sigma * sigma)) }
    let total = kernel.reduce(0, +)
    kernel = kernel.map { $0 / total }
    let w = image.size.width, h = image.size.height
    var horizontal = [SIMD4<Double>](repeating: .zero, count: w * h)
    for y in 0..<h { for x in 0..<w {
        var sum = SIMD4<Double>.zero
        for (j, weight) in kernel.enumerated() { sum += image.pixel(x + j - reach, y) * weight }
        horizontal[y * w + x] = sum
    } }
    return TestImage.from(size: image.size) { x, y in
        var sum = SIMD4<Double>.zero
        for (j, weight) in kernel.enumerated() {
            let yy = min(max(y + j - reach, 0), h - 1)
            sum += horizontal[yy * w + x] * weight
        }
        return sum
    }
}

extension XCTestCase {
    /// Asserts that `body` throws an InvalidRequest whose message names `parameter`.
    func assertUsageError(naming parameter: String, _ label: String, file: StaticString = #filePath, line: UInt = #line,
                          _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("\(label): no error", file: file, line: line)
        } catch let error as InvalidRequest {
            XCTAssertTrue(error.message.contains(parameter), "\(label): '\(error.message)' does not name \(parameter)",
                          file: file, line: line)
        } catch {
            XCTFail("\(label): not an InvalidRequest: \(error)", file: file, line: line)
        }
    }
}
