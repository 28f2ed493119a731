import Foundation
import PrismCore
import PrismFilters

/// The graph evaluated on the CPU, written from the filters' documented maths (not from their shaders),
/// so the bench can check that the GPU really did the work it timed.
///
/// Covers graphs of invert, color, the photo looks (mono, noir, …: `ColorLook.apply`), pixellate,
/// radial-gradient, face-mask and blend-mask (so the seed's masked pixellate and face-pixellate); other graphs are reported as not
/// verifiable on the CPU. Input and output are tightly packed yuv420p; chroma is resampled as the engine
/// documents it: sample-and-hold up, the mean of each 2×2 block down.
struct BenchReference {
    enum Step {
        case invert
        case look(ColorLook, intensity: Double)
        case color(brightness: Double, contrast: Double, saturation: Double)
        case pixellate(scale: Double, center: SIMD2<Double>)
        /// color0 inside radius0, color1 outside radius1 (pixels), centre as 0...1 from the top left.
        case radialGradient(center: SIMD2<Double>, radius0: Double, radius1: Double, color0: SIMD3<Double>, color1: SIMD3<Double>)
        /// White inside each face's disc (radius `size` × the region's radius × the frame width), soft over its
        /// outer `feather`, black elsewhere: m = 1 − Π clamp((d − r0) / (r1 − r0), 0, 1).
        case faceMask(size: Double, feather: Double)
        /// mix(input 1, input 0, input 2's green).
        case blendMask
    }

    /// Steps in graph order, each with the streams it reads (nil: the source; else an earlier step).
    let steps: [(step: Step, inputs: [Int?])]
    /// The step giving the output (nil: the source).
    let output: Int?

    /// No filters: the conversions alone.
    static let identity = BenchReference(nodes: [], output: nil)

    private init(nodes: [(step: Step, inputs: [Int?])], output: Int?) {
        self.steps = nodes
        self.output = output
    }

    /// The reference for `graph`, or why there is none.
    static func make(for graph: FilterGraph) -> Result<BenchReference, BenchError> {
        var nodes: [(step: Step, inputs: [Int?])] = []
        func index(_ stream: FilterGraph.Stream) -> Int? {
            if case .node(let id) = stream { return id.index }
            return nil
        }
        for node in graph.nodes {
            let values = node.parameters
            let step: Step
            switch node.name {
            case "invert":
                step = .invert
            case "color":
                step = .color(brightness: values?.double("brightness") ?? 0, contrast: values?.double("contrast") ?? 1,
                              saturation: values?.double("saturation") ?? 1)
            case "pixellate":
                step = .pixellate(scale: values?.double("scale") ?? 8, center: values?.point("center") ?? SIMD2(0.5, 0.5))
            case "radial-gradient":
                func rgb(_ name: String) -> SIMD3<Double> {
                    let c = values?.color(name) ?? .zero
                    return SIMD3(c.x, c.y, c.z)
                }
                step = .radialGradient(center: values?.point("center") ?? SIMD2(0.5, 0.5),
                                       radius0: values?.double("radius0") ?? 5, radius1: values?.double("radius1") ?? 100,
                                       color0: rgb("color0"), color1: rgb("color1"))
            case "face-mask":
                step = .faceMask(size: values?.double("size") ?? 1.5, feather: values?.double("feather") ?? 0.15)
            case "blend-mask":
                step = .blendMask
            default:
                guard let look = ColorLook.all.first(where: { $0.name == node.name }) else {
                    return .failure(BenchError("no CPU reference for '\(node.name)'"))
                }
                step = .look(look, intensity: values?["intensity"]?.doubleValue ?? 1)
            }
            nodes.append((step, node.inputs.map(index)))
        }
        return .success(BenchReference(nodes: nodes, output: index(graph.output)))
    }

