import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismKit
import PrismMedia
import PrismPipeline
import PrismVision
import Synchronization

/// `prism run`: parse, validate, run the pipeline, report.
struct RunCommand: PrismCommand {
    var options = RunOptions()
    /// Let FFmpeg's own log through (its warnings about damaged input, for instance).
    var verbose = false

    /// What `run` and `record` share: the input, the graph, the encoder, the GPU, limits, faces.
    static let commonOptions: [OptionSpec] = FaceOptions.commandLine + SegmentationSettings.commandLine + [
        Key.filter.spec,
    ] + EncoderChoice.options + InputChoice.options + [
        Key.gpu.spec,
        Key.renderNode.spec,
        Key.readback.spec,
        Key.audio.spec,
    ] + RecordingLimits.options + [
        Key.noFuse.spec,
        Key.rgbRoute.spec,
        Key.inputColor.spec,
        Key.dynamicRange.spec,
        Key.tonemap.spec,
        Key.outputTransfer.spec,
        Key.noAutorotate.spec,
        Key.strictDecode.spec,
        Key.mirror.spec,
        Key.quiet.spec,
        Key.stats.spec,
        Key.verbose.spec,
    ] + ControlOptions.commandLine

    static let spec = CommandSpec(
        name: "run", arguments: "[INPUT...]",
        summary: "Runs frames from INPUT through the filter graph on the GPU into OUTPUT.",
        options: [
            Key.output.spec,
            JobSettings.Key.frames.spec,
            Key.inputFormat.spec,
        ] + InputArguments.scoped + [
            Key.audioFrom.spec,
            Key.outputFormat.spec,
        ] + OutputChoice.options + [
            Key.realtime.spec,
            Key.reconnectOutput.spec,
            Key.progress.spec,
            Key.switchCameraAfter.spec,
        ] + commonOptions + NetworkInputOptions.commandLine,
        notes: [
            "INPUT is a file or URL, a V4L2 camera (/dev/videoN, or v4l2:DEVICE), `pattern` (the default) for the",
            "built-in test pattern, or `-` for raw frames on stdin; OUTPUT is a file whose extension picks the container,",
            "a network URL, a playlist, or `-` for raw frames on stdout. -o may repeat: the encoder, --format and playlist",
            "options given before an -o are that output's own; after the last -o, every output's that sets none.",
            "INPUT may repeat (or --input [NAME=]SOURCE): [0] (also [in]) is the first input in the graph, [1], [2]… the",
            "others (or [NAME]). The first drives the clock and gives the sound; a file is matched to it by timestamp (it",
            "repeats or skips frames), a live input shows its newest frame. --offset and --end given before an input are its own.",
            "Ctrl-C, SIGTERM or SIGHUP stop the run and finish the outputs.",
        ])

