import PrismCore

/// What a point-wise kernel does to a colour, as data rather than GLSL, for kernels whose map is simple
/// enough to be carried into another colour space. The compiler uses it to run a chain on the frame's own
/// Y'CbCr values (see `YUVPlan`): an affine map on R'G'B' is an affine map on Y'CbCr too (conjugated by
/// the conversions), and a curve of a weighted sum of R'G'B' is a curve of a weighted sum of Y'CbCr.
///
/// A kernel reports a form only while its map takes every colour of the unit cube into the unit cube:
/// then the clamp after each step of an R'G'B' chain changes nothing, and leaving it out on Y'CbCr gives
/// the same result (for inputs inside the R'G'B' gamut).
package enum ColorForm: Sendable, Equatable {
    /// rgb' = matrix · rgb + offset; alpha kept.
    case affine(AffineColor)
    /// g = curve(clamp(dot(weights, rgb), 0, 1)); rgb' = mix(rgb, (g, g, g), intensity); alpha kept.
    case lumaCurve(LumaCurve)

    /// A short name for compile signatures: a change between forms changes the compiled passes.
    var kind: String {
        switch self {
        case .affine: "affine"
        case .lumaCurve(let curve): "curve:\(curve.identity)"
        }
    }
}

/// An affine map on three colour components: `matrix · x + offset`, rows first.
package struct AffineColor: Sendable, Equatable {
    package var rows: [SIMD3<Double>]
    package var offset: SIMD3<Double>

    package init(rows: [SIMD3<Double>], offset: SIMD3<Double>) {
        precondition(rows.count == 3, "an affine colour map has three rows")
        self.rows = rows
        self.offset = offset
    }

    package static let identity = AffineColor(rows: [SIMD3(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1)], offset: .zero)

    /// rgb' = mix(rgb, self(rgb), amount): the map a kernel with an intensity applies.
    package func mixed(_ amount: Double) -> AffineColor {
        let id = AffineColor.identity
        return AffineColor(rows: (0..<3).map { id.rows[$0] * (1 - amount) + rows[$0] * amount }, offset: offset * amount)
    }

    package func apply(_ x: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((rows[0] * x).sum(), (rows[1] * x).sum(), (rows[2] * x).sum()) + offset
    }

    /// `self` after `first`: x ↦ self(first(x)).
    package func after(_ first: AffineColor) -> AffineColor {
        let columns = (0..<3).map { column in SIMD3(first.rows[0][column], first.rows[1][column], first.rows[2][column]) }
        let rows = self.rows.map { row in SIMD3<Double>((0..<3).map { (row * columns[$0]).sum() }) }
        return AffineColor(rows: rows, offset: apply(first.offset))
    }

    /// True when every point of the unit cube lands inside it (each row's extremes are at the corners).
    package var mapsUnitCubeIntoItself: Bool {
        let tolerance = 1e-9
        return (0..<3).allSatisfy { i in
            let row = rows[i]
            let low = offset[i] + row.replacing(with: 0, where: row .> 0).sum()
            let high = offset[i] + row.replacing(with: 0, where: row .< 0).sum()
            return low >= -tolerance && high <= 1 + tolerance
        }
    }

    /// The rows as `[[Double]]` for `setMatrix3`.
    var rowArrays: [[Double]] { rows.map { [$0.x, $0.y, $0.z] } }
}

/// A tone curve applied to a weighted sum of R'G'B' giving grey (noir, tonal).
package struct LumaCurve: Sendable, Equatable {
    /// Which curve (a look's name): equal identities have equal samples.
    package var identity: String
    package var weights: SIMD3<Double>
    /// The curve as a GLSL expression of `float l` (the weighted sum, clamped to 0...1): evaluated, not
    /// looked up (a table lookup per pixel is a gather on software rasterisers).
    package var glsl: String
    package var intensity: Double
}

/// A kernel whose output is a mix of two of its inputs by a channel of a third:
/// `out = mix(input[from], input[to], clamp(input[weight], 0, 1)[channel])`. The mix commutes with the
/// colour conversions (the weights add up to 1), so it runs on Y'CbCr as it is; the weight is read from an
/// R'G'B' generator (a mask).
package struct ColorBlend: Sendable, Equatable {
    package var from: Int
    package var to: Int
    package var weight: Int
    package var channel: Int
}
