import Foundation
import PrismKit
import Synchronization

/// `prism_session`: a `Session`, its pushed-frame feed, and its one run (frames pulled, or an output
/// written). prism.h's thread rules hold here: one caller thread at a time, except that the feed is
/// pushed from another and `cancel` comes from any; what those touch is `control`, which is Sendable.
final class CSession {
    let session: Session
    /// What other threads touch: the feed and the run in progress.
    let control: RunControl
    var feed: FrameFeed? { control.feed }
    private let buffered: Int
    private var report: RunReport?
    private var reportText: UnsafeMutablePointer<CChar>?

    convenience init(input: InputSpec, graph: String, options: COptions, feed: FrameFeed? = nil) throws {
        try self.init(options: options, feed: feed) { try Session(input: input, graph: graph, options: options.session) }
    }

    /// `open` makes the session once messages name settings as this API does.
    init(options: COptions, feed: FrameFeed? = nil, open: () throws -> Session) throws {
        _ = Self.quietFFmpeg
        // Messages from here on name settings as this API does (the program's front end is this library).
        Setting.spell(COptions.settingNames)
        session = try open()
        try GraphParameters.apply(options.parameters, to: session.graph)
        control = RunControl(feed: feed)
        buffered = options.buffered
    }

    /// FFmpeg's own lines (x264's statistics, a decoder's warnings) are not the caller's: errors only, as the
    /// tool does it, set once when the first session opens (a program may set its own level afterwards).
    private static let quietFFmpeg: Void = FFmpegLog.setLevel(.error)

    /// Stops a run still going and waits for its thread, so a program that exits right after freeing the
    /// session does not race the driver's teardown.
    deinit {
        control.cancel()
        control.frames?.join()
        free(reportText)
    }

    func start(format: PixelFormat) throws {
        guard PackedFrameLayout.supportedFormats.contains(format) else {
            throw CAPIError.argument("frames cannot be delivered as \(format.rawValue) (only pushed)")
        }
        try control.begin()
        control.started(try FrameRun(session: session, format: format, buffered: buffered))
    }

    /// The next frame; nil at the end of the run.
    func next() throws -> CFrame? {
        guard let run = control.frames else {
            throw CAPIError.state("the run has not started: call prism_session_start first")
        }
        if let frame = run.next() { return frame }
        report = try run.outcome()
        return nil
    }

    func write(to output: String) throws {
        try control.begin()
        let stop = StopSignal()
        control.writing(stop)
        report = try session.write(to: output, stop: stop)
    }

    /// The report as JSON (prism.h's fields), kept until the next call.
    func reportJSON() -> UnsafePointer<CChar> {
        var object: [String: Any] = ["notes": session.notes + (report?.notes ?? [])]
        if let report {
            object["frames_in"] = report.framesIn
            object["frames_out"] = report.framesOut
            object["frames_dropped"] = report.framesDropped
            object["wall_seconds"] = report.wallSeconds
            object["fps"] = report.fps
            object["stop_reason"] = report.stopReason.rawValue
            object["renderer"] = report.renderer
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        free(reportText)
        reportText = strdup(String(decoding: data, as: UTF8.self))
        return UnsafePointer(reportText!)
    }
}

/// The part of a session other threads touch: the feed frames are pushed into, the run in progress, and
/// whether the session was cancelled (`prism_session_cancel` may come from any thread at any time).
final class RunControl: Sendable {
    let feed: FrameFeed?
    private let state = Mutex<State>(State())
    private struct State {
        var frames: FrameRun?
        var write: StopSignal?
        var cancelled = false
        var started = false
    }

    init(feed: FrameFeed?) { self.feed = feed }

    /// Marks the session's one run as begun; throws when it was cancelled or has already run.
    func begin() throws {
        try state.withLock { state in
            if state.cancelled { throw CAPIError.state("the session was cancelled") }
            if state.started { throw CAPIError.state("this session has already run; open a new one for another run") }
            state.started = true
        }
    }

    /// The frames being pulled; nil before `prism_session_start`.
    fileprivate var frames: FrameRun? { state.withLock { $0.frames } }

    /// Keeps the run so `cancel` can stop it; stops it at once when the session was cancelled meanwhile.
    fileprivate func started(_ run: FrameRun) {
        if state.withLock({ state -> Bool in state.frames = run; return state.cancelled }) { run.cancel() }
    }

    /// Keeps the output's stop signal, as `started` keeps a run.
    func writing(_ stop: StopSignal) {
        if state.withLock({ state -> Bool in state.write = stop; return state.cancelled }) { stop.stop() }
    }