    /// `run`'s own options (and those it shares with `record`), declared once: the tables above and the parsers read them.
    enum Key {
        static let filter = OptionKey<FilterText>("--filter", "-f", value: "SPEC", help: "the filter graph, e.g. 'invert, mono' (prism filters lists the filters)")
        static let gpu = OptionKey<Int>.gpu
        static let readback = OptionKey<ReadbackStrategy>("--readback", value: ReadbackStrategy.placeholder, help: "how frames come back from the GPU (default: the driver's best)")
        static let dynamicRange = OptionKey<DynamicRange>("--dynamic-range", value: DynamicRange.placeholder, help: "HDR and 10-bit input: keep them where the codec can "
               + "(auto: hevc, prores, ffv1), always tone map to SDR, or always keep")
        static let tonemap = OptionKey<ToneMapChoice>("--tonemap", value: ToneMapChoice.placeholder, help: "the tone curve for HDR into SDR (default bt2390); "
               + "none writes the HDR signal as it is")
        static let outputTransfer = OptionKey<OutputTransferChoice>("--output-transfer", value: OutputTransferChoice.placeholder, help: "convert a kept HDR output to PQ or HLG")
        static let reconnectOutput = OptionKey<Seconds>("--reconnect-output", value: "SECONDS", help: "how long a network output that lost its server tries to "
                 + "connect again (default 30; then it is given up, the other outputs going on)")
        static let output = OptionKey<String>("-o", "--output", value: "OUTPUT", help: "where frames go (repeat for several): a movie file (its extension "
                   + "picks the container), rtmp://, srt://, udp://, rtp://, rtsp:// URLs, an .m3u8 (HLS) or .mpd (DASH) playlist, "
                   + "pipe:1 (with --format), v4l2:/dev/videoN for a virtual camera (v4l2loopback), a .png/.jpg still (one "
                   + "frame), or - for raw frames on stdout",
                   required: true)
        static let renderNode = OptionKey<String>("--render-node", value: "PATH", help: "the DRM render node for GBM, e.g. /dev/dri/renderD128")
        static let audio = OptionKey<String>("--audio", value: "ALSA_PCM", help: "record this ALSA capture PCM (default, hw:1,0…) as AAC, with a camera or the pattern; it feeds audio-reactive shaders too")
        static let noFuse = FlagKey("--no-fuse", help: "one GPU pass per filter (to compare with fusing)")
        static let rgbRoute = FlagKey("--rgb-route", help: "filter through R'G'B' even where the graph could stay in Y'CbCr (to compare)")
        static let inputColor = OptionKey<ColorOverride>(
            spec: .value("--input-color", value: "SPEC", help: "take a movie's colour for this instead of its tags: bt709, bt601, hdr10, hlg, "
                         + "or matrix=,primaries=,transfer=,range=,peak= (e.g. transfer=pq,peak=4000)"),
            read: { text, _ in try ColorOverride(parsing: text) })
        static let noAutorotate = FlagKey("--no-autorotate", help: "keep a phone movie as stored instead of turning it upright by its display matrix")
        static let strictDecode = FlagKey("--strict-decode", help: "fail at a damaged packet or a file that cannot be read to its end, instead of "
                                   + "skipping and counting them as FFmpeg does")
        static let mirror = FlagKey("--mirror", help: "swap left and right (a front-facing camera, shown as a mirror shows it)")
        static let quiet = FlagKey("--quiet", "-q", help: "no progress or summary on stderr")
        static let stats = FlagKey("--stats", help: "per-stage timings at the end")
        static let verbose = FlagKey("--verbose", "-v", help: "let FFmpeg's own warnings through")
        static let inputFormat = OptionKey<String>("--input-format", value: "WxH:PIXFMT:RATE", help: "what raw frames on stdin (INPUT -) look like")
        static let audioFrom = OptionKey<String>("--audio-from", value: "N|NAME", help: "the outputs carry this input's sound instead of the first's ([N] or its name; "
                                          + "a file, placed by its --offset; not mixed; audio-reactive shaders still hear the first)")
        static let outputFormat = OptionKey<String>("--output-format", value: "PIXFMT", help: "the pixel format of raw frames on stdout (-o -; default rgba)")
        static let realtime = FlagKey("--realtime", help: "release the input's frames at their timestamps, as FFmpeg's -re: stream a file or "
                                   + "the pattern as if it were live (late frames are then dropped, counted)")
        static let progress = OptionKey<String>("--progress", value: "json", help: "one JSON object per line (stdout; stderr with -o -) instead of the status line")
        // The end-to-end test of the runtime camera switch: switch to DEVICE once FRAMES frames were read.
        static let switchCameraAfter = OptionKey<String>("--switch-camera-after", value: "FRAMES:DEVICE", help: "", hidden: true)
    }

