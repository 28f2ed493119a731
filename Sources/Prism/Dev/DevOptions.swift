import Foundation
import PrismCore
import PrismGPU
import PrismPipeline

/// Everything `prism dev` was asked to do, validated.
struct DevOptions: Sendable {
    var shaderPath: String
    /// The pattern, a movie (looped: reopened at its end, timestamps continuing) or a camera.
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
    /// Preview JPEGs wider than this are downscaled (snapshots are not).
    var previewMaxWidth = 960
    var gpu = GPUOptions()
    var quiet = false

    /// The graph the loop runs: the shader as a filter, then the extra filters.
    var graphText: String {
        "\"" + shaderPath + "\"" + (extraFilter.trimmingCharacters(in: .whitespaces).isEmpty ? "" : ", " + extraFilter)
    }
}
