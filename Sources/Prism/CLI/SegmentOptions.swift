import Foundation
import PrismCore
import PrismKit

/// The segmentation flags of `run`, `record`, `dev` and `render` (`--segment-model`, `--segment-backend`,
/// `--segment-smoothing`, `--segment-width`): PrismKit's `SegmentationSettings`, parsed from the command line.
extension SegmentationSettings {
    static let commandLine: [OptionSpec] = [
        .value("--segment-model", value: "SEG.onnx", help: "a person/foreground model for background-blur, background-replace, segment-mask"),
        .key("segment-backend", value: SegmentationSettings.Backend.placeholder, help: "run it as GPU passes or with OpenCV DNN on the CPU (default auto: CPU on a software renderer)"),
        .value("--segment-smoothing", value: "A", help: "share of each new mask against the previous one, (0, 1] (default 0.5)"),
        .value("--segment-width", value: "PX", help: "width of the picture a dynamic-size model sees (default 256)"),
    ]

    static func parse(_ source: inout some OptionSource) throws -> SegmentationSettings {
        var settings = SegmentationSettings()
        settings.model = try source.text(for: "segment-model")
        if let backend = try source.value(for: "segment-backend", as: Backend.self) { settings.backend = backend }
        if let text = try source.text(for: "segment-smoothing") {
            guard let a = Double(text), a > 0, a <= 1 else {
                throw UsageError("\(source.spelling(for: "segment-smoothing")) takes a number in (0, 1], not '\(text)'")
            }
            settings.smoothing = a
        }
        if let text = try source.text(for: "segment-width") {
            guard let w = Int(text), (32...4096).contains(w) else {
                throw UsageError("\(source.spelling(for: "segment-width")) takes a width of 32 to 4096 pixels, not '\(text)'")
            }
            settings.width = w
        }
        // Options without a model are refused when the run starts (the graph may name one: `model=SEG.onnx`).
        return settings
    }
}