    init(arguments: [String]) throws {
        // Several -o: each output's own options are taken out first (OutputArguments).
        // Several inputs: each with its own options, taken out first (InputArguments).
        let (withoutInputs, inputs) = try InputArguments.split(arguments, command: Self.spec)
        let (shared, separate) = try OutputArguments.split(withoutInputs, command: Self.spec)
        var scanner = try ArgumentScanner(shared, command: Self.spec)
        options.session.frameLimit = try scanner.value(JobSettings.Key.frames)
        if let format = try scanner.value(Key.progress) {
            guard format == "json" else { throw UsageError("--progress takes json, not '\(format)'") }
            options.jsonProgress = true
        }
        verbose = scanner.flag(Key.verbose)
        let inputPath = try Self.parseCommon(&scanner, into: &options, input: inputs.first?.source,
                                             rawInputFormat: try scanner.value(Key.inputFormat))
        options.inputNames = inputs.isEmpty ? [nil] : inputs.map(\.name)
        options.session.inputs = try inputs.dropFirst().enumerated().map {
            try InputArguments.extraInput($0.element, index: $0.offset + 1, options: options.session)
        }
        // Which input it is, and whether it can give the run's sound, the engine checks (`EngineConfiguration.audioInput`).
        if let text = try scanner.value(Key.audioFrom) {
            options.session.audioInput = try InputArguments.audioInput(text, names: options.inputNames)
        }
        options.session.network = try NetworkInputOptions.parse(&scanner, input: options.input)
        // Hidden, for the end-to-end test of the runtime camera switch: --switch-camera-after N:PATH switches
        // to the camera at PATH once N frames have been read (FrameEngine.switchCamera, as a UI would call it).
        if let text = try scanner.value(Key.switchCameraAfter) {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard case .camera = options.input, parts.count == 2, let frames = Int(parts[0]), frames > 0 else {
                throw UsageError("--switch-camera-after takes FRAMES:DEVICE and a camera INPUT")
            }
            options.cameraSwitch = (frames, InputSpec.cameraPath(parts[1]) ?? parts[1])
        }
        // Outputs: one -o, or several, each with the options given for it alone over those for every output.
        let sharedOutput = try OutputChoice(from: &scanner)
        let outputFormat = try scanner.value(Key.outputFormat)
        if let seconds = try scanner.value(Key.reconnectOutput)?.value { options.session.outputReconnect.seconds = seconds }
        options.session.pacedToClock = scanner.flag(Key.realtime)
        if options.session.pacedToClock, case .camera = options.input { throw UsageError("--realtime paces a file, raw input or the pattern; a camera is live already") }
        // Each output's choice over the shared one, and what it set itself (with one -o, everything is its own).
        var requested: [(location: String, choice: OutputChoice, own: OutputChoice, encoder: VideoEncoderSettings)] = []
        if let separate {
            for output in separate {
                guard !output.location.isEmpty else { throw UsageError("-o needs a value") }
                var own = try ArgumentScanner(output.arguments, command: OutputArguments.scopedSpec)
                var encoder = options.session.encoder
                try EncoderChoice(from: &own).apply(to: &encoder)
                let ownChoice = try OutputChoice(from: &own)
                try own.checkAllUsed()
                requested.append((output.location, ownChoice.over(sharedOutput), ownChoice, encoder))
            }
        } else {
            guard let output = try scanner.value(Key.output) else { throw UsageError("run needs -o OUTPUT (a movie file, or - for raw frames)") }
            requested.append((output, sharedOutput, sharedOutput, options.session.encoder))
        }
        options.outputs = []
        for (location, choice, own, encoder) in requested {
            options.outputs.append(try Self.output(location, choice: choice, own: own, encoder: encoder, rawFormat: outputFormat,
                                                   input: inputPath, among: requested.count, options: options))
        }
        // Playlist options after the last -o are for the playlists among the outputs: there must be one.
        if sharedOutput.setsPlaylist, !options.outputs.contains(where: { $0.isPlaylist }) {
            throw UsageError("--playlist, --segment-duration, --window and --segment-type describe an HLS (.m3u8) or DASH (.mpd) "
                             + "output, and no -o is one")
        }
        try Self.checkDistinct(options.outputs)
        // No output may be written over any input.
        for extra in options.session.inputs {
            guard case .movie(let path) = extra.spec.input, !extra.spec.input.isNetwork else { continue }
            for output in options.outputs {
                if case .movie(let location) = output.spec, MovieDestination.localPath(of: location) != nil {
                    try OutputTarget.checkNotInput(path, output: location)
                }
                if case .still(let location) = output.spec { try OutputTarget.checkNotInput(path, output: location) }
            }
        }
        if outputFormat != nil, !options.outputs.contains(where: { if case .standardOutput = $0.spec { true } else { false } }) {
            throw UsageError("--output-format applies to raw output (-o -)")
        }
        let files = options.outputs.compactMap { output -> String? in
            switch output.spec {
            case .still(let path): return path
            case .movie(let path): return MovieDestination.localPath(of: path)
            default: return nil
            }
        }
        for file in files { try options.session.faces.checkSidecarOut(reads: [inputPath], output: file) }
        if files.isEmpty { try options.session.faces.checkSidecarOut(reads: [inputPath], output: nil) }
        let limited = options.session.limits.maxBytes != nil || options.session.limits.minFreeBytes != nil
        let fileMovies = options.outputs.filter { $0.destination?.kind == .file }
        if limited, fileMovies.isEmpty {
            throw UsageError("--max-size and --min-free limit a movie file output (-o FILE), not a stream, playlist or raw frames")
        }
        options.progress = options.jsonProgress || (!options.quiet && isatty(2) != 0 && !writesStandardOutput)
        try scanner.checkAllUsed()
    }