    /// Any thread: stops the run (and wakes a blocked `push`).
    func cancel() {
        let (frames, write) = state.withLock { state in
            state.cancelled = true
            return (state.frames, state.write)
        }
        frames?.cancel()
        write?.stop()
        feed?.close()
    }
}

/// A session's engine run into memory on a thread of its own: each frame copied out of the run's buffer as it
/// leaves the GPU, at most `buffered` of them waiting for the caller (the run waits meanwhile, as for a file).
/// The thread lets the engine (and so its GPU objects) go before it ends; `join` waits for that.
private final class FrameRun: Sendable {
    private let frames: BoundedQueue<CFrame>
    private let stop = StopSignal()
    private let result = Mutex<Result<RunReport, any Error>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    init(session: Session, format: PixelFormat, buffered: Int) throws {
        let frames = BoundedQueue<CFrame>(capacity: max(1, buffered))
        self.frames = frames
        // Returns false once the caller has gone (the queue cancelled), which ends the run.
        let sink = CallbackSink(format: format) { frame, stream in frames.push(CFrame(frame, layout: stream.layout)) }
        runOnItsOwnThread(try session.engine(sinks: [sink]), named: "prism C session", stop: stop) { [self] outcome in
            result.withLock { $0 = outcome }
            frames.close()
            finished.signal()
        }
    }

    /// The next frame, waiting for it; nil once the run has ended (or was cancelled).
    func next() -> CFrame? { frames.pop() }

    /// How the run ended, once it has: its report, or its error (waits for the thread).
    func outcome() throws -> RunReport {
        join()
        return try result.withLock { $0! }.get()
    }

    func cancel() {
        stop.stop(.outputClosed)
        frames.cancel()
    }

