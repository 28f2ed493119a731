import Foundation
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
import PrismPipeline

/// `prism record DIR [INPUT]`: the seeds' recorder, headless. The engine runs the camera (or the pattern)
/// through the graph all along; each take is a movie of its own in DIR, started and stopped by commands
/// on stdin or SIGUSR1, rolled over at `--segment`, and finished playable however the run ends.
struct RecordCommand: PrismCommand {
    var options = RunOptions()
    var directory: String
    var startRecording = false
    var segmentSeconds: Double?
    var segmentBytes: Int64?

    static let spec = CommandSpec(
        name: "record", arguments: "DIR [INPUT...]",
        summary: "Records takes from a camera (or the pattern) through the graph into DIR, one movie per take.",
        options: [
            Key.start.spec,
        ] + InputArguments.scoped + [
            Key.segment.spec,
            Key.segmentSize.spec,
        ] + RunCommand.commonOptions,
        notes: [
            "INPUT is a camera (/dev/videoN, v4l2:DEVICE) or `pattern` (the default). Commands, one per line on stdin:",
            "start, stop, toggle, snap (a photo through the graph), camera DEVICE (switch cameras), quit; or JSON",
            "control commands ({\"set\": …}, {\"graph\": …}, {\"record\": \"start\"}…, see --control), each answered on stdout.",
            "SIGUSR1 toggles recording; Ctrl-C, SIGTERM or SIGHUP finish the take in progress and quit.",
            "Takes are named take-YYYYMMDD-HHMMSS.mp4 (then -2, -3… within the same second), photos photo-….jpg.",
        ])

    /// `record`'s own options, declared once.
    enum Key {
        static let start = FlagKey("--start", help: "start the first take at once (else wait for `start` or SIGUSR1)")
        static let segment = OptionKey<TakeLength>("--segment", value: "DURATION", help: "roll over to a new take every DURATION (90s, 10m, 1h)")
        static let segmentSize = OptionKey<ByteSize>("--segment-size", value: "SIZE", help: "roll over to a new take when one reaches SIZE (500M, 2G)")
    }

