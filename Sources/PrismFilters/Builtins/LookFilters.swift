import Foundation
import PrismCore
import PrismGPU

/// Photo effects as 3D colour lookup tables generated from documented functions (the CPU reference
/// of each look is the same function, evaluated directly), and `lut` for .cube files.
enum LookFilters {
    static let intensity = ParameterSpec("intensity", .float(0...1), default: .float(1),
                                         "mix between the original (0) and the full look (1)")
    static let interpolation = ParameterSpec("interp", .choice(["tetrahedral", "trilinear"]),
                                             default: .choice("tetrahedral"), "how the table is interpolated")

    static var definitions: [FilterDefinition] {
        ColorLook.all.map { look in
            FilterDefinition(
                name: look.name, summary: look.summary, maths: look.maths + " Applied through a 33³ LUT.",
                parameters: [intensity, interpolation], example: "\(look.name)(intensity=0.8)",
                positional: ["intensity"],
                make: { values in
                    let kernel = LUTKernel(dimension: 33, table: ColorLook.table(dimension: 33, look.apply), parameters: values)
                    if let glsl = look.greyGLSL {
                        kernel.lumaCurve = LumaCurve(identity: look.name, weights: ColorLook.lumaWeights, glsl: glsl,
                                                     intensity: 1)
                    }
                    return kernel
                })
        }
    }
}

/// A named colour transform on R'G'B' in 0...1.
package struct ColorLook: Sendable {
    package let name: String
    package let summary: String
    package let maths: String
    /// For a look that is a grey tone curve of `luma`: the curve (`apply` is then grey(luma(c)) in every
    /// channel), and the same curve in GLSL as an expression of `float l` in 0...1.
    package var grey: (@Sendable (Double) -> Double)? = nil
    package var greyGLSL: String? = nil
    package let apply: @Sendable (SIMD3<Double>) -> SIMD3<Double>

    package static let lumaWeights = SIMD3<Double>(0.2126, 0.7152, 0.0722)
    static func luma(_ c: SIMD3<Double>) -> Double { (lumaWeights * c).sum() }
    static func noirCurve(_ y: Double) -> Double { min(max(sCurve(y, 1.2), 0), 1) }
    static func tonalCurve(_ y: Double) -> Double { 0.06 + 0.88 * pow(max(y, 0), 0.9) }
    static func clamp01(_ c: SIMD3<Double>) -> SIMD3<Double> { simd_clamp(c, .zero, .one) }
    /// Smooth S-curve around 0.5 with strength k (0 = identity).
    static func sCurve(_ v: Double, _ k: Double) -> Double {
        let s = v * v * (3 - 2 * v)
        return v + (s - v) * k
    }

    package static let all: [ColorLook] = [
        ColorLook(name: "mono", summary: "Black and white (like CIPhotoEffectMono).",
                  maths: "y = 0.2126 r + 0.7152 g + 0.0722 b; rgb' = (y, y, y).") { c in
            let y = luma(c)
            return SIMD3(y, y, y)
        },
        ColorLook(name: "noir", summary: "High-contrast black and white (like CIPhotoEffectNoir).",
                  maths: "y = luma(rgb); s = y²(3 - 2y); y' = y + 1.2 (s - y), clamped; rgb' = (y', y', y').",
                  grey: noirCurve, greyGLSL: "clamp(l + 1.2 * (l * l * (3.0 - 2.0 * l) - l), 0.0, 1.0)") { c in
            SIMD3(repeating: noirCurve(luma(c)))
        },
        ColorLook(name: "tonal", summary: "Soft black and white (like CIPhotoEffectTonal).",
                  maths: "y = luma(rgb); y' = 0.06 + 0.88 y^0.9; rgb' = (y', y', y').",
                  grey: tonalCurve, greyGLSL: "0.06 + 0.88 * pow(l, 0.9)") { c in
            SIMD3(repeating: tonalCurve(luma(c)))
        },
        ColorLook(name: "instant", summary: "Warm faded instant-film look (like CIPhotoEffectInstant).",
                  maths: "rgb1 = mix(y, rgb, 0.85); rgb' = 0.08 + 0.86 · rgb1 · (1.06, 1.0, 0.88), clamped.") { c in
            let y = luma(c)
            let desaturated = SIMD3(repeating: y) + (c - SIMD3(repeating: y)) * 0.85
            return clamp01(0.08 + 0.86 * desaturated * SIMD3(1.06, 1.0, 0.88))
        },
        ColorLook(name: "transfer", summary: "Vintage photo-transfer look (like CIPhotoEffectTransfer).",
                  maths: "rgb1 = S-curve(rgb, 0.35) per channel; rgb' = 0.05 + 0.92 · rgb1 · (1.08, 1.0, 0.80) + (0.02, 0.01, 0), clamped.") { c in
            let curved = SIMD3(sCurve(c.x, 0.35), sCurve(c.y, 0.35), sCurve(c.z, 0.35))
            return clamp01(0.05 + 0.92 * curved * SIMD3(1.08, 1.0, 0.80) + SIMD3(0.02, 0.01, 0))
        },
        ColorLook(name: "chrome", summary: "Punchy saturated colour (like CIPhotoEffectChrome).",
                  maths: "rgb1 = mix(y, rgb, 1.3); rgb' = S-curve(rgb1, 0.4) per channel, clamped.") { c in
            let y = luma(c)
            let saturated = clamp01(SIMD3(repeating: y) + (c - SIMD3(repeating: y)) * 1.3)
            return clamp01(SIMD3(sCurve(saturated.x, 0.4), sCurve(saturated.y, 0.4), sCurve(saturated.z, 0.4)))
        },
        ColorLook(name: "fade", summary: "Washed-out, lifted blacks (like CIPhotoEffectFade).",
                  maths: "rgb1 = mix(y, rgb, 0.6); rgb' = 0.12 + 0.8 · rgb1.") { c in
            let y = luma(c)
            return 0.12 + 0.8 * (SIMD3(repeating: y) + (c - SIMD3(repeating: y)) * 0.6)
        },
        ColorLook(name: "process", summary: "Cross-processed: cool shadows, warm highlights (like CIPhotoEffectProcess).",
                  maths: "y = luma(rgb); rgb' = rgb + (1 - y)·(-0.04, 0, 0.08) + y·(0.06, 0.03, -0.08), then S-curve 0.25, clamped.") { c in
            let y = luma(c)
            let toned = c + (1 - y) * SIMD3(-0.04, 0, 0.08) + y * SIMD3(0.06, 0.03, -0.08)
            let t = clamp01(toned)
            return clamp01(SIMD3(sCurve(t.x, 0.25), sCurve(t.y, 0.25), sCurve(t.z, 0.25)))
        },
    ]

    /// Samples `f` on a dimension³ grid, red fastest.
    package static func table(dimension: Int, _ f: (SIMD3<Double>) -> SIMD3<Double>) -> [SIMD3<Float>] {
        var values: [SIMD3<Float>] = []
        values.reserveCapacity(dimension * dimension * dimension)
        let scale = 1 / Double(dimension - 1)
        for b in 0..<dimension { for g in 0..<dimension { for r in 0..<dimension {
            let out = f(SIMD3(Double(r), Double(g), Double(b)) * scale)
            values.append(SIMD3(Float(out.x), Float(out.y), Float(out.z)))
        } } }
        return values
    }
}

