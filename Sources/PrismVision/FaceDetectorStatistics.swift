import Foundation
import PrismCore

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
    /// Of `facesLost`, the tracks whose box touched an edge of the frame when they ended.
    public var facesLostAtEdge = 0
    /// Cuts seen (a whole picture unlike the previous one): every face then gets a closer look.
    public var cuts = 0
    /// Closer looks at faces the detector had missed (each a small picture around the predicted face), and
    /// how many of them found the face again.
    public var looks = 0
    public var looksFound = 0
    /// Frames served with at least one face, and the most faces in one frame.
    public var framesWithFaces = 0
    /// The detector ("CenterFace", "OpenCV's Haar cascade"); empty for a sidecar.
    public var detector = ""
    /// Faces narrower than this many frame pixels are not looked for (nil: a sidecar, or not known).
    public var smallestFace: Int?

    /// All figures zero.
    public init() {}

    /// Mean milliseconds per detection; 0 before the first.
    public var meanDetectMilliseconds: Double { detections == 0 ? 0 : detectSeconds * 1000 / Double(detections) }
    /// Mean age of the regions served, in frames; 0 before any frame was served.
    public var meanAge: Double { framesServed == 0 ? 0 : Double(ageSum) / Double(framesServed) }

    /// One line for reports: "face detector: CenterFace, 12.3 ms per detection on 640x352 (40 runs), …".
    public var summary: String {
        let input = inputSize.map { " on \($0)" } ?? ""
        let name = detector.isEmpty ? "" : detector + ", "
        var line = String(format: "face detector: %@%.1f ms per detection%@ (%d run(s), slowest %.1f ms), regions %.1f frames old on average (max %d)",
                          name, meanDetectMilliseconds, input, detections, slowestDetectSeconds * 1000, meanAge, maxAge)
        if skipped > 0 { line += ", \(skipped) picture(s) skipped while busy" }
        if looks > 0 { line += "; \(looks) closer look(s) at missed faces, \(looksFound) found again" }
        if cuts > 0 { line += "; \(cuts) cut(s)" }
        line += "; \(framesPredicted) frame(s) with a face predicted, not detected; \(framesLost) frame(s) after \(facesLost) face(s) lost"
        if facesLostAtEdge > 0 { line += " (\(facesLostAtEdge) at an edge)" }
        return line
    }

    /// What to say when no frame had a face: nil when one had. "no face found; faces under 40 px are not looked for".
    public var noFaceNote: String? {
        guard framesServed > 0, framesWithFaces == 0 else { return nil }
        return "no face found" + (smallestFace.map { "; faces under \($0) px are not looked for (\(Setting.faceMinSize))" } ?? "")
    }

    /// What to say when tracks ended while their face may still have been in view: nil when none did.
    public var lossNote: String? {
        guard facesLost > 0 else { return nil }
        return "\(facesLost) face track(s) ended while the face may still have been in view"
            + (facesLostAtEdge > 0 ? " (\(facesLostAtEdge) at an edge of the frame)" : "")
            + ", \(framesLost) frame(s) after before a face was found again (\(Setting.facesStrict) covers the whole frame then)"
    }
}
