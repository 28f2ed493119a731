import Foundation
import PrismCore
import PrismMedia
import Synchronization

/// What the run does when an input other than the first ends before the run does (`--end`).
public enum InputEndPolicy: String, Sendable, CaseIterable {
    /// Its last frame stays on (the default: a still image is an input that lasts).
    case hold
    /// The run ends with it, as when the first input ends.
    case stop
    /// It disappears: the graph reads transparent black from then on.
    case hide
}

/// An input besides the first (`prism run A B`, `--input NAME=SOURCE`): where it is, what the graph calls
/// it, when it starts on the run's clock and what happens when it ends. Its frames reach the graph as
/// `[N]` (N its position, 1 for the second input) or `[NAME]`; its sound is used only when it is chosen as the
/// run's (`EngineConfiguration.audioInput`, `--audio-from`); otherwise the run's sound is the first input's.
public struct ExtraInput: Sendable {
    /// What to open.
    public var spec: SourceSpec
    /// The label the graph may read it by besides its index.
    public var name: String?
    /// How far into the run its first frame shows (`--offset SECONDS`); before that it shows nothing.
    public var offset: MediaTime
    /// What happens when it ends.
    public var end: InputEndPolicy

    public init(spec: SourceSpec, name: String? = nil, offset: MediaTime = .zero, end: InputEndPolicy = .hold) {
        self.spec = spec
        self.name = name
        self.offset = offset
        self.end = end
    }
}

/// What an input other than the first shows on one output frame.
package enum InputFrame {
    case frame(VideoFrame)
    /// Nothing: before its offset, before a live input's first frame (the run's first frame waits for it up to
    /// `InputTrack.firstFrameWait` seconds), or after its end under `hide`.
    case nothing
}

