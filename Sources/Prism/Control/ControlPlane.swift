import Foundation
import PrismCore
import PrismFilters
import PrismMedia
import PrismPipeline
import Synchronization

/// How a graph's text becomes the running graph: `bind` reads the text (and the shader files it names);
/// `frame` puts the session's filters around the result for the running output (`control`: the engine's,
/// nil before it runs) and says where in it the nodes commands address are.
struct GraphAssembly: Sendable {
    let bind: @Sendable (String) throws -> FilterGraph
    let frame: @Sendable (FilterGraph, EngineControl?) throws -> (graph: FilterGraph, nodes: Range<Int>)
}

/// What commands do besides the graph, which differs between `prism run`, `prism record` and `prism dev`
/// (takes, stills, the end of the run, the camera), and where the plane's news goes.
protocol ControlEffects: Sendable {
    /// The camera in use; nil when the input is not a camera.
    var camera: String? { get }
    /// The cameras a `camera` command may switch to (listed afresh: one plugged in since the start counts).
    func availableCameras() -> [String]
    /// Switches to `path`, a listed camera, between two frames.
    func switchCamera(to path: String, plane: ControlPlane)
    func record(start: Bool, plane: ControlPlane) -> Result<ControlReply, ControlError>
    func snapshot(_ asked: String?, plane: ControlPlane) -> Result<ControlReply, ControlError>
    func quit() -> Result<ControlReply, ControlError>
    /// On the GPU thread, after every change: the addressed nodes and their values.
    func published(_ nodes: [ControlNode])
    /// On the GPU thread: a graph, or a value that needed a recompile, was refused; the last good program runs on.
    func refused(_ error: any Error)
    /// A watched file changed and the graph was bound again, or not (`refused` has had the error).
    func reloadedAfterEdit(_ result: Result<ControlReply, ControlError>)
    /// The files the graph reads, watched from now on.
    func watching(_ files: [String])
}

extension ControlEffects {
    func availableCameras() -> [String] { ControlPlane.cameras(current: camera).map(\.path) }
    func published(_ nodes: [ControlNode]) {}
    func refused(_ error: any Error) {}
    func watching(_ files: [String]) {}
}

/// The one live control of a running engine, for every way in: stdin and `POST /control` of `prism run`
/// and `prism record` (`LiveControl`), and `prism dev`'s page (`/param`, `/record`, `/camera`) and shader
/// reloads. Each command is a `ControlCommand`; everything that touches the graph runs on the engine's GPU
/// thread between two frames (`FrameEngine.schedule`) and the caller waits for it, so a reply says what
/// happened: a value set or a graph swapped in takes effect from the frame the reply names (`"frame": N`,
/// 0 for the first), and a graph that does not bind or compile is refused with the old one still running —
/// no frame is dropped either way. A failure is a reply, never an error of the run.
final class ControlPlane: Sendable {
    /// The engine's side: counts frames, detaches snapshots, keeps the values set and the graph's nodes.
    let tap: ControlTap
    let effects: any ControlEffects
    /// The files the graph reads (watched, and never a snapshot's path).
    let watched = Mutex<[String]>([])
    private let engine = Mutex<FrameEngine?>(nil)
    private let assembly = Mutex<GraphAssembly?>(nil)
    private let ended = Atomic<Bool>(false)
    private let watcher = Mutex<FileWatcher?>(nil)

    /// - Parameter graphText: the graph as given, which `reload` binds again.
    init(graphText: String, effects: any ControlEffects) {
        tap = ControlTap(graphText: graphText, effects: effects)
        self.effects = effects
    }

    /// Commands act on `engine` from now on; `nodes` are where the addressed nodes are in its first graph,
    /// and `assembly` makes the graphs of `graph` and `reload`.
    func start(engine: FrameEngine, nodes: Range<Int>, assembly: GraphAssembly) {
        self.assembly.withLock { $0 = assembly }
        self.engine.withLock { $0 = engine }
        // Before the first frame, on the GPU thread, where the tap's places are kept.
        let tap = self.tap
        engine.schedule { control in tap.configure(nodes: nodes, graph: control.graph) }
    }

    /// The run is over: commands get "the run has ended" from now on; the watcher stops.
    func finish() {
        ended.store(true, ordering: .releasing)
        watcher.withLock { $0 }?.stop()
    }

    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    /// Runs `work` on the GPU thread between two frames (a recording the page starts), not waiting for it.
    func schedule(_ work: @escaping @Sendable (EngineControl) throws -> Void) {
        engine.withLock { $0 }?.schedule(work)
    }

    // MARK: Commands

    /// The reply to one JSON command.
    func result(of json: [UInt8]) -> Result<ControlReply, ControlError> {
        do {
            return perform(try ControlCommand(json: json))
        } catch {
            return .failure(error)
        }
    }

