import Foundation
import PrismCore
import PrismMedia

/// Wall time spent per engine stage, summed on the thread that runs the stage.
public struct StageTimes: Sendable {
    /// The engine's stages, in the order a frame goes through them.
    public enum Stage: String, CaseIterable, Sendable {
        /// Reading and decoding, CPU→GPU upload, the graph's passes, GPU→CPU readback, encoding or writing.
        case decode, upload, filter, readback, encode
    }

    private var nanoseconds: [Stage: UInt64] = [:]
    private var counts: [Stage: Int] = [:]

    /// No time recorded for any stage.
    public init() {}

    mutating func add(_ stage: Stage, since start: UInt64) { add(stage, nanoseconds: Self.now() - start) }

    mutating func add(_ stage: Stage, nanoseconds value: UInt64, count: Int = 1) {
        nanoseconds[stage, default: 0] += value
        counts[stage, default: 0] += count
    }

    mutating func merge(_ other: StageTimes) {
        for stage in Stage.allCases {
            nanoseconds[stage, default: 0] += other.nanoseconds[stage] ?? 0
            counts[stage, default: 0] += other.counts[stage] ?? 0
        }
    }

    /// Total wall time spent in `stage`, in seconds.
    public func seconds(_ stage: Stage) -> Double { Double(nanoseconds[stage] ?? 0) / 1e9 }
    /// How many times `stage` ran (usually once per frame).
    public func count(_ stage: Stage) -> Int { counts[stage] ?? 0 }
    /// Mean milliseconds per run of `stage`; 0 when it never ran.
    public func millisecondsPerFrame(_ stage: Stage) -> Double {
        let n = count(stage)
        return n == 0 ? 0 : seconds(stage) * 1000 / Double(n)
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}

/// What a run did.
public struct RunReport: Sendable {
    /// An empty report; the engine fills it in as the run ends.
    public init() {}

    /// Frames read from the source.
    public var framesIn = 0
    /// Input time from the first frame read to the last (nil when none was read).
    public var inputSpan: MediaTime?
    /// Frames the output holds (the first output sink's count, less any a limit left out).
    public var framesOut = 0
    /// Frames a live source dropped because the pipeline was behind.
    public var framesDropped = 0
    /// Wall-clock seconds from the start of the run to its end.
    public var wallSeconds = 0.0
    /// Time spent per stage over the whole run.
    public var stages = StageTimes()
    /// How the filter stage was timed ("GPU timer queries", "fenced CPU timing", "CPU submit time").
    public var filterTiming = ""
    /// What the GPU context ran on (`GPUInfo.description`).
    public var renderer = ""
    /// The filter graph's passes, in order (labels for `--stats`).
    public var passLabels: [String] = []
    /// Median GPU milliseconds of each pass in `passLabels` (same order).
    public var passMilliseconds: [Double] = []
    /// True when the run was stopped by a signal or request (`StopReason.interrupted`).
    public var interrupted = false
    /// Why the run ended.
    public var stopReason = StopReason.endOfInput
    /// Peak pooled buffers allocated (should equal the pool's capacity or less).
    public var poolAllocated = 0
    /// Pooled buffers the output sink was given (`FrameSink.bufferCount`).
    public var poolCapacity = 0
    /// Things that happened during the run worth a line of their own (a camera switch, a recompile).
    public var notes: [String] = []
    /// A network input's reconnections and the gaps its time line closed over (nil for other inputs).
    public var network: NetworkStatistics?
    /// What the first input's decoders skipped, and where it ended early (nil: nothing).
    public var damage: DamageSummary?
    /// What was wrong with the inputs that the run went on from — damaged packets skipped, an input that
    /// could not be read to its end — one line each: worth saying even when a run is otherwise quiet.
    public var warnings: [String] = []

    /// Output frames per wall-clock second; 0 for a run that took no time.
    public var fps: Double { wallSeconds > 0 ? Double(framesOut) / wallSeconds : 0 }

    /// The `--stats` table.
    public func statsTable() -> String {
        var lines = ["stage      total s   ms/frame   frames"]
        for stage in StageTimes.Stage.allCases {
            let label = stage.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
            lines.append(String(format: "%@ %8.3f %10.3f %8d", label, stages.seconds(stage),
                                stages.millisecondsPerFrame(stage), stages.count(stage)))
        }
        if !passLabels.isEmpty {
            lines.append("filter passes (\(filterTiming)):")
            for (label, ms) in zip(passLabels, passMilliseconds) {
                lines.append(String(format: "  %8.3f ms  %@", ms, label))
            }
        }
        lines.append(String(format: "%d frames in %.2f s: %.1f fps; %d dropped; buffer pool %d/%d",
                            framesOut, wallSeconds, fps, framesDropped, poolAllocated, poolCapacity))
        return lines.joined(separator: "\n")
    }
}

/// A progress snapshot for the live status line.
public struct RunProgress: Sendable {
    /// Frames written so far.
    public var frames: Int
    /// Frames the source is expected to give, when known (for the ETA).
    public var expectedFrames: Int?
    /// Wall-clock seconds since the run started.
    public var elapsed: Double
    /// Input time of the last frame written, in seconds (nil on the final report).
    public var mediaSeconds: Double?
    /// The source's duration in seconds, when known.
    public var mediaDuration: Double?
    /// True on the last report of a run.
    public var finished = false
    /// Bytes the output holds so far, when the sink counts them.
    public var bytes: Int64?
    /// Frames a live source dropped so far.
    public var dropped = 0
    /// Set on the last report.
    public var stopReason: StopReason?
    /// A network input's reconnections and gaps so far (nil for other inputs).
    public var network: NetworkStatistics?

