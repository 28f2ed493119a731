import Foundation
import PrismCore
import PrismGPU

/// Which features a `precision=half` network stores as RGBA16F: those whose values stay small enough on a
/// calibration run. The network is run once in float on a test card at the size it will run at (when its
/// passes are planned for a size, on the GPU thread), every feature's largest |value| read as it is drawn;
/// a feature whose peak is beyond `halfLimit` (or not finite) stays RGBA32F, and so does every feature a
/// layer beyond the limit reads; the rest are RGBA16F.
///
/// Why a run and not the weights' bounds: bounds from the weights (Σ|w| through every layer) grow with
/// depth whatever the data, and for any deep network say nothing fits half; the values a layer takes on a
/// picture are what decides whether fp16 (11 significant bits, largest 65504) keeps them. Why the peak and a
/// limit far below 65504: a layer whose values are large is one whose small differences the next layers
/// rely on (a segmenter's logits at 10⁸, a detector's features at 10⁴ normalised later), and half keeps an
/// absolute step of peak / 2048 there.
package struct NetworkCalibration: Sendable {
    /// The input size the run was made at (the program's; another size is calibrated again).
    package let input: Size
    /// Each feature's largest |value| on the test card (infinity where a value was not finite).
    package let peaks: [Float]

    /// The largest |value| a feature may reach on the test card and be stored in half: its half step is then
    /// at most 2⁻⁴ (1/16), and a frame may go 16× beyond the card before fp16 overflows (65504).
    package static let halfLimit: Float = 128

    package func allowsHalf(_ feature: Int) -> Bool {
        peaks.indices.contains(feature) && peaks[feature].isFinite && peaks[feature] <= Self.halfLimit
    }

    /// The test card the network sees: smooth colour gradients, hard edges at several scales, noise, and
    /// flat black, white, grey and saturated patches side by side (the extremes a frame holds), RGBA8.
    package static func testCard(_ size: Size) -> [UInt8] {
        var rgba = [UInt8](repeating: 255, count: size.pixelCount * 4)
        var seed: UInt32 = 0x9E37_79B9
        let patches: [(UInt8, UInt8, UInt8)] = [(0, 0, 0), (255, 255, 255), (128, 128, 128), (255, 0, 0), (0, 255, 0),
                                               (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255), (64, 64, 64)]
        let w = max(size.width, 1), h = max(size.height, 1)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let i = (y * size.width + x) * 4
                seed = seed &* 1_664_525 &+ 1_013_904_223
                let u = Double(x) / Double(w), v = Double(y) / Double(h)
                var rgb: (UInt8, UInt8, UInt8)
                switch (x * 2 / w, y * 2 / h) {
                case (0, 0):   // hues left to right, dark to light top to bottom
                    let hue = u * 12, light = 0.1 + 1.8 * v
                    func channel(_ phase: Double) -> UInt8 { UInt8(max(0, min(255, (0.5 + 0.5 * cos(hue + phase)) * light * 255))) }
                    rgb = (channel(0), channel(2.1), channel(4.2))
                case (1, 0):   // checkers of 2, 8 and 32 pixels
                    let cell = y < h / 6 ? 2 : (y < h / 3 ? 8 : 32)
                    let on = (x / cell + y / cell) % 2 == 0
                    rgb = on ? (240, 240, 240) : (15, 15, 15)
                case (0, 1):   // noise over a grey ramp
                    let base = Int(u * 2 * 200), noise = Int(seed >> 25) - 64
                    let value = UInt8(max(0, min(255, base + noise)))
                    rgb = (value, UInt8(max(0, min(255, Int(value) + Int(seed >> 28) - 8))), value)
                default:       // flat patches
                    rgb = patches[(x * 10 / w + y * 10 / h) % patches.count]
                }
                rgba[i] = rgb.0; rgba[i + 1] = rgb.1; rgba[i + 2] = rgb.2
            }
        }
        return rgba
    }
}

extension NetworkKernel {
    /// Runs the program in float on the test card and records each feature's peak, for the passes planned at
    /// `input` (on the GPU thread). A dynamic model runs at a smaller size when `input` is large (halved while
    /// above 256×256 worth of pixels: a layer's range follows the picture, not its size) if its layers come
    /// out the same there; a fixed-size one at its size. A renderer of its own, drawn once.
    func calibrate(input: Size) throws -> NetworkCalibration {
        var probeSize = input
        if program.fixedInputSize == nil || parameters.word("size") == "frame" {
            while probeSize.pixelCount > 65536, probeSize.width % 2 == 0, probeSize.height % 2 == 0, probeSize.width >= 64, probeSize.height >= 64 {
                probeSize = Size(width: probeSize.width / 2, height: probeSize.height / 2)
            }
        }
        if probeSize != input, let peaks = try? peaks(probeSize: probeSize) { return NetworkCalibration(input: input, peaks: peaks) }
        return NetworkCalibration(input: input, peaks: try peaks(probeSize: input))
    }

