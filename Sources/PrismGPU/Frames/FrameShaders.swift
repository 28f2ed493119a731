import PrismCore

/// GLSL for the two ends of every frame's trip through the GPU: turning uploaded planes into RGBA
/// (`sourceFunction`) and turning RGBA into the encoder's planes, packed four bytes per texel into one
/// render target (`packMain`). The filter compiler puts its own stages between them, so either
/// conversion can share a pass with point-wise filters.
///
/// Coordinates are pixel centres (x + 0.5, y + 0.5) with y = 0 at the image's top row; textures hold
/// the top row first, so no flips are needed anywhere.
public enum FrameShaders {
    /// `#version` and precision lines every generated fragment shader starts with.
    /// ES 3.10 for textureGather: chroma is interpolated in float from gathered samples, because
    /// filtering an 8-bit texture may return 8-bit results (llvmpipe does), which costs up to 3 code values.
    public static let header = """
        #version 310 es
        precision highp float;
        precision highp int;
        precision highp usampler2D;

        """

    /// Declares `vec4 prism_source(vec2 p)` reading the uploaded planes of `format` and converting to
    /// R'G'B'A in 0...1 with the uniforms `UploadedFrame.bind` sets (the frame's own matrix and range).
    ///
    /// Chroma is upsampled bilinearly with MPEG-2 siting (co-sited with the left luma sample,
    /// centred vertically) for 4:2:0 and 4:2:2; YUYV uses its pair's chroma as is.
    public static func sourceFunction(for format: PixelFormat) -> String {
        let yuvUniforms = """
            uniform mat3 prism_yuvToRgb;
            uniform vec3 prism_yuvOffset;
            // Bilinear weights for a gather at texel-space position c: footprint centre and fractions.
            vec2 prism_gatherCentre(vec2 c, vec2 size, out vec2 f) {
                vec2 t = c - 0.5;
                f = t - floor(t);
                return (floor(t) + 1.0) / size;
            }
            float prism_mix4(vec4 g, vec2 f) { return mix(mix(g.w, g.z, f.x), mix(g.x, g.y, f.x), f.y); }

            """
        let toRGB = "vec4(clamp(prism_yuvToRgb * (yuv - prism_yuvOffset), 0.0, 1.0), 1.0)"
        // Chroma texel-space position for the luma pixel at p.
        let chromaPosition: String
        switch format {
        case .yuv420p, .nv12, .yuv420p10le: chromaPosition = "vec2(floor(p.x) * 0.5 + 0.5, p.y * 0.5)"
        case .yuv422p, .yuv422p10le: chromaPosition = "vec2(floor(p.x) * 0.5 + 0.5, p.y)"
        default: chromaPosition = "p"
        }
        switch format {
        case .yuv420p, .yuv422p:
            return """
                uniform sampler2D prism_src0;
                uniform sampler2D prism_src1;
                uniform sampler2D prism_src2;
                \(yuvUniforms)
                vec4 prism_source(vec2 p) {
                    vec2 f;
                    vec2 c = prism_gatherCentre(\(chromaPosition), vec2(textureSize(prism_src1, 0)), f);
                    vec3 yuv = vec3(texelFetch(prism_src0, ivec2(p), 0).r,
                                    prism_mix4(textureGather(prism_src1, c, 0), f),
                                    prism_mix4(textureGather(prism_src2, c, 0), f));
                    return \(toRGB);
                }

                """
        case .yuv444p:
            return """
                uniform sampler2D prism_src0;
                uniform sampler2D prism_src1;
                uniform sampler2D prism_src2;
                \(yuvUniforms)
                vec4 prism_source(vec2 p) {
                    ivec2 i = ivec2(p);
                    vec3 yuv = vec3(texelFetch(prism_src0, i, 0).r, texelFetch(prism_src1, i, 0).r, texelFetch(prism_src2, i, 0).r);
                    return \(toRGB);
                }

                """
        case .nv12:
            return """
                uniform sampler2D prism_src0;
                uniform sampler2D prism_src1;
                \(yuvUniforms)
                vec4 prism_source(vec2 p) {
                    vec2 f;
                    vec2 c = prism_gatherCentre(\(chromaPosition), vec2(textureSize(prism_src1, 0)), f);
                    vec3 yuv = vec3(texelFetch(prism_src0, ivec2(p), 0).r,
                                    prism_mix4(textureGather(prism_src1, c, 0), f),
                                    prism_mix4(textureGather(prism_src1, c, 1), f));
                    return \(toRGB);
                }

                """
        case .yuv420p10le, .yuv422p10le:
            // 16-bit integer textures cannot be filtered: gathered and interpolated in code values / 1023.
            return """
                uniform usampler2D prism_src0;
                uniform usampler2D prism_src1;
                uniform usampler2D prism_src2;
                \(yuvUniforms)
                float prism_bilinear16(usampler2D s, vec2 c) {
                    vec2 f;
                    vec2 centre = prism_gatherCentre(c, vec2(textureSize(s, 0)), f);
                    return prism_mix4(vec4(textureGather(s, centre, 0)), f) / 1023.0;
                }
                vec4 prism_source(vec2 p) {
                    vec2 c = \(chromaPosition);
                    vec3 yuv = vec3(float(texelFetch(prism_src0, ivec2(p), 0).r) / 1023.0,
                                    prism_bilinear16(prism_src1, c), prism_bilinear16(prism_src2, c));
                    return \(toRGB);
                }

                """
        case .yuyv422:
            return """
                uniform sampler2D prism_src0;
                \(yuvUniforms)
                vec4 prism_source(vec2 p) {
                    ivec2 i = ivec2(p);
                    vec4 pair = texelFetch(prism_src0, ivec2(i.x >> 1, i.y), 0);
                    vec3 yuv = vec3((i.x & 1) == 0 ? pair.r : pair.b, pair.g, pair.a);
                    return \(toRGB);
                }

                """
        case .rgba:
            return """
                uniform sampler2D prism_src0;
                vec4 prism_source(vec2 p) { return texelFetch(prism_src0, ivec2(p), 0); }

                """
        case .bgra:
            return """
                uniform sampler2D prism_src0;
                vec4 prism_source(vec2 p) { return texelFetch(prism_src0, ivec2(p), 0).bgra; }

                """
        case .gray:
            return """
                uniform sampler2D prism_src0;
                vec4 prism_source(vec2 p) { return vec4(vec3(texelFetch(prism_src0, ivec2(p), 0).r), 1.0); }

                """
        }
    }

