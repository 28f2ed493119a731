import Foundation
import PrismCore
import PrismMedia

/// What every thread of one run shares: how it is stopped, and its first error (`fail` records it and
/// wakes whatever waits on the frame queue or a sink).
struct RunSignals: Sendable {
    let stop: StopSignal
    let failure: FirstError
    let fail: @Sendable (any Error) -> Void

    /// The run goes on: not stopped, nothing failed.
    var goesOn: Bool { !stop.isStopped && !failure.hasError }
}

/// The run's source side: one thread reads the source (a camera switch between two reads, a network
/// input's losses as notes), shows each frame to the inputs that read ahead, holds a movie's frames until
/// their sound is decoded for audio-reactive filters, and queues them for the GPU (live sources drop their
/// oldest frames there; files and pipes wait).
final class SourceStage: Sendable {
    /// What the source thread counted, read once it has ended.
    struct Counts: Sendable {
        var times = StageTimes()
        var framesRead = 0
        var inputSpan: MediaTime?
        var limitReached: StopReason?
    }

    /// The frames decoded ahead of the GPU.
    let frames: BoundedQueue<TimedFrame>
    private let source: ThreadOwned<MediaSource>
    /// The run's configuration less a live source's frame limit (counted on the GPU thread instead).
    private let configuration: EngineConfiguration
    /// Side inputs that see each frame here first (a file's face detector reading ahead).
    private let lookAheads: [any LookAheadInput]
    private let audioFeed: AudioFeed?
    /// The source's compressed sound goes to the sinks (not when another input's sound is the run's).
    private let copiesAudio: Bool
    private let pendingSwitch: Locked<String?>
    /// Tells the run's notes and event handler.
    private let announce: @Sendable (EngineEvent) -> Void
    private let counted = Locked(Counts())

    init(source: ThreadOwned<MediaSource>, configuration: EngineConfiguration, live: Bool, lookAheads: [any LookAheadInput],
         audioFeed: AudioFeed?, copiesAudio: Bool, pendingSwitch: Locked<String?>,
         announce: @escaping @Sendable (EngineEvent) -> Void) {
        var limited = configuration
        if live { limited.frameLimit = nil }
        self.configuration = limited
        self.source = source
        self.lookAheads = lookAheads
        self.audioFeed = audioFeed
        self.copiesAudio = copiesAudio
        self.pendingSwitch = pendingSwitch
        self.announce = announce
        // Inputs that read ahead need the source that far ahead of the GPU (they are asked for by files, whose
        // frames are never dropped).
        frames = BoundedQueue<TimedFrame>(capacity: max(configuration.frameQueueCapacity, (lookAheads.map(\.lookAhead).max() ?? 0) + 1),
                                          overflow: live ? .dropOldest : .block)
    }

    /// What the source thread counted; complete once the thread has been joined.
    var counts: Counts { counted.withLock { $0 } }

    /// Starts the source thread. When the source ends, stops or fails, the inputs that read ahead are told
    /// and the queue is closed.
    func start(_ signals: RunSignals, origin: AudioOrigin, recordingSince: Int64?, capture: AudioCaptureSource?,
               sendAudio: @escaping @Sendable (SinkItem) -> Void) -> WorkerThread {
        WorkerThread { [self] in
            read(signals, origin: origin, recordingSince: recordingSince, capture: capture, sendAudio: sendAudio)
            for reader in lookAheads { reader.inputEnded() }
            frames.close()
        }
    }

    private func read(_ signals: RunSignals, origin: AudioOrigin, recordingSince: Int64?, capture: AudioCaptureSource?,
                      sendAudio: @escaping @Sendable (SinkItem) -> Void) {
        // A network input's blocking reads end when the run stops or fails (never a wait on a silent
        // network), and its losses and reconnections become notes.
        if let network = source.value as? NetworkSource {
            network.cancellation = { !signals.goesOn }
            network.onEvent = { [announce] line in announce(.networkInput(line)) }
        }
        var reading: SourceReading
        do {
            let loop = try SourceLoop(source: source.value, configuration: configuration, origin: origin,
                                      recordingSince: recordingSince)
            reading = SourceReading(loop: loop, sound: audioFeed?.trackTimeline(), frames: frames, lookAheads: lookAheads)
        } catch {
            signals.fail(error)
            return
        }
        // Another input's sound is the run's (`audioInput`), or a microphone's: this one's is not sent.
        let sendsSound = copiesAudio && recordingSince == nil
        do {
            reading: while signals.goesOn {
                // A microphone that failed ends the take where it failed.
                if let error = capture?.error { throw error }
                if let path = pendingSwitch.take(replacingWith: nil), let event = reading.loop.switchCamera(to: path) {
                    announce(event)
                }
                guard let step = try reading.loop.next() else { break }
                switch step {
                case .frames(let timed):
                    guard try reading.take(timed) else { break reading }
                    if reading.loop.isDone { break reading }
                case .audio(let packet):
                    guard try reading.takeSound(packet) else { break reading }
                    guard sendsSound else { continue }
                    sendAudio(.audio(packet))
                }
            }
            if signals.goesOn { try reading.finish(while: { signals.goesOn }) }
        } catch {
            signals.fail(error)
        }
        let loop = reading.loop
        counted.withLock {
            $0.times = loop.times
            $0.limitReached = loop.limitReached
            $0.framesRead = loop.emitted
            $0.inputSpan = loop.sourceSpan.map { $0.last - $0.first }
        }
    }
}

/// The source thread's state while it reads: the loop, a movie's sound that frames wait for, and how
/// many frames were queued.
private struct SourceReading {
    var loop: SourceLoop
    /// A movie's sound for audio-reactive filters: frames wait here until their window is decoded.
    var sound: TrackSound?
    let frames: BoundedQueue<TimedFrame>
    let lookAheads: [any LookAheadInput]
    /// Frames are numbered as the GPU thread will number them: in the order they are queued.
    var queued = 0

    /// Queues frames whose sound is complete; false when the queue was cancelled.
    private mutating func push(_ ready: [TimedFrame]) throws -> Bool {
        for frame in ready {
            for reader in lookAheads { try reader.read(frame, index: queued) }
            queued += 1
            guard frames.push(frame) else { return false }
        }
        return true
    }

    /// Frames read: queued, or held for their sound.
    mutating func take(_ timed: [TimedFrame]) throws -> Bool {
        if sound != nil { return try push(sound!.hold(timed)) }
        return try push(timed)
    }

    /// A packet of the source's sound: decoded when frames wait for it, and the frames it completed queued.
    mutating func takeSound(_ packet: AudioPacket) throws -> Bool {
        guard sound != nil else { return true }
        return try push(try sound!.decode(packet))
    }

    /// The source ended (or a limit did): the last frames, and those still waiting for their sound.
    mutating func finish(while goesOn: () -> Bool) throws {
        let last = loop.finish()
        guard sound != nil else {
            _ = try push(last)
            return
        }
        var pushing = try push(sound!.hold(last))
        // Frames still waiting for their sound: read on for audio only (a limit ended the frames).
        tail: while pushing, sound!.isHolding, goesOn(), let step = try loop.next() {
            guard case .audio(let packet) = step else { continue tail }
            pushing = try push(try sound!.decode(packet))
        }
        if pushing { _ = try push(try sound!.finish()) }
    }
}