    /// Runs the graph on a tightly packed yuv420p frame; returns a tightly packed yuv420p frame.
    ///
    /// The R'G'B' route (`keepsYUV` false): converted pixels are clamped to 0...1, so is every filter's
    /// output, fused or not, as the compiler does, and pixellate's block means are 8-bit. The Y'CbCr route
    /// (the renderer's `staysInYUV`): nothing is clamped before the output is quantised (its maps keep the
    /// unit cube inside itself, so only pixels outside the R'G'B' gamut differ), grey curves read luma
    /// clamped to 0...1, and block means are not rounded.
    /// `regions`: the frame's faces (face-mask), as `FrameContext.regions`.
    func apply(yuv420p input: [UInt8], size: Size, colorSpace: YUVColorSpace, keepsYUV: Bool = false,
               regions: [FrameContext.Region] = []) -> [UInt8] {
        func clamp(_ c: SIMD3<Double>) -> SIMD3<Double> { keepsYUV ? c : Self.clamp(c) }
        let source = Self.rgb(fromYUV420p: input, size: size, colorSpace: colorSpace, clamped: !keepsYUV)
        var outputs: [[SIMD3<Double>]] = []
        for (step, inputs) in steps {
            let reads = inputs.map { $0.map { outputs[$0] } ?? source }
            var rgb = reads.first ?? []
            switch step {
            case .invert:
                for i in rgb.indices { rgb[i] = clamp(SIMD3(repeating: 1) - rgb[i]) }
            case .look(let look, let intensity):
                for i in rgb.indices {
                    let c = rgb[i]
                    var mapped = look.apply(c)
                    if keepsYUV, let grey = look.grey {
                        let luma: Double = min(max((ColorLook.lumaWeights * c).sum(), 0), 1)
                        mapped = SIMD3(repeating: grey(luma))
                    }
                    rgb[i] = clamp(c + (mapped - c) * intensity)
                }
            case .color(let brightness, let contrast, let saturation):
                for i in rgb.indices {
                    let c = rgb[i]
                    let luma = 0.2126 * c.x + 0.7152 * c.y + 0.0722 * c.z
                    let saturated = SIMD3(repeating: luma) + (c - SIMD3(repeating: luma)) * saturation
                    rgb[i] = clamp((saturated - 0.5) * contrast + 0.5 + brightness)
                }
            case .pixellate(let scale, let center):
                rgb = Self.pixellate(rgb, size: size, scale: scale, center: center)
                // The R'G'B' route keeps block means in an 8-bit texture; point-wise steps fuse without one.
                if !keepsYUV {
                    for i in rgb.indices { rgb[i] = (Self.clamp(rgb[i]) * 255).rounded(.toNearestOrEven) / 255 }
                }
            case .radialGradient(let center, let radius0, let radius1, let color0, let color1):
                let c = SIMD2(center.x * Double(size.width), center.y * Double(size.height))
                rgb = (0..<(size.width * size.height)).map { i in
                    let p = SIMD2(Double(i % size.width) + 0.5, Double(i / size.width) + 0.5) - c
                    let t = min(max(((p * p).sum().squareRoot() - radius0) / max(radius1 - radius0, 1e-6), 0), 1)
                    return Self.clamp(color0 + (color1 - color0) * t)
                }
            case .faceMask(let scale, let feather):
                let discs = regions.map { region -> (center: SIMD2<Double>, r0: Double, r1: Double) in
                    let r1 = region.radius * Double(size.width) * scale
                    return (region.center * SIMD2(Double(size.width), Double(size.height)), r1 * (1 - feather), r1)
                }
                rgb = (0..<(size.width * size.height)).map { i in
                    let p = SIMD2(Double(i % size.width) + 0.5, Double(i / size.width) + 0.5)
                    let uncovered = discs.reduce(1.0) { product, disc in
                        let d = ((p - disc.center) * (p - disc.center)).sum().squareRoot()
                        return product * min(max((d - disc.r0) / max(disc.r1 - disc.r0, 1e-6), 0), 1)
                    }
                    return SIMD3(repeating: 1 - uncovered)
                }
            case .blendMask:
                rgb = reads[1].indices.map { i in clamp(reads[1][i] + (reads[0][i] - reads[1][i]) * reads[2][i].y) }
            }
            outputs.append(rgb)
        }
        return Self.yuv420p(fromRGB: output.map { outputs[$0] } ?? source, size: size, colorSpace: colorSpace)
    }

    static func clamp(_ c: SIMD3<Double>) -> SIMD3<Double> { c.clamped(lowerBound: .zero, upperBound: .one) }