    /// Whether an output takes standard output (raw frames, or a movie on `pipe:1`): progress then goes to stderr.
    var writesStandardOutput: Bool {
        options.outputs.contains { output in
            switch output.spec {
            case .standardOutput: return true
            case .movie(let path): return path == "pipe:1" || path == "pipe:"
            default: return false
            }
        }
    }

    /// One `-o`: raw frames on stdout (`-`), a still, or a movie (file, pipe, URL, playlist) with its
    /// container resolved now, so a bad name fails before anything runs.
    /// - Parameters:
    ///   - choice: the output's options over those given for every output; `own`: those given for it alone.
    static func output(_ location: String, choice: OutputChoice, own: OutputChoice, encoder: VideoEncoderSettings,
                       rawFormat: String?, input inputPath: String?, among count: Int, options: RunOptions) throws -> SessionOutput {
        if let device = try virtualCameraOutput(location) {
            guard own.format == nil, !own.setsPlaylist else {
                throw UsageError("\(location): a virtual camera takes raw frames; --format and the playlist options describe movies")
            }
            return SessionOutput(device)
        }
        if location == "-" {
            let name = rawFormat ?? "rgba"
            guard let format = PixelFormat(name: name), PackedFrameLayout.supportedFormats.contains(format) else {
                let supported = PackedFrameLayout.supportedFormats.map(\.rawValue).sorted().joined(separator: ", ")
                throw UsageError("--output-format \(name) is not supported (supported: \(supported))")
            }
            guard own.format == nil else { throw UsageError("-o - writes raw frames; --format names a container (use -o pipe:1 --format NAME)") }
            return SessionOutput(.standardOutput(format))
        }
        let location = MovieDestination.descriptorPipe(location) ?? location
        let isPath = MovieDestination.scheme(of: location) == nil
        // Writing over the input would replace it with the result (and read what is being written): a
        // `file:` URL is the file it names.
        if let inputPath, MovieDestination.localPath(of: location) != nil { try OutputTarget.checkNotInput(inputPath, output: location) }
        if own.format == nil, isPath, ImageFile.kind(forPath: location) != nil {
            if let frames = options.session.frameLimit, frames != 1 {
                throw UsageError("\(location): a still holds one frame; use --frames 1 (or a movie output)")
            }
            if options.session.dynamicRange == .keep {
                throw UsageError("\(location): a still is 8-bit SDR; --dynamic-range keep needs a movie (--codec hevc, prores, ffv1)")
            }
            return SessionOutput(.still(location))
        }
        var output = SessionOutput(.movie(location), format: choice.format, encoder: count > 1 ? encoder : nil)
        // Found once here: the checks below and the session read it.
        try output.resolve()
        let destination = try output.movieDestination(location)
        if own.setsPlaylist, !output.isPlaylist {
            throw UsageError("\(location): --playlist, --segment-duration, --window and --segment-type describe an HLS (.m3u8) or DASH (.mpd) output")
        }
        if choice.segmentType == "ts", destination.kind == .playlist(.dash) {
            throw UsageError("\(location): DASH segments are fragmented MP4; --segment-type ts is for HLS")
        }
        output.playlist = choice.playlistSettings
        if destination.kind == .playlist(.dash) { output.playlist.fragmentedMP4 = true }
        return output
    }

    /// Two outputs into one place would write over each other.
    static func checkDistinct(_ outputs: [SessionOutput]) throws {
        var seen: [String] = []
        for output in outputs {
            let location: String
            switch output.spec {
            case .movie(let path), .still(let path), .virtualCamera(let path): location = path
            case .standardOutput: location = "pipe:1"
            case .discard: continue
            }
            let isPath = MovieDestination.localPath(of: location) != nil
            if seen.contains(where: { $0 == location || (isPath && OutputTarget.sameFile($0, location)) }) {
                throw UsageError("-o \(location) is given twice; give each output its own place")
            }
            seen.append(location)
        }
    }

