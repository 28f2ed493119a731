import Foundation
import PrismCore
import PrismKit
import PrismGPU
import PrismMedia
import PrismPipeline

/// `prism dev SHADER [INPUT] [--port N] [--bind ADDRESS] [--filter EXTRA] [--out DIR] [--size WxH] [--fps RATE]`:
/// the shader-authoring loop. Runs the shader live on the input, serves the preview page and reloads the
/// shader whenever one of its files changes, until Ctrl-C.
struct DevCommand: PrismCommand {
    var options: DevOptions
    var selfTestEndpoint = false

    static let spec = CommandSpec(
        name: "dev", arguments: "SHADER [INPUT...]",
        summary: "Runs SHADER live on INPUT (the pattern, a looping movie or a camera), serves a preview page and "
            + "reloads the shader when its files change, until Ctrl-C.",
        options: [
            Key.port.spec,
        ] + InputArguments.scoped + [
            RunCommand.Key.inputFormat.spec,
            Key.bind.spec,
            Key.filter.spec,
            Key.out.spec,
            Key.size.spec,
            Key.fps.spec,
            Key.outputSize.spec,
            Key.gpu.spec,
            Key.audio.spec,
            Key.previewWidth.spec,
            Key.quiet.spec,
            Key.pageSelfTest.spec,
        ] + FaceOptions.commandLine + SegmentationSettings.commandLine,
        notes: ["INPUT is `pattern` (the default), a movie file (looped), a URL, a pipe, raw frames on stdin (`-`) or a V4L2",
                "camera (/dev/videoN or v4l2:DEVICE): whatever `prism run` takes."])

    /// `dev`'s own options, declared once: its table (`spec`) and the parser read them.
    enum Key {
        static let port = OptionKey<Int>("--port", value: "N", in: 0...65535, help: "the preview's port (default 8080; 0 picks a free one)")
        static let bind = OptionKey<String>("--bind", value: "ADDRESS", help: "the address the preview listens on (default 127.0.0.1)")
        static let filter = OptionKey<FilterText>("--filter", "-f", value: "EXTRA", help: "more filters after the shader, e.g. mono")
        static let size = OptionKey<Size>("--size", value: "WxH", help: "the pattern's size, asked of a camera (default 1280x720)")
        static let outputSize = OptionKey<Size>("--output-size", value: "WxH", help: "the output's size: a final scale, or mpv hooks' OUTPUT (default: the input's)")
        static let gpu = OptionKey<Int>.gpu
        static let out = OptionKey<String>("--out", value: "DIR", help: "where recordings and snapshots land (default .)")
        /// The preview's rate, up to `DevOptions.maximumFrameRate` (the one frame-rate check, lower ceiling).
        static let fps = OptionKey<Rational>(
            spec: .value("--fps", value: "RATE", help: "the pattern's rate, asked of a camera (default 30, at most 240)"),
            read: { try FrameRate(text: $0, name: $1, upTo: DevOptions.maximumFrameRate).rate })
        static let audio = OptionKey<String>("--audio", value: "ALSA_PCM", help: "record this ALSA capture PCM into the page's recordings (AAC); it feeds audio-reactive shaders too")
        static let previewWidth = OptionKey<Int>("--preview-width", value: "N", in: 64...8192, help: "preview frames wider than this are downscaled, 64-8192 (default 960)")
        static let quiet = FlagKey("--quiet", "-q", help: "fewer messages")
        // The page's self-test endpoint, for the browser tests.
        static let pageSelfTest = FlagKey("--page-self-test", help: "", hidden: true)
    }

