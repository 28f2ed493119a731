import Foundation
import PrismCore
import PrismGPU
import PrismMedia

/// The end of a run, once its threads have ended: the sinks are finished (or aborted, on a failure) and
/// the report gathered from the source thread's counts, the GPU thread's times, the sinks and the inputs'
/// damage, with the last progress report.
struct RunReportBuilder {
    let gpu: GPUContext
    let stage: GPUBound<FramePath>
    let source: ThreadOwned<MediaSource>
    let registry: OutletRegistry
    /// The output whose frames the progress reports count.
    let progressOutlet: SinkOutlet?
    /// The run's notes so far; the sinks' and the inputs' are added here.
    let notes: Locked<[String]>
    /// What every input's decoders skipped, the first input's first.
    let inputDamage: () -> [DamageSummary]
    let networkCounters: NetworkCounters?
    /// When the run started (`StageTimes.now`).
    let started: UInt64

    /// Finishes every sink, or on `failure` aborts them (a live recording keeps what it recorded and the
    /// error says where); returns the time finishing took.
    func finishOutputs(after failure: FirstError) throws -> StageTimes {
        if let error = failure.error {
            var kept: [String] = []
            for outlet in registry.all { if let path = try? outlet.close(failed: true) { kept.append(path) } }
            throw kept.isEmpty ? error : RecordingKeptError(underlying: error, kept: kept)
        }
        var finishTimes = StageTimes()
        let t0 = StageTimes.now()
        do {
            for outlet in registry.all { try outlet.close(failed: false) }
        } catch {
            // An output that cannot be finished (no frame came) says what the input's damage cost it.
            let damage = inputDamage().flatMap(\.lines)
            throw damage.isEmpty ? error : DamagedInputError(underlying: error, damage: damage)
        }
        finishTimes.add(.encode, nanoseconds: StageTimes.now() - t0, count: 0)
        return finishTimes
    }

    /// The report of a run whose sinks are finished.
    func report(source counts: SourceStage.Counts, framesDropped: Int, finishTimes: StageTimes, stop: StopSignal,
                poolAllocated: Int) throws -> RunReport {
        var report = RunReport()
        report.renderer = gpu.info.description
        report.framesIn = counts.framesRead
        report.inputSpan = counts.inputSpan
        // What the output holds: a size limit may have left out the frames the encoder still held.
        report.framesOut = progressOutlet.map { $0.sink.value.framesInOutput ?? $0.framesWritten } ?? 0
        report.framesDropped = framesDropped
        addNotes(to: &report)
        report.wallSeconds = Double(StageTimes.now() - started) / 1e9
        report.stages.merge(counts.times)
        let stage = self.stage
        let gpuFigures = try gpu.perform { () -> (times: StageTimes, passes: [String], timing: String, medians: [Double]) in
            let stage = stage.value
            return (stage.times, stage.renderer?.passLabels ?? [],
                    stage.timer?.method.rawValue ?? "CPU submit time", stage.timer?.medianMilliseconds() ?? [])
        }
        report.stages.merge(gpuFigures.times)
        var encode = finishTimes
        if let progressOutlet {
            encode.add(.encode, nanoseconds: progressOutlet.busyNanoseconds, count: progressOutlet.framesWritten)
        }
        report.stages.merge(encode)
        report.interrupted = stop.stopReason == .interrupted
        report.stopReason = stop.stopReason ?? counts.limitReached ?? .endOfInput
        // A limit met only while the encoder was flushed at the end: the output stopped there, not at the input's end.
        if let outlet = progressOutlet, let kept = outlet.sink.value.framesInOutput, kept < outlet.framesWritten,
           [.endOfInput, .frameLimit, .durationLimit].contains(report.stopReason) {
            report.stopReason = outlet.sink.value.stopReason
        }
        report.poolAllocated = poolAllocated
        report.poolCapacity = progressOutlet?.bufferCount ?? 0
        report.passLabels = gpuFigures.passes
        report.filterTiming = gpuFigures.timing
        report.passMilliseconds = gpuFigures.medians
        return report
    }

    /// The sinks' notes, the inputs' damage and a network input's or a camera's losses.
    private func addNotes(to report: inout RunReport) {
        // Per output: what a sink says of itself (a stream that fell behind, was lost; a virtual camera's drops).
        for outlet in registry.all {
            let lines = outlet.notes
            notes.withLock { $0 += lines }
        }
        // Damaged packets skipped and counted (FFmpeg's default), and where a truncated input ended.
        report.damage = source.value.decodeDamage?.summary
        if report.damage?.isEmpty == true { report.damage = nil }
        report.warnings = inputDamage().flatMap(\.lines)
        report.network = networkCounters?.statistics
        if let network = report.network, network.reconnects > 0 || network.gaps > 0, let source = source.value as? NetworkSource {
            notes.withLock { $0.append("\(source.label): \(network.summary)") }
        }
        if let camera = source.value as? CameraSource, camera.framesDroppedByDevice > 0 {
            notes.withLock { $0.append("the camera dropped \(camera.framesDroppedByDevice) frame(s) while every buffer was in use") }
        }
        report.notes = notes.withLock { $0 }
    }

    /// The last progress report: the run finished, with the report's figures.
    func lastProgress(of report: RunReport, expectedFrames: Int?) -> RunProgress {
        var last = RunProgress(frames: report.framesOut, expectedFrames: expectedFrames, elapsed: report.wallSeconds,
                               mediaSeconds: nil, mediaDuration: nil, finished: true)
        last.bytes = progressOutlet?.sink.value.bytesWritten
        last.dropped = report.framesDropped
        last.network = report.network
        last.stopReason = report.stopReason
        return last
    }
}
