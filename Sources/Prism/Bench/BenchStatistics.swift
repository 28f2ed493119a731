import Foundation

/// One stage's figure: the median of N samples (milliseconds per frame) and its spread.
struct BenchFigure: Codable, Sendable, Equatable {
    /// Median milliseconds per frame.
    var medianMs: Double
    /// 10th and 90th percentiles (nearest rank), milliseconds per frame.
    var p10Ms: Double
    var p90Ms: Double
    /// Median absolute deviation from the median, milliseconds.
    var madMs: Double
    /// Samples the figure is made of (after warm-up).
    var samples: Int
    /// Frames per second at the median cost.
    var fps: Double

    /// Summarises per-frame samples in milliseconds. Nil when there are none.
    init?(milliseconds values: [Double]) {
        let clean = values.filter { $0.isFinite && $0 >= 0 }
        guard !clean.isEmpty else { return nil }
        let sorted = clean.sorted()
        func rank(_ p: Double) -> Double {
            let index = Int((p * Double(sorted.count - 1)).rounded())
            return sorted[min(max(index, 0), sorted.count - 1)]
        }
        let median = Self.median(sorted)
        medianMs = median
        p10Ms = rank(0.10)
        p90Ms = rank(0.90)
        madMs = Self.median(sorted.map { abs($0 - median) }.sorted())
        samples = sorted.count
        fps = median > 0 ? 1000 / median : 0
    }

    /// The median of sorted, non-empty values.
    static func median(_ sorted: [Double]) -> Double {
        let n = sorted.count
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }

    /// Positive and finite in every field that carries a cost.
    var isPlausible: Bool {
        [medianMs, p10Ms, p90Ms, fps].allSatisfy { $0.isFinite && $0 > 0 } && madMs.isFinite && madMs >= 0 && samples > 0
    }
}

/// Monotonic nanoseconds.
@inline(__always) func benchNow() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Milliseconds since `start`.
@inline(__always) func benchMilliseconds(since start: UInt64) -> Double { Double(benchNow() &- start) / 1e6 }