    init(arguments: [String]) throws {
        // SHADER, then the inputs (several: the shader reads them in order); --offset/--end before an input are its own.
        let (rest, words) = try InputArguments.split(arguments, command: Self.spec)
        var scanner = try ArgumentScanner(rest, command: Self.spec)
        guard let shaderWord = words.first, shaderWord.name == nil, shaderWord.offset == nil, shaderWord.end == nil else {
            throw UsageError("usage: prism " + Self.spec.synopsis(indent: "", width: .max))
        }
        let shader = shaderWord.source
        let inputs = Array(words.dropFirst())
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: shader, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw UsageError("\(shader): no such shader file")
        }
        guard !shader.contains("\"") else { throw UsageError("\(shader): shader paths with '\"' are not supported") }
        options = DevOptions(shaderPath: shader)
        if let first = inputs.first, first.offset != nil || first.end != nil {
            throw UsageError("--offset and --end apply to the inputs after the first; the first input (\(first.source)) is the clock")
        }
        options.input = try InputArguments.firstInput(inputs.first?.source, rawFormat: try scanner.value(RunCommand.Key.inputFormat))
        options.session.inputs = try inputs.dropFirst().enumerated().map { index, input in
            try InputArguments.extraInput(input, index: index + 1, options: Session.Options())
        }
        options.port = try scanner.value(Key.port) ?? 8080
        options.bindAddress = try scanner.value(Key.bind) ?? "127.0.0.1"
        options.extraFilter = try scanner.value(Key.filter)?.text ?? ""
        options.outputDirectory = try scanner.value(Key.out) ?? "."
        guard FileManager.default.fileExists(atPath: options.outputDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw UsageError("--out \(options.outputDirectory): no such directory")
        }
        if let size = try scanner.value(Key.size) { options.patternSize = size }
        options.outputSize = try scanner.value(Key.outputSize)
        if let rate = try scanner.value(Key.fps) { options.frameRate = rate }
        options.session.gpu.deviceIndex = try scanner.value(Key.gpu)
        options.previewMaxWidth = try scanner.value(Key.previewWidth) ?? 960
        options.quiet = scanner.flag(Key.quiet)
        options.session.audioDevice = try scanner.value(Key.audio)
        options.session.faces = try FaceOptions.parse(&scanner)
        options.session.segmentation = try SegmentationSettings.parse(&scanner)
        var movie: String?
        if case .movie(let path) = options.input { movie = path }
        try options.session.faces.checkSidecarOut(reads: [shader, movie], output: nil)
        selfTestEndpoint = scanner.flag(Key.pageSelfTest)
        try scanner.checkAllUsed()
    }

    func execute() throws -> Int32 {
        FFmpegLog.setLevel(.error)
        let session = try DevSession(options: options)
        let routes = PreviewRoutes(session: session, selfTest: selfTestEndpoint)
        // A per-run secret in the page URL (like Jupyter's): only someone who can read this terminal opens the page.
        let token = RequestGate.makeToken()
        let server = try routes.serve(address: options.bindAddress, port: options.port, token: token)
        defer { server.stop() }
        let host = options.bindAddress.contains(":") ? "[\(options.bindAddress)]" : options.bindAddress
        PrismCommandLine.info("prism: GPU: \(session.gpuInfo.renderer)" + (session.gpuInfo.isSoftware ? " (software renderer)" : ""))
        PrismCommandLine.info("prism: input: \(session.sourceInfo.summary); colour: \(session.sourceInfo.color.summary)")
        PrismCommandLine.info("prism: preview at http://\(host):\(server.port)/?token=\(token) — editing \(options.shaderPath); Ctrl-C stops")
        if options.bindAddress != "127.0.0.1" && options.bindAddress != "::1" {
            PrismCommandLine.info("prism: warning: the preview is reachable from other machines on \(options.bindAddress)")
        }
        for leftover in OutputTarget.recoverStaleTemporaries(inDirectory: options.outputDirectory, namesStartingWith: "prism-dev-").recovered {
            PrismCommandLine.info("prism: \(leftover.message)")
        }
        let signals = StopSignals.finishingOutput(session.stop)
        defer { signals.finish() }
        try session.run()
        return 0
    }
}
