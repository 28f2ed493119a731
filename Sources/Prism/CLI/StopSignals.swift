import Foundation
import PrismMedia
import PrismPipeline
import Synchronization

/// The tool's one path for process signals: every signal it handles or ignores goes through here, and
/// nothing below the `Prism` module installs any (the libraries block SIGPIPE only on the thread of a
/// write, `withoutSIGPIPE`, and leave the process's handling alone for programs that embed them).
enum ProcessSignals {
    /// At startup: SIGPIPE ignored, as FFmpeg's command-line tool does, so a closed stdout or stderr
    /// (`prism run … -o - | head -c 100`) shows up as EPIPE on write (an error to handle), not a dead
    /// process; SIGQUIT outside a run is one line and status 131 (`QuitSignal`).
    static func installForTool() {
        signal(SIGPIPE, SIG_IGN)
        QuitSignal.install()
    }

    /// `number` loses its default action and is delivered to `handler` on a dispatch source (resumed);
    /// cancel the source to stop handling it (`restoreDefault` gives the default action back).
    static func watch(_ number: Int32, _ handler: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
        return source
    }

    /// `number` acts as it would without the tool's handling again.
    static func restoreDefault(_ number: Int32) { signal(number, SIG_DFL) }
}

/// From process signals to a stop: each of `signals` is counted (`ProcessSignals.watch`), and `react` is
/// told the count (1 for the first); the policy (what the first, second and third mean) is the caller's.
/// Once the work is over (`finish`), later signals change nothing, or get their default action back.
final class SignalStop: Sendable {
    private let signals: [Int32]
    private let sources: Mutex<[any DispatchSourceSignal]>
    /// Signals seen; nil once the work is over.
    private let count = Locked<Int?>(0)

    init(_ signals: [Int32], react: @escaping @Sendable (_ count: Int) -> Void) {
        self.signals = signals
        let count = self.count
        sources = Mutex(signals.map { number in
            ProcessSignals.watch(number) {
                let seen = count.withLock { value -> Int? in
                    guard let seen = value else { return nil }
                    value = seen + 1
                    return seen + 1
                }
                if let seen { react(seen) }
            }
        })
    }

    /// The work is over: later signals change nothing (the process is exiting with its status), or, with
    /// `restoringDefaults`, act as they would without this (the handlers are gone).
    func finish(restoringDefaults: Bool = false) {
        count.withLock { $0 = nil }
        guard restoringDefaults else { return }
        sources.withLock { sources in
            for source in sources { source.cancel() }
            sources.removeAll()
        }
        for number in signals { ProcessSignals.restoreDefault(number) }
    }
}

/// The tool's signal policies, each over the one signal path (`SignalStop`, `ProcessSignals`).
enum StopSignals {
    /// `run`, `record`, `dev`: Ctrl-C, SIGTERM and SIGHUP (a closed terminal) stop the run cleanly: the
    /// output is finished. A second one changes nothing (the output is still being finished); a third
    /// abandons the run at once, removing the temporaries of unfinished outputs first. SIGQUIT too: a
    /// stop, not a crash report. `finish()` once the work is over: the outputs are final.
    static func finishingOutput(_ stop: StopSignal) -> SignalStop {
        SignalStop([SIGINT, SIGTERM, SIGHUP, SIGQUIT]) { seen in
            switch seen {
            case 1:
                FileHandle.standardError.write(Data("\nprism: stopping, finishing the output…\n".utf8))
                stop.stop()
                FIFOInput.cancelWaits()  // an input still waiting for its writer would hold the stop back
            case 2:
                FileHandle.standardError.write(Data("\nprism: still finishing the output (a third signal abandons it)\n".utf8))
            default:
                PartialOutputs.removeAll()
                FileHandle.standardError.write(Data("\nprism: abandoned: unfinished output removed\n".utf8))
                exit(130)
            }
        }
    }

    /// `batch`: Ctrl-C and SIGTERM (what `scancel` and a Slurm time limit send first) stop the batch: the
    /// jobs in flight end without outputs, finished jobs stay recorded, and the exit status says so. A
    /// second signal exits at once. `finish(restoringDefaults: true)` once the batch is over.
    static func droppingJobs(_ stop: StopSignal) -> SignalStop {
        SignalStop([SIGINT, SIGTERM]) { seen in
            if seen > 1 {
                BatchProgress.write(Data("\nprism: interrupted twice, exiting now\n".utf8), to: .standardError)
                exit(BatchCommand.interruptedStatus)
            }
            BatchProgress.write(Data("\nprism: stopping: jobs in flight are dropped, finished ones are kept\n".utf8), to: .standardError)
            stop.stop()
            FIFOInput.cancelWaits()  // a job whose input waits for its writer ends now
        }
    }
}

/// SIGQUIT outside a run: one line and exit status 131 (128 + SIGQUIT), instead of the Swift runtime's
/// crash backtrace followed by status 0.
enum QuitSignal {
    static func install() {
        signal(SIGQUIT) { _ in
            let message: StaticString = "\nprism: quit (SIGQUIT)\n"
            _ = write(2, message.utf8Start, message.utf8CodeUnitCount)  // async-signal-safe
            _exit(131)
        }
    }
}

