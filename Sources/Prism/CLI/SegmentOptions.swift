import Foundation
import PrismCore
import PrismKit

/// The segmentation flags of `run`, `record`, `dev` and `render` (`--segment-model`, `--segment-backend`,
/// `--segment-smoothing`, `--segment-width`): PrismKit's `SegmentationSettings`, parsed from the command line.
extension SegmentationSettings {
    /// The flags, declared once for every command that takes them.
    enum Key {
        static let segmentModel = OptionKey<String>("--segment-model", value: "SEG.onnx", help: "a person/foreground model for background-blur, background-replace, segment-mask")
        static let segmentBackend = OptionKey<Backend>("--segment-backend", value: Backend.placeholder, help: "run it as GPU passes or with OpenCV DNN on the CPU (default auto: CPU on a software renderer)")
        static let segmentSmoothing = OptionKey<Double>(
            spec: .value("--segment-smoothing", value: "A", help: "share of each new mask against the previous one, (0, 1] (default 0.5)"),
            read: { text, name in
                guard let a = Double(text), a > 0, a <= 1 else { throw UsageError("\(name) takes a number in (0, 1], not '\(text)'") }
                return a
            })
        static let segmentWidth = OptionKey<Int>(
            spec: .value("--segment-width", value: "PX", help: "width of the picture a dynamic-size model sees (default 256)"),
            read: { text, name in
                guard let w = Int(text), (32...4096).contains(w) else { throw UsageError("\(name) takes a width of 32 to 4096 pixels, not '\(text)'") }
                return w
            })
    }

    static let commandLine: [OptionSpec] = [Key.segmentModel.spec, Key.segmentBackend.spec, Key.segmentSmoothing.spec, Key.segmentWidth.spec]

    static func parse(_ source: inout some OptionSource) throws -> SegmentationSettings {
        var settings = SegmentationSettings()
        settings.model = try source.value(Key.segmentModel)
        if let backend = try source.value(Key.segmentBackend) { settings.backend = backend }
        if let smoothing = try source.value(Key.segmentSmoothing) { settings.smoothing = smoothing }
        if let width = try source.value(Key.segmentWidth) { settings.width = width }
        // Options without a model are refused when the run starts (the graph may name one: `model=SEG.onnx`).
        return settings
    }
}
