import Foundation
import PrismCore
import PrismPipeline
import PrismGPU
import Synchronization

/// Runs a list of jobs on a set of workers. Jobs wait in one shared queue and each worker takes the next
/// when it is free, so long and short clips balance by themselves. A failing job is recorded and the
/// others go on; a stop (Ctrl-C, SIGTERM from `scancel`) ends the jobs in flight without outputs and
/// leaves the queue for the next run.
final class BatchRun: Sendable {
    struct Summary: Sendable {
        var succeeded: [BatchResult] = []
        var failed: [BatchResult] = []
        /// Jobs left in the queue or in flight when a stop came.
        var unfinished = 0
        var interrupted = false
        var wallSeconds = 0.0
        var frames: Int { succeeded.reduce(0) { $0 + $1.frames } }
    }

    private let jobs: [BatchJob]
    private let results: BatchResultsFile
    private let progress: BatchProgress
    private let shard: Shard?
    private let next = Mutex(0)
    private let summary = Mutex(Summary())

    init(jobs: [BatchJob], results: BatchResultsFile, progress: BatchProgress, shard: Shard?) {
        self.jobs = jobs
        self.results = results
        self.progress = progress
        self.shard = shard
    }

    private func take() -> BatchJob? {
        next.withLock { index in
            guard index < jobs.count else { return nil }
            defer { index += 1 }
            return jobs[index]
        }
    }

    /// Runs every job on `workers` (one thread each) and returns when all are done or `stop` ended them.
    func run(workers: [BatchWorker], stop: StopSignal) -> Summary {
        let started = Date()
        let group = DispatchGroup()
        for (slot, worker) in workers.enumerated() {
            group.enter()
            Thread.detachNewThread { [self] in
                defer { group.leave() }
                work(worker, slot: slot, stop: stop)
            }
        }
        // The bar is redrawn from here; workers only change the state it draws.
        while group.wait(timeout: .now() + 0.25) == .timedOut { progress.tick() }
        progress.tick()
        return summary.withLock { summary in
            summary.wallSeconds = Date().timeIntervalSince(started)
            summary.interrupted = stop.isStopped
            summary.unfinished = jobs.count - summary.succeeded.count - summary.failed.count
            return summary
        }
    }

    private func work(_ worker: BatchWorker, slot: Int, stop: StopSignal) {
        while !stop.isStopped, let job = take() {
            progress.started(job, worker: slot)
            let started = Date()
            var result = BatchResult(job: job.id, status: .ok, frames: 0, fps: 0, seconds: 0, error: nil, input: job.input,
                                     output: job.output, fingerprint: job.fingerprint, started: started.timeIntervalSince1970,
                                     finished: 0, host: BatchTemporaries.host, shard: shard?.description, worker: worker.label)
            do {
                let outcome = try worker.execute(job, stop: stop) { [progress] frames, expected in
                    progress.advanced(worker: slot, frames: frames, expected: expected)
                }
                switch outcome {
                case .interrupted:
                    progress.abandoned(job, worker: slot)
                    return
                case .finished(let report):
                    result.frames = report.framesOut
                    result.fps = (report.fps * 10).rounded() / 10
                }
            } catch where stop.isStopped {
                // Stopped at the start or in the middle (an engine stopped before its first frame has nothing
                // to write and says so): not a failure of the job, which the next run does.
                progress.abandoned(job, worker: slot)
                return
            } catch {
                result.status = .failed
                result.error = "\(error)".replacingOccurrences(of: "\n", with: " ")
            }
            let finished = Date()
            result.finished = finished.timeIntervalSince1970
            result.seconds = (finished.timeIntervalSince(started) * 1000).rounded() / 1000
            do {
                try results.append(result)
            } catch {
                // The work is done but not recorded: say so; a rerun does it again.
                result.status = .failed
                result.error = "finished, but the result could not be recorded: \(error)"
            }
            summary.withLock { summary in
                if result.status == .ok { summary.succeeded.append(result) } else { summary.failed.append(result) }
            }
            progress.finished(result, worker: slot)
        }
    }
}
