import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia

/// `prism run`: parse, validate, run the pipeline, report.
struct RunCommand {
    var options = RunOptions()
    /// Let FFmpeg's own log through (its warnings about damaged input, for instance).
    var verbose = false

    init(arguments: [String]) throws {
        var scanner = try ArgumentScanner(
            arguments,
            valueOptions: Set(["-o", "--output", "--filter", "-f", "--codec", "--preset", "--crf", "--bitrate", "--size", "--fps",
                           "--frames", "--duration", "--gpu", "--render-node", "--input-format", "--output-format",
                           "--readback", "--threads", "--switch-camera-after", "--audio"]).union(FaceOptions.valueOptions),
            flags: ["--quiet", "-q", "--stats", "--no-fuse", "--verbose", "-v"])
        guard scanner.positionals.count <= 1 else {
            throw UsageError("run takes one INPUT, got \(scanner.positionals.count): \(scanner.positionals.joined(separator: " "))")
        }
        options.filter = scanner.value("--filter", "-f") ?? ""
        options.quiet = scanner.flag("--quiet", "-q")
        options.stats = scanner.flag("--stats")
        verbose = scanner.flag("--verbose", "-v")
        options.fuse = !scanner.flag("--no-fuse")
        options.size = try scanner.size("--size")
        if let rate = scanner.value("--fps") {
            guard let parsed = Rational(parsing: rate) else { throw UsageError("--fps takes a rate like 30, 29.97 or 30000/1001, not '\(rate)'") }
            options.frameRate = parsed
        }
        options.frameLimit = try scanner.int("--frames", in: 1...100_000_000)
        if let seconds = try scanner.double("--duration", in: 0.001...1e7) {
            options.durationLimit = MediaTime(value: Int64((seconds * 1000).rounded()), timescale: 1000)
        }
        options.audioDevice = scanner.value("--audio")
        options.faces = try FaceOptions.parse(&scanner)
        options.gpu.deviceIndex = try scanner.int("--gpu", in: 0...63)
        options.gpu.renderNode = scanner.value("--render-node")
        if let readback = scanner.value("--readback") {
            guard let strategy = ReadbackStrategy(rawValue: readback) else { throw UsageError("--readback takes sync or pbo, not '\(readback)'") }
            options.readback = strategy
        }
        // Encoder.
        if let codec = scanner.value("--codec") {
            guard let parsed = VideoEncoderSettings.Codec(rawValue: codec.lowercased()) else {
                throw UsageError("--codec takes h264, hevc, ffv1 or prores, not '\(codec)'")
            }
            options.encoder.codec = parsed
        }
        if let preset = scanner.value("--preset") {
            let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
            guard presets.contains(preset) else { throw UsageError("--preset takes one of \(presets.joined(separator: ", ")), not '\(preset)'") }
            options.encoder.preset = preset
        }
        options.encoder.crf = try scanner.int("--crf", in: 0...51)
        if let bitrate = scanner.value("--bitrate") { options.encoder.bitrate = try Self.parseBitrate(bitrate) }
        if let threads = try scanner.int("--threads", in: 0...64) { options.encoder.threads = threads }
        // Input.
        let inputFormat = scanner.value("--input-format")
        switch scanner.positionals.first {
        case nil, "pattern":
            guard inputFormat == nil else { throw UsageError("--input-format describes raw frames on stdin (INPUT `-`)") }
            options.input = .pattern
        case "-":
            guard let inputFormat else { throw UsageError("raw input on stdin needs --input-format WxH:PIXFMT:RATE") }
            let format = try RawVideoFormat(parsing: inputFormat)
            options.input = .standardInput(format)
        case let argument? where InputSpec.cameraPath(argument) != nil:
            guard inputFormat == nil else { throw UsageError("--input-format describes raw frames on stdin (INPUT `-`)") }
            let path = InputSpec.cameraPath(argument)!
            guard !path.isEmpty else { throw UsageError("v4l2: needs a device path, e.g. v4l2:/dev/video0") }
            options.input = .camera(path)
        case let path?:
            guard inputFormat == nil else { throw UsageError("--input-format describes raw frames on stdin (INPUT `-`)") }
            if !path.contains("://"), !FileManager.default.fileExists(atPath: path) {
                throw UsageError("\(path): no such file")
            }
            options.input = .movie(path)
        }
        // Hidden, for the end-to-end test of the runtime camera switch: --switch-camera-after N:PATH switches
        // to the camera at PATH once N frames have been read (Pipeline.switchCamera, as a UI would call it).
        if let text = scanner.value("--switch-camera-after") {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard case .camera = options.input, parts.count == 2, let frames = Int(parts[0]), frames > 0 else {
                throw UsageError("--switch-camera-after takes FRAMES:DEVICE and a camera INPUT")
            }
            options.cameraSwitch = (frames, InputSpec.cameraPath(parts[1]) ?? parts[1])
        }
        // Output.
        guard let output = scanner.value("-o", "--output") else { throw UsageError("run needs -o OUTPUT (a movie file, or - for raw frames)") }
        let outputFormat = scanner.value("--output-format")
        if output == "-" {
            let name = outputFormat ?? "rgba"
            guard let format = PixelFormat(name: name), PackedFrameLayout.supportedFormats.contains(format) else {
                let supported = PackedFrameLayout.supportedFormats.map(\.rawValue).sorted().joined(separator: ", ")
                throw UsageError("--output-format \(name) is not supported (supported: \(supported))")
            }
            options.output = .standardOutput(format)
        } else {
            guard outputFormat == nil else { throw UsageError("--output-format applies to raw output (-o -)") }
            options.output = .movie(output)
        }
        options.progress = !options.quiet && isatty(2) != 0 && output != "-"
    }

