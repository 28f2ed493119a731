import Foundation
import PrismCore

/// `tonemap`: HDR (PQ, HLG) to SDR, or between PQ and HLG, per pixel on the GPU (`ColorConversion` is
/// the maths and its CPU twin). A run puts it in front of the graph by itself when an HDR input goes to
/// an SDR output; written in a graph it converts there.
package enum ColorConversionFilter {
    static let definition = FilterDefinition(
        name: "tonemap", summary: "HDR (PQ or HLG) to SDR, PQ to HLG and back, or to and from linear light: tone and gamut mapping.",
        maths: """
            Light = the signal decoded to cd/m² (PQ: ST 2084's EOTF; HLG: BT.2100's inverse OETF with its black \
            lift, then its OOTF for a display of `peak`); its luminance Y (source primaries) is tone mapped to \
            the target's peak when the source is brighter (bt2390: ITU-R BT.2390's EETF in PQ space, knee at \
            1.5·maxLum - 0.5, black lift minLum·(1 - E)⁴; reinhard: extended Reinhard, peak to white; clip), \
            the colour scaled by Y'/Y; then a linear 3x3 from the source primaries to the target's, clipped; \
            then encoded: SDR through BT.1886's inverse (203 cd/m² white, 1000:1), PQ, HLG for a 1000 cd/m² \
            display, or linear light (cd/m² / 203, unclipped above 1). SDR reference white is 203 cd/m² (BT.2408). \
            A graph that has a tonemap gets no automatic one: `tonemap(to=linear), my.fs, tonemap(from=linear)` \
            runs a shader on linear light (RGBA16F between passes) and tone maps after it.
            """,
        parameters: [
            ParameterSpec("from", .choice(["pq", "hlg", "linear"]), default: .choice("pq"),
                          "the input's transfer (linear: light, 1.0 = 203 cd/m², as to=linear gives)"),
            ParameterSpec("to", .choice(ColorTarget.allCases.map(\.rawValue)), default: .choice("sdr"), "what it becomes"),
            ParameterSpec("peak", .float(100...10000), default: .float(1000),
                          "the input's peak, cd/m² (the mastering display's; HLG: the display it is shown on)"),
            ParameterSpec("black", .float(0...5), default: .float(ColorConversion.hdrBlack), "the input's black, cd/m²"),
            ParameterSpec("curve", .choice(ColorConversion.Curve.allCases.map(\.rawValue)), default: .choice("bt2390"),
                          "the tone curve"),
            ParameterSpec("primaries", .choice(ColorPrimaries.allCases.map(\.rawValue)), default: .choice("bt2020"),
                          "the input's primaries"),
            ParameterSpec("out-primaries", .choice(ColorPrimaries.allCases.map(\.rawValue)), default: .choice("bt709"),
                          "the output's primaries (colours outside them are clipped)"),
        ],
        example: "tonemap(from=pq, peak=1000, curve=bt2390)",
        positional: ["from"],
        make: { values in ColorConversionKernel(parameters: values) })

    /// The parameters for `conversion` (what a run places in front of its graph).
    package static func parameters(for conversion: ColorConversion) -> [String: ParameterValue] {
        ["from": .choice(conversion.from.rawValue), "to": .choice(conversion.to.rawValue),
         "peak": .float(conversion.sourcePeak), "black": .float(conversion.sourceBlack),
         "curve": .choice(conversion.curve.rawValue), "primaries": .choice(conversion.sourcePrimaries.rawValue),
         "out-primaries": .choice(conversion.targetPrimaries.rawValue)]
    }
}

/// The kernel: the conversion's constants are written into its GLSL (a parameter change is a new key, so
/// the graph is recompiled between frames).
final class ColorConversionKernel: ParameterizedKernel {
    let inputCount = 1
    let isPointwise = true
    var parameters: ParameterValues

    init(parameters: ParameterValues) { self.parameters = parameters }

    var conversion: ColorConversion {
        ColorConversion(from: TransferFunction(rawValue: parameters.word("from")) ?? .pq,
                        to: ColorTarget(rawValue: parameters.word("to")) ?? .sdr,
                        sourcePrimaries: ColorPrimaries(rawValue: parameters.word("primaries")) ?? .bt2020,
                        targetPrimaries: ColorPrimaries(rawValue: parameters.word("out-primaries")) ?? .bt709,
                        sourcePeak: parameters.double("peak"), sourceBlack: parameters.double("black"),
                        curve: ColorConversion.Curve(rawValue: parameters.word("curve")) ?? .bt2390)
    }

    var compileKey: String { ColorConversionGLSL.key(conversion) }
    /// Several transcendental functions a pixel: expensive enough to be evaluated once per pixel (into full-resolution
    /// planes, or a texture), not once per packed plane.
    var cost: Int { 4 }
    var library: String { ColorConversionGLSL.library(conversion) }
    let expression = """
        vec4 $main(vec2 p) {
            vec4 c = $in0(p);
            return vec4($convert(c.rgb), c.a);
        }

        """
}

/// The GLSL of a `ColorConversion`, step for step as `ColorConversion.apply` (same constants, in float).
enum ColorConversionGLSL {
    static func key(_ c: ColorConversion) -> String {
        "tonemap \(c.from) \(c.to) \(c.sourcePrimaries) \(c.targetPrimaries) \(c.sourcePeak) \(c.sourceBlack) \(c.curve)"
    }

    static func f(_ x: Double) -> String { BlurKernel.glsl(x) }

    static func vec3(_ v: SIMD3<Double>) -> String { "vec3(\(f(v.x)), \(f(v.y)), \(f(v.z)))" }

