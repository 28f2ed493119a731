import Dispatch
import Foundation
import PrismCore
import Synchronization

/// Per-frame face regions for the engine: it asks whether a frame's luma thumbnail is wanted, hands it
/// over, and asks for the faces to draw each frame with. Called from the engine's threads.
package protocol FaceRegionProvider: Sendable {
    /// Whether the engine should render and `submit` this frame's luma thumbnail.
    func wantsLuma(frameIndex: Int) -> Bool
    /// Hands a thumbnail to the detector. Never waits for a detection.
    func submit(frameIndex: Int, pts: MediaTime, luma: LumaImage)
    /// The faces for this frame. Throws the detector's or the sidecar's error (a bad model, a sidecar
    /// without this pts).
    func regions(frameIndex: Int, pts: MediaTime, frameSize: Size) throws -> FaceFrame
    /// What detection cost so far (for `--stats`, bench and the dev page).
    var statistics: FaceDetectorStatistics { get }
    /// How wide the luma image handed to `submit` should be for a frame of `frame`'s size.
    func lumaWidth(for frame: Size) -> Int
}

extension FaceRegionProvider {
    package func lumaWidth(for frame: Size) -> Int { 320 }
}

/// Detector figures: cost per detection, its input, and how stale regions were when used.
public struct FaceDetectorStatistics: Sendable, Equatable {
    /// Detections run so far.
    public var detections = 0
    /// Total seconds spent in those detections.
    public var detectSeconds = 0.0
    /// Seconds taken by the slowest detection.
    public var slowestDetectSeconds = 0.0
    /// The thumbnail size the detector last ran on.
    public var inputSize: Size?
    /// Thumbnails offered while the detector was busy and not taken (live only).
    public var skipped = 0
    /// Frames that were given regions, and the sum and maximum of those regions' age in frames.
    public var framesServed = 0
    /// Sum over served frames of their regions' age, in frames.
    public var ageSum = 0
    /// The oldest regions served, in frames.
    public var maxAge = 0
    /// The last detection's cost (live runs report it per frame).
    public var lastDetectSeconds = 0.0
    /// Frames given regions in which at least one face was predicted from its motion, not detected there.
    public var framesPredicted = 0
    /// Tracks that ended unseen while still in the frame, and the frames served while such a loss was
    /// not yet followed by a new detection (`--faces-strict` covers the whole frame in those).
    public var facesLost = 0
    /// Frames served while a lost face was not yet detected again.
    public var framesLost = 0

    /// All figures zero.
    public init() {}

    /// Mean milliseconds per detection; 0 before the first.
    public var meanDetectMilliseconds: Double { detections == 0 ? 0 : detectSeconds * 1000 / Double(detections) }
    /// Mean age of the regions served, in frames; 0 before any frame was served.
    public var meanAge: Double { framesServed == 0 ? 0 : Double(ageSum) / Double(framesServed) }

    /// One line for reports: "face detector: 12.3 ms per detection on 320x180 (40 runs), regions 1.2 frames old on average (max 3)".
    public var summary: String {
        let input = inputSize.map { " on \($0)" } ?? ""
        var line = String(format: "face detector: %.1f ms per detection%@ (%d run(s), slowest %.1f ms), regions %.1f frames old on average (max %d)",
                          meanDetectMilliseconds, input, detections, slowestDetectSeconds * 1000, meanAge, maxAge)
        if skipped > 0 { line += ", \(skipped) thumbnail(s) skipped while busy" }
        line += "; \(framesPredicted) frame(s) with a face predicted, not detected; \(framesLost) frame(s) after \(facesLost) face(s) lost"
        return line
    }
}