    /// `-o v4l2:DEVICE`, `-o /dev/videoN` (or another video4linux device node): the virtual camera output
    /// (`OutputSpec.virtualCameraPath`); nil for any other OUTPUT. The device picks the pixel format.
    static func virtualCameraOutput(_ output: String) throws -> OutputSpec? {
        guard let path = OutputSpec.virtualCameraPath(output) else { return nil }
        guard !path.isEmpty else { throw UsageError("v4l2: needs a device path, e.g. -o v4l2:/dev/video10") }
        return .virtualCamera(path)
    }

    /// Parses the options `run` and `record` share (`commonOptions`) and the INPUT into `options`; returns
    /// the input's path when it is a file (so the output can be checked not to be it).
    static func parseCommon(_ scanner: inout ArgumentScanner, into options: inout RunOptions, input: String?,
                            rawInputFormat: String?) throws -> String? {
        options.filter = try scanner.value(Key.filter)?.text ?? ""
        options.quiet = scanner.flag(Key.quiet)
        options.session.timesPasses = scanner.flag(Key.stats)
        options.session.fuse = !scanner.flag(Key.noFuse)
        options.session.yuvRoute = !scanner.flag(Key.rgbRoute)
        options.session.autorotate = !scanner.flag(Key.noAutorotate)
        options.session.mirror = scanner.flag(Key.mirror)
        options.session.strictDecoding = scanner.flag(Key.strictDecode)
        try InputChoice(from: &scanner).apply(to: &options.session)
        options.session.audioDevice = try scanner.value(Key.audio)
        options.session.faces = try FaceOptions.parse(&scanner)
        options.session.segmentation = try SegmentationSettings.parse(&scanner)
        options.session.limits = try RecordingLimits(from: &scanner)
        options.session.gpu.deviceIndex = try scanner.value(Key.gpu)
        options.session.gpu.renderNode = try scanner.value(Key.renderNode)
        options.session.readback = try scanner.value(Key.readback)
        try EncoderChoice(from: &scanner).apply(to: &options.session.encoder)
        if let color = try scanner.value(Key.inputColor) { options.session.inputColor = color }
        if let range = try scanner.value(Key.dynamicRange) { options.session.dynamicRange = range }
        if let choice = try scanner.value(Key.tonemap) { options.session.toneCurve = choice.curve }
        if let choice = try scanner.value(Key.outputTransfer) { options.session.outputTransfer = choice.transfer }
        options.input = try InputArguments.firstInput(input, rawFormat: rawInputFormat)
        var inputPath: String?
        if case .movie(let path) = options.input { inputPath = path }
        options.control = try ControlOptions.parse(&scanner)
        try options.control.check(input: options.input)
        if options.session.inputColor != nil, case .movie = options.input {} else if options.session.inputColor != nil {
            throw UsageError("--input-color describes a movie or stream input (cameras, raw input and the pattern are SDR as they say)")
        }
        return inputPath
    }

    /// SIGUSR2 → the next camera `CameraSource.list()` finds after the current one, round the list.
    static func cycleCamerasOnSIGUSR2(_ engine: FrameEngine, from first: String) -> any DispatchSourceSignal {
        let current = Locked(first)
        // Weak: a cancelled dispatch source lets go of its handler later, on a queue of its own; the engine
        // must not end its life there while the process exits.
        return ProcessSignals.watch(SIGUSR2) { [weak engine] in
            guard let engine else { return }
            let paths = CameraSource.list().filter { $0.problem == nil }.map(\.path)
            let next = current.withLock { now -> String? in
                guard let index = paths.firstIndex(of: now) ?? paths.indices.last else { return nil }
                let next = paths[(index + 1) % paths.count]
                guard next != now else { return nil }
                now = next
                return next
            }
            if let next {
                PrismCommandLine.info("prism: switching to \(next)")
                engine.switchCamera(to: next)
            } else {
                PrismCommandLine.info("prism: no other camera to switch to")
            }
        }
    }