    /// Chroma upsampled by sample-and-hold, as `FrameShaders` documents: each chroma sample covers its
    /// 2×2 block of pixels (so an identity pass gives the chroma planes back unchanged).
    static func rgb(fromYUV420p bytes: [UInt8], size: Size, colorSpace: YUVColorSpace, clamped: Bool = true) -> [SIMD3<Double>] {
        let w = size.width, h = size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        let cbBase = w * h, crBase = cbBase + cw * ch
        var out = [SIMD3<Double>](repeating: .zero, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                let c = (y >> 1) * cw + (x >> 1)
                let cb = Double(bytes[cbBase + c]) / 255, cr = Double(bytes[crBase + c]) / 255
                let rgb = colorSpace.rgb(fromY: Double(bytes[y * w + x]) / 255, cb: cb, cr: cr)
                let value = SIMD3(rgb.r, rgb.g, rgb.b)
                out[y * w + x] = clamped ? clamp(value) : value
            }
        }
        return out
    }

    static func yuv420p(fromRGB rgb: [SIMD3<Double>], size: Size, colorSpace: YUVColorSpace) -> [UInt8] {
        let w = size.width, h = size.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        var out = [UInt8](repeating: 0, count: w * h + 2 * cw * ch)
        func code(_ v: Double) -> UInt8 { UInt8(max(0, min(255, (v * 255).rounded()))) }
        for i in 0..<(w * h) {
            let c = rgb[i]
            out[i] = code(colorSpace.yuv(fromRGB: c.x, c.y, c.z).y)
        }
        for cy in 0..<ch {
            for cx in 0..<cw {
                var sum = SIMD3<Double>.zero
                for dy in 0..<2 {
                    let row: Int = min(cy * 2 + dy, h - 1) * w
                    for dx in 0..<2 {
                        let column: Int = min(cx * 2 + dx, w - 1)
                        sum += rgb[row + column]
                    }
                }
                let mean = sum / 4
                let yuv = colorSpace.yuv(fromRGB: mean.x, mean.y, mean.z)
                out[w * h + cy * cw + cx] = code(yuv.cb)
                out[w * h + cw * ch + cy * cw + cx] = code(yuv.cr)
            }
        }
        return out
    }

    /// Block means on the grid the filter documents: origin = centre·size − scale/2, taken mod scale.
    static func pixellate(_ rgb: [SIMD3<Double>], size: Size, scale: Double, center: SIMD2<Double>) -> [SIMD3<Double>] {
        let w = size.width, h = size.height
        var originX = center.x * Double(w) - scale / 2, originY = center.y * Double(h) - scale / 2
        originX -= scale * (originX / scale).rounded(.up)
        originY -= scale * (originY / scale).rounded(.up)
        func block(_ p: Int, _ origin: Double) -> Int { Int(((Double(p) + 0.5 - origin) / scale).rounded(.down)) }
        let bw = block(w - 1, originX) + 1, bh = block(h - 1, originY) + 1
        var sums = [SIMD3<Double>](repeating: .zero, count: bw * bh)
        var counts = [Double](repeating: 0, count: bw * bh)
        for y in 0..<h {
            let by = block(y, originY)
            for x in 0..<w {
                let index = by * bw + block(x, originX)
                sums[index] += rgb[y * w + x]
                counts[index] += 1
            }
        }
        var out = rgb
        for y in 0..<h {
            let by = block(y, originY)
            for x in 0..<w {
                let index = by * bw + block(x, originX)
                out[y * w + x] = sums[index] / max(counts[index], 1)
            }
        }
        return out
    }
}

/// How close two yuv420p frames are, plane by plane.
struct BenchComparison: Codable, Sendable {
    var lumaPSNR: Double
    var chromaPSNR: Double
    var maxError: Int
    var meanError: Double

    init(_ a: [UInt8], _ b: [UInt8], size: Size) {
        let lumaCount = size.width * size.height
        func stats(_ range: Range<Int>) -> (mse: Double, max: Int, sum: Int) {
            var squares = 0.0, maximum = 0, sum = 0
            for i in range {
                let d = abs(Int(a[i]) - Int(b[i]))
                squares += Double(d * d)
                maximum = max(maximum, d)
                sum += d
            }
            return (squares / Double(max(range.count, 1)), maximum, sum)
        }
        let luma = stats(0..<lumaCount)
        let chroma = stats(lumaCount..<min(a.count, b.count))
        lumaPSNR = Self.psnr(mse: luma.mse)
        chromaPSNR = Self.psnr(mse: chroma.mse)
        maxError = max(luma.max, chroma.max)
        meanError = Double(luma.sum + chroma.sum) / Double(max(min(a.count, b.count), 1))
    }

    /// PSNR of 8-bit codes from their mean squared error, 99 dB for identical ones (the bench's cap).
    static func psnr(mse: Double) -> Double { mse <= 1e-12 ? 99 : min(99, 10 * log10(255 * 255 / mse)) }

    var summary: String {
        String(format: "PSNR Y %.1f dB, CbCr %.1f dB, max error %d, mean %.2f", lumaPSNR, chromaPSNR, maxError, meanError)
    }
}

/// FNV-1a, 64 bits, in hexadecimal: a checksum to print beside verified frames, and a batch job's fingerprint.
func fnv1aHex(_ bytes: some Sequence<UInt8>) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return String(hash, radix: 16)
}