/// One input besides the first, read on a thread of its own, matched to the first input's frames:
///
/// - a file, pipe or the pattern (not live) is matched by timestamp, deterministically: each output frame
///   at time t (from the first input's first frame) shows the last of its frames whose time from its own
///   first frame is at most t − offset, so a slower input repeats frames and a faster one skips them; the
///   reader waits (back-pressure) and the output never depends on how fast anything ran;
/// - a live input (a camera, a live stream) shows its newest frame and never holds the run back; frames it
///   delivered that no output frame showed are counted as dropped.
///
/// An input that ends follows its `InputEndPolicy`: its end is its last frame's time plus that frame's
/// duration (or one frame at its rate).
package final class InputTrack: Sendable {
    package let index: Int
    package let input: ExtraInput
    package let info: SourceInfo
    let isLive: Bool
    /// What its decoders skipped (read from any thread).
    let damage: DecodeDamage?
    private let source: ThreadOwned<MediaSource>
    private let queue: BoundedQueue<VideoFrame>
    private let newest = Mutex<(frame: VideoFrame?, unseen: Bool)>((nil, false))
    /// Signalled once, when a live input's first frame arrives or its reader ends: the run's first frame waits
    /// for it (up to `firstFrameWait`), as a compositor waits for each input's first frame, so a camera that
    /// opens more slowly than the first input still shows from the first output frame on.
    private let firstLiveFrame = DispatchSemaphore(value: 0)
    private let waitedForFirstFrame = Atomic<Bool>(false)
    /// How long the run's first frame waits for a live input's first one before showing nothing in its place.
    package static let firstFrameWait: Double = 10
    private let ended = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let failure = Mutex<String?>(nil)
    private let droppedFrames = Atomic<Int>(0)
    private let reader = Mutex<WorkerThread?>(nil)
    /// The run thread's matching state.
    private let matching = Mutex(Matching())
    /// Its sound, while it is the run's (`carriesSound`): nil otherwise, and its packets are dropped.
    private let sound = Mutex<Sound?>(nil)

    /// What the reader keeps of the input's sound for the run thread.
    private struct Sound {
        /// Its first video frame's time: its packets are placed on the run's clock from there.
        var firstFrame: MediaTime?
        /// Packets read and not yet handed on, in the order read.
        var pending: [AudioPacket] = []
    }

    private struct Matching {
        var first: MediaTime?
        var current: VideoFrame?
        var currentEnd: MediaTime?
        var peeked: VideoFrame?
        var exhausted = false
    }

    /// Opens the input (a missing file or camera fails here, naming the input).
    package init(index: Int, input: ExtraInput) throws {
        self.index = index
        self.input = input
        let opened: MediaSource
        do {
            opened = try input.spec.open()
        } catch {
            throw InvalidRequest("input \(index)\(input.name.map { " (\($0))" } ?? ""): \(error)")
        }
        source = ThreadOwned(opened)
        info = opened.info
        damage = opened.decodeDamage
        isLive = opened.info.isLive
        queue = BoundedQueue(capacity: 4, overflow: .block)
    }

    /// Frames a live input delivered that no output frame showed.
    package var dropped: Int { droppedFrames.load(ordering: .relaxed) }

    /// Keeps the input's audio packets for `sound(before:origin:)` (the run's sound is this input's); before `start`.
    package func carriesSound() {
        sound.withLock { $0 = Sound() }
    }

    /// Starts reading on a thread of its own.
    package func start() {
        let thread = WorkerThread { [self] in read() }
        reader.withLock { $0 = thread }
    }

    /// The reader thread: files into the queue (waiting for room), live frames into the newest slot.
    private func read() {
        defer {
            ended.store(true, ordering: .releasing)
            queue.close()
            firstLiveFrame.signal()
        }
        do {
            while !stopped.load(ordering: .acquiring), let event = try source.value.next() {
                let frame: VideoFrame
                switch event {
                case .audio(let packet):
                    // Kept only when its sound is the run's.
                    sound.withLock { kept in kept?.pending.append(packet) }
                    continue
                case .video(let video):
                    frame = video
                    sound.withLock { kept in
                        if kept != nil, kept?.firstFrame == nil { kept?.firstFrame = video.pts }
                    }
                }
                if isLive {
                    let (replaced, first) = newest.withLock { slot -> (Bool, Bool) in
                        defer { slot = (frame, true) }
                        return (slot.unseen, slot.frame == nil)
                    }
                    if replaced { droppedFrames.add(1, ordering: .relaxed) }
                    if first { firstLiveFrame.signal() }
                } else if !queue.push(frame) {
                    return
                }
            }
        } catch {
            failure.withLock { $0 = "\(error)" }
        }
    }

    /// Stops the reader and waits for its thread.
    package func finish() {
        stopped.store(true, ordering: .releasing)
        queue.cancel()
        firstLiveFrame.signal()
        reader.withLock { $0.take() }?.join()
    }

    /// What the input shows at `time` on the run's clock (from the first input's first frame), and whether
    /// it has ended by then. Throws when the input failed to read.
    package func frame(at time: MediaTime) throws -> (frame: InputFrame, ended: Bool) {
        let local = time - input.offset
        if local < .zero { return (.nothing, false) }
        return try isLive ? newestFrame() : matchedFrame(at: local)
    }

    /// The input's sound that starts before `end` on the run's clock (from the first input's first frame), in
    /// the order read, each packet moved onto the first input's time line (`origin`: its first frame's time):
    /// a packet at p on the input's own time line goes to (p − its first frame's time) + offset + origin.
    /// Packets that end before its first frame are dropped (they would sound before its offset); those
    /// after `end` wait for a later frame, so the sound ends with the run's frames. Empty until its first
    /// frame is read, and when it does not carry the run's sound.
    package func sound(before end: MediaTime, origin: MediaTime) throws -> [AudioPacket] {
        let offset = input.offset
        return try sound.withLock { kept throws -> [AudioPacket] in
            guard let firstFrame = kept?.firstFrame, let pending = kept?.pending, !pending.isEmpty else { return [] }
            var ready: [AudioPacket] = []
            var taken = 0
            for packet in pending {
                guard let pts = packet.pts else {
                    taken += 1  // a packet without a time cannot be placed
                    continue
                }
                let local = pts - firstFrame
                guard local + offset < end else { break }
                taken += 1
                if local < .zero, local + (packet.duration ?? .zero) <= .zero { continue }
                ready.append(try packet.shifted(by: origin + offset - firstFrame))
            }
            kept?.pending.removeFirst(taken)
            return ready
        }
    }

    private func checkFailure() throws {
        if let message = failure.withLock({ $0 }) {
            throw InvalidRequest("input \(index)\(input.name.map { " (\($0))" } ?? ""): \(message)")
        }
    }

    private var frameStep: MediaTime {
        let rate = info.frameRate ?? Rational(30, 1)
        return MediaTime(value: Int64(rate.den), timescale: Int32(clamping: rate.num))
    }

    private func matchedFrame(at local: MediaTime) throws -> (frame: InputFrame, ended: Bool) {
        let queue = queue, step = frameStep
        let (current, isOver) = try matching.withLock { state throws -> (VideoFrame?, Bool) in
            while true {
                if state.peeked == nil, !state.exhausted {
                    state.peeked = queue.pop()
                    if state.peeked == nil { state.exhausted = true }
                }
                guard let next = state.peeked else { break }
                let first = state.first ?? next.pts
                state.first = first
                guard next.pts - first <= local else { break }
                state.current = next
                state.currentEnd = next.pts - first + (next.duration ?? step)
                state.peeked = nil
            }
            let isOver = state.exhausted && local >= (state.currentEnd ?? .zero)
            return (state.current, isOver)
        }
        if isOver { try checkFailure() }
        return shown(current, ended: isOver)
    }

    private func newestFrame() throws -> (frame: InputFrame, ended: Bool) {
        if !waitedForFirstFrame.exchange(true, ordering: .acquiringAndReleasing) {
            _ = firstLiveFrame.wait(timeout: .now() + Self.firstFrameWait)
        }
        let latest = newest.withLock { slot -> VideoFrame? in
            slot.unseen = false
            return slot.frame
        }
        let over = ended.load(ordering: .acquiring)
        if over { try checkFailure() }
        return shown(latest, ended: over)
    }

    private func shown(_ frame: VideoFrame?, ended: Bool) -> (frame: InputFrame, ended: Bool) {
        if ended {
            switch input.end {
            case .hold: return (frame.map(InputFrame.frame) ?? .nothing, true)
            case .stop, .hide: return (.nothing, true)
            }
        }
        return (frame.map(InputFrame.frame) ?? .nothing, false)
    }
}
