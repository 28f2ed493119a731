import Foundation
import PrismCore

/// A face followed across frames: a stable id, its estimated box, the detector's last score, and what the
/// tracker knows of its motion.
package struct TrackedFace: Hashable, Sendable {
    package var id: Int
    /// The box to cover. From the tracker: the estimate for the frame it was asked about (predicted from the
    /// face's motion when the detector did not see it there). From the provider: that estimate moved on to
    /// the frame being drawn and widened by `margin`.
    package var box: FaceBox
    package var score: Double
    /// Frames since the detector last saw this face (0: seen on the frame the box is for).
    package var framesSinceSeen: Int
    /// Seconds since the detector last saw it (media time, so files stay deterministic).
    package var secondsSinceSeen: Double
    /// How fast the box's centre moves, in pixels per second (zero until the face was seen twice).
    package var velocity: SIMD2<Double>
    /// Pixels added on every side of the estimate because it is uncertain (grows with the time since the
    /// face was seen and with its speed); included in `box` once the provider has applied it.
    package var margin: Double
    /// False for a face seen only once: its velocity is unknown, and its margin assumes some motion.
    package var velocityKnown: Bool

    package init(id: Int, box: FaceBox, score: Double, framesSinceSeen: Int = 0, secondsSinceSeen: Double = 0,
                velocity: SIMD2<Double> = .zero, margin: Double = 0, velocityKnown: Bool = true) {
        self.id = id
        self.box = box
        self.score = score
        self.framesSinceSeen = framesSinceSeen
        self.secondsSinceSeen = secondsSinceSeen
        self.velocity = velocity
        self.margin = margin
        self.velocityKnown = velocityKnown
    }

    /// Predicted rather than detected on the frame it is for.
    package var isPredicted: Bool { framesSinceSeen > 0 }

    /// This face `seconds` later (`frames` frames later): moved on at its velocity (for at most
    /// `settings.maxPrediction` seconds since it was seen), widened by the uncertainty of that age.
    package func extrapolated(by seconds: Double, frames: Int, settings: FaceTrackerSettings) -> TrackedFace {
        var face = self
        let dt = max(seconds, 0)
        let moving = max(0, min(secondsSinceSeen + dt, settings.maxPrediction) - min(secondsSinceSeen, settings.maxPrediction))
        face.box.x += velocity.x * moving
        face.box.y += velocity.y * moving
        face.secondsSinceSeen += dt
        face.framesSinceSeen += frames
        face.margin = settings.margin(width: box.width, speed: simdLength(velocity), age: face.secondsSinceSeen, velocityKnown: velocityKnown)
        return face
    }

    /// `box` widened by `margin` on every side.
    package var coveredBox: FaceBox {
        FaceBox(x: box.x - margin, y: box.y - margin, width: box.width + 2 * margin, height: box.height + 2 * margin)
    }
}

