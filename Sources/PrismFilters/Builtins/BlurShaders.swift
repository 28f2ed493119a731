import PrismCore
import PrismGPU

/// GLSL for the Gaussian blur of 4:2:0 planes that never leave Y'CbCr (`YUVBlurPlan`).
///
/// The blur is linear and its weights sum to 1, so it commutes with the affine Y'CbCr ↔ R'G'B' maps: blurring
/// each plane is blurring the picture. What the R'G'B' route does to chroma (held over its 2×2 pixels, blurred
/// at full resolution, averaged back over 2×2) is itself a separable filter on the chroma plane,
/// `chromaWeights`, so luma is blurred at full resolution and chroma at a quarter of the pixels, with the
/// same result inside the gamut. Planes are packed four samples a texel (`YUVNativeShaders`): a row pass
/// computes four outputs from a few texels with vec4 arithmetic; the column pass is read by the packing,
/// which sees the blurred planes through the usual `prism_yTexel` / `prism_chromaQuad` / `prism_chromaPair`.
enum BlurShaders {
    /// A plane as samples: `width` per row, `rows` rows, packed four to a texel.
    struct Plane {
        let width: Int
        let rows: Int
        var texels: Int { (width + 3) / 4 }
    }

    /// One-sided weights of the chroma kernel equivalent to hold → Gaussian `weights` → 2-sample mean, per axis:
    /// K(d) = g(2d) + (g(2d − 1) + g(2d + 1)) / 2. It sums to 1 as the Gaussian does.
    static func chromaWeights(_ weights: [Double]) -> [Double] {
        let reach = weights.count - 1
        func g(_ k: Int) -> Double { abs(k) <= reach ? weights[abs(k)] : 0 }
        return (0...((reach + 1) / 2)).map { d in g(2 * d) + (g(2 * d - 1) + g(2 * d + 1)) / 2 }
    }

    static func glsl(_ value: Double) -> String { BlurKernel.glsl(value) }

    /// `vec4 prism_planeTexel(int u, int row)`: texel u of `plane` (0 luma, 1 Cb, 2 Cr) of the uploaded frame
    /// (the declarations of `YUVNativeShaders.planeReads` precede it).
    static func planeTexel(_ plane: Int, source: PixelFormat) -> String {
        switch (plane, source) {
        case (0, _):
            return "vec4 prism_planeTexel(int u, int row) { return prism_yTexel(u, row); }\n"
        case (_, .nv12):
            return """
                vec4 prism_planeTexel(int u, int row) {
                    vec4 cb, cr;
                    prism_chromaQuad(u, row, cb, cr);
                    return \(plane == 1 ? "cb" : "cr");
                }

                """
        default:
            return """
                vec4 prism_planeTexel(int u, int row) {
                    return texelFetch(prism_src\(plane), prism_clampTexel(prism_src\(plane), u, row), 0);
                }

                """
        }
    }

    /// The row pass of one plane: target texel (t, row + firstRow) holds samples 4t … 4t+3 of plane row `row`
    /// blurred along the row with `weights` (one-sided, reach R = count − 1), samples beyond the row repeating
    /// the edge sample. Two programs: `inner` for texels whose taps all fall inside the row (fetching 2⌈R/4⌉+1
    /// texels and combining their components), `edge` clamping each tap on its own; `innerColumns` is where
    /// `inner` is right (possibly empty).
    static func rowPass(plane: Plane, weights: [Double], firstRow: Int)
        -> (inner: String, edge: String, innerColumns: Range<Int>) {
        let reach = weights.count - 1
        let span = (reach + 3) / 4
        let last = (plane.width - 4 - reach) >= 0 ? (plane.width - 4 - reach) / 4 : -1
        let innerColumns = span <= last ? span..<(last + 1) : 0..<0
        // Sample m (−R … R+3) relative to the texel's first sample, by name.
        func sums(_ name: (Int) -> String) -> String {
            func quad(_ k: Int) -> String { "vec4(\(name(k)), \(name(k + 1)), \(name(k + 2)), \(name(k + 3)))" }
            var code = "    vec4 sum = \(glsl(weights[0])) * \(quad(0));\n"
            for k in 1..<max(weights.count, 1) {
                code += "    sum += \(glsl(weights[k])) * (\(quad(k)) + \(quad(-k)));\n"
            }
            return code
        }
        let components = ["x", "y", "z", "w"]
        let head = """
            out vec4 prism_out;
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                int row = t.y - \(firstRow);

            """
        var inner = head
        for i in -span...span { inner += "    vec4 a\(i + span) = prism_planeTexel(t.x + \(i), row);\n" }
        inner += sums { m in "a\((m + 4 * span) / 4).\(components[(m + 4 * span) % 4])" }
        inner += "    prism_out = sum;\n}\n"
        var edge = """
            float prism_sampleAt(int x, int row) {
                x = clamp(x, 0, \(plane.width - 1));
                return dot(prism_planeTexel(x >> 2, row), vec4(equal(ivec4(x & 3), ivec4(0, 1, 2, 3))));
            }

            """ + head
        func sample(_ m: Int) -> String { m < 0 ? "s_\(-m)" : "s\(m)" }
        for m in -reach...(reach + 3) { edge += "    float \(sample(m)) = prism_sampleAt(t.x * 4 + \(m), row);\n" }
        edge += sums(sample) + "    prism_out = sum;\n}\n"
        return (inner, edge, innerColumns)
    }