    func execute() throws -> Int32 {
        let graph = try PrismGraphs.bind(options.filter, inputs: options.inputNames)
        // Problems reach the user as Prism's one-line errors; FFmpeg's own chatter only when asked.
        FFmpegLog.setLevel(verbose ? .warning : .quiet)
        var options = self.options
        if !options.quiet { options.session.messages = { PrismCommandLine.info("prism: " + $0) } }
        let stop = StopSignal()
        let control = LiveControl.forRun(options, graph: graph, stop: stop)
        let job = try RunJob(options: options, graph: graph, taps: control.map { [$0.tap] } ?? [])
        // A privacy filter working with less than it should is said first, quiet or not.
        if let note = job.faceNote { PrismCommandLine.info("prism: \(note)") }
        if !options.quiet {
            let gpu = job.gpuInfo
            PrismCommandLine.info("prism: GPU: \(gpu.renderer) (\(gpu.version), \(gpu.platform.rawValue) platform)"
                                  + (gpu.isSoftware ? " — software renderer: frames are rendered on the CPU" : ""))
            PrismCommandLine.info("prism: input: \(job.sourceInfo.summary) → \(job.outputSize), "
                                  + "\(job.passLabels.count) GPU pass(es); colour: \(job.sourceInfo.color.summary)")
            for line in job.otherInputSummaries { PrismCommandLine.info("prism: \(line)") }
            for note in job.notes { PrismCommandLine.info("prism: \(note)") }
        }
        for leftover in job.recoveredLeftovers { PrismCommandLine.info("prism: \(leftover.message)") }
        try control?.start(job: job)
        defer { control?.finish() }
        let signals = StopSignals.finishingOutput(stop)
        defer { signals.finish() }
        // A camera input: SIGUSR2 switches to the next camera (the seed's front/back flip), without a restart.
        var cameraSwitch: (any DispatchSourceSignal)?
        if case .camera(let first) = options.input {
            cameraSwitch = Self.cycleCamerasOnSIGUSR2(job.engine, from: first)
        }
        defer { cameraSwitch?.cancel() }
        var progress: (@Sendable (RunProgress) -> Void)?
        if options.jsonProgress {
            // Programs read one object per line: on stdout, unless stdout carries the raw frames.
            let handle: FileHandle
            handle = writesStandardOutput ? .standardError : .standardOutput
            // A reader that went away (`| head`) must not kill the run: the throwing write reports EPIPE.
            progress = { snapshot in
                var line = job.faceStatistics.map { Self.json(snapshot.json, adding: $0) } ?? snapshot.json
                if let mask = job.segmentationStatistics { line = Self.json(line, adding: mask) }
                try? handle.write(contentsOf: Data((line + "\n").utf8))
            }
        } else if options.progress {
            progress = { snapshot in
                let text = "\r\u{1B}[K" + snapshot.line + (snapshot.finished ? "\n" : "")
                FileHandle.standardError.write(Data(text.utf8))
            }
        }
        let report = try job.run(stop: stop, progress: progress)
        // Nothing written is a failure, not "0 frames" (a movie writer has already refused to finish).
        guard report.framesOut > 0 else {
            throw RunFailure(report.framesIn > 0 ? "no frames reached the output (the input gave \(report.framesIn)); nothing was written"
                                                 : "no frames: the input gave none, nothing was written")
        }
        // What the run went on from (damage skipped, an input cut short) is said even when it is quiet; so is a
        // privacy filter that found no face.
        for warning in report.warnings + [truncationWarning(report, source: job.sourceInfo), job.faceStatistics?.noFaceNote].compactMap({ $0 }) {
            PrismCommandLine.info("prism: warning: \(warning)")
        }
        if !options.quiet {
            for note in report.notes { PrismCommandLine.info("prism: \(note)") }
            if let faces = job.faceStatistics {
                PrismCommandLine.info("prism: \(faces.summary)")
                if let loss = faces.lossNote { PrismCommandLine.info("prism: warning: \(loss)") }
            }
            if let mask = job.segmentationStatistics { PrismCommandLine.info("prism: \(mask.summary)") }
            var line = "prism: \(report.framesOut) frames in " + String(format: "%.2f s (%.1f fps)", report.wallSeconds, report.fps)
            if report.framesDropped > 0 { line += ", \(report.framesDropped) dropped (live source behind)" }
            switch report.stopReason {
            case .endOfInput, .frameLimit, .durationLimit, .outputClosed: break
            case .interrupted: line += ", stopped early: output finished and playable"
            case .sizeLimit, .freeSpaceLimit: line += ", stopped at the \(report.stopReason.rawValue): output finished and playable"
            }
            let places = options.outputs.compactMap { output -> String? in
                switch output.spec {
                case .movie(let path), .still(let path), .virtualCamera(let path): return path
                case .standardOutput, .discard: return nil
                }
            }
            if !places.isEmpty { line += " → " + places.joined(separator: ", ") }
            PrismCommandLine.info(line)
        }
        if options.session.timesPasses {
            PrismCommandLine.info(report.statsTable())
            PrismCommandLine.info("colour out: \(job.outputColor.summary)")
        }
        return 0
    }
}

