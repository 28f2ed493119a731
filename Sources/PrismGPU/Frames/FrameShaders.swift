import PrismCore

/// The R'G'B' → Y'CbCr rows and offsets a packing pass uses. Gray output is full-range luma.
package struct PackCoefficients: Equatable, Sendable {
    package var yRow, uRow, vRow, bias: SIMD3<Float>

    package init(layout: PackedFrameLayout, colorSpace: YUVColorSpace) {
        var space = colorSpace
        if layout.format == .gray { space.range = .full }
        let (rows, offset) = space.rgbToYUVMatrix(bitDepth: layout.format.bitDepth)
        func vector(_ v: [Double]) -> SIMD3<Float> { SIMD3(Float(v[0]), Float(v[1]), Float(v[2])) }
        yRow = vector(rows[0])
        uRow = vector(rows[1])
        vRow = vector(rows[2])
        bias = vector(offset)
    }
}

/// One draw of a packing pass: a fragment `main` and the rows of the packed target it covers.
package struct PackDraw: Sendable {
    package var main: String
    package var rows: Range<Int>
    /// The target columns it covers (nil: all).
    package var columns: Range<Int>?
    /// The pixels each texel it draws holds: columns × rows (e.g. 4 × 2 when a fragment packs four pixels of
    /// two rows), for draws limited to part of the picture (`CompiledPass.MaskRegion`).
    package var texelPixels: Size

    package init(main: String, rows: Range<Int>, columns: Range<Int>? = nil, texelPixels: Size = Size(width: 4, height: 1)) {
        self.main = main
        self.rows = rows
        self.columns = columns
        self.texelPixels = texelPixels
    }
}

/// How a packing pass produces a `PackedFrameLayout`: its draws, the render target they draw into, and
/// how that target is read back into the layout (nil: all of attachment 0, row for row).
package struct PackPlan: Sendable {
    package var draws: [PackDraw]
    package var targetSize: Size
    package var attachments: Int
    package var readPlan: [ReadRegion]?
}

