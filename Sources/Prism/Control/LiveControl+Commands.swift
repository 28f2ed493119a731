import Foundation
import PrismCore
import PrismFilters
import PrismKit
import PrismMedia
import PrismPipeline
import Synchronization

extension LiveControl {
    /// `prism run`'s channel for `options` (nil without `--control` or `--watch`): replies on stdout, or on
    /// stderr when stdout carries the frames (`-o -`); snapshots never replace the input or the output.
    static func forRun(_ options: RunOptions, graph: FilterGraph, stop: StopSignal) -> LiveControl? {
        guard options.control.isEnabled else { return nil }
        var reads: [String] = []
        if case .movie(let path) = options.input { reads.append(path) }
        for extra in options.session.inputs { if case .movie(let path) = extra.spec.input { reads.append(path) } }
        var outputs: [(flag: String, path: String)] = []
        var directory = "."
        var rawOutput = false
        for output in options.outputs {
            switch output.spec {
            case .movie(let path) where path == "pipe:1" || path == "pipe:": rawOutput = true  // a movie on stdout
            case .movie(let path) where MovieDestination.scheme(of: path) != nil: break  // a URL or pipe: no folder
            case .movie(let path), .still(let path):
                outputs.append(("\(Setting.output)", path))
                let parent = (path as NSString).deletingLastPathComponent
                if outputs.count == 1, !parent.isEmpty { directory = parent }
            case .standardOutput: rawOutput = true
            case .discard, .virtualCamera: break
            }
        }
        let effects = RunControlEffects(mode: .run(stop: stop, reads: reads, outputs: outputs), camera: options.input.camera,
                                        snapshots: TakeNames(directory: directory, prefix: "snapshot", fileExtension: "png"),
                                        quiet: options.quiet)
        return LiveControl(options: options.control, graphText: options.filter, userGraph: graph, effects: effects,
                           quiet: options.quiet, repliesOnStandardError: rawOutput, inputNames: options.inputNames)
    }

    /// `prism record`'s channel: always there (its stdin takes JSON commands beside the plain words);
    /// photos and takes go through the take controller, in order with the words.
    static func forRecord(_ options: RunOptions, graph: FilterGraph, remote: TakeController.Remote, stop: StopSignal,
                          directory: String) -> LiveControl {
        let effects = RunControlEffects(mode: .record(remote: remote, stop: stop), camera: options.input.camera,
                                        snapshots: TakeNames(directory: directory, prefix: "photo", fileExtension: "jpg"),
                                        quiet: options.quiet)
        return LiveControl(options: options.control, graphText: options.filter, userGraph: graph, effects: effects,
                           quiet: options.quiet, repliesOnStandardError: false, inputNames: options.inputNames)
    }
}

/// What `prism run`'s and `prism record`'s commands do besides the graph: stills beside the output (run)
/// or through the take controller (record), takes (record only), the camera, the end of the run.
final class RunControlEffects: ControlEffects {
    enum Mode: Sendable {
        /// `prism run`: one output; `reads` are the files it reads (the inputs), `outputs` what it writes.
        case run(stop: StopSignal, reads: [String], outputs: [(flag: String, path: String)])
        /// `prism record`: takes and photos go through the take controller, in order with stdin's words.
        case record(remote: TakeController.Remote, stop: StopSignal)
    }

    private let mode: Mode
    private let quiet: Bool
    private let currentCamera: Mutex<String?>
    private let snapshotNames: TakeNames
    /// Snapshot paths handed out and not yet written, so two commands cannot name one file.
    private let snapshotsPromised = Mutex(Set<String>())

    init(mode: Mode, camera: String?, snapshots: TakeNames, quiet: Bool) {
        self.mode = mode
        currentCamera = Mutex(camera)
        snapshotNames = snapshots
        self.quiet = quiet
    }

    /// `prism run` reads commands from its stdin itself; `prism record` hands its JSON lines over.
    var readsStandardInput: Bool {
        if case .run = mode { return true }
        return false
    }

    var camera: String? { currentCamera.withLock { $0 } }

    func switchCamera(to path: String, plane: ControlPlane) {
        currentCamera.withLock { $0 = path }
        switch mode {
        case .run: plane.switchEngineCamera(to: path)
        case .record(let remote, _): remote.send(.camera(path))
        }
    }

