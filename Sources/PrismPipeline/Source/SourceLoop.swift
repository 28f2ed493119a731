import Foundation
import PrismCore
import PrismMedia

/// The source thread's work between two pushes: read, time, limit, pace, switch cameras. Owned by that
/// thread for the whole run.
struct SourceLoop {
    enum Step {
        /// Frames for the GPU (none, one, or several when a rate conversion repeats a frame).
        case frames([TimedFrame])
        case audio(AudioPacket)
    }

    private let source: MediaSource
    private var limiter: FrameTimer
    private let paced: Bool
    private let origin: AudioOrigin
    /// CLOCK_MONOTONIC (µs) when the microphone started: camera frames captured before it are stale
    /// (queued in the driver while the engine was being set up) and would put the video ahead of the sound.
    private let recordingSince: Int64?
    /// CLOCK_MONOTONIC (µs) at the paced time line's zero.
    private var pacingOrigin: Int64?
    private(set) var times = StageTimes()
    /// The first and the latest video frame's time as the source gave it (how far a file really went).
    private(set) var sourceSpan: (first: MediaTime, last: MediaTime)?

    init(source: MediaSource, configuration: EngineConfiguration, origin: AudioOrigin, recordingSince: Int64?) throws {
        self.source = source
        limiter = try FrameTimer(frameLimit: configuration.frameLimit, durationLimit: configuration.durationLimit,
                             rate: configuration.constantRate)
        paced = configuration.pacedToClock
        self.origin = origin
        self.recordingSince = recordingSince
    }

    var emitted: Int { limiter.emitted }
    var isDone: Bool { limiter.isDone }
    /// The limit that ended the frames, if one did.
    var limitReached: StopReason? {
        if let reason = limiter.limitReached { return reason }
        // A frame limit met exactly by the last frame is still the limit's doing.
        if let limit = limiter.frameLimit, limiter.emitted >= limit { return .frameLimit }
        return nil
    }

    /// Switches cameras between two frames; a camera that cannot be opened leaves the current one running.
    mutating func switchCamera(to path: String) -> EngineEvent? {
        guard let camera = source as? CameraSource else { return nil }
        let current = camera.path
        do {
            let change = try camera.switchDevice(to: path)
            return .cameraSwitched(change, summary: camera.info.summary)
        } catch {
            return .cameraSwitchFailed(path: path, kept: current, error: "\(error)")
        }
    }

    /// The next step; nil at the end of the input.
    mutating func next() throws -> Step? {
        let t0 = StageTimes.now()
        guard let event = try source.next() else { return nil }
        switch event {
        case .audio(let packet):
            return .audio(packet)
        case .video(let frame):
            times.add(.decode, since: t0)
            sourceSpan = (sourceSpan?.first ?? frame.pts, frame.pts)
            let ptsMicroseconds = frame.pts.ticks(in: Rational(1, 1_000_000))
            if paced {
                // Frame N is released at origin + its time, as a camera would deliver it.
                if pacingOrigin == nil {
                    pacingOrigin = monotonicMicroseconds() - ptsMicroseconds
                    origin.setIfUnset(pacingOrigin!)
                }
                let wait = pacingOrigin! + ptsMicroseconds - monotonicMicroseconds()
                if wait > 0 { usleep(UInt32(min(wait, 1_000_000))) }
            } else if recordingSince != nil, let camera = source as? CameraSource, let cameraOrigin = camera.originMonotonicMicroseconds {
                if let since = recordingSince, cameraOrigin + ptsMicroseconds < since { return .frames([]) }
                origin.setIfUnset(cameraOrigin)
            }
            return .frames(limiter.admit(frame))
        }
    }

    /// At the end of the input: what a rate conversion still holds.
    mutating func finish() -> [TimedFrame] { limiter.finish() }
}
