import PrismCore
import Synchronization

/// The most recent sound of a run, per channel, for audio-reactive filters: written by whoever decodes
/// (the source thread for a movie's track, the capture thread for a microphone), read on the GPU
/// thread as `AudioWindow`s. Sample n sits at `origin + n / sampleRate` on the input's time line, where
/// `origin` is the first block's time (later blocks are counted on from it, as the recorder counts
/// samples). What the ring does not hold (before the first sample, overwritten, or not yet arrived)
/// reads as silence.
package final class AudioRing: Sendable {
    package let sampleRate: Int
    package let channels: Int
    /// Samples kept per channel (a power of two, at least two windows).
    package let capacity: Int

    private struct State {
        var buffers: [[Float]]
        /// Samples appended since the start.
        var written: Int64 = 0
        var origin: MediaTime?
        var ended = false
    }
    private let state: Mutex<State>

    package init(sampleRate: Int, channels: Int, capacity: Int = 1 << 15) {
        precondition(sampleRate > 0 && channels >= 1)
        self.sampleRate = sampleRate
        self.channels = channels
        var size = max(2 * AudioWindow.sampleCount, 1)
        while size < capacity { size *= 2 }
        self.capacity = size
        state = Mutex(State(buffers: Array(repeating: Array(repeating: 0, count: size), count: channels)))
    }

    /// Appends one block: `planes[c]` is channel c (missing channels repeat the first). `time`: the
    /// block's first sample on the input's time line. Blocks are counted on from the first one's time; a
    /// block more than a window away from where the count puts it (a gap in the track, a loop's next
    /// pass) is placed at its own time: a gap reads as silence, an earlier time re-anchors the count.
    package func append(_ planes: [[Float]], at time: MediaTime?) {
        guard let count = planes.first?.count, count > 0 else { return }
        let capacity = self.capacity, channels = self.channels, rate = Int32(sampleRate)
        state.withLock { state in
            if state.origin == nil { state.origin = time ?? .zero }
            if let time, let origin = state.origin {
                let placed = (time - origin).ticks(in: Rational(1, rate))
                if placed > state.written + Int64(AudioWindow.sampleCount) {
                    // A gap: silence up to the block (the ring holds at most `capacity` of it).
                    let gap = placed - state.written
                    for skipped in max(0, gap - Int64(capacity))..<gap {
                        let at = Int((state.written + skipped) & Int64(capacity - 1))
                        for c in 0..<channels { state.buffers[c][at] = 0 }
                    }
                    state.written = placed
                } else if placed < state.written - Int64(AudioWindow.sampleCount) {
                    state.origin = time - MediaTime(value: state.written, timescale: rate)
                }
            }
            var at = Int(state.written % Int64(capacity))
            for i in 0..<count {
                for c in 0..<channels { state.buffers[c][at] = planes[c < planes.count ? c : 0][i] }
                at = (at + 1) & (capacity - 1)
            }
            state.written += Int64(count)
        }
    }

    /// Appends interleaved S16 samples (a microphone's period).
    package func append(interleaved samples: [Int16], channels inputChannels: Int, at time: MediaTime?) {
        let frames = samples.count / max(1, inputChannels)
        var planes = [[Float]](repeating: [Float](repeating: 0, count: frames), count: inputChannels)
        for i in 0..<frames {
            for c in 0..<inputChannels { planes[c][i] = Float(samples[i * inputChannels + c]) / 32768 }
        }
        append(planes, at: time)
    }

    /// No more sound will come (the track ended): windows past the end are silence, and nobody waits.
    package func end() { state.withLock { $0.ended = true } }

    /// True when the ring holds the sound up to `time` (exclusive), or the sound has ended.
    package func covers(_ time: MediaTime) -> Bool {
        let rate = Int32(sampleRate)
        return state.withLock { state in
            guard !state.ended else { return true }
            guard let origin = state.origin else { return false }
            return (time - origin).ticks(in: Rational(1, rate)) <= state.written
        }
    }

    /// The `AudioWindow.sampleCount` samples that end at `time` on the input's time line.
    package func window(endingAt time: MediaTime) -> AudioWindow {
        let rate = Int32(sampleRate)
        return window { state in
            guard let origin = state.origin else { return nil }
            return (time - origin).ticks(in: Rational(1, rate))
        }
    }

    /// The newest `AudioWindow.sampleCount` samples that have arrived (a live run never waits for sound).
    package func latestWindow() -> AudioWindow {
        window { $0.written }
    }

    private func window(end: (State) -> Int64?) -> AudioWindow {
        let count = AudioWindow.sampleCount, capacity = self.capacity
        let samples = state.withLock { state -> [[Float]] in
            var rows = [[Float]](repeating: [Float](repeating: 0, count: count), count: channels)
            guard let last = end(state) else { return rows }
            let oldest = max(0, state.written - Int64(capacity))
            for i in 0..<count {
                let n = last - Int64(count) + Int64(i)
                guard n >= oldest, n < state.written else { continue }
                let at = Int(n & Int64(capacity - 1))
                for c in 0..<channels { rows[c][i] = state.buffers[c][at] }
            }
            return rows
        }
        return AudioWindow(sampleRate: sampleRate, samples: samples)
    }
}