    /// Waits for the run's thread to end (any number of times).
    func join() {
        finished.wait()
        finished.signal()
    }
}

/// `InputSpec` for an INPUT as `prism run` reads it: the pattern, a camera, a movie path or URL.
private func inputSpec(_ text: String) throws -> InputSpec {
    if text == "pattern" { return .pattern }
    if let camera = InputSpec.cameraPath(text) { return .camera(camera) }
    try InputSpec.checkMovieArgument(text)
    return .movie(text)
}

private func copiedOptions(_ pointer: OpaquePointer?) throws -> COptions {
    pointer == nil ? COptions() : try handle(pointer, COptions.self, "options").copy()
}

private func store(_ session: CSession, in out: UnsafeMutablePointer<OpaquePointer?>?) { out?.pointee = retained(session) }

@_cdecl("prism_session_open")
public func prism_session_open(_ input: UnsafePointer<CChar>?, _ graph: UnsafePointer<CChar>?, _ options: OpaquePointer?,
                               _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    out?.pointee = nil
    return cCall {
        guard let out else { throw CAPIError.argument("session is NULL") }
        let input = try inputSpec(try string(input, "input"))
        store(try CSession(input: input, graph: try string(graph, "graph"), options: try copiedOptions(options)), in: out)
        return .ok
    }
}

@_cdecl("prism_session_open_frames")
public func prism_session_open_frames(_ width: Int32, _ height: Int32, _ format: Int32, _ rateNum: Int32, _ rateDen: Int32,
                                      _ graph: UnsafePointer<CChar>?, _ options: OpaquePointer?,
                                      _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    out?.pointee = nil
    return cCall {
        guard let out else { throw CAPIError.argument("session is NULL") }
        let settings = try copiedOptions(options)
        let size = Size(width: Int(width), height: Int(height))
        let raw = RawVideoFormat(size: size, pixelFormat: try CPixelFormat.format(format), frameRate: Rational(rateNum, rateDen))
        let feed: FrameFeed
        do {
            feed = try FrameFeed(format: raw, colorSpace: settings.colorSpace(for: size), timeBase: settings.timeBase,
                                 capacity: settings.queue)
        } catch {
            throw CAPIError.argument("\(error)")
        }
        store(try CSession(input: .frames(feed), graph: try string(graph, "graph"), options: settings, feed: feed), in: out)
        return .ok
    }
}

@_cdecl("prism_session_output_size")
public func prism_session_output_size(_ session: OpaquePointer?, _ width: UnsafeMutablePointer<Int32>?,
                                      _ height: UnsafeMutablePointer<Int32>?) -> Int32 {
    cCall {
        let session = try handle(session, CSession.self, "session").session
        let size = try session.graph.outputSize(forSource: session.sourceInfo.size)
        width?.pointee = Int32(size.width)
        height?.pointee = Int32(size.height)
        return .ok
    }
}

@_cdecl("prism_session_input_size")
public func prism_session_input_size(_ session: OpaquePointer?, _ width: UnsafeMutablePointer<Int32>?,
                                     _ height: UnsafeMutablePointer<Int32>?) -> Int32 {
    cCall {
        let size = try handle(session, CSession.self, "session").session.sourceInfo.size
        width?.pointee = Int32(size.width)
        height?.pointee = Int32(size.height)
        return .ok
    }
}

@_cdecl("prism_session_push")
public func prism_session_push(_ session: OpaquePointer?, _ planes: UnsafePointer<UnsafePointer<UInt8>?>?,
                               _ strides: UnsafePointer<Int32>?, _ pts: Int64, _ duration: Int64) -> Int32 {
    cCall {
        let session = try handle(session, CSession.self, "session")
        guard let feed = session.feed else { throw CAPIError.state("this session reads its input; open it with prism_session_open_frames to push frames") }
        guard let planes, let strides else { throw CAPIError.argument("planes or strides is NULL") }
        let count = feed.format.pixelFormat.planes.count
        var given: [FrameFeed.Plane] = []
        for index in 0..<count {
            guard let base = planes[index] else { throw CAPIError.argument("plane \(index) is NULL") }
            given.append((UnsafeRawPointer(base), Int(strides[index])))
        }
        let taken: Bool
        do {
            taken = try feed.push(planes: given, pts: pts < 0 ? nil : pts, duration: duration > 0 ? duration : nil)
        } catch {
            throw CAPIError(status: "\(error)".contains("after the end") ? .state : .argument, description: "\(error)")
        }
        guard taken else { throw CAPIError.state("the run has ended; the frame was not taken") }
        return .ok
    }
}

@_cdecl("prism_session_end_input")
public func prism_session_end_input(_ session: OpaquePointer?) -> Int32 {
    cCall {
        guard let feed = try handle(session, CSession.self, "session").feed else {
            throw CAPIError.state("this session reads its input; there is nothing to end")
        }
        feed.finish()
        return .ok
    }
}

@_cdecl("prism_session_start")
public func prism_session_start(_ session: OpaquePointer?, _ format: Int32) -> Int32 {
    cCall {
        try handle(session, CSession.self, "session").start(format: try CPixelFormat.format(format))
        return .ok
    }
}

@_cdecl("prism_session_next_frame")
public func prism_session_next_frame(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    out?.pointee = nil
    return cCall(during: true) {
        guard let out else { throw CAPIError.argument("frame is NULL") }
        guard let frame = try handle(session, CSession.self, "session").next() else { return .end }
        out.pointee = retained(frame)
        return .ok
    }
}

@_cdecl("prism_session_write")
public func prism_session_write(_ session: OpaquePointer?, _ output: UnsafePointer<CChar>?) -> Int32 {
    cCall(during: true) {
        try handle(session, CSession.self, "session").write(to: try string(output, "output"))
        return .ok
    }
}

@_cdecl("prism_session_cancel")
public func prism_session_cancel(_ session: OpaquePointer?) {
    guard let session else { return }
    Unmanaged<CSession>.fromOpaque(UnsafeRawPointer(session)).takeUnretainedValue().control.cancel()
}

@_cdecl("prism_session_report")
public func prism_session_report(_ session: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let session else { return nil }
    return Unmanaged<CSession>.fromOpaque(UnsafeRawPointer(session)).takeUnretainedValue().reportJSON()
}

@_cdecl("prism_session_free")
public func prism_session_free(_ session: OpaquePointer?) { release(session) }

@_cdecl("prism_render")
public func prism_render(_ graph: UnsafePointer<CChar>?, _ input: UnsafePointer<CChar>?, _ output: UnsafePointer<CChar>?,
                         _ options: OpaquePointer?) -> Int32 {
    cCall(during: true) {
        let output = try string(output, "output")
        guard ImageFile.kind(forPath: output) != nil else { throw CAPIError.argument("\(output): the output must end in .png, .jpg or .jpeg") }
        let input = try string(input, "input"), graph = try string(graph, "graph")
        // As `prism render` reads a still: one frame through the session.
        let settings = try copiedOptions(options)
        try CSession(options: settings) { try Session.still(input, graph: try Session.binder().bind(graph), options: settings.session) }
            .write(to: output)
        return .ok
    }
}