    /// Reads of the blurred planes for the packing: the row passes' targets (`prism_blurLuma`, and
    /// `prism_blurChroma` with Cb rows above Cr rows) summed down their columns, rows clamped to the plane.
    static func columnReads(luma: Plane, chroma: Plane, weights: [Double], chromaWeights: [Double]) -> String {
        func column(_ sampler: String, _ x: String, _ y: String, rows: Int, offset: Int, _ weights: [Double]) -> String {
            func fetch(_ d: Int) -> String {
                let row = d == 0 ? y : "\(y) \(d > 0 ? "+" : "-") \(abs(d))"
                let clamped = "clamp(\(row), 0, \(rows - 1))" + (offset > 0 ? " + \(offset)" : "")
                return "texelFetch(\(sampler), ivec2(\(x), \(clamped)), 0)"
            }
            var code = "\(glsl(weights[0])) * \(fetch(0))"
            for d in 1..<max(weights.count, 1) { code += "\n        + \(glsl(weights[d])) * (\(fetch(d)) + \(fetch(-d)))" }
            return code
        }
        return """
            uniform sampler2D prism_blurLuma;
            uniform sampler2D prism_blurChroma;
            vec4 prism_yTexel(int tx, int y) {
                int x = min(tx, \(luma.texels - 1));
                return \(column("prism_blurLuma", "x", "y", rows: luma.rows, offset: 0, weights));
            }
            void prism_chromaQuad(int k, int cy, out vec4 cb, out vec4 cr) {
                int x = min(k, \(chroma.texels - 1));
                cb = \(column("prism_blurChroma", "x", "cy", rows: chroma.rows, offset: 0, chromaWeights));
                cr = \(column("prism_blurChroma", "x", "cy", rows: chroma.rows, offset: chroma.rows, chromaWeights));
            }
            vec4 prism_chromaPair(int j, int cy) {
                vec4 cb, cr;
                prism_chromaQuad(j >> 1, cy, cb, cr);
                return (j & 1) == 0 ? vec4(cb.x, cr.x, cb.y, cr.y) : vec4(cb.z, cr.z, cb.w, cr.w);
            }

            """
    }

    // MARK: Large σ: reduce, blur, enlarge

    /// The first reduction: target texel (j, r) holds the means over luma rows 2(r−1) and 2(r−1)+1 of samples
    /// [f(j−1), fj) (r), and of chroma samples [f/2·(j−1), f/2·j) of the chroma row they share (g, b); samples and
    /// rows beyond the plane repeat the edge, so column 0 and row 0 hold the left and top edges themselves, the last
    /// column and row the right and bottom ones. `inner`: whole blocks inside the frame (`innerColumns`), summed a
    /// texel at a time; `edge`: every sample clamped. Two rows a fragment: chroma is read once for both.
    static func rowMeans(luma: Plane, chroma: Plane, factor f: Int) -> (inner: String, edge: String, innerColumns: Range<Int>) {
        let m = f / 2
        // Sum of `count` samples from `start`; inside one texel when count < 4, whole texels otherwise.
        func sum(count: Int, start: String, texel: (String) -> String) -> String {
            if count >= 4 {
                return "for (int i = 0; i < \(count / 4); i++) { \(texel("(\(start) >> 2) + i")) }"
            }
            return """
                {
                        vec4 inside = vec4(greaterThanEqual(ivec4(0, 1, 2, 3), ivec4(\(start) & 3)))
                            * vec4(lessThan(ivec4(0, 1, 2, 3), ivec4((\(start) & 3) + \(count))));
                        \(texel("\(start) >> 2").replacingOccurrences(of: "vec4(1.0)", with: "inside"))
                    }
                """
        }
        let head = """
            out vec4 prism_out;
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                int start = \(f) * (t.x - 1), cstart = \(m) * (t.x - 1);
                int y0 = clamp(2 * t.y - 2, 0, \(luma.rows - 1)), y1 = clamp(2 * t.y - 1, 0, \(luma.rows - 1)), cy = y0 >> 1;
                float luma = 0.0, cbSum = 0.0, crSum = 0.0;

            """
        let tail = "    prism_out = vec4(luma / \(2 * f).0, cbSum / \(m).0, crSum / \(m).0, 1.0);\n}\n"
        let inner = head + """
                \(sum(count: f, start: "start") { "luma += dot(prism_yTexel(\($0), y0) + prism_yTexel(\($0), y1), vec4(1.0));" })
                \(sum(count: m, start: "cstart") { "vec4 cb, cr; prism_chromaQuad(\($0), cy, cb, cr); cbSum += dot(cb, vec4(1.0)); crSum += dot(cr, vec4(1.0));" })

            """ + tail
        let edge = """
            vec4 prism_oneHot(int x) { return vec4(equal(ivec4(x & 3), ivec4(0, 1, 2, 3))); }

            """ + head + """
                for (int i = 0; i < \(f); i++) {
                    int x = clamp(start + i, 0, \(luma.width - 1));
                    luma += dot(prism_yTexel(x >> 2, y0) + prism_yTexel(x >> 2, y1), prism_oneHot(x));
                }
                for (int i = 0; i < \(m); i++) {
                    int x = clamp(cstart + i, 0, \(chroma.width - 1));
                    vec4 cb, cr;
                    prism_chromaQuad(x >> 2, cy, cb, cr);
                    cbSum += dot(cb, prism_oneHot(x));
                    crSum += dot(cr, prism_oneHot(x));
                }

            """ + tail
        return (inner, edge, 1..<(luma.width / f + 1))
    }