/// GLSL for the two ends of every frame's trip through the GPU: reading uploaded planes as R'G'B'A
/// (`sourceFunctions`) and writing the encoder's planes, packed four bytes per texel into one render
/// target (`packMain`). The filter compiler puts its own stages between them, so either end can share
/// a pass with the filters.
///
/// Coordinates are pixel centres (x + 0.5, y + 0.5) with y = 0 at the image's top row; textures hold
/// the top row first, so no flips are needed anywhere.
///
/// Chroma is resampled the simplest exact way: upsampled by sample-and-hold (a chroma sample covers its
/// 2×2, 2×1 or 1×1 block of pixels) and downsampled by the mean of the block. An identity pass therefore
/// returns the chroma planes unchanged, and a packing pass can convert four pixels from one fetch per
/// plane. Output streams are tagged with centred chroma to match.
package enum FrameShaders {
    /// `#version` and precision lines every generated fragment shader starts with (ES 3.10 for
    /// textureGather and integer textures everywhere). Samplers are highp too: their default is lowp, and
    /// llvmpipe then returns 16-bit floats from 32-bit float targets (ISF FLOAT; isf-spec branch).
    package static let header = """
        #version 310 es
        precision highp float;
        precision highp int;
        precision highp usampler2D;
        precision highp sampler2D;

        """

    /// Declares, for uploaded frames of `format` (textures from `UploadedFrame`, uniforms from its `bind`):
    /// - `vec4 prism_fetchSource(vec2 p)`: the pixel at p as R'G'B'A in 0...1;
    /// - `void prism_sourceQuad(ivec2 t, out vec4 q0, … q3)`: pixels (4t.x ... 4t.x+3, t.y) at once, with
    ///   one fetch per plane where the layout allows.
    /// `clamped`: R'G'B' is clamped to 0...1 (what filters expect); false leaves colours outside the cube as
    /// they are, so a graph with no filter packs Y'CbCr back exactly (super-whites, edges of subsampled chroma).
    package static func sourceFunctions(for format: PixelFormat, clamped: Bool = true) -> String {
        let conversion = clamped ? "clamp(prism_yuvToRgb * (vec3(y, u, v) - prism_yuvOffset), 0.0, 1.0)"
            : "prism_yuvToRgb * (vec3(y, u, v) - prism_yuvOffset)"
        let yuvUniforms = """
            uniform mat3 prism_yuvToRgb;
            uniform vec3 prism_yuvOffset;
            vec4 prism_rgb(float y, float u, float v) {
                return vec4(\(conversion), 1.0);
            }

            """
        // Chroma sample coordinates for pixel i.
        let chroma: String
        switch format {
        case .yuv420p, .nv12, .yuv420p10le, .yuv420p16le: chroma = "(i >> 1)"
        case .yuv422p, .yuv422p10le: chroma = "ivec2(i.x >> 1, i.y)"
        default: chroma = "i"
        }
        // Picks sample i.x & 3 of a wide texel with a mask, not dynamic indexing (which llvmpipe spills).
        let wide = """
            float prism_wide(sampler2D s, ivec2 i) {
                return dot(texelFetch(s, ivec2(i.x >> 2, i.y), 0), vec4(equal(ivec4(i.x & 3), ivec4(0, 1, 2, 3))));
            }

            """
        // Generic quad: four single-pixel fetches.
        let genericQuad = """
            void prism_sourceQuad(ivec2 t, out vec4 q0, out vec4 q1, out vec4 q2, out vec4 q3) {
                vec2 p = vec2(float(t.x * 4) + 0.5, float(t.y) + 0.5);
                q0 = prism_fetchSource(p);
                q1 = prism_fetchSource(p + vec2(1.0, 0.0));
                q2 = prism_fetchSource(p + vec2(2.0, 0.0));
                q3 = prism_fetchSource(p + vec2(3.0, 0.0));
            }

            """
        // Per format: the planes' samplers, the single-pixel fetch, and the quad (nil: four single fetches).
        // `rgb(y, u, v)` is a pixel from its Y'CbCr samples.
        func rgb(_ y: String, _ u: String, _ v: String) -> String { "prism_rgb(\(y), \(u), \(v))" }
        let planes: Int, sampler: String, declares: String, fetch: String
        var quad: (fetches: [String], pixels: [String])?
        switch format {
        case .yuv420p, .yuv422p:
            let vs = format == .yuv420p ? 1 : 0
            planes = 3; sampler = "sampler2D"; declares = yuvUniforms + wide
            fetch = """
                ivec2 i = ivec2(p);
                ivec2 c = \(chroma);
                return prism_rgb(prism_wide(prism_src0, i), prism_wide(prism_src1, c), prism_wide(prism_src2, c));
                """
            quad = (["vec4 y = texelFetch(prism_src0, t, 0);",
                     "// Chroma samples 2t.x and 2t.x+1 sit side by side in one wide texel.",
                     "ivec2 c = ivec2(t.x >> 1, t.y >> \(vs));",
                     "bool low = (t.x & 1) == 0;",
                     "vec4 u4 = texelFetch(prism_src1, c, 0), v4 = texelFetch(prism_src2, c, 0);",
                     "vec2 u = low ? u4.xy : u4.zw, v = low ? v4.xy : v4.zw;"],
                    [rgb("y.x", "u.x", "v.x"), rgb("y.y", "u.x", "v.x"), rgb("y.z", "u.y", "v.y"), rgb("y.w", "u.y", "v.y")])
        case .yuv444p:
            planes = 3; sampler = "sampler2D"; declares = yuvUniforms + wide
            fetch = """
                ivec2 i = ivec2(p);
                return prism_rgb(prism_wide(prism_src0, i), prism_wide(prism_src1, i), prism_wide(prism_src2, i));
                """
            quad = (["vec4 y = texelFetch(prism_src0, t, 0), u = texelFetch(prism_src1, t, 0), v = texelFetch(prism_src2, t, 0);"],
                    [rgb("y.x", "u.x", "v.x"), rgb("y.y", "u.y", "v.y"), rgb("y.z", "u.z", "v.z"), rgb("y.w", "u.w", "v.w")])
        case .nv12:
            planes = 2; sampler = "sampler2D"; declares = yuvUniforms + wide
            fetch = """
                ivec2 i = ivec2(p);
                ivec2 c = \(chroma);
                vec4 pairs = texelFetch(prism_src1, ivec2(c.x >> 1, c.y), 0);
                vec2 uv = (c.x & 1) == 0 ? pairs.xy : pairs.zw;
                return prism_rgb(prism_wide(prism_src0, i), uv.x, uv.y);
                """
            quad = (["vec4 y = texelFetch(prism_src0, t, 0);",
                     "vec4 uv = texelFetch(prism_src1, ivec2(t.x, t.y >> 1), 0);  // Cb0 Cr0 Cb1 Cr1"],
                    [rgb("y.x", "uv.x", "uv.y"), rgb("y.y", "uv.x", "uv.y"), rgb("y.z", "uv.z", "uv.w"), rgb("y.w", "uv.z", "uv.w")])
        case .yuv420p10le, .yuv422p10le, .yuv420p16le, .yuv444p16le:
            planes = 3; sampler = "usampler2D"; declares = yuvUniforms
            let maxCode = "\((1 << format.bitDepth) - 1).0"
            fetch = """
                ivec2 i = ivec2(p);
                ivec2 c = \(chroma);
                return prism_rgb(float(texelFetch(prism_src0, i, 0).r) / \(maxCode),
                                 float(texelFetch(prism_src1, c, 0).r) / \(maxCode),
                                 float(texelFetch(prism_src2, c, 0).r) / \(maxCode));
                """
        case .yuyv422:
            planes = 1; sampler = "sampler2D"; declares = yuvUniforms
            fetch = """
                ivec2 i = ivec2(p);
                vec4 pair = texelFetch(prism_src0, ivec2(i.x >> 1, i.y), 0);
                return prism_rgb((i.x & 1) == 0 ? pair.r : pair.b, pair.g, pair.a);
                """
            quad = (["vec4 a = texelFetch(prism_src0, ivec2(t.x * 2, t.y), 0), b = texelFetch(prism_src0, ivec2(t.x * 2 + 1, t.y), 0);"],
                    [rgb("a.r", "a.g", "a.a"), rgb("a.b", "a.g", "a.a"), rgb("b.r", "b.g", "b.a"), rgb("b.b", "b.g", "b.a")])
        case .rgba, .bgra:
            planes = 1; sampler = "sampler2D"; declares = ""
            fetch = "return texelFetch(prism_src0, ivec2(p), 0)\(format == .bgra ? ".bgra" : "");"
        case .gray:
            planes = 1; sampler = "sampler2D"; declares = wide
            fetch = "return vec4(vec3(prism_wide(prism_src0, ivec2(p))), 1.0);"
            quad = (["vec4 y = texelFetch(prism_src0, t, 0);"],
                    ["vec4(vec3(y.x), 1.0)", "vec4(vec3(y.y), 1.0)", "vec4(vec3(y.z), 1.0)", "vec4(vec3(y.w), 1.0)"])
        }
        let indent = { (lines: String) in lines.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n") }
        let samplers = (0..<planes).map { "uniform \(sampler) prism_src\($0);\n" }.joined()
        let quadFunction = quad.map { quad in
            "void prism_sourceQuad(ivec2 t, out vec4 q0, out vec4 q1, out vec4 q2, out vec4 q3) {\n"
                + (quad.fetches + quad.pixels.enumerated().map { "q\($0.offset) = \($0.element);" }).map { "    " + $0 + "\n" }.joined()
                + "}\n\n"
        } ?? genericQuad
        return samplers + declares + "vec4 prism_fetchSource(vec2 p) {\n" + indent(fetch) + "\n}\n" + quadFunction
    }

    /// `prism_source(p)` as the filters see it: a fetch, or, in a batched packing pass, the source pixel
    /// the packer is currently converting (every read of the source in such a pass is at that pixel).
    package static func sourceAccessor(batched: Bool) -> String {
        batched
            ? "vec4 prism_current;\nvec4 prism_source(vec2 p) { return prism_current; }\n"
            : "vec4 prism_source(vec2 p) { return prism_fetchSource(p); }\n"
    }

    /// How many times the packing pass for `format` evaluates each pixel: once for RGB, gray and NV12
    /// (one draw writes luma and chroma together); planar and 10-bit chroma are drawn apart from luma
    /// and evaluate the pixels again (Cb and Cr separately for planar).
    package static func evaluationsPerPixel(_ format: PixelFormat) -> Int {
        switch format {
        case .rgba, .bgra, .gray, .nv12: 1
        default: 3
        }
    }

    /// Whether `packMain` has a batched form for `format` (8-bit Y'CbCr sinks).
    package static func canBatch(_ format: PixelFormat) -> Bool {
        [.yuv420p, .nv12, .yuv422p, .yuv444p, .gray].contains(format)
    }

    /// What every R'G'B' packing program starts with: `prism_eval` / `prism_evalQuad` (the clamped R'G'B' of
    /// pixels, edges replicated, from `prism_pixel`), the packing uniforms, `prism_inRow`, `prism_luma4`.
    static func packPrelude(size: Size, batched: Bool, clamped: Bool = true) -> String {
        let (lo, hi) = clamped ? ("clamp(", ", 0.0, 1.0)") : ("(", ")")
        let evalFunctions = batched
            ? """
              vec3 prism_evalWith(vec4 source, int x, int y) {
                  prism_current = source;
                  return \(lo)prism_pixel(vec2(float(x) + 0.5, float(y) + 0.5)).rgb\(hi);
              }
              vec3 prism_eval(int x, int y) {
                  ivec2 q = ivec2(min(x, W - 1), min(y, H - 1));
                  return prism_evalWith(prism_fetchSource(vec2(q) + 0.5), q.x, q.y);
              }
              void prism_evalQuad(int tx, int y, out vec3 r0, out vec3 r1, out vec3 r2, out vec3 r3) {
                  int row = min(y, H - 1);
                  int x = tx * 4;
                  vec4 q0, q1, q2, q3;
                  prism_sourceQuad(ivec2(tx, row), q0, q1, q2, q3);
                  r0 = prism_evalWith(q0, x, row);
                  r1 = prism_evalWith(q1, x + 1, row);
                  r2 = prism_evalWith(q2, x + 2, row);
                  r3 = prism_evalWith(q3, x + 3, row);
                  // Past the right edge, repeat the last pixel (selects, not branches: llvmpipe runs
                  // both sides of a branch).
                  r1 = x + 1 < W ? r1 : r0;
                  r2 = x + 2 < W ? r2 : r1;
                  r3 = x + 3 < W ? r3 : r2;
              }

              """
            : """
              vec3 prism_eval(int x, int y) {
                  return \(lo)prism_pixel(vec2(float(min(x, W - 1)) + 0.5, float(min(y, H - 1)) + 0.5)).rgb\(hi);
              }
              void prism_evalQuad(int tx, int y, out vec3 r0, out vec3 r1, out vec3 r2, out vec3 r3) {
                  int x = tx * 4;
                  r0 = prism_eval(x, y);
                  r1 = prism_eval(x + 1, y);
                  r2 = prism_eval(x + 2, y);
                  r3 = prism_eval(x + 3, y);
              }

              """
        return """
            out vec4 prism_out;
            uniform vec3 prism_yRow;
            uniform vec3 prism_uRow;
            uniform vec3 prism_vRow;
            uniform vec3 prism_yuvBias;
            const int W = \(size.width);
            const int H = \(size.height);
            \(evalFunctions)
            // Zero for samples past the end of a row (padding).
            vec4 prism_inRow(int first, int count) {
                return vec4(lessThan(ivec4(first) + ivec4(0, 1, 2, 3), ivec4(count)));
            }
            vec4 prism_luma4(vec3 r0, vec3 r1, vec3 r2, vec3 r3) {
                return vec4(dot(prism_yRow, r0), dot(prism_yRow, r1), dot(prism_yRow, r2), dot(prism_yRow, r3)) + prism_yuvBias.x;
            }

            """
    }

    /// Cb and Cr of the mean of pixel pairs (a, b) in two rows.
    static let chromaHelpers = """
        vec3 prism_mean(vec3 a0, vec3 a1, vec3 b0, vec3 b1) { return (a0 + a1 + b0 + b1) * 0.25; }
        vec2 prism_cbcr(vec3 c) { return vec2(dot(prism_uRow, c), dot(prism_vRow, c)) + prism_yuvBias.yz; }

        """

    /// The pixels of a 4:2:0 frame of `layout.size` in the sink's Y'CbCr at full resolution, four a texel:
    /// one draw writes luma, Cb and Cr of pixels 4tx … 4tx+3 of row y into three attachments (rgba16f, so each
    /// pixel's chroma is not rounded before its 2×2 mean), from `prism_pixel` evaluated once per pixel —
    /// the planar packing evaluates the chain three times per pixel (luma, then Cb and Cr texels apart).
    /// `YUVNativeShaders.fullResolutionReads` packs the frame from them. Edges are replicated, as `packMain`'s.
    package static func fullResolutionMain(layout: PackedFrameLayout, batched: Bool) -> PackPlan {
        let size = layout.size
        let main = (packPrelude(size: size, batched: batched && canBatch(layout.format)) + chromaHelpers)
            .replacingOccurrences(of: "out vec4 prism_out;", with: """
                layout(location = 0) out vec4 prism_planeY;
                layout(location = 1) out vec4 prism_planeCb;
                layout(location = 2) out vec4 prism_planeCr;
                """) + """
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                vec3 r0, r1, r2, r3;
                prism_evalQuad(t.x, t.y, r0, r1, r2, r3);
                prism_planeY = prism_luma4(r0, r1, r2, r3);
                vec2 c0 = prism_cbcr(r0), c1 = prism_cbcr(r1), c2 = prism_cbcr(r2), c3 = prism_cbcr(r3);
                prism_planeCb = vec4(c0.x, c1.x, c2.x, c3.x);
                prism_planeCr = vec4(c0.y, c1.y, c2.y, c3.y);
            }

            """
        return PackPlan(draws: [PackDraw(main: main, rows: 0..<size.height)],
                        targetSize: Size(width: (size.width + 3) / 4, height: size.height), attachments: 3, readPlan: nil)
    }

    /// A `main` that writes `layout` (one RGBA8 target of `layout.textureSize`) from
    /// `vec4 prism_pixel(vec2 p)`, which the caller defines before it. Luma is one evaluation per pixel;
    /// chroma is the mean of the pixels it covers, computed in R'G'B'.
    ///
    /// `batched`: the pass also reads the source planes, and only at the pixel being packed; the
    /// packer then fetches four source pixels at once (`prism_sourceQuad`) and hands each to the filters
    /// through `prism_current`. Edges (the last texel of a row whose width is not a multiple of four) fall
    /// back to single fetches with the same results.
    /// `clamped`: false packs R'G'B' outside the cube as it is (a Y'CbCr sink of a graph with no filter).
    package static func packMain(layout: PackedFrameLayout, batched: Bool = false, clamped: Bool = true) -> PackPlan {
        let size = layout.size
        let format = layout.format
        let batched = batched && canBatch(format)
        let common = packPrelude(size: size, batched: batched, clamped: clamped || !format.isYUV)
        let lumaRows = 0..<size.height
        switch format {
        case .rgba, .bgra:
            let swizzle = format == .bgra ? ".bgra" : ""
            return single([PackDraw(main: """
                out vec4 prism_out;
                const int W = \(size.width);
                void main() {
                    ivec2 t = ivec2(gl_FragCoord.xy);
                    prism_out = clamp(prism_pixel(vec2(t) + 0.5), 0.0, 1.0)\(swizzle) * float(t.x < W);
                }

                """, rows: lumaRows)])
        case .gray:
            return single([PackDraw(main: common + """
                void main() {
                    ivec2 t = ivec2(gl_FragCoord.xy);
                    vec3 r0, r1, r2, r3;
                    prism_evalQuad(t.x, t.y, r0, r1, r2, r3);
                    prism_out = prism_luma4(r0, r1, r2, r3) * prism_inRow(t.x * 4, W);
                }

                """, rows: lumaRows)])
        default:
            break
        }
        let planes = format.planes
        let tenBit = format.bitDepth > 8
        let chromaWidth = planes[1].width(for: size.width)
        let (helpers, luma, chromaBody) = planeBodies(layout: layout)
        // Luma and chroma rows are separate draws with separate programs: a branch on the row would run
        // both halves for every texel on llvmpipe.
        let constants = """
            const int CW = \(chromaWidth);
            const int HALF_TEXELS = \(layout.rowBytes / 8);

            """
        let lumaMain = common + helpers + constants + """
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                vec4 o;
            \(luma)
                prism_out = o;
            }

            """
        let chromaMain = common + helpers + constants + """
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                int cy = t.y - H;
                vec4 o;
            \(chromaBody)
                prism_out = o;
            }

            """
        if planes.count == 2 && !tenBit {
            return nv12Plan(layout: layout, prelude: common + helpers + constants)
        }
        return single([PackDraw(main: lumaMain, rows: lumaRows),
                       PackDraw(main: chromaMain, rows: size.height..<(size.height + layout.chromaRows))])

        func single(_ draws: [PackDraw]) -> PackPlan {
            PackPlan(draws: draws, targetSize: layout.textureSize, attachments: 1, readPlan: nil)
        }
    }

    /// The helpers, and the bodies of the luma and the chroma draws' `main`, of a packing into planes (`o`
    /// the texel at `t`; chroma row `cy`).
    private static func planeBodies(layout: PackedFrameLayout) -> (helpers: String, luma: String, chroma: String) {
        let format = layout.format
        let planes = format.planes
        let chroma = planes[1]
        let tenBit = format.bitDepth > 8
        let maxCode = "\((1 << format.bitDepth) - 1).0"
        let sx = 1 << chroma.horizontalShift, sy = 1 << chroma.verticalShift
        let chromaRows = sy == 2 ? "cy * 2, cy * 2 + 1" : "cy, cy"
        let luma: String
        let chromaBody: String
        var helpers = chromaHelpers
        if tenBit {
            // Two 16-bit little-endian samples per texel (10 or 16 significant bits).
            helpers += """
                vec2 prism_sampleBytes(float v) {
                    float q = floor(clamp(v, 0.0, 1.0) * \(maxCode) + 0.5);
                    float high = floor(q / 256.0);
                    return vec2(q - high * 256.0, high) / 255.0;
                }
                vec3 prism_chromaMean(int cx, int cy) {
                    ivec2 rows = ivec2(\(chromaRows));
                    return \(sx == 2 ? "prism_mean(prism_eval(cx * 2, rows.x), prism_eval(cx * 2 + 1, rows.x), prism_eval(cx * 2, rows.y), prism_eval(cx * 2 + 1, rows.y))" : "prism_eval(cx, cy)");
                }

                """
            luma = """
                        int x = t.x * 2;
                        vec2 mask = vec2(lessThan(ivec2(x, x + 1), ivec2(W)));
                        vec2 a = prism_sampleBytes(dot(prism_yRow, prism_eval(x, t.y)) + prism_yuvBias.x) * mask.x;
                        vec2 b = prism_sampleBytes(dot(prism_yRow, prism_eval(x + 1, t.y)) + prism_yuvBias.x) * mask.y;
                        o = vec4(a, b);
                """
            chromaBody = """
                        bool isCr = t.x >= HALF_TEXELS;
                        int cx = (isCr ? t.x - HALF_TEXELS : t.x) * 2;
                        vec2 a = prism_cbcr(prism_chromaMean(cx, cy));
                        vec2 b = prism_cbcr(prism_chromaMean(cx + 1, cy));
                        vec2 mask = vec2(lessThan(ivec2(cx, cx + 1), ivec2(CW)));
                        o = vec4(prism_sampleBytes(isCr ? a.y : a.x) * mask.x, prism_sampleBytes(isCr ? b.y : b.x) * mask.y);
                """
        } else {
            luma = """
                        vec3 r0, r1, r2, r3;
                        prism_evalQuad(t.x, t.y, r0, r1, r2, r3);
                        o = prism_luma4(r0, r1, r2, r3) * prism_inRow(t.x * 4, W);
                """
            if planes.count == 2 {
                // NV12: a texel holds Cb Cr pairs for chroma samples 2t.x and 2t.x+1 (pixels 4t.x ... 4t.x+3).
                chromaBody = """
                            ivec2 rows = ivec2(\(chromaRows));
                            vec3 a0, a1, a2, a3, b0, b1, b2, b3;
                            prism_evalQuad(t.x, rows.x, a0, a1, a2, a3);
                            prism_evalQuad(t.x, rows.y, b0, b1, b2, b3);
                            o = vec4(prism_cbcr(prism_mean(a0, a1, b0, b1)), prism_cbcr(prism_mean(a2, a3, b2, b3)))
                                * prism_inRow(t.x * 2, CW).xxyy;
                    """
            } else if sx == 2 {
                // Planar 4:2:0 / 4:2:2: Cb in the left half of the row, Cr in the right half. A texel holds
                // chroma samples 4k ... 4k+3, i.e. pixels 8k ... 8k+7: two quads per pixel row.
                chromaBody = """
                            bool isCr = t.x >= HALF_TEXELS;
                            int k = isCr ? t.x - HALF_TEXELS : t.x;
                            ivec2 rows = ivec2(\(chromaRows));
                            vec3 a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3;
                            prism_evalQuad(k * 2, rows.x, a0, a1, a2, a3);
                            prism_evalQuad(k * 2, rows.y, b0, b1, b2, b3);
                            prism_evalQuad(k * 2 + 1, rows.x, c0, c1, c2, c3);
                            prism_evalQuad(k * 2 + 1, rows.y, d0, d1, d2, d3);
                            vec2 s0 = prism_cbcr(prism_mean(a0, a1, b0, b1)), s1 = prism_cbcr(prism_mean(a2, a3, b2, b3));
                            vec2 s2 = prism_cbcr(prism_mean(c0, c1, d0, d1)), s3 = prism_cbcr(prism_mean(c2, c3, d2, d3));
                            o = (isCr ? vec4(s0.y, s1.y, s2.y, s3.y) : vec4(s0.x, s1.x, s2.x, s3.x)) * prism_inRow(k * 4, CW);
                    """
            } else {
                // 4:4:4: chroma samples are pixels; a texel holds four of them.
                chromaBody = """
                            bool isCr = t.x >= HALF_TEXELS;
                            int k = isCr ? t.x - HALF_TEXELS : t.x;
                            vec3 r0, r1, r2, r3;
                            prism_evalQuad(k, cy, r0, r1, r2, r3);
                            vec2 s0 = prism_cbcr(r0), s1 = prism_cbcr(r1), s2 = prism_cbcr(r2), s3 = prism_cbcr(r3);
                            o = (isCr ? vec4(s0.y, s1.y, s2.y, s3.y) : vec4(s0.x, s1.x, s2.x, s3.x)) * prism_inRow(k * 4, CW);
                    """
            }
        }
        return (helpers, luma, chromaBody)
    }

    /// NV12 in one draw over three attachments: each fragment converts a 4×2 block of pixels (two quads)
    /// and writes the even luma row, the odd luma row and the CbCr pairs they share, so every pixel goes
    /// through the filters once (separate luma and chroma draws evaluate each pixel twice). The read
    /// plan interleaves the two luma attachments back into rows.
    static func nv12Plan(layout: PackedFrameLayout, prelude: String) -> PackPlan {
        let main = prelude.replacingOccurrences(of: "out vec4 prism_out;", with: """
            layout(location = 0) out vec4 prism_lumaEven;
            layout(location = 1) out vec4 prism_lumaOdd;
            layout(location = 2) out vec4 prism_chroma;
            """) + """
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                vec3 a0, a1, a2, a3, b0, b1, b2, b3;
                prism_evalQuad(t.x, t.y * 2, a0, a1, a2, a3);
                prism_evalQuad(t.x, t.y * 2 + 1, b0, b1, b2, b3);
                vec4 inRow = prism_inRow(t.x * 4, W);
                prism_lumaEven = prism_luma4(a0, a1, a2, a3) * inRow;
                prism_lumaOdd = prism_luma4(b0, b1, b2, b3) * inRow;
                prism_chroma = vec4(prism_cbcr(prism_mean(a0, a1, b0, b1)), prism_cbcr(prism_mean(a2, a3, b2, b3)))
                    * prism_inRow(t.x * 2, CW).xxyy;
            }

            """
        let width = layout.textureSize.width
        let reads = lumaRowPairReads(layout, width: width)
            + [ReadRegion(attachment: 2, width: width, rows: layout.chromaRows, destinationOffset: layout.planes[1].offset,
                          destinationRowBytes: layout.rowBytes)]
        return PackPlan(draws: [PackDraw(main: main, rows: 0..<layout.chromaRows, texelPixels: Size(width: 4, height: 2))],
                        targetSize: Size(width: width, height: layout.chromaRows), attachments: 3, readPlan: reads)
    }

    /// The reads that interleave a row-pair draw's luma back into rows: attachment 0 (the even rows) and
    /// attachment 1 (the odd rows), `width` texels each.
    static func lumaRowPairReads(_ layout: PackedFrameLayout, width: Int) -> [ReadRegion] {
        let rowBytes = layout.rowBytes, oddRows = layout.size.height / 2
        var reads = [ReadRegion(attachment: 0, width: width, rows: layout.chromaRows, destinationOffset: 0,
                                destinationRowBytes: rowBytes * 2)]
        if oddRows > 0 {
            reads.append(ReadRegion(attachment: 1, width: width, rows: oddRows, destinationOffset: rowBytes,
                                    destinationRowBytes: rowBytes * 2))
        }
        return reads
    }

    /// Sets the R'G'B' → Y'CbCr coefficients `packMain` uses. Gray output is full-range luma.
    package static func setPackUniforms(_ program: ShaderProgram, layout: PackedFrameLayout, colorSpace: YUVColorSpace) {
        setPackUniforms(program, PackCoefficients(layout: layout, colorSpace: colorSpace))
    }

    /// Sets precomputed coefficients (renderers compute them once per colour space, not per frame).
    package static func setPackUniforms(_ program: ShaderProgram, _ c: PackCoefficients) {
        program.set("prism_yRow", c.yRow.x, c.yRow.y, c.yRow.z)
        program.set("prism_uRow", c.uRow.x, c.uRow.y, c.uRow.z)
        program.set("prism_vRow", c.vRow.x, c.vRow.y, c.vRow.z)
        program.set("prism_yuvBias", c.bias.x, c.bias.y, c.bias.z)
    }
}
