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
    /// Leaving through an edge: moved on at its velocity until out of the frame, however long that takes.
    package var leaving = false

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
        let limit = leaving ? Double.infinity : settings.maxPrediction
        let moving = max(0, min(secondsSinceSeen + dt, limit) - min(secondsSinceSeen, limit))
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
    /// Seconds unseen before a face seen more than once may end ("lost" when its box was still in the frame).
    /// 1 s covers a detector that misses a face for a few frames in a row (head turned, motion blur).
    package var lostAfter = 1.0
    /// Seconds unseen before a face seen only once may end: its grace time. A one-off false detection costs a
    /// mask for this long; a real face the detector then misses stays covered meanwhile.
    package var graceTime = 0.5
    /// Seconds since a face was seen during which it is moved on at its velocity; after that it stays
    /// (and its margin keeps growing) until it ends. A face leaving through an edge is moved on until out.
    package var maxPrediction = 1.0
    /// A face whose box comes within this share of its width of an edge, moving towards it, is leaving: it
    /// is moved on at its velocity until its box is out of the frame, however long that takes.
    package var edgeReach = 0.5
    /// Alpha-beta filter gains for the centre (position, velocity). A constant-velocity face is followed
    /// without lag; 0.5 halves ±3 px of frame-to-frame detector jitter on a still face.
    package var positionGain = 0.5
    package var velocityGain = 0.15
    /// How quickly a shrinking size follows the detections (a growing one is taken at once).
    package var sizeGain = 0.7
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

    /// Added around every box, detected or not: two detectors' boxes of one face differ by about this much
    /// (CenterFace at 384x288 against itself at full resolution on Megamind: the top edge by up to a fifth
    /// of the height).
    package var baseMargin = 0.1

    func margin(width: Double, speed: Double, age: Double, velocityKnown: Bool = true) -> Double {
        let base = width * baseMargin
        guard age > 0 else { return base }
        let unknown = velocityKnown ? 0 : width * unknownSpeed * min(age, maxPrediction)
        return base + min(width * growth * age + speedShare * speed * min(age, maxPrediction) + unknown, width * maxMargin)
    }
}

/// What happened to tracks that ended in one update.
package struct FaceTrackEnding: Sendable, Equatable {
    /// Tracks that ended unseen (their time up, and a look at their predicted place found nothing) while their
    /// predicted box was still in the frame: the face may still have been there.
    package var lost = 0
    /// Of `lost`, those whose box touched an edge of the frame.
    package var lostAtEdge = 0
    /// Tracks whose predicted box left the frame.
    package var left = 0
    /// Tracks that ended at a cut: the scene changed and a look at their place found nothing.
    package var atCut = 0

    package init(lost: Int = 0, lostAtEdge: Int = 0, left: Int = 0, atCut: Int = 0) {
        self.lost = lost
        self.lostAtEdge = lostAtEdge
        self.left = left
        self.atCut = atCut
    }
}