    init(arguments: [String]) throws {
        // DIR, then the inputs: the first a camera or the pattern (the clock), the others anything `run` takes.
        let (rest, words) = try InputArguments.split(arguments, command: Self.spec)
        var scanner = try ArgumentScanner(rest, command: Self.spec)
        guard let directoryWord = words.first, directoryWord.name == nil, directoryWord.offset == nil, directoryWord.end == nil else {
            throw UsageError("usage: prism record DIR [INPUT...] (prism record --help)")
        }
        let inputs = Array(words.dropFirst())
        if let first = inputs.first, first.offset != nil || first.end != nil {
            throw UsageError("--offset and --end apply to the inputs after the first; the first input (\(first.source)) is the clock")
        }
        directory = directoryWord.source
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw UsageError("\(directory): no such directory")
        }
        guard isDirectory.boolValue else { throw UsageError("\(directory): is a file; record writes its takes into a directory") }
        let input = inputs.first?.source
        if input == "-" { throw UsageError("record takes a camera or the pattern (stdin carries its commands); use run for raw input") }
        _ = try RunCommand.parseCommon(&scanner, into: &options, input: input, rawInputFormat: nil)
        try options.session.faces.checkSidecarOut(reads: [], output: nil)
        switch options.input {
        case .pattern, .camera: break
        case .movie, .standardInput, .frames:
            throw UsageError("record takes a camera or the pattern (stdin carries its commands); use run for files")
        }
        options.inputNames = inputs.isEmpty ? [nil] : inputs.map(\.name)
        options.session.inputs = try inputs.dropFirst().enumerated().map {
            try InputArguments.extraInput($0.element, index: $0.offset + 1, options: options.session)
        }
        startRecording = scanner.flag(Key.start)
        segmentSeconds = try scanner.value(Key.segment)?.seconds
        segmentBytes = try scanner.value(Key.segmentSize)?.bytes
        try scanner.checkAllUsed()
    }

    /// How long `quit` waits for a frame to be carried out on before it stops the run by itself.
    static let quitGrace = 10.0

    func execute() throws -> Int32 {
        let graph = try PrismGraphs.bind(options.filter, inputs: options.inputNames)
        FFmpegLog.setLevel(.quiet)
        let quiet = options.quiet
        let say: @Sendable (String) -> Void = { line in PrismCommandLine.info("prism: \(line)") }
        let remote = TakeController.Remote()
        let stop = StopSignal()
        // SIGUSR1 toggles a take from the first moment: the commands wait in `remote` until frames flow, and
        // a signal sent while the GPU context is still being made must not kill the recorder (its default).
        let toggle = ProcessSignals.watch(SIGUSR1) { remote.send(.toggle) }
        defer { toggle.cancel() }
        let takes = TakeController(settings: .init(directory: directory, encoder: options.session.encoder, limits: options.session.limits,
                                                   segmentSeconds: segmentSeconds, segmentBytes: segmentBytes,
                                                   cameraInput: options.input.isCamera),
                                   remote: remote, say: say, quit: { stop.stop(.interrupted) })
        // A camera (or the pattern, paced) runs on the clock, as a recorder does.
        let control = LiveControl.forRecord(options, graph: graph, remote: remote, stop: stop, directory: directory)
        let job = try RunJob(options: options, graph: graph, sinks: [], taps: [takes, control.tap], pacePattern: true)
        if !quiet {
            say("input: \(job.sourceInfo.summary) → \(job.outputSize); takes go to \(directory)")
            say("ready: `start`, `stop`, `snap`, `camera DEVICE`, `quit` or JSON commands on stdin, or SIGUSR1 to start and stop")
        }
        // Takes of a killed earlier recorder are hidden temporaries that no later take name would meet.
        for leftover in OutputTarget.recoverStaleTemporaries(inDirectory: directory, namesStartingWith: "take-").recovered { say(leftover.message) }
        if startRecording { remote.send(.start) }
        let signals = StopSignals.finishingOutput(stop)
        defer { signals.finish() }
        try control.start(job: job)
        defer { control.finish() }
        Self.readCommands(into: remote, control: control, stop: stop, say: say)
        let report = try job.run(stop: stop)
        let finished = remote.finished.withLock { $0 }
        for warning in report.warnings { PrismCommandLine.info("prism: warning: \(warning)") }
        if !quiet {
            for note in report.notes { say(note) }
            // A live input drops the frames that arrive while the pipeline is behind (the takes go on without
            // them): said, so a take shorter than its length in frames is explained.
            say("\(report.framesIn) frame(s) from the input, \(report.framesDropped) dropped while the pipeline was behind, "
                + "\(remote.framesToTakes.withLock { $0 }) went to takes")
            say("\(finished.count) take(s) in \(directory)")
        }
        return 0
    }

    /// Reads commands from stdin on a thread of its own until `quit` or the end of input (a closed stdin
    /// leaves the recorder running until a signal, as a daemon's would). Each goes to the take controller
    /// in order, `quit` too, so it comes after the commands before it; lines are bounded
    /// (`BoundedLineReader`) and a refusal quotes a short prefix of the line. Should no frame come to carry
    /// `quit` out (a camera that stopped delivering), the run is stopped after `quitGrace` seconds anyway.
    /// A line that is a JSON object is `control`'s (`LiveControl`), answered with one JSON line on stdout;
    /// its takes and photos go through the same queue, so words and objects keep their order.
    private static func readCommands(into takes: TakeController.Remote, control: LiveControl, stop: StopSignal,
                                     say: @escaping @Sendable (String) -> Void) {
        Thread.detachNewThread {
            var reader = BoundedLineReader(descriptor: STDIN_FILENO)
            while let line = reader.next() {
                // A JSON object is a control command (`LiveControl`): its reply is a JSON line on stdout.
                if case .text(let text) = line, text.trimmingCharacters(in: .whitespaces).hasPrefix("{") {
                    control.reply(toLine: line)
                    continue
                }
                switch RecordInput(line) {
                case .command(let command):
                    takes.send(command)
                    if command == .quit {
                        Thread.sleep(forTimeInterval: quitGrace)
                        stop.stop(.interrupted)
                        return
                    }
                case .empty: continue
                case .refused(let message): say(message)
                }
            }
        }
    }
}