    func record(start: Bool, plane: ControlPlane) -> Result<ControlReply, ControlError> {
        guard case .record(let remote, _) = mode else {
            return .failure(ControlError("record: prism run has one output; takes are prism record's (prism record DIR --control …)",
                                         status: 409))
        }
        remote.send(start ? .start : .stop)
        return .success(ControlReply([("record", JSONText.string(start ? "start" : "stop"))]))
    }

    func quit() -> Result<ControlReply, ControlError> {
        switch mode {
        case .run(let stop, _, _):
            stop.stop(.interrupted)
        case .record(let remote, let stop):
            remote.send(.quit)
            // As stdin's `quit`: should no frame come to carry it out, the run stops anyway.
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: RecordCommand.quitGrace)
                stop.stop(.interrupted)
            }
        }
        return .success(ControlReply([("quit", "true")]))
    }

    func snapshot(_ asked: String?, plane: ControlPlane) -> Result<ControlReply, ControlError> {
        switch mode {
        case .run:
            let path: String
            do { path = try snapshotPath(asked, plane: plane) } catch { return .failure(error) }
            let result = plane.onGPU { control, tap in try tap.snapshot(to: path, control) }
            if case .failure = result { _ = snapshotsPromised.withLock { $0.remove(path) } }
            return result
        case .record(let remote, _):
            guard let asked else {
                // A new name is the recorder's to give (its `photo …` line on stderr says it), so that `snap`
                // and this never pick the same one.
                remote.send(.snap)
                return .success(ControlReply([("queued", JSONText.string("snap"))]))
            }
            do { _ = try snapshotPath(asked, plane: plane) } catch { return .failure(error) }
            remote.send(.photo(asked))
            return .success(ControlReply([("path", JSONText.string(asked))]))
        }
    }

    /// A snapshot's path: a new name, or the one asked for when it is a still no one else writes and no
    /// file that exists (a snapshot never replaces a file, nor the input or an output of the run).
    private func snapshotPath(_ asked: String?, plane: ControlPlane) throws(ControlError) -> String {
        guard let asked else {
            let path = snapshotNames.next()
            _ = snapshotsPromised.withLock { $0.insert(path) }
            return path
        }
        guard ImageFile.kind(forPath: asked) != nil else { throw ControlError("snapshot: \(asked) must end in .png, .jpg or .jpeg") }
        // The still is written once its frame is in: a folder that is not there would fail only then.
        let parent = (asked as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parent.isEmpty ? "." : parent, isDirectory: &isDirectory), isDirectory.boolValue,
              access(parent.isEmpty ? "." : parent, W_OK) == 0 else {
            throw ControlError("snapshot: \(asked): no folder to write it in (\(parent.isEmpty ? "." : parent) is not a writable directory)")
        }
        var info = stat()
        guard lstat(asked, &info) != 0 else {
            throw ControlError("snapshot: \(asked) exists; a snapshot never replaces a file (name a new one)")
        }
        var reads = plane.watched.withLock { $0 }
        var outputs: [(flag: String, path: String)] = []
        if case .run(_, let runReads, let runOutputs) = mode {
            reads += runReads
            outputs = runOutputs
        }
        do {
            try OutputTarget.checkSideOutput(asked, flag: "snapshot", reads: reads, outputs: outputs)
        } catch {
            throw ControlError("\(error)")
        }
        let fresh = snapshotsPromised.withLock { $0.insert(FileWatcher.normalise(asked)).inserted }
        guard fresh else { throw ControlError("snapshot: \(asked) is already being written by an earlier snapshot") }
        return asked
    }

    /// A save of a watched file: said in one line (stderr, as the run's other notes).
    func reloadedAfterEdit(_ result: Result<ControlReply, ControlError>) {
        switch result {
        case .success(let reply):
            if !quiet { PrismCommandLine.info("prism: reloaded the graph's files: \(reply.json)") }
        case .failure(let error):
            PrismCommandLine.info("prism: reload failed, the last good graph keeps running: \(error.description)")
        }
    }
}

extension InputSpec {
    /// The camera's device path, when the input is one.
    fileprivate var camera: String? {
        if case .camera(let path) = self { return path }
        return nil
    }
}

extension ControlOptions {
    /// `--control stdin` needs stdin for commands: not with raw frames coming in on it.
    func check(input: InputSpec) throws {
        if standardInput, case .standardInput = input {
            throw UsageError("--control stdin: stdin carries the raw input frames (INPUT -); use --control PORT")
        }
    }
}
