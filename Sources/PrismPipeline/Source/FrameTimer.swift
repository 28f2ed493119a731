import PrismCore
import PrismMedia

/// A frame on its way to the GPU with the time it will have in the output.
public struct TimedFrame: Sendable {
    /// The decoded frame.
    package let frame: VideoFrame
    /// The frame's time in the output, on the source's time line (at a constant rate, the converted time).
    public let pts: MediaTime
    /// How long the frame shows (one step at a constant rate), when known.
    public let duration: MediaTime?
    /// The sound ending at `pts`, for audio-reactive filters (set by the engine when its graph needs it).
    package var audio: AudioWindow? = nil
}

/// A constant rate a timer cannot step by (a zero or negative term, e.g. a rate that rounded to 0/1000).
public struct FrameRateError: PrismError {
    /// The rate that was refused.
    public let rate: Rational
    public var description: String { "frame rate \(rate.num)/\(rate.den) is not a positive rate" }
}

/// Applies a frame limit, a duration limit and a constant-rate conversion (dropping or repeating frames
/// onto the rate, each output frame showing the latest input frame at or before its time).
struct FrameTimer {
    let frameLimit: Int?
    let durationLimit: MediaTime?
    let rate: Rational?
    private(set) var emitted = 0
    private(set) var isDone = false
    /// Which limit ended the frames.
    private(set) var limitReached: StopReason?
    private var first: MediaTime?
    private var pending: VideoFrame?
    private var nextIndex: Int64 = 0

    /// One output frame's duration at `rate`; checked, since a MediaTime needs a positive timescale.
    private let step: MediaTime?

    init(frameLimit: Int?, durationLimit: MediaTime?, rate: Rational?) throws(FrameRateError) {
        self.frameLimit = frameLimit
        self.durationLimit = durationLimit
        self.rate = rate
        step = try rate.map { rate throws(FrameRateError) in try Self.step(at: rate) }
    }

    /// The duration of one frame at `rate`; throws for a rate that is not positive.
    static func step(at rate: Rational) throws(FrameRateError) -> MediaTime {
        guard rate.num > 0, rate.den > 0 else { throw FrameRateError(rate: rate) }
        return MediaTime(value: Int64(rate.den), timescale: rate.num)
    }

    /// Output time of converted frame `index` (`rate` was checked by `init`).
    private func outputTime(_ index: Int64, rate: Rational) -> MediaTime {
        first! + MediaTime(value: index * Int64(rate.den), timescale: rate.num)
    }

    private mutating func emit(_ frame: VideoFrame, pts: MediaTime, duration: MediaTime?) -> TimedFrame? {
        if let limit = frameLimit, emitted >= limit { return done(.frameLimit) }
        if let limit = durationLimit, let first, pts - first >= limit { return done(.durationLimit) }
        emitted += 1
        return TimedFrame(frame: frame, pts: pts, duration: duration)
    }

    private mutating func done(_ reason: StopReason) -> TimedFrame? {
        isDone = true
        limitReached = reason
        return nil
    }

    /// The frames to send on for a new input frame.
    mutating func admit(_ frame: VideoFrame) -> [TimedFrame] {
        if first == nil { first = frame.pts }
        guard let rate else { return emit(frame, pts: frame.pts, duration: frame.duration).map { [$0] } ?? [] }
        var out: [TimedFrame] = []
        if let held = pending, let step {
            while outputTime(nextIndex, rate: rate) < frame.pts, !isDone {
                if let timed = emit(held, pts: outputTime(nextIndex, rate: rate), duration: step) { out.append(timed) }
                nextIndex += 1
            }
        }
        pending = frame
        return out
    }

    /// At the end of the input: the held frame for the output times its display covers.
    mutating func finish() -> [TimedFrame] {
        guard let rate, let step, let held = pending, !isDone else { return [] }
        let end = held.pts + (held.duration ?? step)
        var out: [TimedFrame] = []
        // Every output time the last frame covers (at least one output frame for a one-frame input).
        while !isDone && (outputTime(nextIndex, rate: rate) < end || emitted == 0) {
            if let timed = emit(held, pts: outputTime(nextIndex, rate: rate), duration: step) { out.append(timed) }
            nextIndex += 1
        }
        return out
    }
}