extension RunCommand {
    /// A progress object with the face detector's figures so far: frames in which a face was predicted
    /// rather than detected, frames after a face was lost, and the last detection's cost (per frame, for live runs).
    static func json(_ object: String, adding faces: FaceDetectorStatistics) -> String {
        guard var fields = (try? JSONSerialization.jsonObject(with: Data(object.utf8))) as? [String: Any] else { return object }
        fields["faces_predicted_frames"] = faces.framesPredicted
        fields["faces_lost_frames"] = faces.framesLost
        fields["faces_lost"] = faces.facesLost
        fields["faces_lost_at_edge"] = faces.facesLostAtEdge
        fields["face_frames"] = faces.framesWithFaces
        fields["face_looks"] = faces.looks
        fields["face_detections"] = faces.detections
        fields["face_detect_ms"] = (faces.lastDetectSeconds * 10_000).rounded() / 10
        fields["face_regions_age"] = faces.framesServed == 0 ? 0 : (faces.meanAge * 100).rounded() / 100
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return object }
        return String(decoding: data, as: UTF8.self)
    }

    static func json(_ object: String, adding mask: SegmentationStatistics) -> String {
        guard var fields = (try? JSONSerialization.jsonObject(with: Data(object.utf8))) as? [String: Any] else { return object }
        fields["segment_masks"] = mask.masks
        fields["segment_model_ms"] = (mask.lastModelSeconds * 10_000).rounded() / 10
        fields["segment_mask_age"] = (mask.meanAge * 100).rounded() / 100
        fields["segment_mask_max_age"] = mask.maxAge
        fields["segment_skipped"] = mask.skipped
        fields["segment_waited"] = mask.waited
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return object }
        return String(decoding: data, as: UTF8.self)
    }

    /// A movie input that ended well before the frame count its header gives (a truncated file) is worth
    /// a warning: the run succeeds with what could be decoded.
    func truncationWarning(_ report: RunReport, source: SourceInfo) -> String? {
        // Only a movie that ran out by itself (not a limit, a stop, or a still's one frame) can be short; one
        // whose read failed has said where already (`RunReport.damage`).
        guard case .movie(let path) = options.input, report.stopReason == .endOfInput, options.session.frameRate == nil,
              report.damage?.endedEarly == nil, let expected = source.estimatedFrameCount else { return nil }
        // How far in time the frames went (to the end of the last).
        let rate = source.frameRate?.doubleValue ?? 0
        let reached = report.inputSpan.map { $0.seconds + (rate > 0 ? 1 / rate : 0) }
        // Read to its whole length, a file is not short, whatever its count (AVI counts its empty, repeated-frame
        // chunks; a variable rate makes duration × rate wrong).
        if let duration = source.duration?.seconds, let reached, duration - reached <= max(0.5, duration / 50) { return nil }
        if source.frameCountFromHeader {
            // Frames whose packets were damaged were counted as skipped already.
            guard expected - report.framesIn - (report.damage?.skippedVideoPackets ?? 0) > max(2, expected / 50) else { return nil }
            let time = reached.map { String(format: ", at %.2f s", $0) } ?? ""
            return "\(path) ended after \(report.framesIn) of the \(expected) frames its header announces\(time) (truncated or damaged?)"
        }
        guard let duration = source.duration?.seconds, let reached, rate > 0 else { return nil }
        return String(format: "%@ ended %.2f s into the %.2f s its header announces (truncated or damaged?)", path, reached, duration)
    }
}

extension OutputTarget.Recovered {
    /// What the user is told (once, before the run).
    var message: String {
        "a killed earlier run (pid \(pid)) left a recording of \((output as NSString).lastPathComponent); recovered as \(path)"
    }
}