    /// A snapshot; `bytes`, `dropped` and `stopReason` are set afterwards where known.
    public init(frames: Int, expectedFrames: Int?, elapsed: Double, mediaSeconds: Double?, mediaDuration: Double?,
                finished: Bool = false) {
        self.frames = frames
        self.expectedFrames = expectedFrames
        self.elapsed = elapsed
        self.mediaSeconds = mediaSeconds
        self.mediaDuration = mediaDuration
        self.finished = finished
    }

    /// Frames written per wall-clock second; 0 before any time has passed.
    public var fps: Double { elapsed > 0 ? Double(frames) / elapsed : 0 }
    /// Media seconds per wall second.
    public var speed: Double? { mediaSeconds.map { elapsed > 0 ? $0 / elapsed : 0 } }

    /// One JSON object for `--progress json`: frames, fps, elapsed and media seconds, bytes, dropped
    /// frames; the last one has `"status": "finished"` and the reason the run stopped.
    public var json: String {
        struct Line: Encodable {
            var status: String
            var frames: Int
            var expected_frames: Int?
            var fps: Double
            var elapsed: Double
            var media_seconds: Double?
            var bytes: Int64?
            var dropped: Int
            var reason: String?
            var reconnects: Int?
            var gaps: Int?
            var gap_seconds: Double?
            var gap_frames: Int?
        }
        let line = Line(status: finished ? "finished" : "running", frames: frames, expected_frames: expectedFrames,
                        fps: (fps * 100).rounded() / 100, elapsed: (elapsed * 1000).rounded() / 1000,
                        media_seconds: mediaSeconds.map { ($0 * 1000).rounded() / 1000 }, bytes: bytes,
                        dropped: dropped, reason: stopReason?.rawValue, reconnects: network?.reconnects,
                        gaps: network?.gaps, gap_seconds: network.map { ($0.missingSeconds * 1000).rounded() / 1000 },
                        gap_frames: network?.missingFrames)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(line)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The human status line: elapsed time, frame count, fps, speed, size, drops, ETA and why it stopped.
    public var line: String {
        var parts = [MediaTime(value: Int64(elapsed * 1000), timescale: 1000).clockDescription,
                     "frame \(frames)" + (expectedFrames.map { "/\($0)" } ?? "")]
        parts.append(String(format: "%.1f fps", fps))
        if let speed { parts.append(String(format: "%.2fx", speed)) }
        if let bytes { parts.append(ByteCount.text(bytes)) }
        if dropped > 0 { parts.append("\(dropped) dropped") }
        if let network, network.reconnects > 0 { parts.append("\(network.reconnects) reconnect(s)") }
        if !finished, let expected = expectedFrames, frames > 0, expected > frames {
            let remaining = Double(expected - frames) / max(fps, 0.001)
            parts.append("eta " + MediaTime(value: Int64(remaining * 1000), timescale: 1000).clockDescription)
        }
        if let stopReason { parts.append("stopped: \(stopReason.rawValue)") }
        return parts.joined(separator: "  ")
    }
}

/// Byte counts as people read them and write them (`500M`, `2G`, `1.5 GB`).
package enum ByteCount {
    /// "4.1 MB".
    package static func text(_ bytes: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(bytes), unit = 0
        while value >= 1000, unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// `500M`, `2G`, `750k`, `1.5G`, `1000000` (decimal units, as disks are sold); nil when not a size,
    /// or less than one byte (`0.5` is not a limit anyone means).
    package static func parse(_ text: String) -> Int64? {
        let lowered = text.lowercased().trimmingCharacters(in: .whitespaces)
        let multipliers: [(String, Double)] = [("tb", 1e12), ("gb", 1e9), ("mb", 1e6), ("kb", 1e3),
                                               ("t", 1e12), ("g", 1e9), ("m", 1e6), ("k", 1e3), ("b", 1)]
        var number = Substring(lowered), multiplier = 1.0
        for (suffix, value) in multipliers where lowered.hasSuffix(suffix) {
            number = lowered.dropLast(suffix.count)
            multiplier = value
            break
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value > 0,
              value * multiplier < 1e18, value * multiplier >= 1 else { return nil }
        return Int64((value * multiplier).rounded())
    }
}