    /// A `main` that writes `layout` (one RGBA8 target of `layout.textureSize`) from
    /// `vec4 prism_pixel(vec2 p)`, which the caller defines before it. Luma is one evaluation per
    /// pixel; chroma is the mean of the pixels it covers (centre-sited), computed in R'G'B'.
    /// Coefficients come from `setPackUniforms`.
    public static func packMain(layout: PackedFrameLayout) -> String {
        let size = layout.size
        let format = layout.format
        let common = """
            out vec4 prism_out;
            uniform vec3 prism_yRow;
            uniform vec3 prism_uRow;
            uniform vec3 prism_vRow;
            uniform vec3 prism_yuvBias;
            const int W = \(size.width);
            const int H = \(size.height);
            vec3 prism_rgbAt(int x, int y) {
                return clamp(prism_pixel(vec2(float(min(x, W - 1)) + 0.5, float(min(y, H - 1)) + 0.5)).rgb, 0.0, 1.0);
            }

            """
        switch format {
        case .rgba, .bgra:
            let swizzle = format == .bgra ? ".bgra" : ""
            return """
                out vec4 prism_out;
                const int W = \(size.width);
                void main() {
                    ivec2 t = ivec2(gl_FragCoord.xy);
                    prism_out = t.x < W ? clamp(prism_pixel(vec2(t) + 0.5), 0.0, 1.0)\(swizzle) : vec4(0.0);
                }

                """
        case .gray:
            return common + """
                void main() {
                    ivec2 t = ivec2(gl_FragCoord.xy);
                    vec4 o = vec4(0.0);
                    for (int j = 0; j < 4; j++) {
                        int x = t.x * 4 + j;
                        if (x < W) o[j] = dot(prism_yRow, prism_rgbAt(x, t.y)) + prism_yuvBias.x;
                    }
                    prism_out = o;
                }

                """
        default:
            break
        }
        let planes = format.planes
        let chroma = planes[1]
        let wide = format.bitDepth > 8
        let samplesPerTexel = wide ? 2 : 4
        let chromaWidth = chroma.width(for: size.width)
        let sx = 1 << chroma.horizontalShift, sy = 1 << chroma.verticalShift
        // The mean of the sx * sy pixels one chroma sample covers.
        var chromaTaps: [String] = []
        for dy in 0..<sy { for dx in 0..<sx { chromaTaps.append("prism_rgbAt(cx * \(sx) + \(dx), cy * \(sy) + \(dy))") } }
        let chromaMean = "(" + chromaTaps.joined(separator: " + ") + ") * \(1.0 / Double(chromaTaps.count))"
        // Writes one sample v (a code value / (2^bits - 1)) into slot j of the texel.
        let store = wide
            ? """
              void prism_store(inout vec4 o, int j, float v) {
                  float q = floor(clamp(v, 0.0, 1.0) * 1023.0 + 0.5);
                  float high = floor(q / 256.0);
                  o[2 * j] = (q - high * 256.0) / 255.0;
                  o[2 * j + 1] = high / 255.0;
              }

              """
            : "void prism_store(inout vec4 o, int j, float v) { o[j] = v; }\n"
        let lumaLoop = """
                for (int j = 0; j < \(samplesPerTexel); j++) {
                    int x = t.x * \(samplesPerTexel) + j;
                    if (x < W) prism_store(o, j, dot(prism_yRow, prism_rgbAt(x, t.y)) + prism_yuvBias.x);
                }
            """
        let chromaBody: String
        if planes.count == 2 {
            // NV12: Cb Cr pairs, two per texel.
            chromaBody = """
                    for (int j = 0; j < 2; j++) {
                        int cx = t.x * 2 + j;
                        if (cx < CW) {
                            vec3 c = \(chromaMean);
                            o[2 * j] = dot(prism_uRow, c) + prism_yuvBias.y;
                            o[2 * j + 1] = dot(prism_vRow, c) + prism_yuvBias.z;
                        }
                    }
                """
        } else {
            // Planar: Cb in the left half of the row, Cr in the right half.
            chromaBody = """
                    bool isCr = t.x >= HALF_TEXELS;
                    int first = (isCr ? t.x - HALF_TEXELS : t.x) * \(samplesPerTexel);
                    vec3 row = isCr ? prism_vRow : prism_uRow;
                    float bias = isCr ? prism_yuvBias.z : prism_yuvBias.y;
                    for (int j = 0; j < \(samplesPerTexel); j++) {
                        int cx = first + j;
                        if (cx < CW) {
                            vec3 c = \(chromaMean);
                            prism_store(o, j, dot(row, c) + bias);
                        }
                    }
                """
        }
        return common + store + """
            const int CW = \(chromaWidth);
            const int HALF_TEXELS = \(layout.rowBytes / 8);
            void main() {
                ivec2 t = ivec2(gl_FragCoord.xy);
                vec4 o = vec4(0.0);
                if (t.y < H) {
            \(lumaLoop)
                } else {
                    int cy = t.y - H;
            \(chromaBody)
                }
                prism_out = o;
            }

            """
    }

    /// Sets the R'G'B' → Y'CbCr coefficients `packMain` uses. Gray output is full-range luma.
    public static func setPackUniforms(_ program: ShaderProgram, layout: PackedFrameLayout, colorSpace: YUVColorSpace) {
        var space = colorSpace
        if layout.format == .gray { space.range = .full }
        let (rows, offset) = space.rgbToYUVMatrix(bitDepth: layout.format.bitDepth)
        func set(_ name: String, _ v: [Double]) { program.set(name, Float(v[0]), Float(v[1]), Float(v[2])) }
        set("prism_yRow", rows[0])
        set("prism_uRow", rows[1])
        set("prism_vRow", rows[2])
        set("prism_yuvBias", offset)
    }
}
