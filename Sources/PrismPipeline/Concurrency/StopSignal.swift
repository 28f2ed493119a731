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

/// The one path from process signals to a stop: each of `signals` loses its default action and is
/// counted on a dispatch source, and `react` is told the count (1 for the first); the policy (what the
/// first, second and third mean) is the caller's. Once the work is over (`finish`), later signals change
/// nothing, or get their default action back. SIGPIPE is ignored from the start, so a closed stdout or
/// stderr shows up as EPIPE on write (an error to handle), not a dead process.
package final class SignalStop: Sendable {
    private let signals: [Int32]
    private let sources: Mutex<[any DispatchSourceSignal]>
    /// Signals seen; nil once the work is over.
    private let count = Locked<Int?>(0)

    package init(_ signals: [Int32], react: @escaping @Sendable (_ count: Int) -> Void) {
        self.signals = signals
        signal(SIGPIPE, SIG_IGN)
        let count = self.count
        var made: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let seen = count.withLock { value -> Int? in
                    guard let seen = value else { return nil }
                    value = seen + 1
                    return seen + 1
                }
                if let seen { react(seen) }
            }
            source.resume()
            made.append(source)
        }
        sources = Mutex(made)
    }

    /// The work is over: later signals change nothing (the process is exiting with its status), or, with
    /// `restoringDefaults`, act as they would without this (the handlers are gone).
    package func finish(restoringDefaults: Bool = false) {
        count.withLock { $0 = nil }
        guard restoringDefaults else { return }
        sources.withLock { sources in
            for source in sources { source.cancel() }
            sources.removeAll()
        }
        for number in signals { signal(number, SIG_DFL) }
    }
}
