import Foundation
import PrismCore
import Synchronization

/// How a batch shows its progress.
enum BatchProgressStyle: String, Sendable, CaseIterable {
    /// A bar for the whole batch and a line per worker, redrawn in place on stderr (a terminal).
    case bar
    /// One line on stderr per finished job (not a terminal: logs, Slurm's output files).
    case lines
    /// JSON Lines events on stdout, for programs: `batch`, `start`, `progress`, `done`, `end`.
    case json
    /// Failures and the summary only.
    case quiet
}

/// One JSON event (`--progress json`); absent fields are left out.
struct BatchEvent: Encodable {
    var event: String
    var job: String?
    var worker: String?
    var frames: Int?
    var expected: Int?
    var status: String?
    var fps: Double?
    var seconds: Double?
    var error: String?
    var output: String?
    var jobs: Int?
    var skipped: Int?
    var ok: Int?
    var failed: Int?
    var workers: [String]?
    var shard: String?
    var results: String?
    var interrupted: Bool?
}

/// The batch's live state and its display. Workers report into it from their threads; the bar is redrawn
/// by `tick()` from the thread waiting for them.
final class BatchProgress: Sendable {
    private struct WorkerState {
        var label: String
        var job: String?
        var frames = 0
        var expected: Int?
    }

    private struct State {
        var workers: [WorkerState]
        var jobs = 0
        var done = 0
        var failed = 0
        var frames = 0
        var started = Date()
        /// Lines of the bar now on the screen (to move back over them).
        var drawn = 0
    }

    let style: BatchProgressStyle
    private let state: Mutex<State>

    init(style: BatchProgressStyle, workers: [String]) {
        self.style = style
        state = Mutex(State(workers: workers.map { WorkerState(label: $0) }))
    }

    /// The first event: what is about to run.
    func begin(jobs: Int, skipped: Int, shard: Shard?, results: String, summary: String) {
        let labels = state.withLock { state in
            state.jobs = jobs
            state.started = Date()
            return state.workers.map(\.label)
        }
        switch style {
        case .json:
            emit(BatchEvent(event: "batch", jobs: jobs, skipped: skipped, workers: labels, shard: shard?.description, results: results))
        case .bar, .lines:
            let shardText = shard.map { ", shard \($0)" } ?? ""
            let skippedText = skipped > 0 ? " (\(skipped) already done, skipped)" : ""
            Self.write("prism: batch: \(jobs) job(s) to run\(skippedText)\(shardText); \(summary); results → \(Self.shown(results))\n")
        case .quiet:
            break
        }
    }

    func started(_ job: BatchJob, worker: Int) {
        let label = state.withLock { state in
            state.workers[worker].job = job.id
            state.workers[worker].frames = 0
            state.workers[worker].expected = job.settings.frames
            return state.workers[worker].label
        }
        if style == .json { emit(BatchEvent(event: "start", job: job.id, worker: label, output: job.output)) }
    }

    func advanced(worker: Int, frames: Int, expected: Int?) {
        let (label, job) = state.withLock { state in
            state.workers[worker].frames = frames
            if let expected { state.workers[worker].expected = expected }
            return (state.workers[worker].label, state.workers[worker].job)
        }
        if style == .json { emit(BatchEvent(event: "progress", job: job, worker: label, frames: frames, expected: expected)) }
    }

    /// A job stopped by an interrupt: not finished, not recorded.
    func abandoned(_ job: BatchJob, worker: Int) {
        state.withLock { $0.workers[worker].job = nil }
    }

    func finished(_ result: BatchResult, worker: Int) {
        state.withLock { state in
            state.workers[worker].job = nil
            state.done += 1
            if result.status == .failed { state.failed += 1 } else { state.frames += result.frames }
        }
        if style == .json {
            emit(BatchEvent(event: "done", job: result.job, worker: result.worker, frames: result.frames, status: result.status.rawValue,
                            fps: result.fps, seconds: result.seconds, error: result.error, output: result.output))
        }
        // Failures always get their line (on stderr, above the bar).
        if result.status == .failed {
            printAboveBar("prism: job \(Self.shown(result.job)) failed: \(Self.shown(result.error ?? "unknown error"))\n")
        } else if style == .lines {
            let count = state.withLock { "\($0.done)/\($0.jobs)" }
            Self.write(String(format: "prism: [%@] %@: %d frames, %.1f fps, %.2f s → %@\n", count, Self.shown(result.job), result.frames,
                              result.fps, result.seconds, Self.shown(result.output)))
        }
    }

