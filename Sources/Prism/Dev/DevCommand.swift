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

    static var spec: CommandSpec { DevOptions.commandLine }

    /// The synopsis, one line, from the option table.
    static var usage: String { spec.synopsis(indent: "", width: .max) }

    init(arguments: [String]) throws {
        // SHADER, then the inputs (several: the shader reads them in order); --offset/--end before an input are its own.
        let (rest, words) = try InputArguments.split(arguments, command: DevOptions.commandLine)
        var scanner = try ArgumentScanner(rest, command: DevOptions.commandLine)
        guard let shaderWord = words.first, shaderWord.name == nil, shaderWord.offset == nil, shaderWord.end == nil else {
            throw UsageError("usage: prism \(Self.usage)")
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
        options.input = try InputArguments.firstInput(inputs.first?.source, rawFormat: scanner.value("--input-format"))
        options.session.inputs = try inputs.dropFirst().enumerated().map { index, input in
            try InputArguments.extraInput(input, index: index + 1, options: Session.Options())
        }
        options.port = try scanner.int("--port", in: 0...65535) ?? 8080
        options.bindAddress = scanner.value("--bind") ?? "127.0.0.1"
        options.extraFilter = try scanner.value(for: "filter", as: FilterText.self)?.text ?? ""
        options.outputDirectory = scanner.value("--out") ?? "."
        guard FileManager.default.fileExists(atPath: options.outputDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw UsageError("--out \(options.outputDirectory): no such directory")
        }
        if let size: Size = try scanner.value(for: "size") { options.patternSize = size }
        options.outputSize = try scanner.value(for: "output-size")
        if let rate = scanner.value("--fps") {
            options.frameRate = try FrameRate(text: rate, name: "--fps", upTo: DevOptions.maximumFrameRate).rate
        }
        options.session.gpu.deviceIndex = try scanner.value(for: "gpu", as: GPUIndex.self)?.value
        options.previewMaxWidth = try scanner.int("--preview-width", in: 64...8192) ?? 960
        options.quiet = scanner.flag("--quiet", "-q")
        options.session.audioDevice = scanner.value("--audio")
        options.session.faces = try FaceOptions.parse(&scanner)
        options.session.segmentation = try SegmentationSettings.parse(&scanner)
        var movie: String?
        if case .movie(let path) = options.input { movie = path }
        try options.session.faces.checkSidecarOut(reads: [shader, movie], output: nil)
        selfTestEndpoint = scanner.flag("--page-self-test")
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
