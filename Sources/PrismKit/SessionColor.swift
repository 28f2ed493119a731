import PrismCore
import PrismFilters
import PrismMedia

/// Whether an HDR or deep input keeps its range and depth in the output.
public enum DynamicRange: String, Sendable, CaseIterable {
    /// Keep them where the output's codec can carry them (HEVC Main10, AV1, ProRes, FFV1); SDR otherwise.
    case auto
    /// Always SDR: HDR is tone mapped, the output is 8-bit where the codec has a choice.
    case sdr
    /// Always keep them; an output that cannot carry them is an error.
    case keep
}

/// What a session does with its input's colour: the conversion placed in front of the graph (tone
/// mapping, PQ ↔ HLG), what the output is packed in and tagged with, the encoder's depth, and what is
/// said about it.
package struct ColorPlan {
    /// The `tonemap` in front of the graph; nil: none.
    package var conversion: ColorConversion?
    /// The output's colour when the graph converts it; nil: the source's.
    package var outputColor: VideoColor?
    /// The encoder's bits per sample.
    package var bitDepth = 8
    package var notes: [String] = []
    /// The graph works in linear light somewhere (`tonemap(to=linear)`): passes keep RGBA16F, values above 1.
    package var linearLight = false

    package init(source: SourceInfo, graph: FilterGraph, options: Session.Options) throws {
        let color = source.color
        let encoder = options.encoder
        let canBeDeep = options.outputIsDeep ?? encoder.canBeDeep
        let output = options.outputIsDeep == nil ? encoder.codec.rawValue : "this output"
        let deep = source.pixelFormat.bitDepth > 8
        let keep: Bool
        switch options.dynamicRange {
        case .sdr: keep = false
        case .keep: keep = true
        case .auto: keep = canBeDeep && (deep || color.isHDR)
        }
        if keep && color.isHDR && !canBeDeep {
            throw InvalidRequest("the input is HDR (\(color.transfer.displayName)) and \(output) is 8-bit SDR here: "
                             + "\(Setting.codec) hevc (Main10), av1, prores or ffv1 keep HDR; \(Setting.dynamicRange) sdr tone maps it")
        }
        // FFV1 keeps what is deeper than 10 bits (16-bit 4:4:4); the others carry 10.
        if keep && encoder.canBeDeep && (deep || color.isHDR) {
            bitDepth = encoder.codec == .ffv1 && source.pixelFormat.bitDepth > 10 ? 16 : 10
        }
        // The graph converts by itself (a shader that asks for linear light between two tonemaps).
        if let last = graph.nodes.last(where: { $0.name == "tonemap" }), let values = last.parameters {
            try planGraphConversion(graph, last: values, canBeDeep: canBeDeep, output: output, encoder: encoder)
            return
        }
        if keep, color.isHDR, let look = graph.nodes.first(where: { BuiltinFilters.sdrLooks.contains($0.name) }) {
            throw InvalidRequest("\(look.name) is a look for SDR pictures and this output keeps HDR "
                             + "(\(color.transfer.displayName)): \(Setting.dynamicRange) sdr tone maps first, then applies it")
        }
        // The input colour's peak lands in the mastering metadata: say it came from the option, not the file.
        let peakSource = options.inputColor?.peak != nil ? "as \(Setting.inputColor) peak= sets it"
            : color.peakIsFromMetadata ? "from its metadata" : "assumed: no mastering metadata; \(Setting.inputColor) peak= sets it"
        let black = color.mastering.map { $0.minLuminance > 0 ? $0.minLuminance : ColorConversion.hdrBlack } ?? ColorConversion.hdrBlack
        if color.isHDR && !keep {
            guard let curve = options.toneCurve else {
                notes.append("\(Setting.toneMap) none: the \(color.transfer.displayName) signal is written as it is, tagged as the input")
                return
            }
            conversion = ColorConversion(from: color.transfer, to: .sdr, sourcePrimaries: color.primaries,
                                         targetPrimaries: .bt709, sourcePeak: color.peakLuminance, sourceBlack: black,
                                         curve: curve)
            outputColor = VideoColor(space: YUVColorSpace(matrix: .bt709, range: .limited), primaries: .bt709, transfer: .bt709)
            notes.append("HDR → SDR: tone mapped (\(curve.rawValue), peak \(Int(color.peakLuminance)) cd/m² \(peakSource)) "
                         + "to BT.709; \(canBeDeep ? "\(Setting.dynamicRange) keep" : "\(Setting.codec) hevc") keeps HDR")
        } else if keep, color.isHDR, let target = options.outputTransfer, target != color.transfer {
            guard target.isHDR else {
                throw InvalidRequest("\(Setting.outputTransfer) takes pq or hlg (an SDR output is \(Setting.dynamicRange) sdr)")
            }
            conversion = ColorConversion(from: color.transfer, to: target == .pq ? .pq : .hlg, sourcePrimaries: color.primaries,
                                         targetPrimaries: color.primaries, sourcePeak: color.peakLuminance, sourceBlack: black,
                                         curve: options.toneCurve ?? .clip)
            var output = color
            output.transfer = target
            output.guessed = []
            // HLG carries no mastering metadata; PQ made from HLG was graded on HLG's reference display.
            output.mastering = target == .hlg ? nil
                : MasteringDisplay(red: .zero, green: .zero, blue: .zero, white: .zero, minLuminance: ColorConversion.hdrBlack,
                                   maxLuminance: ColorConversion.hlgDisplayPeak)
            output.lightLevel = target == .hlg ? nil : output.lightLevel
            outputColor = output
            notes.append("\(color.transfer.displayName) → \(target.displayName) for a \(Int(ColorConversion.hlgDisplayPeak)) cd/m² display")
        } else if options.outputTransfer != nil && !(keep && color.isHDR) {
            throw InvalidRequest("\(Setting.outputTransfer) converts an HDR input kept HDR (\(Setting.codec) hevc, av1, prores or ffv1)")
        }
    }

    /// A graph with its own `tonemap`s: the last says what the output is; none is added in front.
    private mutating func planGraphConversion(_ graph: FilterGraph, last values: ParameterValues, canBeDeep: Bool,
                                              output: String, encoder: VideoEncoderSettings) throws {
        linearLight = graph.nodes.contains { $0.name == "tonemap" && $0.parameters?.word("to") == "linear" }
        let target = ColorTarget(rawValue: values.word("to")) ?? .sdr
        let primaries = ColorPrimaries(rawValue: values.word("out-primaries")) ?? .bt709
        let matrix: ColorMatrix = primaries == .bt2020 ? .bt2020 : .bt709
        let coding = YUVColorSpace(matrix: matrix, range: .limited)
        switch target {
        case .linear:
            throw InvalidRequest("the graph ends in linear light: end it with tonemap(from=linear, to=sdr|pq|hlg)")
        case .sdr:
            outputColor = VideoColor(space: coding, primaries: primaries, transfer: matrix == .bt2020 ? .bt2020_10 : .bt709)
        case .pq, .hlg:
            guard canBeDeep else {
                throw InvalidRequest("the graph's tonemap makes \(target.transfer.displayName) and \(output) is 8-bit SDR here: "
                                 + "\(Setting.codec) hevc, av1, prores or ffv1 carry it")
            }
            bitDepth = encoder.canBeDeep ? 10 : 8
            outputColor = VideoColor(space: coding, primaries: primaries, transfer: target.transfer)
        }
        notes.append("the graph converts the colour itself (tonemap): no automatic tone mapping")
    }

    /// The built-in in front of the graph.
    package var filters: [(name: String, parameters: [String: ParameterValue])] {
        conversion.map { [("tonemap", ColorConversionFilter.parameters(for: $0))] } ?? []
    }
}
