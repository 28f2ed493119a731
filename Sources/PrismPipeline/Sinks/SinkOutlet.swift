import Foundation
import PrismCore
import PrismMedia
import Synchronization

/// What travels to a sink's output thread.
enum SinkItem: Sendable {
    case video(ProcessedFrame)
    case audio(AudioPacket)
    /// Captured sound stamped on CLOCK_MONOTONIC; placed on the video's time line by `AudioOrigin`.
    case pcm(AudioChunk)
    /// The output changed size: later frames have this layout.
    case reopen(SinkStream)
}

/// CLOCK_MONOTONIC (µs) at the video's time zero: set once by the source thread (a camera's first frame,
/// or the paced pattern's start), read by the sinks that place captured sound.
final class AudioOrigin: Sendable {
    private let origin = Mutex<Int64?>(nil)
    var value: Int64? { origin.withLock { $0 } }
    func setIfUnset(_ value: Int64) { origin.withLock { if $0 == nil { $0 = value } } }
}

/// One sink's way out of the engine: its queue and its output thread. The GPU side (pool and readback)
/// is `ReadbackChannel`.
final class SinkOutlet: Sendable {
    enum State: Sendable {
        /// Taking frames; the engine finishes it when the run ends.
        case open
        /// Detached or unable to follow a size change: its own thread finishes it.
        case finishingItself
        /// Finished or aborted.
        case done
    }

    let sink: ThreadOwned<any FrameSink>
    let pixelFormat: PixelFormat
    let point: SinkPoint
    let delivery: SinkDelivery
    let bufferCount: Int
    let acceptsAudio: Bool
    let queue: BoundedQueue<SinkItem>
    private let state = Mutex(State.open)
    private let finished = DispatchSemaphore(value: 0)
    private let counters = Mutex((written: 0, busyNanoseconds: UInt64(0), skipped: 0))

    /// A live run: after a failure the sink is salvaged, not aborted.
    let keepOnFailure: Bool

    init(_ sink: any FrameSink, keepOnFailure: Bool = false) {
        self.keepOnFailure = keepOnFailure
        self.sink = ThreadOwned(sink)
        pixelFormat = sink.pixelFormat
        point = sink.point
        delivery = sink.delivery
        bufferCount = max(2, sink.bufferCount)
        acceptsAudio = sink.acceptsAudio
        // A sink that takes the newest frames drops frames it is late for, never the sound between them.
        queue = BoundedQueue(capacity: max(2, sink.bufferCount * 2), overflow: sink.delivery == .newest ? .dropOldest : .block,
                             droppable: { item in if case .video = item { true } else { false } })
    }

    /// The pool the GPU side takes this sink's buffers from, so a failing run can wake a GPU thread
    /// waiting for one without going through that thread.
    private let pool = Mutex<FrameBufferPool?>(nil)
    func use(_ pool: FrameBufferPool) { self.pool.withLock { $0 = pool } }

    /// The buffers of the sink's pool: allocated so far, and out of the pool now (read from any thread).
    var poolCounts: (allocated: Int, outstanding: Int) {
        pool.withLock { pool in (pool?.allocatedCount ?? 0, pool?.outstandingCount ?? 0) }
    }

    /// Stops both sides now (the run failed).
    func cancel() {
        queue.cancel()
        pool.withLock { $0?.cancel() }
    }

    /// Asked on the GPU thread (see `FrameSink.wants`).
    func wants(frameIndex: Int) -> Bool { sink.value.wants(frameIndex: frameIndex) }

    var isOpen: Bool { state.withLock { $0 == .open } }
    var framesWritten: Int { counters.withLock { $0.written } }
    var busyNanoseconds: UInt64 { counters.withLock { $0.busyNanoseconds } }
    /// Frames the engine skipped for this sink (no free buffer, or dropped from its queue).
    var skipped: Int { counters.withLock { $0.skipped } + queue.dropped }
    /// What the report says of this output beyond its frame count (after the run): the sink's own notes
    /// (`FrameSink.notes`), and the sound its queue had to drop (it held no frame to drop instead: stuck).
    var notes: [String] {
        var lines = sink.value.notes(skipped: skipped)
        if queue.droppedOthers > 0 {
            let name = (sink.value as? MovieSink)?.path ?? "an output"
            lines.append("\(name): \(queue.droppedOthers) sound packet(s) dropped (it was stuck behind the others)")
        }
        return lines
    }
    func countSkipped() { counters.withLock { $0.skipped += 1 } }

    /// Asks the output thread to finish the sink after what is queued (a detach while running).
    func finishItself() {
        state.withLock { if $0 == .open { $0 = .finishingItself } }
        queue.close()
    }

    /// Starts the output thread. `onFrame` runs after each written frame (progress); `stopRun` when the
    /// sink takes no more; `fail` on an error.
    func start(audioOrigin: AudioOrigin, onFrame: (@Sendable (ProcessedFrame, Int, Int64?) -> Void)?,
               stopRun: @escaping @Sendable (StopReason) -> Void, fail: @escaping @Sendable (any Error) -> Void) {
        Thread.detachNewThread { [self] in
            defer { finished.signal() }
            let sink = self.sink.value
            var heldPCM: [AudioChunk] = []  // captured before the video's origin was known
            do {
                while let item = queue.pop() {
                    guard state.withLock({ $0 != .done }) else { continue }
                    switch item {
                    case .video(let frame):
                        let t0 = DispatchTime.now().uptimeNanoseconds
                        let more = try sink.write(frame)
                        let written = counters.withLock {
                            $0.busyNanoseconds += DispatchTime.now().uptimeNanoseconds - t0
                            $0.written += 1
                            return $0.written
                        }
                        // Progress counts what the output holds (a movie: the frames the encoder has given
                        // back), so the count never goes down when a limit leaves the encoder's last frames out.
                        onFrame?(frame, sink.framesInOutput ?? written, sink.bytesWritten)
                        if !more { stopRun(sink.stopReason) }
                    case .audio(let packet):
                        try sink.write(audio: packet)
                    case .pcm(let chunk):
                        guard let origin = audioOrigin.value else { heldPCM.append(chunk); continue }
                        for held in heldPCM + [chunk] {
                            try sink.write(pcm: held, pts: MediaTime(value: held.captureTime - origin, timescale: 1_000_000))
                        }
                        heldPCM.removeAll()
                    case .reopen(let stream):
                        if try !sink.reopen(stream) {
                            try sink.finish()
                            state.withLock { $0 = .done }
                        }
                    }
                }
                if state.withLock({ $0 == .finishingItself }) {
                    state.withLock { $0 = .done }
                    try sink.finish()
                }
            } catch {
                // A live run keeps what was recorded: the engine salvages the sink after the others stop.
                if !keepOnFailure {
                    state.withLock { $0 = .done }
                    sink.abort()
                }
                fail(error)
            }
        }
    }

    /// Waits for the output thread to end.
    func join() { finished.wait() }

    /// After `join`, on the run's thread: finishes a sink still open, or after a failure aborts it (or,
    /// keeping what was recorded, salvages it). Returns where a salvaged sink's output is.
    @discardableResult
    func close(failed: Bool) throws -> String? {
        guard state.withLock({ state in
            defer { state = .done }
            return state != .done
        }) else { return nil }
        if !failed {
            try sink.value.finish()
            return nil
        }
        if keepOnFailure { return sink.value.salvage() }
        sink.value.abort()
        return nil
    }
}
