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
    enum Key {
        static let faceModel = OptionKey<String>("--face-model", value: "centerface|FILE.onnx|haar|lbp|CASCADE.xml",
               help: "what finds faces: the installed CenterFace (default), a CenterFace or YuNet ONNX model, or an OpenCV cascade")
        static let faceEvery = OptionKey<Int>("--face-every", value: "N", in: 1...100_000, help: "files: detect faces on every Nth frame, frames wait for it (default 1)")
        static let facesIn = OptionKey<String>("--faces-in", value: "F.jsonl", help: "faces from a sidecar instead of the detector")
        static let facesOut = OptionKey<String>("--faces-out", value: "F.jsonl", help: "write each frame's faces (pts, id, box, score)")
        static let faceMinSize = OptionKey<Int>("--face-min-size", value: "PX", in: 8...100_000, help: "smallest face to find, in frame pixels; sets the detection resolution (default 40; a still: full resolution)")
        static let facesStrict = FlagKey("--faces-strict", help: "pixellate the whole frame while a lost face has not been found again")
        static let requireFaces = FlagKey("--require-faces", help: "fail (and keep no output) when no face is found at all")
    }

    static let commandLine: [OptionSpec] = [Key.faceModel.spec, Key.faceEvery.spec, Key.facesIn.spec, Key.facesOut.spec,
                                            Key.faceMinSize.spec, Key.facesStrict.spec, Key.requireFaces.spec]

    /// The face options `source` gives (a command line's `--face-every 5`), each checked by its value type.
    static func parse(_ source: inout some OptionSource) throws -> FaceOptions {
        var options = FaceOptions()
        options.model = try source.value(Key.faceModel)
        options.every = try source.value(Key.faceEvery)
        options.sidecarIn = try source.value(Key.facesIn)
        options.sidecarOut = try source.value(Key.facesOut)
        options.minSize = try source.value(Key.faceMinSize)
        options.strict = try source.flag(Key.facesStrict)
        options.requireFaces = try source.flag(Key.requireFaces)
        if options.sidecarIn != nil, options.model != nil || options.every != nil || options.minSize != nil || options.strict {
            let detector = [source.spelling(of: Key.faceModel), source.spelling(of: Key.faceEvery), source.spelling(of: Key.faceMinSize)]
            throw UsageError("\(source.spelling(of: Key.facesIn)) replaces the detector: drop \(detector.joined(separator: ", ")) "
                             + "and \(source.spelling(of: Key.facesStrict))")
        }
        return options
    }

    /// `--faces-out` checked as `-o` is, before any work: not the input, not `--faces-in`, not the main
    /// output, and a place a file can be written (not a folder; a FIFO is written in place).
    /// - Parameter reads: the files the command reads (its input, a shader).
    func checkSidecarOut(reads: [String?], output: String?) throws {
        guard let sidecarOut else { return }
        try OutputTarget.checkSideOutput(sidecarOut, flag: Key.facesOut.spec.name, reads: (reads + [sidecarIn]).compactMap { $0 },
                                     outputs: output.map { [("\(Setting.output)", $0)] } ?? [])
    }

}
