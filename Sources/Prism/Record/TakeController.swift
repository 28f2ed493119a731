import Foundation
import PrismCore
import PrismMedia
import PrismPipeline

/// The seed's recorder states — ready → recording → finished — on the engine's GPU thread: a take is a
/// `TakeSink` attached between two frames and detached (finished on its own thread) at `stop`, at a
/// segment's end (the next take starts on the very next frame), or when the run ends.
///
/// Commands are carried out in the order they came, each once the one before has taken effect, so the
/// same commands give the same files however fast they arrive: a take started has its first frame, and a
/// photo its frame, before the next command runs; `quit` finishes what was started, then ends the run.
final class TakeController: FrameTap {
    enum Command: Sendable, Equatable {
        case start, stop, toggle, snap
        /// A photo at this path (a control command's `snapshot`; checked by the control channel).
        case photo(String)
        case camera(String)
        case quit
    }

    struct Settings: Sendable {
        var directory: String
        var encoder: VideoEncoderSettings
        var limits = RecordingLimits()
        /// Roll to a new take after this long (seconds of input time) or this many bytes.
        var segmentSeconds: Double?
        var segmentBytes: Int64?
        /// The input is a camera (`camera DEVICE` switches it); the pattern has nothing to switch.
        var cameraInput = false
    }

    private let settings: Settings
    private let names: TakeNames
    private let stills: TakeNames
    /// The controller's side other threads see: commands in, finished takes out.
    final class Remote: Sendable {
        fileprivate let commands = Locked<[Command]>([])
        /// Takes finished so far, in order.
        let finished = Locked<[String]>([])
        /// Rendered frames that went to a take (a take was attached when the frame was rendered; a take
        /// attached with a frame gets the frames after it, one detached with a frame still gets that one).
        let framesToTakes = Locked(0)
        init() {}
        /// Asks for a change from any thread (stdin, a signal); applied between two frames.
        func send(_ command: Command) { commands.withLock { $0.append(command) } }
        /// The oldest command not yet carried out.
        fileprivate func next() -> Command? { commands.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
    }

    private let say: @Sendable (String) -> Void
    private let remote: Remote
    private var take: (sink: TakeSink, started: MediaTime)?
    private var still: StillImageSink?
    /// A sink attached on the previous frame (a take, a photo) that gets its first frame with this one:
    /// the next command waits for it.
    private var attachedLastFrame = false
    /// `quit` was carried out: later commands are ignored while the run ends.
    private var quitting = false
    private let quit: @Sendable () -> Void

    /// `quit` ends the run (`StopSignal.stop`), called once the take in progress is detached.
    init(settings: Settings, remote: Remote, say: @escaping @Sendable (String) -> Void, quit: @escaping @Sendable () -> Void = {}) {
        self.settings = settings
        self.remote = remote
        self.quit = quit
        names = TakeNames(directory: settings.directory, prefix: "take")
        stills = TakeNames(directory: settings.directory, prefix: "photo", fileExtension: "jpg")
        self.say = say
    }

    func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
        // A still attached on the previous frame has its frame now.
        if let still {
            try control.detach(still)
            self.still = nil
        }
        if take?.sink.ended == true { take = nil }
        if take != nil { remote.framesToTakes.withLock { $0 += 1 } }
        // A sink attached on the last frame has had this one: the commands after it may run now.
        attachedLastFrame = false
        while !attachedLastFrame, !quitting, let command = remote.next() {
            switch command {
            case .start: if take == nil { try start(at: frame.pts, control) }
            case .stop: try stop(control)
            case .toggle: if take == nil { try start(at: frame.pts, control) } else { try stop(control) }
            case .snap, .photo:
                let path: String
                if case .photo(let asked) = command { path = asked } else { path = stills.next() }
                // A new file (never through a link that appeared since the name was checked); a photo that
                // cannot be written is said, and the recording goes on.
                let say = self.say
                let sink = try StillImageSink(path: path, jpegQuality: 90, replacing: false) { error in
                    say("photo \(PrismCommandLine.terminalSafe(path)) not written: \(error)")
                }
                try control.attach(sink)
                still = sink
                attachedLastFrame = true
                say("photo \(sink.path)")
            case .camera(let path) where settings.cameraInput: control.switchCamera(to: path)
            case .camera(let path): say("camera \(PrismCommandLine.terminalSafe(path)): the input is the pattern, not a camera; nothing to switch")
            case .quit:
                try stop(control)
                quitting = true
                quit()
            }
        }
        // Segments: the next take begins with the next frame, so nothing is lost between them.
        if let take {
            // (A segment size is the take's own business: it rolls over at the exact frame, see TakeSink.)
            if settings.segmentSeconds.map({ (frame.pts - take.started).seconds >= $0 }) == true {
                try stop(control)
                try start(at: frame.pts, control)
            }
        }
    }

    private func start(at pts: MediaTime, _ control: EngineControl) throws {
        let path = names.next()
        let finished = remote.finished
        let say = self.say
        let sink = TakeSink(path: path, settings: settings.encoder, limits: settings.limits,
                            segments: settings.segmentBytes.map { TakeSink.Segments(bytes: $0, names: names) }, events: TakeSink.Events(
            began: { path in say("recording \(path)") },
            finished: { path, frames, bytes in
                finished.withLock { $0.append(path) }
                say("finished \(path) (\(frames) frames, \(ByteCount.text(bytes)))")
            },
            ended: { note in say(note) },
            failed: { error in say("take \(path) failed: \(error)") }))
        try control.attach(sink)
        take = (sink, pts)
        attachedLastFrame = true
        say("recording \(path)")
    }

    private func stop(_ control: EngineControl) throws {
        guard let active = take else { return }
        take = nil
        try control.detach(active.sink)
    }
}