    /// Box means by 4 straight from the planes, into the reduced image with its margin (`BlurKernel.Reduced`, f = 4):
    /// texel (j, i) is the mean of luma samples [4(j − m), 4(j − m) + 4) of rows [4(i − m), 4(i − m) + 4), and of the
    /// 2×2 chroma samples under them (m = margin / 4), samples and rows beyond the plane repeating the edge — what
    /// `rowMeans` then `columnMeans` give, in one pass (a pass costs more than the fetches on llvmpipe). `inner`: whole
    /// blocks inside the frame (`innerColumns`, `innerRows`), whole texels a row; `edge`: every sample clamped.
    static func blockMeans(luma: Plane, chroma: Plane, reduced: BlurKernel.Reduced)
        -> (inner: String, edge: String, innerColumns: Range<Int>, innerRows: Range<Int>) {
        precondition(reduced.factor == 4, "straight block means are for f = 4 (larger f: rowMeans, columnMeans)")
        let m = reduced.margin / 4
        let head = """
            out vec4 prism_out;
            void main() {
                ivec2 b = ivec2(gl_FragCoord.xy) - \(m);
                float luma = 0.0, cbSum = 0.0, crSum = 0.0;

            """
        let tail = "    prism_out = vec4(luma / 16.0, cbSum / 4.0, crSum / 4.0, 1.0);\n}\n"
        let inner = head + """
                for (int r = 0; r < 4; r++) luma += dot(prism_yTexel(b.x, 4 * b.y + r), vec4(1.0));
                // Chroma samples 2b.x, 2b.x + 1: one half of texel b.x / 2.
                vec4 side = (b.x & 1) == 0 ? vec4(1.0, 1.0, 0.0, 0.0) : vec4(0.0, 0.0, 1.0, 1.0);
                for (int r = 0; r < 2; r++) {
                    vec4 cb, cr;
                    prism_chromaQuad(b.x >> 1, 2 * b.y + r, cb, cr);
                    cbSum += dot(cb, side);
                    crSum += dot(cr, side);
                }

            """ + tail
        let edge = """
            vec4 prism_oneHot(int x) { return vec4(equal(ivec4(x & 3), ivec4(0, 1, 2, 3))); }

            """ + head + """
                for (int r = 0; r < 4; r++) {
                    int y = clamp(4 * b.y + r, 0, \(luma.rows - 1));
                    for (int i = 0; i < 4; i++) {
                        int x = clamp(4 * b.x + i, 0, \(luma.width - 1));
                        luma += dot(prism_yTexel(x >> 2, y), prism_oneHot(x));
                    }
                }
                for (int r = 0; r < 2; r++) {
                    int cy = clamp(2 * b.y + r, 0, \(chroma.rows - 1));
                    for (int i = 0; i < 2; i++) {
                        int x = clamp(2 * b.x + i, 0, \(chroma.width - 1));
                        vec4 cb, cr;
                        prism_chromaQuad(x >> 2, cy, cb, cr);
                        cbSum += dot(cb, prism_oneHot(x));
                        crSum += dot(cr, prism_oneHot(x));
                    }
                }

            """ + tail
        return (inner, edge, m..<(m + luma.width / 4), m..<(m + luma.rows / 4))
    }

    /// Size of `rowMeans`' target: the blocks across and the row pairs down, plus an edge column and row each side.
    static func rowMeansSize(luma: Plane, factor: Int) -> Size {
        Size(width: (luma.width + factor - 1) / factor + 2, height: (luma.rows + 1) / 2 + 2)
    }