/// Runs a `FaceDetecting` on its own thread and tracks what it finds.
///
/// - `.everyNth(N)` (files, raw input: no deadline): frames 0, N, 2N… are detected, and `regions` for
///   frame k waits for the detection of the latest such frame ≤ k. The same input always gives the
///   same faces, however threads are scheduled.
/// - `.live` (cameras): a thumbnail is wanted whenever the detector is idle; `submit` never waits and
///   `regions` answers at once with the newest tracked faces and their age in frames.
package final class DetectingFaceProvider: FaceRegionProvider {
    package enum Mode: Sendable, Equatable {
        /// Detect frames 0, N, 2N…, and wait for them: deterministic (files, raw input).
        case everyNth(Int)
        /// Detect whenever the detector is idle, never wait (cameras).
        case live
    }

    /// Files: detect every frame by default: the mask follows motion best. The cost (Haar ≈ 16–25 ms per frame on
    /// the 2-core llvmpipe box, LBP ≈ 5–9 ms; BENCHMARKS.md) is traded for speed with `--face-every N`.
    package static let defaultInterval = 1

    package let mode: Mode
    private let queue = DispatchQueue(label: "prism.faces.detector")
    /// Only the detector queue uses it; the mutex makes handing it to that thread safe.
    private let detector: Mutex<any FaceDetecting>

    private struct Detected: Sendable {
        var frameIndex: Int
        var pts: MediaTime
        var faces: [TrackedFace]
        /// A track ended unseen in the frame at or before this detection and no face has been detected since.
        var lossOutstanding: Bool
    }
    private struct State: Sendable {
        var tracker: FaceTracker
        /// Finished detections, oldest first (pruned as frames move on).
        var detected: [Detected] = []
        /// Frames submitted and not finished.
        var inFlight: Set<Int> = []
        var submitted: [Int] = []
        var error: (any Error)?
        var statistics = FaceDetectorStatistics()
        var lossOutstanding = false
    }
    private let state: Mutex<State>

    /// How tracks are predicted and when they end.
    package let tracking: FaceTrackerSettings
    /// The detection resolution: what `lumaWidth` answers.
    package let scale: FaceDetectionScale
    /// Fail safe: while a lost face has not been re-found, the whole frame is covered (one extra face, id 0).
    package let strict: Bool

    package init(detector: sending any FaceDetecting, mode: Mode, tracker: FaceTrackerSettings = FaceTrackerSettings(),
                maxPrediction: Double? = nil, scale: FaceDetectionScale = FaceDetectionScale(), strict: Bool = false) {
        self.mode = mode
        var tracking = tracker
        if let maxPrediction { tracking.maxPrediction = maxPrediction }
        self.tracking = tracking
        self.scale = scale
        self.strict = strict
        self.detector = Mutex(detector)
        state = Mutex(State(tracker: FaceTracker(settings: tracking)))
    }

    package func lumaWidth(for frame: Size) -> Int { scale.lumaWidth(for: frame) }

    package func wantsLuma(frameIndex: Int) -> Bool {
        switch mode {
        case .everyNth(let n): return frameIndex % max(n, 1) == 0
        case .live: return state.withLock { $0.inFlight.isEmpty }
        }
    }

    package func submit(frameIndex: Int, pts: MediaTime, luma: LumaImage) {
        let accepted = state.withLock { state -> Bool in
            if mode == .live, !state.inFlight.isEmpty {
                state.statistics.skipped += 1
                return false
            }
            state.inFlight.insert(frameIndex)
            state.submitted.append(frameIndex)
            return true
        }
        guard accepted else { return }
        queue.async { [self] in
            let start = DispatchTime.now().uptimeNanoseconds
            let result = Result { try detector.withLock { try $0.detect(luma) } }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            state.withLock { state in
                state.inFlight.remove(frameIndex)
                state.statistics.detections += 1
                state.statistics.detectSeconds += seconds
                state.statistics.lastDetectSeconds = seconds
                state.statistics.slowestDetectSeconds = max(state.statistics.slowestDetectSeconds, seconds)
                state.statistics.inputSize = luma.size
                switch result {
                case .success(let detections):
                    let faces = state.tracker.update(detections, frameIndex: frameIndex, time: pts.seconds, frameSize: luma.frameSize)
                    let lost = state.tracker.lastEnding.lost
                    state.statistics.facesLost += lost
                    // A loss stays outstanding until the detector finds a face again (re-found, or another).
                    if !detections.isEmpty { state.lossOutstanding = false }
                    if lost > 0 { state.lossOutstanding = true }
                    state.detected.append(Detected(frameIndex: frameIndex, pts: pts, faces: faces, lossOutstanding: state.lossOutstanding))
                    state.detected.sort { $0.frameIndex < $1.frameIndex }
                case .failure(let error):
                    if state.error == nil { state.error = error }
                }
            }
        }
    }

    package func regions(frameIndex: Int, pts: MediaTime, frameSize: Size) throws -> FaceFrame {
        if case .everyNth = mode {
            // Wait for the detection this frame is scheduled to use, if it is still running. The serial
            // queue finishes jobs in order, so an empty sync block is that wait.
            let pending = state.withLock { state in
                state.submitted.contains { $0 <= frameIndex && state.inFlight.contains($0) }
            }
            if pending { queue.sync {} }
        }
        return try state.withLock { state in
            if let error = state.error { throw error }
            // Newest detection not after this frame (live: the newest one of all, which may be from a
            // later frame only if frames are asked for out of order).
            let usable = state.detected.last { $0.frameIndex <= frameIndex }
            if let usable {
                // Older detections will not be needed again: frames are asked for in order.
                state.detected.removeAll { $0.frameIndex < usable.frameIndex }
                state.submitted.removeAll { $0 < usable.frameIndex }
            }
            let age = usable.map { frameIndex - $0.frameIndex }
            state.statistics.framesServed += 1
            if let age {
                state.statistics.ageSum += age
                state.statistics.maxAge = max(state.statistics.maxAge, age)
            }
            // Each face predicted to this frame from its motion (from pts, so files stay deterministic) and
            // widened by the uncertainty of its age; the box drawn (and written to a sidecar) is that cover.
            let elapsed = usable.map { max((pts - $0.pts).seconds, 0) } ?? 0
            var faces = (usable?.faces ?? []).map { face in
                var moved = face.extrapolated(by: elapsed, frames: age ?? 0, settings: tracking)
                // At the sidecar's precision (1/100 px), so a run replayed from its sidecar draws the same picture.
                let box = moved.coveredBox
                func hundredths(_ v: Double) -> Double { (v * 100).rounded() / 100 }
                moved.box = FaceBox(x: hundredths(box.x), y: hundredths(box.y), width: hundredths(box.width), height: hundredths(box.height))
                return moved
            }
            if faces.contains(where: \.isPredicted) { state.statistics.framesPredicted += 1 }
            if usable?.lossOutstanding == true {
                state.statistics.framesLost += 1
                if strict { faces.append(Self.wholeFrame(frameSize)) }
            }
            return FaceFrame(frameIndex: frameIndex, pts: pts, frameSize: frameSize, faces: faces, age: age)
        }
    }

    /// A face box centred on the frame and so much wider than it that any `face-mask` of size ≥ 0.5 is
    /// opaque over the whole frame (its opaque radius, size·(1 − feather)·w/2, beyond the corners).
    static func wholeFrame(_ frame: Size) -> TrackedFace {
        let side = 8 * Double(max(frame.width, frame.height))
        return TrackedFace(id: 0, box: FaceBox(x: Double(frame.width) / 2 - side / 2, y: Double(frame.height) / 2 - side / 2,
                                               width: side, height: side), score: 0)
    }

    package var statistics: FaceDetectorStatistics { state.withLock { $0.statistics } }

    /// Waits for every submitted detection (end of a run, tests).
    package func drain() { queue.sync {} }
}
