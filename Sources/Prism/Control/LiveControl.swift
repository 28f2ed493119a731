import Foundation
import PrismCore
import PrismFilters
import PrismKit
import PrismMedia
import PrismPipeline
import Synchronization

/// The live control channel of `prism run` and `prism record`: `ControlCommand`s from stdin (one JSON
/// object a line, a JSON reply line each) and from `POST /control` on a loopback port (behind the same
/// `RequestGate` as `prism dev`: token, Host, Origin, JSON only), and `--watch`'s reloads.
///
/// Everything that touches the graph runs on the engine's GPU thread between two frames
/// (`FrameEngine.schedule`), and the command's caller waits for it, so a reply says what happened: a
/// parameter set or a graph swapped in takes effect from the frame the reply names (`"frame": N`, 0 for
/// the first), and a graph that does not bind or compile is refused with the old one still running — no
/// frame is dropped either way. A failure is a reply, never an error of the run: the output (a local
/// recording above all) goes on.
final class LiveControl: Sendable {
    /// What the commands act on besides the graph.
    enum Mode: Sendable {
        /// `prism run`: one output; `reads` are the files it reads (the input), `outputs` what it writes.
        case run(stop: StopSignal, cameraInput: Bool, reads: [String], outputs: [(flag: String, path: String)],
                 snapshotDirectory: String)
        /// `prism record`: takes and photos go through the take controller, in order with stdin's words.
        case record(remote: TakeController.Remote, stop: StopSignal, directory: String, cameraInput: Bool)
    }

    let options: ControlOptions
    /// The engine's side: counts frames, detaches snapshots, holds the graph's text and node places.
    let tap: ControlTap
    private let mode: Mode
    private let quiet: Bool
    private let userNodeCount: Int
    private let engine = Mutex<FrameEngine?>(nil)
    private let framing = Mutex<(framing: GraphFraming, outputSize: Size)?>(nil)
    private let ended = Atomic<Bool>(false)
    /// Where stdin's replies go: stdout, or stderr when stdout carries the frames.
    private let replyDescriptor: Int32
    private let replyLock = Mutex(())
    private let snapshotNames: TakeNames
    /// Snapshot paths handed out and not yet written, so two commands cannot name one file.
    private let snapshotsPromised = Mutex(Set<String>())
    private let watcher = Mutex<FileWatcher?>(nil)
    private let server = Mutex<HTTPServer?>(nil)

    /// - Parameters:
    ///   - graphText: the graph as given (`--filter`), which `reload` binds again.
    ///   - repliesOnStandardError: stdout carries raw frames (`-o -`).
    ///   - userGraph: the graph bound from `graphText`, before the run frames it (its node count: the
    ///     running graph has the session's remaps in front of its nodes and may have a scale behind).
    init(options: ControlOptions, graphText: String, userGraph: FilterGraph, mode: Mode, quiet: Bool, repliesOnStandardError: Bool,
         inputNames: [String?] = [nil]) {
        self.options = options
        userNodeCount = userGraph.nodes.count
        self.mode = mode
        self.quiet = quiet
        replyDescriptor = repliesOnStandardError ? STDERR_FILENO : STDOUT_FILENO
        tap = ControlTap(graphText: graphText, inputNames: inputNames)
        switch mode {
        case .run(_, _, _, _, let directory): snapshotNames = TakeNames(directory: directory, prefix: "snapshot", fileExtension: "png")
        case .record(_, _, let directory, _): snapshotNames = TakeNames(directory: directory, prefix: "photo", fileExtension: "jpg")
        }
    }