/// How detections become tracks, how tracks are predicted, and when they end.
package struct FaceTrackerSettings: Sendable, Equatable {
    /// A detection continues a track when its box overlaps the track's predicted box at least this much (IoU),
    /// or when its centre lies within `maxCentreJump` box widths (plus the track's margin) of the prediction.
    package var minIoU = 0.2
    package var maxCentreJump = 0.5
    /// Seconds a face is predicted after the detector last saw it; then the track ends ("lost" when its
    /// box was still in the frame). 1 s covers a detector that misses a face for a few frames in a row
    /// (head turned, motion blur) without a mask wandering far from where a stopped face is.
    package var lostAfter = 1.0
    /// Seconds since a face was seen during which it is moved on at its velocity; after that it stays
    /// (and its margin keeps growing) until `lostAfter`.
    package var maxPrediction = 1.0
    /// Detections before a track outlives a miss. A new face is covered from its first detection; until its
    /// second it ends at the first miss, so a one-off false detection does not leave a mask for `lostAfter`.
    package var confirmations = 2
    /// Alpha-beta filter gains for the centre (position, velocity). A constant-velocity face is followed
    /// without lag; 0.5 halves ±3 px of frame-to-frame detector jitter on a still face.
    package var positionGain = 0.5
    package var velocityGain = 0.15
    /// How quickly the size follows the detections (a face grows slowly; box sizes jitter).
    package var sizeGain = 0.4
    /// Smoothing off: boxes are the detector's own (tests, sidecars of raw detections); velocity still
    /// comes from the last two detections.
    package var smoothing = true
    /// The margin added on each side of a predicted box: `growth` box widths per second since the face was
    /// seen, plus `speedShare` of the distance it moved meanwhile (a velocity wrong by that share), at most
    /// `maxMargin` box widths.
    package var growth = 0.5
    package var speedShare = 0.3
    package var maxMargin = 1.0

    package init() {}

    /// Speed assumed, in box widths per second, for a face seen only once (its velocity is not known yet):
    /// what matters live, where regions can be several frames old when a new face is first drawn.
    package var unknownSpeed = 1.0

    func margin(width: Double, speed: Double, age: Double, velocityKnown: Bool = true) -> Double {
        guard age > 0 else { return 0 }
        let unknown = velocityKnown ? 0 : width * unknownSpeed * min(age, maxPrediction)
        return min(width * growth * age + speedShare * speed * min(age, maxPrediction) + unknown, width * maxMargin)
    }
}

/// What happened to tracks that ended in one update.
package struct FaceTrackEnding: Sendable, Equatable {
    /// Tracks that ended while their predicted box was still in the frame: the face may still be there.
    package var lost = 0
    /// Tracks whose predicted box left the frame.
    package var left = 0

    package init(lost: Int = 0, left: Int = 0) {
        self.lost = lost
        self.left = left
    }
}

