import Foundation
import PrismCore
import PrismKit

/// The memory row: whether a run's resident memory stays flat.
extension BenchRunner {
    /// A longer run of the real pipeline (pattern in, raw out discarded) while RSS is sampled.
    func soak() throws -> BenchMemory {
        let size = options.sizes.first ?? Size(width: 640, height: 480)
        var runOptions = RunOptions()
        runOptions.input = .pattern
        runOptions.session.size = size
        runOptions.session.frameLimit = options.soakFrames
        runOptions.output = .discard(.yuv420p)
        runOptions.filter = options.filter
        runOptions.quiet = true
        let job = try RunJob(options: runOptions, graph: try PrismGraphs.binder().bind(options.filter), gpu: context)
        let sampler = BenchRSSSampler()
        let report = try job.run()
        let samples = sampler.stop()
        return BenchMemory.judge(samples: samples, size: BenchOptions.sizeName(size), frames: report.framesOut,
                                 seconds: report.wallSeconds)
    }
}