private func simd_clamp(_ v: SIMD3<Double>, _ lo: SIMD3<Double>, _ hi: SIMD3<Double>) -> SIMD3<Double> {
    v.replacing(with: lo, where: v .< lo).replacing(with: hi, where: v .> hi)
}

/// Applies a 3D LUT (dimension³ entries over `domainMin...domainMax`) with tetrahedral or trilinear
/// interpolation done in float in the shader, mixed with the input by `intensity`.
///
/// A table whose entries are exactly an affine function of their grid position (mono and fade are:
/// a matrix and an offset) is applied as that matrix: tetrahedral and trilinear interpolation of such
/// a table both return the affine function itself, so the result is the same and the 3D lookups —
/// the costliest thing in a pass on a software rasteriser — are skipped.
final class LUTKernel: ParameterizedKernel {
    let inputCount = 1
    let isPointwise = true
    let dimension: Int
    let table: [SIMD3<Float>]
    let domainMin: SIMD3<Float>
    let domainMax: SIMD3<Float>
    var parameters: ParameterValues
    private var texture: Texture?

    init(dimension: Int, table: [SIMD3<Float>], domainMin: SIMD3<Float> = .zero, domainMax: SIMD3<Float> = .one,
         parameters: ParameterValues) {
        self.dimension = dimension
        self.table = table
        self.domainMin = domainMin
        self.domainMax = domainMax
        self.parameters = parameters
        affine = LUTKernel.affineFit(dimension: dimension, table: table)
        affineRows = affine.map { fit in (0..<3).map { row in fit.columns.map { Double($0[row]) } } } ?? []
    }