    /// Starts the channels on `job`'s engine: the port (its URL printed), stdin (`run` only: `record`
    /// reads its own stdin and hands JSON lines to `reply(toLine:)`), the watcher.
    func start(job: RunJob) throws {
        engine.withLock { $0 = job.engine }
        let tap = self.tap, offset = job.framing.userNodeOffset, userNodeCount = self.userNodeCount
        // Before the first frame, on the GPU thread, where the tap's places are kept.
        job.engine.schedule { _ in tap.configure(userNodeOffset: offset, userNodeCount: userNodeCount) }
        framing.withLock { $0 = (job.framing, job.outputSize) }
        if let port = options.port {
            let token = RequestGate.makeToken()
            let server = try HTTPServer(address: "127.0.0.1", port: port, token: token, tokenInPostQuery: true,
                                        tokenHint: "send the token prism printed (?token=… on the URL, or its cookie)") { [weak self] request in
                guard let self else { return .error(503, "the run has ended") }
                return self.route(request)
            }
            self.server.withLock { $0 = server }
            // Always said, --quiet or not: without it the endpoint cannot be used.
            PrismCommandLine.info("prism: control at http://127.0.0.1:\(server.port)/control?token=\(token) "
                                  + "(POST one JSON command; GET /state)")
        }
        if options.watch { try startWatching() }
        if options.standardInput, case .run = mode { readStandardInput() }
    }

    /// The run is over: commands get "the run has ended" from now on; the server and watcher stop.
    func finish() {
        ended.store(true, ordering: .releasing)
        watcher.withLock { $0 }?.stop()
        server.withLock { $0 }?.stop()
    }

    // MARK: Channels

