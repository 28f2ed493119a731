import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismMedia
import PrismVision

/// The face flags of `run`, `dev` and `render` (`--face-model`, `--face-every`, `--faces-in`, `--faces-out`,
/// `--face-min-size`, `--faces-strict`): PrismKit's `FaceSettings`, parsed from the command line.
package typealias FaceOptions = FaceSettings

extension FaceSettings {
    /// The flags, declared once for every command that takes them.
    static let commandLine: [OptionSpec] = [
        .value("--face-model", value: "centerface|FILE.onnx|haar|lbp|CASCADE.xml",
               help: "what finds faces: the installed CenterFace (default), a CenterFace or YuNet ONNX model, or an OpenCV cascade"),
        .value("--face-every", value: "N", help: "files: detect faces on every Nth frame, frames wait for it (default 1)"),
        .value("--faces-in", value: "F.jsonl", help: "faces from a sidecar instead of the detector"),
        .value("--faces-out", value: "F.jsonl", help: "write each frame's faces (pts, id, box, score)"),
        .value("--face-min-size", value: "PX", help: "smallest face to find, in frame pixels; sets the detection resolution (default 40; a still: full resolution)"),
        .flag("--faces-strict", help: "pixellate the whole frame while a lost face has not been found again"),
        .flag("--require-faces", help: "fail (and keep no output) when no face is found at all"),
    ]

    /// The face options `source` gives (a command line's `--face-every 5`), each checked by its value type.
    static func parse(_ source: inout some OptionSource) throws -> FaceOptions {
        var options = FaceOptions()
        options.model = try source.text(for: "face-model")
        options.every = try source.value(for: "face-every", as: FaceInterval.self)?.value
        options.sidecarIn = try source.text(for: "faces-in")
        options.sidecarOut = try source.text(for: "faces-out")
        options.minSize = try source.value(for: "face-min-size", as: FaceMinimumSize.self)?.value
        options.strict = try source.flag(for: "faces-strict")
        options.requireFaces = try source.flag(for: "require-faces")
        if options.sidecarIn != nil, options.model != nil || options.every != nil || options.minSize != nil || options.strict {
            let detector = ["face-model", "face-every", "face-min-size"].map { source.spelling(for: $0) }.joined(separator: ", ")
            throw UsageError("\(source.spelling(for: "faces-in")) replaces the detector: drop \(detector) and \(source.spelling(for: "faces-strict"))")
        }
        return options
    }

    /// `--faces-out` checked as `-o` is, before any work: not the input, not `--faces-in`, not the main
    /// output, and a place a file can be written (not a folder; a FIFO is written in place).
    /// - Parameter reads: the files the command reads (its input, a shader).
    func checkSidecarOut(reads: [String?], output: String?) throws {
        guard let sidecarOut else { return }
        try OutputTarget.checkSideOutput(sidecarOut, flag: "--faces-out", reads: (reads + [sidecarIn]).compactMap { $0 },
                                     outputs: output.map { [("-o", $0)] } ?? [])
    }

}