    /// GLSL's mat3 takes columns.
    static func mat3(_ m: Matrix3) -> String {
        "mat3(\(vec3(m.column(0))), \(vec3(m.column(1))), \(vec3(m.column(2))))"
    }

    static func library(_ c: ColorConversion) -> String {
        let m = TransferMaths.self
        let weights = vec3(c.sourcePrimaries.luminanceWeights)
        var text = """
            // PQ signal <-> cd/m² (SMPTE ST 2084).
            vec3 $pqToNits(vec3 e) {
                vec3 p = pow(clamp(e, 0.0, 1.0), vec3(1.0 / \(f(m.pqM2))));
                return 10000.0 * pow(max(p - \(f(m.pqC1)), 0.0) / (\(f(m.pqC2)) - \(f(m.pqC3)) * p), vec3(1.0 / \(f(m.pqM1))));
            }
            vec3 $nitsToPQ(vec3 nits) {
                vec3 y = pow(clamp(nits, 0.0, 10000.0) / 10000.0, vec3(\(f(m.pqM1))));
                return pow((\(f(m.pqC1)) + \(f(m.pqC2)) * y) / (1.0 + \(f(m.pqC3)) * y), vec3(\(f(m.pqM2))));
            }
            // HLG (BT.2100).
            vec3 $hlgInverseOETF(vec3 v) {
                v = max(v, 0.0);
                return mix(v * v / 3.0, (exp((v - \(f(m.hlgC))) / \(f(m.hlgA))) + \(f(m.hlgB))) / 12.0, greaterThan(v, vec3(0.5)));
            }
            vec3 $hlgOETF(vec3 e) {
                e = max(e, 0.0);
                return mix(sqrt(3.0 * e), \(f(m.hlgA)) * log(max(12.0 * e - \(f(m.hlgB)), 1e-9)) + \(f(m.hlgC)),
                           greaterThan(e, vec3(1.0 / 12.0)));
            }

            """
        // The tone curve on luminance in cd/m².
        let peak = c.mappedPeak
        switch c.curve {
        case .clip:
            text += "float $toneMap(float y) { return min(y, \(f(peak))); }\n"
        case .reinhard:
            let white = c.sourcePeak / peak
            text += """
                float $toneMap(float y) {
                    float x = y / \(f(peak));
                    return \(f(peak)) * x * (1.0 + x / \(f(white * white))) / (1.0 + x);
                }

                """
        case .bt2390:
            let k = c.eetf
            text += """
                float $toneMap(float y) {
                    float e1 = clamp(($nitsToPQ(vec3(y)).x - \(f(k.sourceBlack))) / \(f(k.sourcePeak - k.sourceBlack)), 0.0, 1.0);
                    float e2 = e1;
                    if (e1 > \(f(k.kneeStart))) {
                        float t = (e1 - \(f(k.kneeStart))) / \(f(1 - k.kneeStart)), t2 = t * t, t3 = t2 * t;
                        e2 = (2.0 * t3 - 3.0 * t2 + 1.0) * \(f(k.kneeStart)) + (t3 - 2.0 * t2 + t) * \(f(1 - k.kneeStart))
                            + (-2.0 * t3 + 3.0 * t2) * \(f(k.maxLum));
                    }
                    float e3 = e2 + \(f(k.minLum)) * pow(1.0 - e2, 4.0);
                    return $pqToNits(vec3(e3 * \(f(k.sourcePeak - k.sourceBlack)) + \(f(k.sourceBlack)))).x;
                }

                """
        }
        text += "vec3 $convert(vec3 e) {\n"
        text += c.from == .linear ? "    e = max(e, 0.0);\n" : "    e = clamp(e, 0.0, 1.0);\n"
        text += "    vec3 light;\n"
        if c.from == .linear {
            text += "    light = e * \(f(ColorConversion.referenceWhite));\n"
        } else if c.from == .pq {
            text += "    light = $pqToNits(e);\n"
        } else {
            let beta = c.sourceHLGLift
            text += """
                    vec3 scene = $hlgInverseOETF(\(f(1 - beta)) * e + \(f(beta)));
                    light = \(f(c.sourcePeak)) * pow(max(dot(\(weights), scene), 0.0), \(f(c.sourceHLGGamma - 1))) * scene;

                """
        }
        text += "    light = clamp(light, 0.0, \(f(c.sourcePeak)));\n"
        if c.mapsTones {
            text += """
                    float y = dot(\(weights), light);
                    if (y > 1e-6) light *= $toneMap(y) / y;

                """
        }
        text += "    light = clamp(\(mat3(c.sourcePrimaries.conversion(to: c.targetPrimaries))) * light, 0.0, \(f(peak)));\n"
        switch c.to {
        case .sdr:
            let (a, b) = c.sdrDisplay
            text += "    return clamp(pow(light / \(f(ColorConversion.referenceWhite * a)), vec3(1.0 / 2.4)) - \(f(b)), 0.0, 1.0);\n"
        case .pq:
            text += "    return $nitsToPQ(light);\n"
        case .linear:
            text += "    return light / \(f(ColorConversion.referenceWhite));\n"
        case .hlg:
            let gamma = c.targetHLGGamma, beta = c.targetHLGLift
            text += """
                    vec3 display = light / \(f(ColorConversion.hlgDisplayPeak));
                    float yd = max(dot(\(vec3(c.targetPrimaries.luminanceWeights)), display), 1e-9);
                    vec3 v = $hlgOETF(display * pow(yd, \(f((1 - gamma) / gamma))));
                    return clamp((v - \(f(beta))) / \(f(1 - beta)), 0.0, 1.0);

                """
        }
        text += "}\n"
        return text
    }
}