    /// One line of stdin: its reply line, written where replies go.
    func reply(toLine line: BoundedLineReader.Line) {
        let text: String
        switch line {
        case .overlong(let prefix, let bytes):
            text = ControlError("line of \(bytes) bytes skipped (a command is at most \(BoundedLineReader.defaultLimit) bytes): "
                                + "'\(PrismCommandLine.terminalSafe(prefix, keepingNewlines: false))…'").json
        case .text(let command):
            guard !command.trimmingCharacters(in: .whitespaces).isEmpty else { return }
            text = result(of: Array(command.utf8)).json
        }
        let bytes = Array((text + "\n").utf8)
        let descriptor = replyDescriptor
        // One line at a time, whole, whichever channel's thread answers; a reader gone away (EPIPE) only
        // loses its replies.
        replyLock.withLock { _ in
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { buffer in
                    retryingEINTR { write(descriptor, buffer.baseAddress, buffer.count) }
                }
                guard count > 0 else { return }
                written += count
            }
        }
    }

    /// `run --control stdin`: lines until the end of input (the run goes on after it, as without control).
    private func readStandardInput() {
        Thread.detachNewThread { [self] in
            var reader = BoundedLineReader(descriptor: STDIN_FILENO)
            while !ended.load(ordering: .acquiring), let line = reader.next() { reply(toLine: line) }
        }
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        switch (request.method, request.path) {
        case ("POST", "/control"):
            switch result(of: request.body) {
            case .success(let reply): return .json(200, reply.json)
            case .failure(let error): return .json(error.status, error.json)
            }
        case ("GET", "/state"):
            return .json(200, state())
        case (_, "/control"), (_, "/state"):
            return .json(405, ControlError("\(request.method) is not allowed on \(request.path)").json)
        default:
            return .json(404, ControlError("not found (POST /control, GET /state)").json)
        }
    }

    /// `GET /state`: frames so far, the graph and its nodes' parameters, the files watched.
    private func state() -> String {
        let published = tap.published.withLock { $0 }
        let watched = tap.watched.withLock { $0 }
        return "{\"ok\":true,\"frames\":\(tap.frames.load(ordering: .relaxed)),\"ended\":\(ended.load(ordering: .acquiring)),"
            + "\"graph\":\(JSONText.string(published.text)),\"nodes\":\(published.nodes),"
            + "\"watching\":[\(watched.map(JSONText.string).joined(separator: ","))]}"
    }

    // MARK: Commands

    private func result(of json: [UInt8]) -> Result<ControlReply, ControlError> {
        do {
            return perform(try ControlCommand(json: json))
        } catch {
            return .failure(error)
        }
    }

    /// Carries out one command (on the caller's thread; graph work on the GPU thread, waited for).
    func perform(_ command: ControlCommand) -> Result<ControlReply, ControlError> {
        guard !ended.load(ordering: .acquiring) else { return .failure(ControlError("the run has ended", status: 503)) }
        switch command {
        case .set(let node, let values):
            return onGPU { control, tap in try tap.set(node: node, values: values, control) }
        case .graph(let text):
            let result = swap(to: text, keepingUserValues: false)
            if case .success = result { updateWatchedFiles() }
            return result
        case .reload:
            let result = swap(to: nil, keepingUserValues: true)
            updateWatchedFiles()
            return result
        case .camera(let path):
            return switchCamera(to: path)
        case .snapshot(let asked):
            return snapshot(asked)
        case .record(let start):
            guard case .record(let remote, _, _, _) = mode else {
                return .failure(ControlError("record: prism run has one output; takes are prism record's (prism record DIR --control …)",
                                             status: 409))
            }
            remote.send(start ? .start : .stop)
            return .success(ControlReply([("record", JSONText.string(start ? "start" : "stop"))]))
        case .quit:
            switch mode {
            case .run(let stop, _, _, _, _):
                stop.stop(.interrupted)
            case .record(let remote, let stop, _, _):
                remote.send(.quit)
                // As stdin's `quit`: should no frame come to carry it out, the run stops anyway.
                Thread.detachNewThread {
                    Thread.sleep(forTimeInterval: RecordCommand.quitGrace)
                    stop.stop(.interrupted)
                }
            }
            return .success(ControlReply([("quit", "true")]))
        }
    }

    /// A new graph (`text`), or the current text bound again (`nil`: reload), swapped in between frames.
    private func swap(to text: String?, keepingUserValues: Bool) -> Result<ControlReply, ControlError> {
        guard let (framing, outputSize) = framing.withLock({ $0 }) else {
            return .failure(ControlError("the run has not started yet", status: 503))
        }
        return onGPU { control, tap in
            try tap.swap(to: text, keepingUserValues: keepingUserValues, framing: framing, outputSize: outputSize, control)
        }
    }

    private func switchCamera(to path: String) -> Result<ControlReply, ControlError> {
        let cameraInput: Bool
        switch mode {
        case .run(_, let camera, _, _, _): cameraInput = camera
        case .record(_, _, _, let camera): cameraInput = camera
        }
        guard cameraInput else { return .failure(ControlError("camera: the input is not a camera; nothing to switch", status: 409)) }
        // Only a camera the system lists as usable: a path from a script opens nothing else.
        let cameras = CameraSource.list().filter { $0.problem == nil }.map(\.path)
        guard cameras.contains(path) else {
            return .failure(ControlError("camera: \(path) is not an available camera (available: \(cameras.joined(separator: ", ")))"))
        }
        switch mode {
        case .run: engine.withLock { $0 }?.switchCamera(to: path)
        case .record(let remote, _, _, _): remote.send(.camera(path))
        }
        return .success(ControlReply([("camera", JSONText.string(path))]))
    }

    private func snapshot(_ asked: String?) -> Result<ControlReply, ControlError> {
        let path: String
        do { path = try snapshotPath(asked) } catch { return .failure(error) }
        switch mode {
        case .run:
            let result = onGPU { control, tap in try tap.snapshot(to: path, control) }
            if case .failure = result { _ = snapshotsPromised.withLock { $0.remove(path) } }
            return result
        case .record(let remote, _, _, _):
            // A new name is the recorder's to give (its `photo …` line on stderr says it), so that `snap`
            // and this never pick the same one.
            remote.send(asked == nil ? .snap : .photo(path))
            return .success(ControlReply(asked == nil ? [("queued", JSONText.string("snap"))] : [("path", JSONText.string(path))]))
        }
    }

    /// A snapshot's path: a new name, or the one asked for when it is a still no one else writes and no
    /// file that exists (a snapshot never replaces a file, nor the input or an output of the run).
    private func snapshotPath(_ asked: String?) throws(ControlError) -> String {
        guard let asked else {
            if case .record = mode { return "" }  // the take controller names it
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
        var reads = tap.watched.withLock { $0 }
        var outputs: [(flag: String, path: String)] = []
        switch mode {
        case .run(_, _, let runReads, let runOutputs, _):
            reads += runReads
            outputs = runOutputs
        case .record: break
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

    /// Runs `work` on the GPU thread between two frames and waits for its reply. Work that the engine
    /// drops (the run ended first) is answered so.
    private func onGPU(_ work: @escaping @Sendable (EngineControl, ControlTap) throws -> ControlReply) -> Result<ControlReply, ControlError> {
        guard let engine = engine.withLock({ $0 }) else { return .failure(ControlError("the run has not started yet", status: 503)) }
        let outcome = Mutex<Result<ControlReply, ControlError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let tap = self.tap
        engine.schedule { control in
            // Nothing thrown here reaches the engine: a refused command must not end the run.
            let result: Result<ControlReply, ControlError>
            do {
                result = .success(try work(control, tap))
            } catch let error as ControlError {
                result = .failure(error)
            } catch {
                result = .failure(ControlError(ControlTap.oneLine("\(error)")))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        while done.wait(timeout: .now() + .milliseconds(200)) == .timedOut {
            if ended.load(ordering: .acquiring) { return .failure(ControlError("the run has ended", status: 503)) }
        }
        return outcome.withLock { $0 } ?? .failure(ControlError("the run has ended", status: 503))
    }

    // MARK: Watching

    private func startWatching() throws {
        let files = DevSession.watchedFiles(for: tap.currentText)
        tap.watched.withLock { $0 = files }
        if files.isEmpty, !quiet {
            PrismCommandLine.info("prism: --watch: the graph reads no files; a {\"graph\": …} command with shader files starts watching them")
        }
        let fileWatcher = try FileWatcher(files: files) { [weak self] _ in self?.reloadAfterEdit() }
        watcher.withLock { $0 = fileWatcher }
    }

    /// A save of a watched file: reload, and say how it went in one line (stderr, as run's other notes).
    private func reloadAfterEdit() {
        switch perform(.reload) {
        case .success(let reply):
            if !quiet { PrismCommandLine.info("prism: reloaded the graph's files: \(reply.json)") }
        case .failure(let error):
            PrismCommandLine.info("prism: reload failed, the last good graph keeps running: \(error.description)")
        }
    }

    /// The files the graph reads now (a new graph, a shader that gained an include).
    private func updateWatchedFiles() {
        let files = DevSession.watchedFiles(for: tap.currentText)
        let before = tap.watched.withLock { old in
            defer { old = files.isEmpty ? old : files }
            return old
        }
        guard let watcher = watcher.withLock({ $0 }) else { return }
        // A file that vanished mid-save stays watched until it is back.
        try? watcher.update(files: Array(Set(files).union(before.filter { FileManager.default.fileExists(atPath: $0) })))
    }
}

/// The GPU thread's side of the control channel: a tap that counts frames and hands snapshots their
/// frame, and the work `LiveControl` schedules between frames (parameters, swaps, reloads).
///
/// `@unchecked Sendable`: its plain fields are touched only on the engine's GPU thread (taps and scheduled
/// work run there, one at a time); what other threads read is behind `Mutex`/`Atomic`.
final class ControlTap: FrameTap, @unchecked Sendable {
    /// Frames rendered so far: the index of the next frame.
    let frames = Atomic<Int>(0)
    /// The graph as `GET /state` shows it: its text and its nodes as a JSON array.
    let published = Mutex<(text: String, nodes: String)>(("", "[]"))
    /// The files the graph reads (watched with `--watch`; never a snapshot's path).
    let watched = Mutex<[String]>([])
    private let text: Mutex<String>
    /// The run's inputs' names, the first's first: a swapped-in graph reads them as `[0]`, `[1]`… and by name.
    private let inputNames: [String?]

    // GPU thread only.
    private var userNodeOffset = 0
    private var userNodeCount = 0
    /// Parameters set through the channel (user node index, name), carried over a reload.
    private var userSet = Set<[String]>()
    private var stills: [StillImageSink] = []
    private var publishedOnce = false

    init(graphText: String, inputNames: [String?] = [nil]) {
        text = Mutex(graphText)
        self.inputNames = inputNames
    }

    /// The graph text running now.
    var currentText: String { text.withLock { $0 } }

    /// Where the user's nodes are in the running graph (scheduled before the first frame).
    func configure(userNodeOffset: Int, userNodeCount: Int) {
        self.userNodeOffset = userNodeOffset
        self.userNodeCount = userNodeCount
    }

    func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
        frames.store(frame.index + 1, ordering: .relaxed)
        // Snapshots attached before this frame have it now.
        for still in stills { try control.detach(still) }
        stills.removeAll()
        if !publishedOnce {
            publishedOnce = true
            publish(control.graph)
        }
    }

    // MARK: Work between frames

    func set(node reference: ControlCommand.NodeReference?, values: [String: JSONValue], _ control: EngineControl) throws -> ControlReply {
        let graph = control.graph
        let index = try resolve(reference, parameters: Array(values.keys), in: graph)
        let node = graph.nodes[index]
        guard let current = node.parameters, !current.specs.isEmpty else {
            throw ControlError("\(node.name) (node \(index - userNodeOffset)) has no parameters")
        }
        var typed: [(name: String, value: ParameterValue)] = []
        for (name, json) in values.sorted(by: { $0.key < $1.key }) {
            guard let spec = current.specs.first(where: { $0.name == name }) else {
                throw ControlError("\(node.name) has no parameter '\(PrismCommandLine.terminalSafe(name, keepingNewlines: false))' "
                                   + "(it takes \(current.specs.map(\.name).joined(separator: ", ")))")
            }
            do {
                typed.append((spec.name, try DevParameters.value(from: json, for: spec)))
            } catch {
                throw ControlError("\(node.name): \(error)")
            }
        }
        for (name, value) in typed { try graph.setParameter(node.id, name, value) }
        // A value that changes code or sizes (a blur radius) needs a new compile; if that fails, the old
        // values come back and the old program runs on.
        if control.renderer?.isStale == true {
            do {
                try control.recompile()
            } catch {
                for (name, _) in typed { if let old = current[name] { try? graph.setParameter(node.id, name, old) } }
                try? control.recompile()
                throw ControlError("\(node.name): \(Self.oneLine("\(error)")) (values kept)")
            }
        }
        let userIndex = index - userNodeOffset
        for (name, _) in typed { userSet.insert([String(userIndex), name]) }
        publish(graph)
        let fields = typed.map { "\(JSONText.string($0.name)):\(DevParameters.json($0.value))" }.joined(separator: ",")
        return ControlReply([("frame", String(frames.load(ordering: .relaxed))), ("node", String(userIndex)),
                             ("filter", JSONText.string(node.name)), ("values", "{\(fields)}")])
    }

    func swap(to newText: String?, keepingUserValues: Bool, framing: GraphFraming, outputSize: Size,
              _ control: EngineControl) throws -> ControlReply {
        let text = newText ?? currentText
        let user: FilterGraph
        do {
            user = try PrismGraphs.bind(text, inputs: inputNames)
        } catch {
            throw ControlError("graph: \(Self.oneLine("\(error)"))")
        }
        let count = user.nodes.count
        // The output keeps the size it has now (a take being written cannot change it).
        let size = control.renderer?.outputSize ?? outputSize
        let framed = try framing.frame(user, outputSize: size)
        let old = control.graph
        if keepingUserValues { carry(from: old, to: framed.graph, newOffset: framed.userNodeOffset) }
        try control.setGraph(framed.graph)  // throws with the old graph still running
        if !keepingUserValues { userSet.removeAll() }
        userNodeOffset = framed.userNodeOffset
        userNodeCount = count
        self.text.withLock { $0 = text }
        publish(framed.graph)
        let passes = control.renderer?.passLabels ?? []
        return ControlReply([("frame", String(frames.load(ordering: .relaxed))), ("graph", JSONText.string(text)),
                             ("passes", "[\(passes.map(JSONText.string).joined(separator: ","))]")])
    }

    func snapshot(to path: String, _ control: EngineControl) throws -> ControlReply {
        // Written at the next frame as a new file, never through what appeared at `path` since the check; a
        // still that cannot be written is said, and the run goes on.
        let still = try StillImageSink(path: path, replacing: false) { error in
            PrismCommandLine.info("prism: snapshot \(PrismCommandLine.terminalSafe(path)) not written: \(error)")
        }
        try control.attach(still)
        stills.append(still)
        return ControlReply([("frame", String(frames.load(ordering: .relaxed))), ("path", JSONText.string(path))])
    }

    /// The values set through the channel, onto the same node (by place and filter) of the reloaded graph.
    private func carry(from old: FilterGraph, to new: FilterGraph, newOffset: Int) {
        for key in userSet {
            guard let index = Int(key[0]), old.nodes.indices.contains(userNodeOffset + index),
                  new.nodes.indices.contains(newOffset + index) else { continue }
            let before = old.nodes[userNodeOffset + index], after = new.nodes[newOffset + index]
            guard before.name == after.name, let value = before.parameters?[key[1]] else { continue }
            try? new.setParameter(after.id, key[1], value)
        }
    }

    /// The running graph's node for `reference`: a label (`mono[m]`), a filter or shader file name (with or
    /// without its extension) naming one node, or a place among the user's nodes; without one, the first
    /// node that has every parameter named.
    private func resolve(_ reference: ControlCommand.NodeReference?, parameters: [String], in graph: FilterGraph) throws -> Int {
        let range = userNodeOffset..<min(graph.nodes.count, userNodeOffset + userNodeCount)
        let listing = range.map { "\($0 - userNodeOffset) \(graph.nodes[$0].name)" }.joined(separator: ", ")
        let known = range.isEmpty ? "the graph has no nodes" : "nodes: \(listing)"
        switch reference {
        case .index(let place):
            guard range.contains(userNodeOffset + place) else { throw ControlError("no node \(place) (\(known))") }
            return userNodeOffset + place
        case .name(let name):
            if let id = graph.labels[name], range.contains(id.index) { return id.index }
            let matches = range.filter {
                let nodeName = graph.nodes[$0].name
                return nodeName == name || (nodeName as NSString).deletingPathExtension == name
            }
            guard let first = matches.first else {
                throw ControlError("no node named '\(PrismCommandLine.terminalSafe(name, keepingNewlines: false))' (\(known))")
            }
            guard matches.count == 1 else {
                throw ControlError("'\(name)' names \(matches.count) nodes (\(matches.map { String($0 - userNodeOffset) }.joined(separator: ", "))); "
                                   + "give its index or a label")
            }
            return first
        case nil:
            guard let index = range.first(where: { index in
                let specs = graph.nodes[index].parameters?.specs ?? []
                return parameters.allSatisfy { name in specs.contains { $0.name == name } }
            }) else {
                throw ControlError("no node has parameter(s) \(parameters.sorted().joined(separator: ", ")) (\(known))")
            }
            return index
        }
    }

    /// `GET /state`'s picture of the graph: each user node's place, filter, label and values.
    private func publish(_ graph: FilterGraph) {
        let labels = Dictionary(graph.labels.map { ($0.value.index, $0.key) }, uniquingKeysWith: { a, _ in a })
        let range = userNodeOffset..<min(graph.nodes.count, userNodeOffset + userNodeCount)
        let nodes = range.map { index -> String in
            let node = graph.nodes[index]
            var fields = "\"index\":\(index - userNodeOffset),\"filter\":\(JSONText.string(node.name))"
            if let label = labels[index] { fields += ",\"label\":\(JSONText.string(label))" }
            if let values = node.parameters {
                let items = values.specs.compactMap { spec in values[spec.name].map { "\(JSONText.string(spec.name)):\(DevParameters.json($0))" } }
                fields += ",\"parameters\":{\(items.joined(separator: ","))}"
            }
            return "{\(fields)}"
        }
        let text = currentText
        published.withLock { $0 = (text, "[\(nodes.joined(separator: ","))]") }
    }

    /// An error's text on one line (a reply is one line; a shader's compile log may have several).
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