    static func parseBitrate(_ text: String) throws -> Int {
        let lowered = text.lowercased()
        var multiplier = 1.0
        var digits = Substring(lowered)
        if lowered.hasSuffix("k") { multiplier = 1e3; digits = digits.dropLast() }
        else if lowered.hasSuffix("m") { multiplier = 1e6; digits = digits.dropLast() }
        guard let value = Double(digits), value > 0, value * multiplier <= 2e9 else {
            throw UsageError("--bitrate takes bits per second like 4M or 2500k, not '\(text)'")
        }
        return Int(value * multiplier)
    }

    func execute() throws -> Int32 {
        let graph = try PrismGraphs.bind(options.filter)
        // FACES HOOK (until the engine takes face regions as a side input): say so rather than draw empty masks.
        if options.faces.needsFaces(for: graph) {
            throw UsageError("faces in `prism run` need the new engine (face-mask, --faces-*); `prism render` has them")
        }
        // Problems reach the user as Prism's one-line errors; FFmpeg's own chatter only when asked.
        FFmpegLog.setLevel(verbose ? .warning : .quiet)
        let pipeline = try Pipeline(options: options, graph: graph)
        if !options.quiet {
            let gpu = pipeline.gpuInfo
            PrismCommandLine.info("prism: GPU: \(gpu.renderer) (\(gpu.version), \(gpu.platform.rawValue) platform)"
                                  + (gpu.isSoftware ? " — software renderer: frames are rendered on the CPU" : ""))
            PrismCommandLine.info("prism: input: \(pipeline.sourceInfo.summary) → \(pipeline.outputSize), "
                                  + "\(pipeline.passLabels.count) GPU pass(es)")
        }
        let stop = StopSignal()
        let signals = SignalHandlers(stop: stop)
        defer { signals.restore() }
        let progress: ((RunProgress) -> Void)? = options.progress ? { snapshot in
            let text = "\r\u{1B}[K" + snapshot.line + (snapshot.finished ? "\n" : "")
            FileHandle.standardError.write(Data(text.utf8))
        } : nil
        let report = try pipeline.run(stop: stop, progress: progress)
        pipeline.close()
        if !options.quiet {
            for note in report.notes { PrismCommandLine.info("prism: \(note)") }
            var line = "prism: \(report.framesOut) frames in " + String(format: "%.2f s (%.1f fps)", report.wallSeconds, report.fps)
            if report.framesDropped > 0 { line += ", \(report.framesDropped) dropped (live source behind)" }
            if report.interrupted { line += ", stopped early: output finished and playable" }
            if case .movie(let path) = options.output { line += " → \(path)" }
            PrismCommandLine.info(line)
        }
        if options.stats { PrismCommandLine.info(report.statsTable()) }
        return 0
    }
}

