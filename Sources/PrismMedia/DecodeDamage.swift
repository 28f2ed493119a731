import PrismCore
import Synchronization

/// What an input's decoders passed over, as FFmpeg's command line does by default ("Error while decoding
/// stream #0:1", and on): a packet a decoder rejects is skipped and counted while the picture and sound
/// around it go on, and a read that fails once the input has begun ends it there, keeping what decoded (the
/// tail of a truncated file). `strict` (`--strict-decode`) makes either fail the run instead.
///
/// One per input, shared by every decoder of its streams — the source's video decoder, each output's audio
/// transcoder, the analysis decoder — so a packet that two outputs both decode is counted once. The engine
/// reads `summary` for the run's report. Thread-safe.
package final class DecodeDamage: Sendable {
    /// Fail at the first damaged packet or early end instead of going on.
    package let strict: Bool
    /// The input, as messages name it.
    package let input: String
    private let state = Mutex(State())

    private struct State {
        var streams: [Int: DamageSummary.StreamSkips] = [:]
        /// (stream, pts) of packets already counted.
        var counted: Set<[Int64]> = []
        var concealed = 0
        var endedEarly: DamageSummary.EarlyEnd?
    }

    package init(input: String, strict: Bool = false) {
        self.input = input
        self.strict = strict
    }

    /// A packet of `stream` the decoder rejected with `error` (at `time` on the stream's time line, when
    /// known): counted, once per packet however many decoders met it; thrown under `strict`. `near`: the
    /// time is the last packet sent, not the damaged one's (a frame-threaded decoder's late error).
    package func skip(_ error: AVError, stream: StreamName, at time: MediaTime?, near: Bool = false) throws(AVError) {
        // Memory running out is not damage in the input.
        if error.code == averrorENOMEM { throw error }
        if strict { throw strictError(error, stream: stream, at: time) }
        state.withLock { state in
            if let time, !near {
                let key = [Int64(stream.index), time.value, Int64(time.timescale)]
                guard state.counted.insert(key).inserted else { return }
            }
            var skips = state.streams[stream.index] ?? DamageSummary.StreamSkips(stream: stream, reason: error.message)
            skips.count += 1
            if let time {
                skips.first = skips.first.map { min($0, time) } ?? time
                skips.last = skips.last.map { max($0, time) } ?? time
            }
            state.streams[stream.index] = skips
        }
    }

    /// A frame the decoder returned but flagged as damaged (concealed: `AV_FRAME_FLAG_CORRUPT`,
    /// `decode_error_flags`): kept, and counted.
    package func concealed() {
        state.withLock { $0.concealed += 1 }
    }

    /// The input could not be read on after `time` (the last packet read) because of `error`: it ends
    /// there, what decoded is kept; thrown under `strict`.
    package func endEarly(_ error: AVError, after time: MediaTime?, duration: MediaTime?) throws(AVError) {
        if strict {
            throw AVError("the input ends early\(time.map { " after " + Self.seconds($0) } ?? ""): \(error.message)"
                          + " (\(error.call)); \(Setting.strictDecode)", context: input)
        }
        state.withLock { $0.endedEarly = DamageSummary.EarlyEnd(after: time, duration: duration, reason: error.message) }
    }

    /// Everything skipped so far.
    package var summary: DamageSummary {
        state.withLock { state in
            DamageSummary(input: input, streams: state.streams.values.sorted { $0.stream.index < $1.stream.index },
                          concealedFrames: state.concealed, endedEarly: state.endedEarly)
        }
    }

    private func strictError(_ error: AVError, stream: StreamName, at time: MediaTime?) -> AVError {
        AVError("\(stream)\(time.map { " at " + Self.seconds($0) } ?? ""): \(error.message)"
                + (error.call.isEmpty ? "" : " (\(error.call))") + "; \(Setting.strictDecode)", context: input)
    }

    static func seconds(_ time: MediaTime) -> String { String(format: "%.2f s", time.seconds) }
}

/// A stream as damage reports name it: "audio stream 1 (ac3)".
package struct StreamName: Sendable, Hashable, CustomStringConvertible {
    package let index: Int
    package let kind: String
    package let codec: String
    package var description: String { "\(kind) stream \(index) (\(codec))" }
}

/// What a run's input lost to damage (`DecodeDamage`), for its report: packets skipped per stream, frames
/// the decoder concealed, where a truncated input ended.
public struct DamageSummary: Sendable {
    /// Packets of one stream that were skipped.
    public struct StreamSkips: Sendable {
        package let stream: StreamName
        /// The first skip's reason (FFmpeg's message).
        public let reason: String
        public var count = 0
        /// The earliest and latest skipped packet's time on the stream's time line, when known.
        public var first: MediaTime?, last: MediaTime?
    }

    /// Where an input that could not be read to its end stopped.
    public struct EarlyEnd: Sendable {
        /// The last packet read, on the input's time line (nil: none was).
        public let after: MediaTime?
        /// What the input says its length is, when it does.
        public let duration: MediaTime?
        /// Why it could not be read on (FFmpeg's message).
        public let reason: String
    }

    /// The input, as messages name it.
    public let input: String
    public let streams: [StreamSkips]
    /// Frames decoded with damage the decoder concealed (kept).
    public let concealedFrames: Int
    public let endedEarly: EarlyEnd?

    /// Packets skipped, all streams together.
    public var skippedPackets: Int { streams.reduce(0) { $0 + $1.count } }
    /// Video packets skipped: frames the input has that the run could not show.
    public var skippedVideoPackets: Int { streams.filter { $0.stream.kind == "video" }.reduce(0) { $0 + $1.count } }
    /// Nothing was skipped, concealed or cut short.
    public var isEmpty: Bool { skippedPackets == 0 && concealedFrames == 0 && endedEarly == nil }

    /// The report's lines: "in.avi: 1 damaged packet skipped in audio stream 1 (ac3) at 0.00 s (cannot decode
    /// audio: Invalid data found when processing input); --strict-decode fails instead", frames concealed, and
    /// where a truncated input ended.
    public var lines: [String] {
        var lines: [String] = []
        if skippedPackets > 0 {
            let parts = streams.map { skips -> String in
                var place = "in \(skips.stream)"
                if let first = skips.first, let last = skips.last {
                    place += first == last ? " at " + DecodeDamage.seconds(first)
                        : " from " + DecodeDamage.seconds(first) + " to " + DecodeDamage.seconds(last)
                }
                return (streams.count > 1 ? "\(skips.count) " : "") + place + " (\(skips.reason))"
            }
            let count = skippedPackets
            lines.append("\(input): \(count) damaged packet\(count == 1 ? "" : "s") skipped"
                         + (streams.count > 1 ? ": " : " ") + parts.joined(separator: "; ") + "; \(Setting.strictDecode) fails instead")
        }
        if concealedFrames > 0 {
            lines.append("\(input): \(concealedFrames) frame(s) decoded with damage the decoder concealed")
        }
        if let end = endedEarly {
            var line = "\(input): the input ends early"
            if let after = end.after { line += ", after " + DecodeDamage.seconds(after) }
            if let duration = end.duration { line += " of the " + DecodeDamage.seconds(duration) + " it announces" }
            line += " (\(end.reason)); what decoded before it is kept"
            lines.append(line)
        }
        return lines
    }
}