    /// Carries out one command (on the caller's thread; graph work on the GPU thread, waited for).
    func perform(_ command: ControlCommand) -> Result<ControlReply, ControlError> {
        guard !hasEnded else { return .failure(ControlError("the run has ended", status: 503)) }
        switch command {
        case .set(let node, let values):
            return onGPU { control, tap in try tap.set(node: node, values: values, control) }
        case .graph(let text):
            let result = swap(to: text)
            if case .success = result { updateWatchedFiles() }
            return result
        case .reload:
            let result = swap(to: nil)
            updateWatchedFiles()
            return result
        case .camera(let path):
            return switchCamera(to: path)
        case .snapshot(let asked):
            return effects.snapshot(asked, plane: self)
        case .record(let start):
            return effects.record(start: start, plane: self)
        case .quit:
            return effects.quit()
        }
    }

    /// A new graph (`text`), or the current text bound again (nil: reload), swapped in between frames.
    private func swap(to text: String?) -> Result<ControlReply, ControlError> {
        guard let assembly = assembly.withLock({ $0 }) else { return .failure(ControlError("the run has not started yet", status: 503)) }
        return onGPU { control, tap in try tap.swap(to: text, assembly: assembly, control) }
    }

    /// Only a camera the system lists as usable, or the one in use: a path from a script or a page opens
    /// nothing else.
    private func switchCamera(to path: String) -> Result<ControlReply, ControlError> {
        guard let current = effects.camera else {
            return .failure(ControlError("camera: the input is not a camera; nothing to switch", status: 409))
        }
        if path == current { return .success(ControlReply([("camera", JSONText.string(path)), ("unchanged", "true")])) }
        let cameras = effects.availableCameras()
        guard cameras.contains(path) else {
            return .failure(ControlError("camera: \(PrismCommandLine.terminalSafe(path, keepingNewlines: false)) is not an available camera "
                                         + "(available: \(cameras.joined(separator: ", ")))"))
        }
        effects.switchCamera(to: path, plane: self)
        return .success(ControlReply([("camera", JSONText.string(path))]))
    }

    /// Asks the engine to switch cameras before its next frame.
    func switchEngineCamera(to path: String) {
        engine.withLock { $0 }?.switchCamera(to: path)
    }

    /// The capture nodes that can stream, and the one in use (a busy driver may report it unusable), first.
    static func cameras(current: String?) -> [(path: String, card: String)] {
        var cameras = CameraSource.list().filter { $0.problem == nil || $0.path == current }.map { (path: $0.path, card: $0.card) }
        if let current, !cameras.contains(where: { $0.path == current }) { cameras.insert((current, ""), at: 0) }
        return cameras
    }

    /// Runs `work` on the GPU thread between two frames and waits for its reply. Work that the engine
    /// drops (the run ended first) is answered so.
    func onGPU(_ work: @escaping @Sendable (EngineControl, ControlTap) throws -> ControlReply) -> Result<ControlReply, ControlError> {
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
                result = .failure(ControlError(ControlTap.oneLine("\(error)"), cause: error))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        while done.wait(timeout: .now() + .milliseconds(200)) == .timedOut {
            if hasEnded { return .failure(ControlError("the run has ended", status: 503)) }
        }
        return outcome.withLock { $0 } ?? .failure(ControlError("the run has ended", status: 503))
    }

    // MARK: Watching

    /// Watches the files the graph reads (`otherwise` when it reads none); a save reloads it. Returns the
    /// files watched.
    @discardableResult
    func watch(otherwise: [String] = []) throws -> [String] {
        var files = Self.watchedFiles(for: tap.currentText)
        if files.isEmpty { files = otherwise }
        watched.withLock { $0 = files }
        effects.watching(files)
        let fileWatcher = try FileWatcher(files: files) { [weak self] _ in self?.reloadAfterEdit() }
        watcher.withLock { $0 = fileWatcher }
        return files
    }

    private func reloadAfterEdit() {
        effects.reloadedAfterEdit(perform(.reload))
    }

    /// The files the graph reads now (a new graph, a shader that gained an include); while it reads none
    /// (it does not parse), the files watched before.
    private func updateWatchedFiles() {
        let files = Self.watchedFiles(for: tap.currentText)
        let before = watched.withLock { old in
            defer { old = files.isEmpty ? old : files }
            return old
        }
        if !files.isEmpty { effects.watching(files) }
        guard let watcher = watcher.withLock({ $0 }) else { return }
        // A file that vanished mid-save stays watched until it is back.
        try? watcher.update(files: Array(Set(files).union(before.filter { FileManager.default.fileExists(atPath: $0) })))
    }

    /// The files a graph text reads: file filters, `file=` arguments, and each shader's includes and images.
    static func watchedFiles(for text: String) -> [String] {
        guard let ast = try? GraphParser.parse(text) else { return [] }
        var files: [String] = []
        for (_, element) in ast.elements {
            if element.kind == .file { files.append(element.name) }
            if let file = element.argument("file")?.value.textValue { files.append(file) }
        }
        var result: [String] = []
        for file in files {
            result.append(file)
            if let filter = try? FilterFileFormat.read(file) { result += filter.watchedFiles }
        }
        var seen = Set<String>()
        return result.filter { seen.insert(FileWatcher.normalise($0)).inserted }
    }
}
