import Foundation
import PrismCore
import PrismKit
import PrismGPU
import PrismPipeline

/// Everything `prism dev` was asked to do, validated.
struct DevOptions: Sendable {
    /// The preview's rate at most (the pattern's, what a camera is asked for).
    static let maximumFrameRate = 240.0

    var shaderPath: String
    /// The pattern, a movie (a file looped: reopened at its end, timestamps continuing), a stream, a pipe,
    /// raw frames on stdin or a camera.
    var input: InputSpec = .pattern
    /// More filters after the shader (graph text), e.g. `mono`.
    var extraFilter = ""
    var port = 8080
    var bindAddress = "127.0.0.1"
    /// Where recordings and snapshots saved by the server land.
    var outputDirectory = "."
    /// The test pattern's size and rate; what a camera is asked for.
    var patternSize = Size(width: 1280, height: 720)
    var frameRate = Rational(30, 1)
    /// `--output-size`: the graph ends scaled to it (mpv hooks take it as OUTPUT); nil keeps the graph's size.
    var outputSize: Size?
    /// Preview JPEGs wider than this are downscaled (snapshots are not).
    var previewMaxWidth = 960
    var quiet = false
    /// How the session runs, parsed into it: `--gpu`, `--audio` (the microphone the page's recordings
    /// carry), the face and segmentation settings, and the inputs after the first (`session.inputs`:
    /// matched to it by timestamp (files) or newest-wins (cameras); the shader reads them as its second,
    /// third… image input). A preview's policies: looped, SDR (the page shows SDR, HDR is tone mapped in
    /// front of the shader), the pattern endless, frames as stored.
    var session = DevOptions.previewSession

    private static var previewSession: Session.Options {
        var options = Session.Options()
        options.preview = true
        options.loops = true
        options.dynamicRange = .sdr
        options.patternSeconds = nil
        options.autorotate = false
        return options
    }

    /// The inputs after the first.
    var extraInputs: [ExtraInput] { session.inputs }

    /// The graph the loop runs: the shader as a filter, then the extra filters. With several inputs the
    /// shader reads them all, in order (`[0][1]…'SHADER'`) — unless the extra filters name inputs themselves
    /// (`--filter '[1]overlay(x=-16, y=-16)'`): then the shader reads the first and the filters place the others.
    var graphText: String {
        let labels = extraInputs.isEmpty || extraFilterNamesInputs ? "" : (0...extraInputs.count).map { "[\($0)]" }.joined()
        return labels + "\"" + shaderPath + "\"" + (extraFilter.trimmingCharacters(in: .whitespaces).isEmpty ? "" : ", " + extraFilter)
    }

    /// Whether `--filter` reads one of the extra inputs by its label (`[1]`, `[2]`…, or its name).
    private var extraFilterNamesInputs: Bool {
        let labels = extraInputs.enumerated().flatMap { index, input in ["[\(index + 1)]"] + (input.name.map { ["[\($0)]"] } ?? []) }
        return labels.contains { extraFilter.contains($0) }
    }
}