    /// The affine fit's matrix as rows, for the uniform (computed once).
    private let affineRows: [[Double]]

    /// The table as `offset + columns · x` (x the unit grid position), when that is what it is.
    let affine: (offset: SIMD3<Float>, columns: [SIMD3<Float>])?

    static func affineFit(dimension n: Int, table: [SIMD3<Float>]) -> (offset: SIMD3<Float>, columns: [SIMD3<Float>])? {
        guard n >= 2, table.count == n * n * n else { return nil }
        func entry(_ r: Int, _ g: Int, _ b: Int) -> SIMD3<Float> { table[(b * n + g) * n + r] }
        let offset = entry(0, 0, 0)
        let columns = [entry(n - 1, 0, 0) - offset, entry(0, n - 1, 0) - offset, entry(0, 0, n - 1) - offset]
        let scale = 1 / Float(n - 1)
        for b in 0..<n { for g in 0..<n { for r in 0..<n {
            let x = SIMD3(Float(r), Float(g), Float(b)) * scale
            let predicted = offset + columns[0] * x.x + columns[1] * x.y + columns[2] * x.z
            let error = predicted - entry(r, g, b)
            if max(abs(error.x), abs(error.y), abs(error.z)) > 1e-5 { return nil }
        } } }
        return (offset, columns)
    }

    var cost: Int { affine != nil ? 0 : parameters.word("interp") == "trilinear" ? 8 : 4 }

    /// Set for looks that are a grey curve of luma (noir, tonal): the curve itself, which runs where the
    /// frame stays in Y'CbCr (the table serves R'G'B' passes).
    var lumaCurve: LumaCurve?

    /// The table as data (see `ColorForm`): an affine table's matrix (through the domain mapping, mixed by
    /// intensity), or a look's grey curve; nil for any other table, or a map that leaves the unit cube.
    var colorForm: ColorForm? {
        let intensity = parameters.double("intensity")
        if var curve = lumaCurve {
            curve.intensity = intensity
            return .lumaCurve(curve)
        }
        guard let affine else { return nil }
        let scale = SIMD3<Double>(1 / SIMD3<Double>(domainMax - domainMin))
        let low = SIMD3<Double>(domainMin)
        let rows = (0..<3).map { i in
            SIMD3(Double(affine.columns[0][i]), Double(affine.columns[1][i]), Double(affine.columns[2][i])) * scale
        }
        let offset = SIMD3<Double>(affine.offset) - SIMD3((0..<3).map { (rows[$0] * low).sum() })
        let form = AffineColor(rows: rows, offset: offset).mixed(intensity)
        return form.mapsUnitCubeIntoItself ? .affine(form) : nil
    }

    var uniforms: [KernelUniform] {
        let span = domainMax - domainMin
        return [
            KernelUniform("$intensity", .float, .parameter("intensity")),
            KernelUniform("$domainMin", .vec3, .constant(.vec3(domainMin.x, domainMin.y, domainMin.z))),
            KernelUniform("$domainScale", .vec3, .constant(.vec3(1 / span.x, 1 / span.y, 1 / span.z))),
            KernelUniform("$lutMax", .float, .constant(.float(Float(dimension - 1)))),
        ] + (affine.map { affine in
            [KernelUniform("$affineMatrix", .mat3, .constant(.mat3(rows: affineRows))),
             KernelUniform("$affineOffset", .vec3, .constant(.vec3(affine.offset.x, affine.offset.y, affine.offset.z)))]
        } ?? [])
    }

    /// The table, made by `prepare` (none for an affine table: its matrix is the interpolation).
    var textures: [KernelTexture] { [KernelTexture("$lut", .sampler3D) { [self] in texture }] }

    let library = """
        vec3 $entry(ivec3 i) { return texelFetch($lut, i, 0).rgb; }

        """

