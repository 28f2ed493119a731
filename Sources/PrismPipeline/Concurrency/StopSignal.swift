import Foundation
import Synchronization

/// Why a run ended.
public enum StopReason: String, Sendable, Codable {
    /// The source had no more frames.
    case endOfInput = "end of input"
    /// `--frames`: the frame limit was reached.
    case frameLimit = "frame limit"
    /// `--duration`: the input-time limit was reached.
    case durationLimit = "duration limit"
    /// `--max-size`: the movie reached its size limit.
    case sizeLimit = "size limit"
    /// `--min-free`: the disk's free space fell to its limit.
    case freeSpaceLimit = "free-space limit"
    /// A signal or a request (Ctrl-C, SIGTERM, SIGHUP, the page's stop).
    case interrupted
    /// The reader of the output went away (a closed pipe).
    case outputClosed = "output closed"
}

/// A request to stop a run early (Ctrl-C, SIGTERM, a limit, the preview's stop button). The engine
/// finishes the frames already read and closes its sinks properly. The first reason given is kept.
/// Only a request: the library installs no signal handling; the command-line tool turns its signals
/// into `stop` calls (`ProcessSignals` in the `Prism` module), and a program embedding the library does
/// as it chooses.
public final class StopSignal: Sendable {
    private let reason = Mutex<StopReason?>(nil)
    /// A signal not yet stopped.
    public init() {}
    /// Asks the run to stop for `why`; thread-safe, and only the first call's reason is kept.
    public func stop(_ why: StopReason = .interrupted) { reason.withLock { if $0 == nil { $0 = why } } }
    /// Whether `stop` has been called; thread-safe.
    public var isStopped: Bool { reason.withLock { $0 != nil } }
    /// Why the run was stopped; nil while it was not.
    public var stopReason: StopReason? { reason.withLock { $0 } }
}