    func end(_ summary: BatchRun.Summary, skipped: Int) {
        tick()
        clearBar()
        if style == .json {
            let fps = summary.wallSeconds > 0 ? Double(summary.frames) / summary.wallSeconds : 0
            emit(BatchEvent(event: "end", frames: summary.frames, fps: (fps * 10).rounded() / 10,
                            seconds: (summary.wallSeconds * 1000).rounded() / 1000, skipped: skipped, ok: summary.succeeded.count, failed: summary.failed.count,
                            interrupted: summary.interrupted))
        }
    }

    /// Redraws the bar (terminal style only).
    func tick() {
        guard style == .bar else { return }
        state.withLock { state in
            var lines: [String] = []
            let width = 24
            // Jobs done, plus the part of each job in flight whose length is known.
            let partial = state.workers.reduce(0.0) { sum, worker in
                guard worker.job != nil, let expected = worker.expected, expected > 0 else { return sum }
                return sum + min(1, Double(worker.frames) / Double(expected))
            }
            let fraction = state.jobs == 0 ? 1 : min(1, (Double(state.done) + partial) / Double(state.jobs))
            let filled = Int((fraction * Double(width)).rounded(.down))
            let inFlight = state.workers.reduce(0) { $0 + ($1.job == nil ? 0 : $1.frames) }
            let elapsed = Date().timeIntervalSince(state.started)
            let fps = elapsed > 0 ? Double(state.frames + inFlight) / elapsed : 0
            var head = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
                + "\(state.done)/\(state.jobs) jobs"
            if state.failed > 0 { head += ", \(state.failed) failed" }
            head += String(format: ", %d frames, %.1f fps", state.frames + inFlight, fps)
            if fraction > 0.02, fraction < 1 {
                let remaining = Int((elapsed * (1 - fraction) / fraction).rounded())
                head += String(format: ", eta %d:%02d", remaining / 60, remaining % 60)
            }
            lines.append(head)
            for worker in state.workers {
                guard let job = worker.job else { lines.append("  \(worker.label): idle"); continue }
                lines.append("  \(worker.label): \(Self.shown(job))  frame \(worker.frames)" + (worker.expected.map { "/\($0)" } ?? ""))
            }
            var text = state.drawn > 0 ? "\u{1B}[\(state.drawn)A" : ""
            for line in lines { text += "\r\u{1B}[K" + line + "\n" }
            state.drawn = lines.count
            Self.write(text)
        }
    }

    private func clearBar() {
        guard style == .bar else { return }
        state.withLock { state in
            if state.drawn > 0 { Self.write("\u{1B}[\(state.drawn)A\r\u{1B}[J") }
            state.drawn = 0
        }
    }

    private func printAboveBar(_ line: String) {
        state.withLock { state in
            if style == .bar, state.drawn > 0 {
                Self.write("\u{1B}[\(state.drawn)A\r\u{1B}[J")
                state.drawn = 0
            }
            Self.write(line)
        }
    }

    private func emit(_ event: BatchEvent) {
        guard let data = try? JSONLines.line(event) else { return }
        // One write per event, so lines from several workers never interleave.
        state.withLock { _ in Self.write(data, to: .standardOutput) }
    }

    /// Text from a manifest (ids, paths) or an error, as one line that cannot drive the terminal: a
    /// manifest's `"id": "\u001b[31m…"` or an OSC sequence in a file name is shown escaped.
    static func shown(_ text: String) -> String { PrismCommandLine.terminalSafe(text, keepingNewlines: false) }

    private static func write(_ text: String) {
        write(Data(text.utf8), to: .standardError)
    }

    /// A reader that went away (`| head`, a closed terminal) loses the display, not the batch: the jobs,
    /// their outputs and the results file go on. (FileHandle's non-throwing `write` would trap on EPIPE.)
    static func write(_ data: Data, to handle: FileHandle) {
        try? handle.write(contentsOf: data)
    }
}
