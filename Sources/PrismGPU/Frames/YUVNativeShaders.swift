import PrismCore

/// GLSL for frames that never leave Y'CbCr: 4:2:0 planes in, 4:2:0 (or grey) planes out, each plane
/// produced at its own resolution from the input planes, with a colour map `vec3 prism_chain(vec3)` on
/// Y'CbCr values in between (the caller declares it before these functions; see `YUVPlan`).
///
/// Compared with `FrameShaders.packMain`, which converts every pixel to R'G'B' and averages four of them
/// for each chroma sample, a chroma sample here costs the fetches of its own plane samples and of the
/// four luma samples it covers, and no R'G'B' value is ever formed.
///
/// Values follow `FrameShaders`: chroma is held over its 2×2 pixels (sample-and-hold) and an output
/// chroma sample is the mean of its four pixels' values, so for an affine map the result is the same
/// as the R'G'B' route for every pixel inside the R'G'B' gamut.
package enum YUVNativeShaders {
    /// Sources and sinks this path handles: 8-bit 4:2:0.
    package static let sourceFormats: Set<PixelFormat> = [.yuv420p, .nv12]
    package static let sinkFormats: Set<PixelFormat> = [.yuv420p, .nv12, .gray]

    /// Whether frames of `source` at `size` can be packed into every layout here without leaving Y'CbCr.
    package static func handles(source: PixelFormat, size: Size, sinks: [PackedFrameLayout]) -> Bool {
        sourceFormats.contains(source) && !sinks.isEmpty
            && sinks.allSatisfy { sinkFormats.contains($0.format) && $0.size == size }
    }

    /// Reads of the uploaded planes as raw normalised code values:
    /// - `vec4 prism_yTexel(int tx, int y)`: luma samples 4tx ... 4tx+3 of row y;
    /// - `vec4 prism_chromaPair(int j, int cy)`: (Cb, Cr) of chroma samples 2j and 2j+1 of chroma row cy,
    ///   i.e. the chroma of pixels 4j ... 4j+3;
    /// - `void prism_chromaQuad(int k, int cy, out vec4 cb, out vec4 cr)`: chroma samples 4k ... 4k+3.
    /// Texel indices are clamped to the plane (padding samples past a row's end are masked by callers).
    package static func planeReads(for source: PixelFormat) -> String {
        precondition(sourceFormats.contains(source), "no native Y'CbCr reads for \(source)")
        let luma = """
            uniform sampler2D prism_src0;
            ivec2 prism_clampTexel(sampler2D s, int x, int y) {
                return min(ivec2(x, y), textureSize(s, 0) - 1);
            }
            vec4 prism_yTexel(int tx, int y) { return texelFetch(prism_src0, prism_clampTexel(prism_src0, tx, y), 0); }

            """
        if source == .nv12 {
            return luma + """
                uniform sampler2D prism_src1;
                vec4 prism_chromaPair(int j, int cy) { return texelFetch(prism_src1, prism_clampTexel(prism_src1, j, cy), 0); }
                void prism_chromaQuad(int k, int cy, out vec4 cb, out vec4 cr) {
                    vec4 a = prism_chromaPair(2 * k, cy), b = prism_chromaPair(2 * k + 1, cy);
                    cb = vec4(a.x, a.z, b.x, b.z);
                    cr = vec4(a.y, a.w, b.y, b.w);
                }

                """
        }
        return luma + """
            uniform sampler2D prism_src1;
            uniform sampler2D prism_src2;
            void prism_chromaQuad(int k, int cy, out vec4 cb, out vec4 cr) {
                cb = texelFetch(prism_src1, prism_clampTexel(prism_src1, k, cy), 0);
                cr = texelFetch(prism_src2, prism_clampTexel(prism_src2, k, cy), 0);
            }
            vec4 prism_chromaPair(int j, int cy) {
                vec4 cb, cr;
                prism_chromaQuad(j >> 1, cy, cb, cr);
                return (j & 1) == 0 ? vec4(cb.x, cr.x, cb.y, cr.y) : vec4(cb.z, cr.z, cb.w, cr.w);
            }

            """
    }

    /// `.declared` values read from `FrameShaders.fullResolutionMain`'s three planes (`prism_fullY`,
    /// `prism_fullCb`, `prism_fullCr`, four pixels a texel, already the sink's Y'CbCr): a luma texel is a
    /// copy, a chroma sample the mean of its 2×2 pixels. Rows and texels past the frame repeat its edge.
    package static func fullResolutionReads(size: Size) -> String {
        """
        uniform sampler2D prism_fullY;
        uniform sampler2D prism_fullCb;
        uniform sampler2D prism_fullCr;
        ivec2 prism_fullTexel(int tx, int y) { return min(ivec2(tx, y), ivec2(\((size.width + 3) / 4 - 1), \(size.height - 1))); }
        void prism_valueQuad(int tx, int y, out vec3 v0, out vec3 v1, out vec3 v2, out vec3 v3) {
            vec4 l = texelFetch(prism_fullY, prism_fullTexel(tx, y), 0);
            v0 = vec3(l.x, 0.0, 0.0);
            v1 = vec3(l.y, 0.0, 0.0);
            v2 = vec3(l.z, 0.0, 0.0);
            v3 = vec3(l.w, 0.0, 0.0);
        }
        // Chroma samples 4k ... 4k+3 of chroma row cy: pixels 8k ... 8k+7 of rows 2cy, 2cy+1.
        void prism_chromaSamples(int k, int cy, out vec3 s0, out vec3 s1, out vec3 s2, out vec3 s3) {
            ivec2 a = prism_fullTexel(2 * k, 2 * cy), b = prism_fullTexel(2 * k + 1, 2 * cy);
            ivec2 c = prism_fullTexel(2 * k, 2 * cy + 1), d = prism_fullTexel(2 * k + 1, 2 * cy + 1);
            vec4 cbA = texelFetch(prism_fullCb, a, 0) + texelFetch(prism_fullCb, c, 0);
            vec4 cbB = texelFetch(prism_fullCb, b, 0) + texelFetch(prism_fullCb, d, 0);
            vec4 crA = texelFetch(prism_fullCr, a, 0) + texelFetch(prism_fullCr, c, 0);
            vec4 crB = texelFetch(prism_fullCr, b, 0) + texelFetch(prism_fullCr, d, 0);
            s0 = vec3(0.0, cbA.x + cbA.y, crA.x + crA.y) * 0.25;
            s1 = vec3(0.0, cbA.z + cbA.w, crA.z + crA.w) * 0.25;
            s2 = vec3(0.0, cbB.x + cbB.y, crB.x + crB.y) * 0.25;
            s3 = vec3(0.0, cbB.z + cbB.w, crB.z + crB.w) * 0.25;
        }

        """
    }

    /// Where a packing pass gets pixel values from.
    package enum Values: Sendable {
        /// The input planes through `prism_chain`; `affine`: the chain is affine, so a chroma sample is the
        /// chain of its pixels' mean (one evaluation, not four); `lean` (with `affine` true: a matrix, or a grey
        /// curve then a matrix): luma is evaluated from luma alone and chroma once per sample from chroma
        /// alone (planar sinks: the luma draw reads no chroma, the chroma draw no luma) — right only while the
        /// chain has no terms across them (the renderer picks it per frame, see `LeanCondition`).
        case planes(affine: Bool, lean: Bool = false)
        /// `prism_valueQuad` and `prism_chromaSamples` (as the other cases declare them: the values through
        /// `prism_chain`), written by the caller: pixellate's block means (`PixellateShaders.blockValues`).
        case declared(String)
        /// `void prism_rowValues(int tx, int y, out vec3 v0, … v3)`, declared by the caller: the values of
        /// pixels 4tx ... 4tx+3 of row y, already in the sink's Y'CbCr.
        case rows
    }

    /// The packing pass writing `layout` (yuv420p, nv12 or grey) at `layout.size` from `values`.
    package static func packPlan(layout: PackedFrameLayout, values: Values) -> PackPlan {
        let size = layout.size
        precondition(sinkFormats.contains(layout.format), "no native Y'CbCr packing for \(layout.format)")
        let chromaWidth = layout.format == .gray ? 0 : layout.format.planes[1].width(for: size.width)
        let common = """
            const int W = \(size.width);
            const int H = \(size.height);
            const int CW = \(chromaWidth);
            vec4 prism_inRow(int first, int count) {
                return vec4(lessThan(ivec4(first) + ivec4(0, 1, 2, 3), ivec4(count)));
            }

            """
        let prelude = valuePrelude(values, constants: common)
        switch layout.format {
        case .gray: return grayPlan(layout: layout, prelude: prelude)
        case .yuv420p: return planarPlan(layout: layout, prelude: prelude)
        default: return nv12PackPlan(layout: layout, values: values, prelude: prelude)
        }
    }

    /// `prism_valueQuad` and `prism_chromaSamples` for `values`, with `constants` (the packing's sizes).
    private static func valuePrelude(_ values: Values, constants: String) -> String {
        var common = constants
        switch values {
        case .planes(let affine, lean: true) where affine:
            // The chain's luma ignores chroma (luma draw) and its chroma ignores luma (chroma draw): each
            // draw fetches only its own planes and computes only its own outputs, through the chain reduced to
            // them (`float prism_leanLumaOf(float)`, `vec2 prism_leanChromaOf(vec2)`, declared by the caller).
            common += """
                void prism_valueQuad(int tx, int y, out vec3 v0, out vec3 v1, out vec3 v2, out vec3 v3) {
                    vec4 l = prism_yTexel(tx, y);
                    v0 = vec3(prism_leanLumaOf(l.x), 0.0, 0.0);
                    v1 = vec3(prism_leanLumaOf(l.y), 0.0, 0.0);
                    v2 = vec3(prism_leanLumaOf(l.z), 0.0, 0.0);
                    v3 = vec3(prism_leanLumaOf(l.w), 0.0, 0.0);
                }
                void prism_chromaSamples(int k, int cy, out vec3 s0, out vec3 s1, out vec3 s2, out vec3 s3) {
                    vec4 cb, cr;
                    prism_chromaQuad(k, cy, cb, cr);
                    s0 = vec3(0.0, prism_leanChromaOf(vec2(cb.x, cr.x)));
                    s1 = vec3(0.0, prism_leanChromaOf(vec2(cb.y, cr.y)));
                    s2 = vec3(0.0, prism_leanChromaOf(vec2(cb.z, cr.z)));
                    s3 = vec3(0.0, prism_leanChromaOf(vec2(cb.w, cr.w)));
                }

                """
        case .planes(let affine, _):
            common += """
                void prism_valueQuad(int tx, int y, out vec3 v0, out vec3 v1, out vec3 v2, out vec3 v3) {
                    vec4 l = prism_yTexel(tx, y);
                    vec4 c = prism_chromaPair(tx, y >> 1);
                    v0 = prism_chain(vec3(l.x, c.xy));
                    v1 = prism_chain(vec3(l.y, c.xy));
                    v2 = prism_chain(vec3(l.z, c.zw));
                    v3 = prism_chain(vec3(l.w, c.zw));
                }
                // Chroma samples 4k ... 4k+3 of chroma row cy: the mean of each one's 2×2 pixels.
                void prism_chromaSamples(int k, int cy, out vec3 s0, out vec3 s1, out vec3 s2, out vec3 s3) {
                    vec4 a0 = prism_yTexel(2 * k, 2 * cy), a1 = prism_yTexel(2 * k + 1, 2 * cy);
                    vec4 b0 = prism_yTexel(2 * k, 2 * cy + 1), b1 = prism_yTexel(2 * k + 1, 2 * cy + 1);
                    vec4 cb, cr;
                    prism_chromaQuad(k, cy, cb, cr);
                    s0 = prism_mean4(a0.x, a0.y, b0.x, b0.y, cb.x, cr.x);
                    s1 = prism_mean4(a0.z, a0.w, b0.z, b0.w, cb.y, cr.y);
                    s2 = prism_mean4(a1.x, a1.y, b1.x, b1.y, cb.z, cr.z);
                    s3 = prism_mean4(a1.z, a1.w, b1.z, b1.w, cb.w, cr.w);
                }

                """
            common = (affine
                ? """
                  vec3 prism_mean4(float y0, float y1, float y2, float y3, float cb, float cr) {
                      return prism_chain(vec3((y0 + y1 + y2 + y3) * 0.25, cb, cr));
                  }

                  """
                : """
                  vec3 prism_mean4(float y0, float y1, float y2, float y3, float cb, float cr) {
                      return (prism_chain(vec3(y0, cb, cr)) + prism_chain(vec3(y1, cb, cr))
                          + prism_chain(vec3(y2, cb, cr)) + prism_chain(vec3(y3, cb, cr))) * 0.25;
                  }

                  """) + common
        case .declared(let glsl):
            common += glsl
        case .rows:
            // The caller's `prism_rowValues`; a chroma sample is the mean of its four pixels' values.
            common += """
                void prism_valueQuad(int tx, int y, out vec3 v0, out vec3 v1, out vec3 v2, out vec3 v3) {
                    prism_rowValues(tx, y, v0, v1, v2, v3);
                }
                void prism_chromaSamples(int k, int cy, out vec3 s0, out vec3 s1, out vec3 s2, out vec3 s3) {
                    vec3 a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3;
                    prism_rowValues(k * 2, cy * 2, a0, a1, a2, a3);
                    prism_rowValues(k * 2, cy * 2 + 1, b0, b1, b2, b3);
                    prism_rowValues(k * 2 + 1, cy * 2, c0, c1, c2, c3);
                    prism_rowValues(k * 2 + 1, cy * 2 + 1, d0, d1, d2, d3);
                    s0 = (a0 + a1 + b0 + b1) * 0.25;
                    s1 = (a2 + a3 + b2 + b3) * 0.25;
                    s2 = (c0 + c1 + d0 + d1) * 0.25;
                    s3 = (c2 + c3 + d2 + d3) * 0.25;
                }

                """
        }
        return common
    }

    /// Grey: luma texels, one draw.
    private static func grayPlan(layout: PackedFrameLayout, prelude common: String) -> PackPlan {
        let size = layout.size
        let lumaMain = common + """
            out vec4 prism_out;
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                vec3 v0, v1, v2, v3;
                prism_valueQuad(t.x, t.y, v0, v1, v2, v3);
                prism_out = vec4(v0.x, v1.x, v2.x, v3.x) * prism_inRow(t.x * 4, W);
            }

            """
        return PackPlan(draws: [PackDraw(main: lumaMain, rows: 0..<size.height)], targetSize: layout.textureSize,
                        attachments: 1, readPlan: nil)
    }

    /// Planar 4:2:0.
    private static func planarPlan(layout: PackedFrameLayout, prelude common: String) -> PackPlan {
        // Two draws into two attachments, each fragment covering two pixel rows (a software rasteriser
        // pays per fragment): luma texels of an even and an odd row side by side with the chroma texels
        // (Cb in attachment 0, Cr in 1) of the rows they share; the read plan puts each in its plane.
        let lumaTexels = layout.rowBytes / 4, chromaTexels = layout.rowBytes / 8
        let rowPair = """
            layout(location = 0) out vec4 prism_out0;
            layout(location = 1) out vec4 prism_out1;

            """
        let lumaPairs = common + rowPair + """
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                vec4 inRow = prism_inRow(t.x * 4, W);
                vec3 v0, v1, v2, v3;
                prism_valueQuad(t.x, t.y * 2, v0, v1, v2, v3);
                prism_out0 = vec4(v0.x, v1.x, v2.x, v3.x) * inRow;
                prism_valueQuad(t.x, t.y * 2 + 1, v0, v1, v2, v3);
                prism_out1 = vec4(v0.x, v1.x, v2.x, v3.x) * inRow;
            }

            """
        let chromaPairs = common + rowPair + """
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                int k = t.x - \(lumaTexels);
                vec4 inRow = prism_inRow(k * 4, CW);
                vec3 s0, s1, s2, s3;
                prism_chromaSamples(k, t.y, s0, s1, s2, s3);
                prism_out0 = vec4(s0.y, s1.y, s2.y, s3.y) * inRow;
                prism_out1 = vec4(s0.z, s1.z, s2.z, s3.z) * inRow;
            }

            """
        let rows = layout.chromaRows
        let reads = FrameShaders.lumaRowPairReads(layout, width: lumaTexels) + (1...2).map {
            ReadRegion(attachment: $0 - 1, x: lumaTexels, width: chromaTexels, rows: rows,
                       destinationOffset: layout.planes[$0].offset, destinationRowBytes: layout.rowBytes)
        }
        return PackPlan(draws: [PackDraw(main: lumaPairs, rows: 0..<rows, columns: 0..<lumaTexels,
                                         texelPixels: Size(width: 4, height: 2)),
                                PackDraw(main: chromaPairs, rows: 0..<rows, columns: lumaTexels..<(lumaTexels + chromaTexels),
                                         texelPixels: Size(width: 8, height: 2))],
                        targetSize: Size(width: lumaTexels + chromaTexels, height: rows), attachments: 2, readPlan: reads)
    }

    /// NV12.
    private static func nv12PackPlan(layout: PackedFrameLayout, values: Values, prelude common: String) -> PackPlan {
        // NV12: `FrameShaders`' one draw per 4×2 pixels (both luma rows and their chroma pairs), fed with
        // values that are already the sink's Y'CbCr.
        var isLean = false
        if case .planes(true, lean: true) = values { isLean = true }
        // Lean: luma from luma alone, chroma once per chroma sample from chroma alone (see `Values.planes`).
        let evalQuad = isLean
            ? """
              void prism_evalQuad(int tx, int y, out vec3 v0, out vec3 v1, out vec3 v2, out vec3 v3) {
                  prism_valueQuad(tx, y, v0, v1, v2, v3);
                  vec4 c = prism_chromaPair(tx, y >> 1);
                  vec2 c0 = prism_leanChromaOf(c.xy), c1 = prism_leanChromaOf(c.zw);
                  v0.yz = c0;
                  v1.yz = c0;
                  v2.yz = c1;
                  v3.yz = c1;
              }

              """
            : """
              void prism_evalQuad(int tx, int y, out vec3 v0, out vec3 v1, out vec3 v2, out vec3 v3) {
                  prism_valueQuad(tx, y, v0, v1, v2, v3);
              }

              """
        return FrameShaders.nv12Plan(layout: layout, prelude: common + evalQuad + """
            vec4 prism_luma4(vec3 a, vec3 b, vec3 c, vec3 d) { return vec4(a.x, b.x, c.x, d.x); }
            vec3 prism_mean(vec3 a0, vec3 a1, vec3 b0, vec3 b1) { return (a0 + a1 + b0 + b1) * 0.25; }
            vec2 prism_cbcr(vec3 c) { return c.yz; }
            out vec4 prism_out;

            """)
    }
}