/// Ctrl-C and SIGTERM stop the run cleanly; a second one exits at once. SIGPIPE is ignored so a closed
/// stdout shows up as EPIPE on write (a clean end), not a dead process.
final class SignalHandlers: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private let lock = NSLock()
    private var count = 0

    init(stop: StopSignal) {
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                let seen = self.lock.withLock { () -> Int in self.count += 1; return self.count }
                if seen > 1 {
                    FileHandle.standardError.write(Data("\nprism: interrupted twice, exiting now\n".utf8))
                    exit(130)
                }
                FileHandle.standardError.write(Data("\nprism: stopping, finishing the output…\n".utf8))
                stop.stop()
            }
            source.resume()
            sources.append(source)
        }
    }

    func restore() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

/// `prism render`: one still image through a graph.
struct RenderCommand {
    let filter: String
    let input: String
    let output: String
    let gpu: GPUOptions
    let quality: Int
    let faces: FaceOptions

    init(arguments: [String]) throws {
        var scanner = try ArgumentScanner(arguments, valueOptions: Set(["--filter", "-f", "-o", "--output", "--gpu", "--quality"])
                                            .union(FaceOptions.valueOptions), flags: [])
        guard scanner.positionals.count == 1 else { throw UsageError("render takes one input image: prism render --filter SPEC IN.png -o OUT.png") }
        input = scanner.positionals[0]
        guard let output = scanner.value("-o", "--output") else { throw UsageError("render needs -o OUT.(png|jpg)") }
        self.output = output
        guard ImageFile.kind(forPath: output) != nil else { throw UsageError("\(output): the output must end in .png, .jpg or .jpeg") }
        filter = scanner.value("--filter", "-f") ?? ""
        gpu = GPUOptions(deviceIndex: try scanner.int("--gpu", in: 0...63))
        quality = try scanner.int("--quality", in: 1...100) ?? 90
        faces = try FaceOptions.parse(&scanner)
        guard FileManager.default.fileExists(atPath: input) else { throw UsageError("\(input): no such file") }
    }

    func execute() throws -> Int32 {
        let graph = try PrismGraphs.bind(filter)
        FFmpegLog.setLevel(.quiet)
        // Faces: the model or sidecar is checked before the image is read; regions reach the graph as FrameContext.regions.
        let sideInput = try faces.makeSideInput(for: graph, live: false)
        let image = try ImageFile.read(path: input)
        let context = try GPUContext(options: gpu)
        var frame = FrameContext()
        if let sideInput {
            frame.regions = try StillFaces.detect(rgba: image.pixels, size: image.size, on: context, faces: sideInput).regions
        }
        let (pixels, size) = try StillRenderer.render(graph, rgba: image.pixels, size: image.size, on: context, frame: frame)
        try ImageFile.write(RGBAImage(size: size, pixels: pixels), to: output, jpegQuality: quality)
        try sideInput?.finish()
        return 0
    }
}

/// The binder the tool uses: built-ins, .cube files and user shaders.
enum PrismGraphs {
    /// ISF IMPORTED images: PNG and JPEG through PrismMedia, PPM/PAM through the filters' own reader.
    static func binder() -> GraphBinder {
        GraphBinder(imageLoader: { path in
            if ImageFile.kind(forPath: path) == nil { return try UserShaderKernel.netpbmImageLoader(path) }
            let image = try ImageFile.read(path: path)
            return (image.size, image.pixels)
        })
    }

    /// Binds graph text given on the command line; errors in the text keep the text, so the CLI can put
    /// a caret under the column on a terminal.
    static func bind(_ text: String) throws -> FilterGraph {
        do {
            return try binder().bind(text)
        } catch let error as GraphTextError {
            throw GraphInputError(error: error, text: text)
        }
    }
}

/// An error in graph text together with the text.
struct GraphInputError: PrismError {
    let error: GraphTextError
    let text: String
    var description: String { error.description }
}