    /// Each feature's peak on the test card at `probeSize` (the model run at that size, in float).
    private func peaks(probeSize: Size) throws -> [Float] {
        let probe = try NetworkKernel(floatCopyOf: self)
        try probe.parameters.set("size", .text("\(probeSize.width)x\(probeSize.height)"))
        let graph = FilterGraph()
        try graph.add("calibration", kernel: probe, inputs: [.source])
        let renderer = try GraphRenderer(graph: graph, sourceFormat: .rgba, sourceSize: probeSize, sinks: [.rgba])
        guard probe.program.features.count == program.features.count else {
            throw NetworkError(file: path, "the calibration run planned other layers than the run (\(probe.program.features.count) "
                               + "features, not \(program.features.count))")
        }
        final class Peaks { var values: [Float] = [] }
        let peaks = Peaks()
        peaks.values = [Float](repeating: 0, count: program.features.count)
        let layers = probe.program.layers
        renderer.prepassObserver = { _, index, target in
            guard layers.indices.contains(index) else { return }
            peaks.values[layers[index].output] = Self.peak(target.readRGBAFloats())
        }
        let card = try UploadedFrame.rgba(NetworkCalibration.testCard(probeSize), size: probeSize)
        try renderer.render(card, context: FrameContext())
        return peaks.values
    }

    /// The largest |value|, infinity if any is not finite.
    static func peak(_ values: [Float]) -> Float {
        values.withUnsafeBufferPointer { buffer in
            var peak: Float = 0
            var index = 0
            while index < buffer.count {
                let value = buffer[index]
                guard value.isFinite else { return .infinity }
                if abs(value) > peak { peak = abs(value) }
                index += 1
            }
            return peak
        }
    }

    /// Runs the calibration for the size `summary` describes (`prism filters`), on the GPU thread.
    package func calibrateForSummary() throws {
        if !float32 && calibration?.input != program.inputSize { calibration = try calibrate(input: program.inputSize) }
    }

    /// What `prism filters` says of a layer's storage.
    func precisionNote(feature: Int) -> String {
        if float32 { return "float" }
        if program.features[feature].float32 { return "float (sums)" }
        guard let calibration, calibration.input == program.inputSize, calibration.peaks.indices.contains(feature) else { return "" }
        let peak = calibration.peaks[feature]
        let text = peak.isFinite ? String(format: "%.3g", peak) : "not finite"
        if halfFeatures(calibration).contains(feature) { return "half (peak \(text))" }
        return calibration.allowsHalf(feature) ? "float (peak \(text); read by a layer beyond the limit)" : "float (peak \(text))"
    }

    /// Each feature's storage for the passes planned at `input`: RGBA32F for `precision=float`, for sums and
    /// statistics, and where the calibration run found values beyond the half limit; RGBA16F elsewhere. Off
    /// the GPU thread before any calibration, RGBA32F (never wrong; what the GPU thread plans is calibrated).
    func featureFormats(input: Size) throws -> [TextureFormat] {
        let all = [TextureFormat](repeating: .rgba32f, count: program.features.count)
        if float32 { return all }
        if calibration?.input != input || calibration?.peaks.count != program.features.count {
            guard GPUThread.current != nil else { return all }
            calibration = try calibrate(input: input)
        }
        guard let calibration else { return all }
        let half = halfFeatures(calibration)
        return program.features.indices.map { half.contains($0) ? .rgba16f : .rgba32f }
    }

    /// The features stored in half: within the limit themselves, and read only by layers whose results are
    /// (a relative error in what a layer reads becomes an absolute error in proportion to what it writes, so
    /// the inputs of a layer whose values are large stay float too).
    func halfFeatures(_ calibration: NetworkCalibration) -> Set<Int> {
        var half = Set(program.features.indices.filter { !program.features[$0].float32 && calibration.allowsHalf($0) })
        for layer in program.layers where !calibration.allowsHalf(layer.output) {
            for input in layer.inputs { half.remove(input) }
            for case .tensor(_, let feature, _) in layer.epilogue { half.remove(feature) }
        }
        return half
    }
}
