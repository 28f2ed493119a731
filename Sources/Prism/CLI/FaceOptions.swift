import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismMedia
import PrismVision

/// The face flags of `run`, `dev` and `render` (`--face-model`, `--face-every`, `--faces-in`, `--faces-out`,
/// `--face-min-size`, `--faces-strict`): PrismKit's `FaceSettings`, parsed from the command line.
public typealias FaceOptions = FaceSettings

extension FaceSettings {
    /// The flags, declared once for every command that takes them.
    static let commandLine: [OptionSpec] = [
        .value("--face-model", value: "PATH|haar|lbp|FILE.onnx", help: "the OpenCV cascade that finds faces (default haar), or a YuNet ONNX model"),
        .value("--face-every", value: "N", help: "files: detect faces on every Nth frame, frames wait for it (default 1)"),
        .value("--faces-in", value: "F.jsonl", help: "faces from a sidecar instead of the detector"),
        .value("--faces-out", value: "F.jsonl", help: "write each frame's faces (pts, id, box, score)"),
        .value("--face-min-size", value: "PX", help: "smallest face to find, in frame pixels; sets the detection resolution (default 40)"),
        .flag("--faces-strict", help: "pixellate the whole frame while a lost face has not been found again"),
    ]

    static func parse(_ scanner: inout ArgumentScanner) throws -> FaceOptions {
        var options = FaceOptions()
        options.model = scanner.value("--face-model")
        options.every = try scanner.int("--face-every", in: 1...100_000)
        options.sidecarIn = scanner.value("--faces-in")
        options.sidecarOut = scanner.value("--faces-out")
        options.minSize = try scanner.int("--face-min-size", in: 8...100_000)
        options.strict = scanner.flag("--faces-strict")
        if options.sidecarIn != nil, options.model != nil || options.every != nil || options.minSize != nil || options.strict {
            throw UsageError("--faces-in replaces the detector: drop --face-model, --face-every, --face-min-size and --faces-strict")
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
