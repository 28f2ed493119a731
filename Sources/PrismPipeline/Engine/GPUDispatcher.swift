import Dispatch
import Foundation
import PrismCore
import PrismGPU
import PrismMedia

/// What becomes of work given to `FrameEngine.schedule`.
enum ScheduledWork: Sendable {
    /// Kept for the start of the run.
    case beforeRun([@Sendable (EngineControl) throws -> Void])
    /// Posted to the GPU thread, where it runs between two frames.
    case running(@Sendable (@escaping @Sendable (EngineControl) throws -> Void) -> Void)
    /// The run is over: dropped.
    case ended
}

/// The run's GPU side, driven from the run's thread: each queued frame becomes one job on the GPU thread,
/// with the other inputs' frames matched to its time (and another input's sound sent up to its end); work
/// given to `FrameEngine.schedule` becomes a job of its own between two frames.
///
/// Between two frames the GPU thread is free for other work (what `schedule` posts, a preview's snapshot,
/// a GL object's deletion). At most two frames are posted and not yet done: the next one waits in the
/// thread's queue while one renders (no wake-up between frames), and the source's queue, not the
/// thread's, holds the rest (live sources drop their oldest frames there).
final class GPUDispatcher: Sendable {
    private let gpu: GPUContext
    private let stage: GPUBound<FramePath>
    /// The inputs besides the first, matched to its frames.
    private let tracks: [InputTrack]
    /// The input whose sound the sinks take, when it is not the first's and audio is copied.
    private let soundTrack: InputTrack?
    private let signals: RunSignals
    private let inFlight = DispatchSemaphore(value: 2)
    /// Until the last frame's job: scheduled work finds the run over after it.
    private let running = Locked(true)

    init(gpu: GPUContext, stage: GPUBound<FramePath>, tracks: [InputTrack], soundTrack: InputTrack?, signals: RunSignals) {
        self.gpu = gpu
        self.stage = stage
        self.tracks = tracks
        self.soundTrack = soundTrack
        self.signals = signals
    }

    /// Posts `work` to the GPU thread. Work posted after the last frame's job finds the run over and is
    /// dropped, as before the run. (The job holds what it uses, never the GPU context.)
    private func post(_ work: @escaping @Sendable (EngineControl) throws -> Void) {
        let (stage, running, signals) = (stage, running, signals)
        _ = gpu.thread.async {
            guard running.withLock({ $0 }), !signals.failure.hasError else { return }
            do { try work(EngineControl(stage: stage.value)) } catch { signals.fail(error) }
        }
    }

    /// Posts the work scheduled before the run, and from now on what is scheduled as it comes.
    func takeScheduledWork(from scheduled: Locked<ScheduledWork>) {
        let waiting = scheduled.withLock { state -> [@Sendable (EngineControl) throws -> Void] in
            guard case .beforeRun(let waiting) = state else { return [] }
            state = .running { [self] work in post(work) }
            return waiting
        }
        for work in waiting { post(work) }
    }

    /// Posts every frame of `frames` until it ends, the run stops or fails, or `frameLimit` frames were
    /// posted; then finishes the frame path (every frame in flight delivered). Other inputs start here.
    /// - Parameters:
    ///   - frameStep: a frame's duration when it has none (to send another input's sound up to its end).
    ///   - liveSound: the microphone's ring, whose window each frame without sound gets.
    func dispatch(_ frames: BoundedQueue<TimedFrame>, frameLimit: Int?, frameStep: MediaTime, audioOrigin: AudioOrigin,
                  liveSound: AudioRing?, sendAudio: @Sendable (SinkItem) -> Void) {
        for track in tracks { track.start() }
        var first: MediaTime?
        var previousTime = 0.0
        var index = 0
        do {
            while !signals.failure.hasError, var timed = frames.pop() {
                if let liveSound, timed.audio == nil {
                    timed.audio = AudioFeed.liveWindow(liveSound, for: timed, origin: audioOrigin)
                }
                let origin = first ?? timed.pts
                first = origin
                guard let shown = try inputs(at: timed.pts - origin) else {
                    // `--end stop`: the run ends as if the first input had; the source stops reading.
                    signals.stop.stop(.endOfInput)
                    frames.cancel()
                    break
                }
                // Another input's sound, up to this frame's end: it ends with the run's frames.
                if let soundTrack {
                    let end = timed.pts - origin + (timed.duration ?? frameStep)
                    for packet in try soundTrack.sound(before: end, origin: origin) { sendAudio(.audio(packet)) }
                }
                let time = (timed.pts - origin).seconds
                try post(timed, index: index, time: time, timeDelta: time - previousTime, inputs: shown)
                previousTime = time
                index += 1
                if let frameLimit, index >= frameLimit {
                    signals.stop.stop(.frameLimit)
                    break
                }
            }
            try gpu.perform {
                running.withLock { $0 = false }
                if !signals.failure.hasError { try stage.value.finish() }
            }
        } catch {
            signals.fail(error)
            try? gpu.perform { running.withLock { $0 = false } }
        }
    }

    /// The other inputs at a frame's time: matched by timestamp, or their newest frame if live; nil when
    /// one that ends the run (`end == .stop`) has ended.
    private func inputs(at time: MediaTime) throws -> [Int: InputFrame]? {
        var shown: [Int: InputFrame] = [:]
        var inputEnded = false
        for track in tracks {
            let (picked, ended) = try track.frame(at: time)
            if ended, track.input.end == .stop { inputEnded = true }
            shown[track.index] = picked
        }
        return inputEnded ? nil : shown
    }

    /// One frame's job on the GPU thread, once fewer than two are in flight.
    private func post(_ frame: TimedFrame, index: Int, time: Double, timeDelta: Double, inputs shown: [Int: InputFrame]) throws {
        let extras = ThreadOwned(shown)
        let (stage, signals, inFlight) = (stage, signals, inFlight)
        inFlight.wait()
        let posted = gpu.thread.async {
            defer { inFlight.signal() }
            guard !signals.failure.hasError else { return }
            do {
                let stage = stage.value
                try stage.process(frame, index: index, time: time, timeDelta: timeDelta, inputs: extras.value,
                                  control: EngineControl(stage: stage))
            } catch {
                signals.fail(error)
            }
        }
        if !posted {
            inFlight.signal()
            throw InvalidRequest("the GPU thread stopped during the run")
        }
    }

    /// After the run: the other inputs stop reading; returns a note for each that dropped frames.
    func finishInputs() -> [String] {
        for track in tracks { track.finish() }
        return tracks.filter { $0.dropped > 0 }.map {
            "input \($0.index): \($0.dropped) frame(s) dropped (a live input shows its newest frame)"
        }
    }
}