/// A run that finished without producing anything usable.
struct RunFailure: PrismError {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `prism render`: one still image through a graph.
struct RenderCommand: PrismCommand {
    let filter: String
    let input: String
    let output: String
    let quality: Int
    /// The GPU, the faces and segmentation settings, and the output size (`size`: a final scale; mpv hooks'
    /// OUTPUT).
    var session = Session.Options()

    static let spec = CommandSpec(
        name: "render", arguments: "IN.(png|jpg)",
        summary: "Runs one still image through the filter graph on the GPU.",
        options: [
            Key.filter.spec,
            Key.output.spec,
            Key.gpu.spec,
            Key.quality.spec,
            Key.size.spec,
        ] + FaceOptions.commandLine + SegmentationSettings.commandLine)

    /// `render`'s own option, declared once.
    enum Key {
        static let output = OptionKey<String>("-o", "--output", value: "OUT.(png|jpg)", help: "the image to write; its extension picks PNG or JPEG", required: true)
        static let filter = OptionKey<FilterText>("--filter", "-f", value: "SPEC", help: "the filter graph, e.g. 'chrome, pixellate(12)'")
        static let gpu = OptionKey<Int>.gpu
        static let quality = OptionKey<Int>("--quality", value: "N", in: 1...100, help: "JPEG quality, 1-100 (default 90)")
        static let size = OptionKey<Size>("--size", value: "WxH", help: "the output size: a final scale, or mpv hooks' OUTPUT (default: the graph's)")
    }

    init(arguments: [String]) throws {
        var scanner = try ArgumentScanner(arguments, command: Self.spec)
        guard scanner.positionals.count == 1 else { throw UsageError("render takes one input image: prism render --filter SPEC IN.png -o OUT.png") }
        input = scanner.positionals[0]
        guard let output = try scanner.value(Key.output) else { throw UsageError("render needs -o OUT.(png|jpg)") }
        self.output = output
        guard ImageFile.kind(forPath: output) != nil else { throw UsageError("\(output): the output must end in .png, .jpg or .jpeg") }
        filter = try scanner.value(Key.filter)?.text ?? ""
        session.gpu = GPUOptions(deviceIndex: try scanner.value(Key.gpu))
        quality = try scanner.value(Key.quality) ?? 90
        session.size = try scanner.value(Key.size)
        session.faces = try FaceOptions.parse(&scanner)
        session.segmentation = try SegmentationSettings.parse(&scanner)
        guard FileManager.default.fileExists(atPath: input) else { throw UsageError("\(input): no such file") }
        try OutputTarget.checkNotInput(input, output: output)
        try session.faces.checkSidecarOut(reads: [input], output: output)
        try scanner.checkAllUsed()
    }

    func execute() throws -> Int32 {
        let graph = try PrismGraphs.bind(filter)
        // A still has no sound: audio-reactive shaders are refused rather than shown silence.
        if let error = graph.missingSideDataError(supplied: SideData.all.subtracting(.audio),
                                                  noSound: "a still image has no sound; run it with prism run on a movie with audio, or with --audio PCM") {
            throw error
        }
        FFmpegLog.setLevel(.quiet)
        // One frame through a session, as `prism_render` does: faces and the mask are its side inputs, as in `prism run`.
        let session = try Session.still(input, graph: graph, options: session)
        let engine = try session.engine(sinks: [try StillImageSink(path: output, jpegQuality: quality)])
        if let note = session.faces?.note { PrismCommandLine.info("prism: \(note)") }
        _ = try engine.run()
        if let none = session.faces?.statistics.noFaceNote { PrismCommandLine.info("prism: warning: \(none)") }
        return 0
    }
}

/// The binder the tool uses: built-ins, .cube files and user shaders.
enum PrismGraphs {
    /// ISF IMPORTED images (PNG, JPEG, PPM, PAM, …) are read by PrismMedia's `ImageFile.read` (libavcodec).
    static func binder() -> GraphBinder { Session.binder() }

    /// Binds graph text given on the command line; errors in the text keep the text, so the CLI can put
    /// a caret under the column on a terminal. `inputs` names the run's inputs (`[0]`, `[1]`… and names).
    static func bind(_ text: String, inputs: [String?] = [nil]) throws -> FilterGraph {
        do {
            return try Session.binder(inputs: inputs).bind(text)
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
    var diagnostics: [Diagnostic] { error.diagnostics }
}
