import Foundation

/// A face followed across frames: a stable id, a smoothed box, the detector's last score.
public struct TrackedFace: Hashable, Sendable {
    public var id: Int
    public var box: FaceBox
    public var score: Double
    /// Frames since the detector last saw this face (0: seen on the frame the box is for); the tracker
    /// keeps a face for `holdFrames` after a miss so a mask does not blink.
    public var framesSinceSeen: Int
    /// How fast the box's centre moves, in pixels per second (the smoothed derivative; zero without
    /// smoothing or history). The provider moves boxes on by it for frames after their detection.
    public var velocity: SIMD2<Double>

    public init(id: Int, box: FaceBox, score: Double, framesSinceSeen: Int = 0, velocity: SIMD2<Double> = .zero) {
        self.id = id
        self.box = box
        self.score = score
        self.framesSinceSeen = framesSinceSeen
        self.velocity = velocity
    }
}

/// The one-euro filter (Casiez, Roussel, Vogel, CHI 2012): a low-pass filter whose cutoff rises with
/// the signal's speed, so a still face does not jitter and a moving one does not lag.
struct OneEuroFilter: Sendable {
    /// Cutoff in Hz when still, and how much it rises per unit of speed (per second).
    var minCutoff: Double
    var beta: Double
    var derivativeCutoff = 1.0
    private var value: Double?
    /// The smoothed rate of change, per second.
    private(set) var derivative = 0.0

    init(minCutoff: Double, beta: Double) {
        self.minCutoff = minCutoff
        self.beta = beta
    }

    private static func alpha(cutoff: Double, interval: Double) -> Double {
        let tau = 1 / (2 * Double.pi * cutoff)
        return 1 / (1 + tau / interval)
    }

    /// `speedScale` converts the raw speed to the units `beta` is given in (here: face widths).
    mutating func filter(_ x: Double, interval: Double, speedScale: Double) -> Double {
        guard let previous = value, interval > 0 else {
            value = x
            return x
        }
        let rawDerivative = (x - previous) / interval
        derivative += Self.alpha(cutoff: derivativeCutoff, interval: interval) * (rawDerivative - derivative)
        let cutoff = minCutoff + beta * abs(derivative) * speedScale
        let smoothed = previous + Self.alpha(cutoff: cutoff, interval: interval) * (x - previous)
        value = smoothed
        return smoothed
    }
}

/// How detections become tracks.
public struct FaceTrackerSettings: Sendable, Equatable {
    /// A detection continues a track when their boxes overlap at least this much (IoU), or when its
    /// centre lies within `maxCentreJump` box widths of the track's (fast motion, little overlap).
    public var minIoU = 0.2
    public var maxCentreJump = 0.5
    /// Frames a face is kept after the detector stops seeing it.
    public var holdFrames = 8
    /// One-euro parameters: cutoff (Hz) for a still face, and its rise per face width per second of motion.
    public var minCutoff = 1.5
    public var beta = 2.0
    /// Smoothing off: boxes are the detector's own (tests, sidecars of raw detections).
    public var smoothing = true

    public init() {}
}

/// Associates each frame's detections with the faces already followed (greedy, best overlap first),
/// smooths each face's centre and size with one-euro filters, keeps faces a few frames after a miss and
/// gives every new face the next id. A value type, updated on the detector thread.
public struct FaceTracker: Sendable {
    public var settings: FaceTrackerSettings
    private struct Track: Sendable {
        var face: TrackedFace
        var lastSeenFrame: Int
        var filters: [OneEuroFilter]
    }
    private var tracks: [Track] = []
    private var nextID = 1
    private var lastTime: Double?

    public init(settings: FaceTrackerSettings = FaceTrackerSettings()) { self.settings = settings }

    /// Feeds the detections of frame `frameIndex` at `time` seconds; returns the faces followed now,
    /// by id.
    public mutating func update(_ detections: [FaceDetection], frameIndex: Int, time: Double) -> [TrackedFace] {
        let interval = lastTime.map { time - $0 } ?? 0
        lastTime = time
        // Every (track, detection) pair that may be the same face, best first.
        var pairs: [(track: Int, detection: Int, score: Double)] = []
        for (t, track) in tracks.enumerated() {
            for (d, detection) in detections.enumerated() {
                let iou = track.face.box.iou(detection.box)
                let jump = simdLength(track.face.box.center - detection.box.center) / max(track.face.box.width, 1)
                if iou >= settings.minIoU {
                    pairs.append((t, d, 1 + iou))
                } else if jump <= settings.maxCentreJump {
                    pairs.append((t, d, 1 - jump))
                }
            }
        }
        pairs.sort { $0.score != $1.score ? $0.score > $1.score : ($0.track, $0.detection) < ($1.track, $1.detection) }
        var trackTaken = Set<Int>(), detectionTaken = Set<Int>()
        for pair in pairs where !trackTaken.contains(pair.track) && !detectionTaken.contains(pair.detection) {
            trackTaken.insert(pair.track)
            detectionTaken.insert(pair.detection)
            let detection = detections[pair.detection]
            tracks[pair.track].face.box = smooth(&tracks[pair.track].filters, detection.box, interval: interval)
            if settings.smoothing {
                tracks[pair.track].face.velocity = SIMD2(tracks[pair.track].filters[0].derivative, tracks[pair.track].filters[1].derivative)
            }
            tracks[pair.track].face.score = detection.score
            tracks[pair.track].lastSeenFrame = frameIndex
        }
        // Unmatched tracks age; those missed for longer than the hold go.
        for index in tracks.indices {
            tracks[index].face.framesSinceSeen = frameIndex - tracks[index].lastSeenFrame
        }
        tracks.removeAll { $0.face.framesSinceSeen > settings.holdFrames }
        // Unmatched detections start new faces.
        for (d, detection) in detections.enumerated() where !detectionTaken.contains(d) {
            var filters = [OneEuroFilter](repeating: OneEuroFilter(minCutoff: settings.minCutoff, beta: settings.beta), count: 4)
            let box = smooth(&filters, detection.box, interval: 0)
            tracks.append(Track(face: TrackedFace(id: nextID, box: box, score: detection.score), lastSeenFrame: frameIndex,
                                filters: filters))
            nextID += 1
        }
        return tracks.map(\.face).sorted { $0.id < $1.id }
    }

    /// Filters centre and size (not corners: a face growing in place should not drift).
    private func smooth(_ filters: inout [OneEuroFilter], _ box: FaceBox, interval: Double) -> FaceBox {
        guard settings.smoothing else { return box }
        let perWidth = 1 / max(box.width, 1)
        let cx = filters[0].filter(box.center.x, interval: interval, speedScale: perWidth)
        let cy = filters[1].filter(box.center.y, interval: interval, speedScale: perWidth)
        let w = filters[2].filter(box.width, interval: interval, speedScale: perWidth)
        let h = filters[3].filter(box.height, interval: interval, speedScale: perWidth)
        return FaceBox(x: cx - w / 2, y: cy - h / 2, width: w, height: h)
    }
}

private func simdLength(_ v: SIMD2<Double>) -> Double { (v * v).sum().squareRoot() }