    /// The interpolation is fixed when the graph is compiled (it changes the code, not a uniform), and
    /// written with selects rather than branches: llvmpipe evaluates both sides of a branch.
    var expression: String {
        let interpolate = affine != nil
            ? """
                  // An affine table: its interpolation is the matrix itself.
                  vec3 result = $affineOffset + $affineMatrix * (x / n);
              """
            : parameters.word("interp") == "trilinear"
            ? """
                  // Trilinear from the cell's eight corners, not the sampler's filtering: that precision is the
                  // driver's (8-bit weights on many GPUs; softpipe's 3D filtering was 100 codes off at a face).
                  vec3 c00 = mix($entry(i), $entry(i + ivec3(1, 0, 0)), f.r);
                  vec3 c10 = mix($entry(i + ivec3(0, 1, 0)), $entry(i + ivec3(1, 1, 0)), f.r);
                  vec3 c01 = mix($entry(i + ivec3(0, 0, 1)), $entry(i + ivec3(1, 0, 1)), f.r);
                  vec3 c11 = mix($entry(i + ivec3(0, 1, 1)), $entry(i + ivec3(1, 1, 1)), f.r);
                  vec3 result = mix(mix(c00, c10, f.g), mix(c01, c11, f.g), f.b);
              """
            : """
                  // Tetrahedral: from the cell's origin to its far corner along the axes in decreasing
                  // order of the fractions; four lookups, exact on the cube's diagonal.
                  bool rg = f.r >= f.g, gb = f.g >= f.b, rb = f.r >= f.b;
                  ivec3 first = rg ? (rb ? ivec3(1, 0, 0) : ivec3(0, 0, 1)) : (gb ? ivec3(0, 1, 0) : ivec3(0, 0, 1));
                  ivec3 last = rg ? (gb ? ivec3(0, 0, 1) : ivec3(0, 1, 0)) : (rb ? ivec3(0, 0, 1) : ivec3(1, 0, 0));
                  ivec3 second = ivec3(1) - last;
                  float high = max(f.r, max(f.g, f.b)), low = min(f.r, min(f.g, f.b));
                  float middle = f.r + f.g + f.b - high - low;
                  vec3 v0 = $entry(i), v1 = $entry(i + first), v2 = $entry(i + second), v3 = $entry(i + ivec3(1));
                  vec3 result = v0 + high * (v1 - v0) + middle * (v2 - v1) + low * (v3 - v2);
              """
        return """
            vec4 $main(vec2 p) {
                vec4 c = $in0(p);
                float n = $lutMax;
                vec3 x = clamp((c.rgb - $domainMin) * $domainScale, 0.0, 1.0) * n;
                vec3 base = min(floor(x), vec3(n - 1.0));
                vec3 f = x - base;
                ivec3 i = ivec3(base);
            \(interpolate)
                return vec4(mix(c.rgb, result, $intensity), c.a);
            }

            """
    }

    private var users = 0

    func prepare() throws {
        try KernelContextError.check(texture?.thread, filter: "a colour table")
        if texture == nil && affine == nil { texture = try Texture(dimension: dimension, rgb: table) }
        users += 1
    }

    func releaseGPUResources() {
        users -= 1
        if users <= 0 { texture = nil }
    }

}

/// `lut(file=…)`: a Resolve/Adobe .cube file (1D or 3D), applied like the built-in looks.
enum LUTFileFilter {
    static let definition = FilterDefinition(
        name: "lut", summary: "Applies a .cube colour lookup table (1D or 3D, Resolve/Adobe format).",
        maths: """
            3D: the input (mapped from DOMAIN_MIN...DOMAIN_MAX to the table) is interpolated tetrahedrally
            (or trilinearly); 1D: each channel through its curve, linearly. Then mixed with the input by intensity.
            1D tables are applied as an equivalent 33³ 3D table evaluated from the curve.
            """,
        parameters: [
            ParameterSpec("file", .text, default: .text(""), "path of the .cube file"),
            LookFilters.intensity, LookFilters.interpolation,
        ],
        example: "lut(file=looks/teal-orange.cube, intensity=0.7)",
        positional: ["file", "intensity"],
        make: { values in
            let path = values.word("file")
            guard !path.isEmpty else { throw InvalidRequest("lut needs file=PATH.cube") }
            let cube = try CubeLUT(contentsOfFile: path)
            switch cube.kind {
            case .threeD(let size):
                return LUTKernel(dimension: size, table: cube.values, domainMin: cube.domainMin,
                                 domainMax: cube.domainMax, parameters: values)
            case .oneD:
                // Sample the curves into a 3D table over the file's domain.
                let lo = SIMD3<Double>(cube.domainMin), hi = SIMD3<Double>(cube.domainMax)
                let table = ColorLook.table(dimension: 33) { unit in
                    let rgb = cube.apply(SIMD3<Float>(lo + unit * (hi - lo)))
                    return SIMD3<Double>(rgb)
                }
                return LUTKernel(dimension: 33, table: table, domainMin: cube.domainMin, domainMax: cube.domainMax,
                                 parameters: values)
            }
        })
}