/// Associates each frame's detections with the faces already followed (greedy, best overlap with the
/// predicted boxes first), estimates each face's centre and velocity with an alpha-beta filter (constant
/// velocity), predicts faces the detector missed, ends tracks after `lostAfter` seconds unseen or once
/// they left the frame, and gives every new face the next id. A value type, updated on the detector thread.
package struct FaceTracker: Sendable {
    package var settings: FaceTrackerSettings
    private struct Track: Sendable {
        var id: Int
        var score: Double
        /// The estimate at `seenTime` (the last detection).
        var centre: SIMD2<Double>
        var size: SIMD2<Double>
        var velocity: SIMD2<Double>
        var seenTime: Double
        var seenFrame: Int
        var detections: Int

        func predictedCentre(at time: Double, maxPrediction: Double) -> SIMD2<Double> {
            centre + velocity * min(max(time - seenTime, 0), maxPrediction)
        }
    }
    private var tracks: [Track] = []
    private var nextID = 1
    /// What ended in the last `update`.
    package private(set) var lastEnding = FaceTrackEnding()

    package init(settings: FaceTrackerSettings = FaceTrackerSettings()) { self.settings = settings }

    /// Feeds the detections of frame `frameIndex` at `time` seconds (in a frame of `frameSize`, when known:
    /// tracks predicted out of it end as having left); returns the faces followed now, by id, each at its
    /// estimate for this frame.
    package mutating func update(_ detections: [FaceDetection], frameIndex: Int, time: Double, frameSize: Size? = nil) -> [TrackedFace] {
        let predicted = tracks.map { face($0, frameIndex: frameIndex, time: time) }
        // Every (track, detection) pair that may be the same face, best first.
        var pairs: [(track: Int, detection: Int, score: Double)] = []
        for (t, face) in predicted.enumerated() {
            for (d, detection) in detections.enumerated() {
                let iou = face.box.iou(detection.box)
                let jump = simdLength(face.box.center - detection.box.center) / max(face.box.width, 1)
                let allowed = settings.maxCentreJump + face.margin / max(face.box.width, 1)
                if iou >= settings.minIoU {
                    pairs.append((t, d, 1 + iou))
                } else if jump <= allowed {
                    pairs.append((t, d, 1 - jump / max(allowed, 1e-9)))
                }
            }
        }
        pairs.sort { $0.score != $1.score ? $0.score > $1.score : ($0.track, $0.detection) < ($1.track, $1.detection) }
        var trackTaken = Set<Int>(), detectionTaken = Set<Int>()
        for pair in pairs where !trackTaken.contains(pair.track) && !detectionTaken.contains(pair.detection) {
            trackTaken.insert(pair.track)
            detectionTaken.insert(pair.detection)
            correct(&tracks[pair.track], with: detections[pair.detection], frameIndex: frameIndex, time: time)
        }
        // Unmatched tracks end after `lostAfter` unseen, or once their predicted box is out of the frame.
        var ending = FaceTrackEnding()
        var kept: [Track] = []
        for (index, track) in tracks.enumerated() {
            if trackTaken.contains(index) {
                kept.append(track)
                continue
            }
            let box = predicted[index].box
            if let frameSize, box.x >= Double(frameSize.width) || box.y >= Double(frameSize.height)
                || box.x + box.width <= 0 || box.y + box.height <= 0 {
                ending.left += 1
            } else if track.detections < settings.confirmations {
                // Seen once and missed at the next look: most likely a false detection (a cascade fires on a
                // shoulder or a fold now and then); dropped rather than predicted for a second.
                continue
            } else if time - track.seenTime > settings.lostAfter + 1e-9 {
                ending.lost += 1
            } else {
                kept.append(track)
            }
        }
        tracks = kept
        lastEnding = ending
        // Unmatched detections start new faces.
        for (d, detection) in detections.enumerated() where !detectionTaken.contains(d) {
            tracks.append(Track(id: nextID, score: detection.score, centre: detection.box.center,
                                size: SIMD2(detection.box.width, detection.box.height), velocity: .zero,
                                seenTime: time, seenFrame: frameIndex, detections: 1))
            nextID += 1
        }
        return tracks.map { face($0, frameIndex: frameIndex, time: time) }.sorted { $0.id < $1.id }
    }

    /// The alpha-beta step: the prediction for `time` corrected towards the detection. The second
    /// detection sets the velocity outright (nothing to smooth yet); later ones nudge it.
    private func correct(_ track: inout Track, with detection: FaceDetection, frameIndex: Int, time: Double) {
        let dt = time - track.seenTime
        let measured = detection.box.center, measuredSize = SIMD2(detection.box.width, detection.box.height)
        let prediction = track.centre + track.velocity * max(dt, 0)
        let residual = measured - prediction
        if dt > 0 {
            if track.detections == 1 {
                track.velocity = (measured - track.centre) / dt
            } else {
                track.velocity += residual * (settings.velocityGain / dt)
            }
        }
        if settings.smoothing, track.detections > 1 {
            track.centre = prediction + residual * settings.positionGain
            track.size += (measuredSize - track.size) * settings.sizeGain
        } else {
            track.centre = measured
            track.size = measuredSize
        }
        track.score = detection.score
        track.seenTime = time
        track.seenFrame = frameIndex
        track.detections += 1
    }

    private func face(_ track: Track, frameIndex: Int, time: Double) -> TrackedFace {
        let centre = track.predictedCentre(at: time, maxPrediction: settings.maxPrediction)
        let age = max(time - track.seenTime, 0)
        return TrackedFace(id: track.id,
                           box: FaceBox(x: centre.x - track.size.x / 2, y: centre.y - track.size.y / 2, width: track.size.x, height: track.size.y),
                           score: track.score, framesSinceSeen: frameIndex - track.seenFrame, secondsSinceSeen: age,
                           velocity: track.velocity,
                           margin: settings.margin(width: track.size.x, speed: simdLength(track.velocity), age: age,
                                                   velocityKnown: track.detections > 1),
                           velocityKnown: track.detections > 1)
    }
}

func simdLength(_ v: SIMD2<Double>) -> Double { (v * v).sum().squareRoot() }
