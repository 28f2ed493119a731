import Foundation
import PrismPipeline
import Synchronization

/// Ctrl-C and SIGTERM (what `scancel` and a Slurm time limit send first) stop a batch: the jobs in flight
/// end without outputs, finished jobs stay recorded, and the exit status says so. A second signal exits
/// at once.
final class BatchSignals: Sendable {
    private let sources: Mutex<[DispatchSourceSignal]>

    init(stop: StopSignal) {
        signal(SIGPIPE, SIG_IGN)
        let count = Mutex(0)
        var made: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let seen = count.withLock { count -> Int in count += 1; return count }
                if seen > 1 {
                    BatchProgress.write(Data("\nprism: interrupted twice, exiting now\n".utf8), to: .standardError)
                    exit(BatchCommand.interruptedStatus)
                }
                BatchProgress.write(Data("\nprism: stopping: jobs in flight are dropped, finished ones are kept\n".utf8), to: .standardError)
                stop.stop()
            }
            source.resume()
            made.append(source)
        }
        sources = Mutex(made)
    }

    func restore() {
        sources.withLock { sources in
            for source in sources { source.cancel() }
            sources.removeAll()
        }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
