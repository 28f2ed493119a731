import Foundation
import PrismMedia
import PrismPipeline

/// The tool's signal policies, each over the one signal path (`SignalStop`).
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