/// Associates each frame's detections with the faces already followed (greedy, best overlap with the
/// predicted boxes first), estimates each face's centre and velocity with an alpha-beta filter (constant
/// velocity), predicts faces the detector missed, and gives every new face the next id. A track ends only
/// when its box has left the frame, or when it has been unseen for its time (`graceTime` for a face seen
/// once, `lostAfter` otherwise) *and* a look at its predicted place found nothing; a face leaving through an
/// edge is moved on until its box is out. A value type, updated on the detector thread.
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
        /// Near an edge and moving towards it when last seen: predicted on until out of the frame.
        var leaving = false
        /// Last found by a closer look, not in the whole picture: the next detection looks closely again.
        var seenCloser = false
        /// Unseen since a cut: ends at the first look at its place that finds nothing, whatever its time.
        var afterCut = false

        func predictedCentre(at time: Double, maxPrediction: Double) -> SIMD2<Double> {
            centre + velocity * min(max(time - seenTime, 0), leaving ? .infinity : maxPrediction)
        }
    }
    private var tracks: [Track] = []
    private var nextID = 1
    /// What ended in the last `update`.
    package private(set) var lastEnding = FaceTrackEnding()

    package init(settings: FaceTrackerSettings = FaceTrackerSettings()) { self.settings = settings }

    /// The faces followed now, each predicted to `time` (frame `frameIndex`), with whether the whole picture
    /// missed it at the last pass (unseen, or found only by a closer look): where a closer look is wanted.
    package func predicted(frameIndex: Int, time: Double) -> [(face: TrackedFace, missed: Bool)] {
        tracks.map { (face($0, frameIndex: frameIndex, time: time), $0.seenTime < lastUpdateTime || $0.seenCloser) }
    }
    private var lastUpdateTime = -Double.infinity

    /// Feeds the detections of frame `frameIndex` at `time` seconds (in a frame of `frameSize`, when known:
    /// tracks predicted out of it end as having left); returns the faces followed now, by id, each at its
    /// estimate for this frame. `looked`: the tracks whose predicted place the detector looked at closely in
    /// this pass (nil: the whole picture was the look for every track); an unmatched track past its time ends
    /// only if it was looked at. `cut`: the picture shows another scene than the last pass's: an unmatched track
    /// ends at the first look at its place that finds nothing, however short its time unseen.
    package mutating func update(_ detections: [FaceDetection], frameIndex: Int, time: Double, frameSize: Size? = nil,
                                 looked: Set<Int>? = nil, cut: Bool = false) -> [TrackedFace] {
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
                } else if detection.lookedFor == face.id {
                    // Found by the closer look made for this face (around its predicted place): it is this face
                    // unless a nearer track claims it (a face seen once moves at a speed not known yet).
                    pairs.append((t, d, 1e-3))
                }
            }
        }
        pairs.sort { $0.score != $1.score ? $0.score > $1.score : ($0.track, $0.detection) < ($1.track, $1.detection) }
        var trackTaken = Set<Int>(), detectionTaken = Set<Int>()
        for pair in pairs where !trackTaken.contains(pair.track) && !detectionTaken.contains(pair.detection) {
            trackTaken.insert(pair.track)
            detectionTaken.insert(pair.detection)
            correct(&tracks[pair.track], with: detections[pair.detection], frameIndex: frameIndex, time: time, frameSize: frameSize)
        }
        var ending = FaceTrackEnding()
        var kept: [Track] = []
        for (index, var track) in tracks.enumerated() {
            if trackTaken.contains(index) {
                track.afterCut = false
                kept.append(track)
                continue
            }
            if cut { track.afterCut = true }
            if !ends(track, box: predicted[index].box, time: time, frameSize: frameSize, looked: looked, ending: &ending) {
                kept.append(track)
            }
        }
        tracks = kept
        lastEnding = ending
        lastUpdateTime = time
        // Unmatched detections start new faces.
        for (d, detection) in detections.enumerated() where !detectionTaken.contains(d) {
            var track = Track(id: nextID, score: detection.score, centre: detection.box.center,
                              size: SIMD2(detection.box.width, detection.box.height), velocity: .zero,
                              seenTime: time, seenFrame: frameIndex, detections: 1)
            track.leaving = false
            tracks.append(track)
            nextID += 1
        }
        return tracks.map { face($0, frameIndex: frameIndex, time: time) }.sorted { $0.id < $1.id }
    }

    /// Whether an unmatched track ends now, counting how in `ending`.
    private func ends(_ track: Track, box: FaceBox, time: Double, frameSize: Size?, looked: Set<Int>?,
                      ending: inout FaceTrackEnding) -> Bool {
        if let frameSize, !Self.overlaps(box, frameSize) {
            ending.left += 1
            return true
        }
        if track.afterCut, looked?.contains(track.id) ?? true {
            ending.atCut += 1
            return true
        }
        let limit = track.detections > 1 ? settings.lostAfter : settings.graceTime
        guard time - track.seenTime > limit + 1e-9 else { return false }
        // Leaving through an edge: moved on until out (above); a look that was not made is waited for.
        if track.leaving, simdLength(track.velocity) > 0 { return false }
        if let looked, !looked.contains(track.id) { return false }
        ending.lost += 1
        if let frameSize, Self.touchesEdge(box, frameSize) { ending.lostAtEdge += 1 }
        return true
    }

    static func overlaps(_ box: FaceBox, _ frame: Size) -> Bool {
        box.x < Double(frame.width) && box.y < Double(frame.height) && box.x + box.width > 0 && box.y + box.height > 0
    }

    static func touchesEdge(_ box: FaceBox, _ frame: Size) -> Bool {
        box.x <= 0 || box.y <= 0 || box.x + box.width >= Double(frame.width) || box.y + box.height >= Double(frame.height)
    }

    /// The alpha-beta step: the prediction for `time` corrected towards the detection. The second
    /// detection sets the velocity outright (nothing to smooth yet); later ones nudge it.
    private func correct(_ track: inout Track, with detection: FaceDetection, frameIndex: Int, time: Double, frameSize: Size?) {
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
            // Smoothed against jitter, but never behind the face: a move of more than a tenth of its width
            // (a turn, a jump) is taken as measured, and a face that grew is as large as measured at once
            // (it shrinks smoothly).
            let jump = simdLength(residual) > 0.1 * max(measuredSize.x, 1)
            track.centre = jump ? measured : prediction + residual * settings.positionGain
            let smoothed = track.size + (measuredSize - track.size) * settings.sizeGain
            track.size = SIMD2(max(smoothed.x, measuredSize.x), max(smoothed.y, measuredSize.y))
        } else {
            track.centre = measured
            track.size = measuredSize
        }
        track.score = detection.score
        track.seenCloser = detection.fromCloserLook
        track.seenTime = time
        track.seenFrame = frameIndex
        track.detections += 1
        track.leaving = frameSize.map { isLeaving(centre: track.centre, size: track.size, velocity: track.velocity, frame: $0) } ?? false
    }

    /// Within `edgeReach` box widths of an edge and moving towards it.
    private func isLeaving(centre: SIMD2<Double>, size: SIMD2<Double>, velocity: SIMD2<Double>, frame: Size) -> Bool {
        let reach = settings.edgeReach * size.x
        let left = centre.x - size.x / 2, right = centre.x + size.x / 2, top = centre.y - size.y / 2, bottom = centre.y + size.y / 2
        return (left <= reach && velocity.x < 0) || (right >= Double(frame.width) - reach && velocity.x > 0)
            || (top <= reach && velocity.y < 0) || (bottom >= Double(frame.height) - reach && velocity.y > 0)
    }

    private func face(_ track: Track, frameIndex: Int, time: Double) -> TrackedFace {
        let centre = track.predictedCentre(at: time, maxPrediction: settings.maxPrediction)
        let age = max(time - track.seenTime, 0)
        var face = TrackedFace(id: track.id,
                               box: FaceBox(x: centre.x - track.size.x / 2, y: centre.y - track.size.y / 2, width: track.size.x, height: track.size.y),
                               score: track.score, framesSinceSeen: frameIndex - track.seenFrame, secondsSinceSeen: age,
                               velocity: track.velocity,
                               margin: settings.margin(width: track.size.x, speed: simdLength(track.velocity), age: age,
                                                       velocityKnown: track.detections > 1),
                               velocityKnown: track.detections > 1)
        face.leaving = track.leaving
        return face
    }
}

func simdLength(_ v: SIMD2<Double>) -> Double { (v * v).sum().squareRoot() }