    /// The second reduction, into the reduced image with its margin (`BlurKernel.Reduced`): texel (j, i) is
    /// the mean of the row pairs covering rows [f·i − margin, f·i − margin + f) of the row means' column
    /// j − margin/f + 1 (the margin is a multiple of f, so the rows start on a pair).
    static func columnMeans(reduced: BlurKernel.Reduced, rowMeans: Size) -> String {
        let f = reduced.factor
        return """
            uniform sampler2D prism_rowMeans;
            out vec4 prism_out;
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                int column = clamp(t.x - \(reduced.margin / f - 1), 0, \(rowMeans.width - 1));
                int first = t.y * \(f / 2) - \(reduced.margin / 2) + 1;
                vec4 sum = vec4(0.0);
                for (int r = 0; r < \(f / 2); r++) sum += texelFetch(prism_rowMeans, ivec2(column, clamp(first + r, 0, \(rowMeans.height - 1))), 0);
                prism_out = sum / \(f / 2).0;
            }

            """
    }

    /// One direction of the Gaussian on the reduced image (`sampler`, `size`), as `BlurKernel` does it.
    static func reducedBlur(sampler: String, size: Size, sigma: Double, axis: String, merged: Bool) -> String {
        """
        uniform sampler2D \(sampler);
        out vec4 prism_out;
        void main() {
            vec2 p = gl_FragCoord.xy;
            vec2 size = vec2(\(size.width).0, \(size.height).0);

        """ + BlurKernel.sumCode(sigma: sigma, sampler: sampler, size: "size", axis: axis, merged: merged)
            + "    prism_out = sum;\n}\n"
    }

    /// Reads of the enlarged planes for the packing: a luma sample is the reduced image's bilinear value at its
    /// pixel centre, a chroma sample the value at the centre of its 2×2 pixels. The four luma samples of a texel
    /// span less than one reduced texel (f ≥ 4), so they are interpolated from the six reduced texels around them,
    /// fetched once, rather than by four filtered fetches.
    static func enlargedReads(reduced: BlurKernel.Reduced, reducedSize: Size) -> String {
        let f = Double(reduced.factor)
        let scale = "vec2(\(glsl(1 / (f * Double(reducedSize.width)))), \(glsl(1 / (f * Double(reducedSize.height)))))"
        return """
            uniform sampler2D prism_blurReduced;
            vec4 prism_enlarged(float x, float y) {
                return texture(prism_blurReduced, (vec2(x, y) + \(reduced.margin).0) * \(scale));
            }
            vec4 prism_yTexel(int tx, int y) {
                // Reduced-texel coordinates of the first sample's centre, less half a texel: integer parts index
                // texels, fractions are the bilinear weights.
                vec2 u = (vec2(float(tx * 4), float(y)) + 0.5 + \(reduced.margin).0) / \(glsl(f)) - 0.5;
                vec2 base = floor(u);
                ivec2 b = ivec2(base);
                float v = u.y - base.y;
                vec4 steps = u.x - base.x + vec4(0.0, 1.0, 2.0, 3.0) / \(glsl(f));
                float c0 = mix(texelFetch(prism_blurReduced, b, 0).r, texelFetch(prism_blurReduced, b + ivec2(0, 1), 0).r, v);
                float c1 = mix(texelFetch(prism_blurReduced, b + ivec2(1, 0), 0).r, texelFetch(prism_blurReduced, b + ivec2(1, 1), 0).r, v);
                float c2 = mix(texelFetch(prism_blurReduced, b + ivec2(2, 0), 0).r, texelFetch(prism_blurReduced, b + ivec2(2, 1), 0).r, v);
                vec4 first = mix(vec4(c0), vec4(c1), clamp(steps, 0.0, 1.0));
                vec4 second = mix(vec4(c1), vec4(c2), clamp(steps - 1.0, 0.0, 1.0));
                return mix(first, second, vec4(greaterThan(steps, vec4(1.0))));
            }
            void prism_chromaQuad(int k, int cy, out vec4 cb, out vec4 cr) {
                float x = float(k * 8 + 1), row = float(cy * 2 + 1);
                vec2 s0 = prism_enlarged(x, row).gb, s1 = prism_enlarged(x + 2.0, row).gb;
                vec2 s2 = prism_enlarged(x + 4.0, row).gb, s3 = prism_enlarged(x + 6.0, row).gb;
                cb = vec4(s0.x, s1.x, s2.x, s3.x);
                cr = vec4(s0.y, s1.y, s2.y, s3.y);
            }
            vec4 prism_chromaPair(int j, int cy) {
                float x = float(j * 4 + 1), row = float(cy * 2 + 1);
                return vec4(prism_enlarged(x, row).gb, prism_enlarged(x + 2.0, row).gb);
            }

            """
    }
}
