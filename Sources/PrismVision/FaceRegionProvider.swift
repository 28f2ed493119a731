import Dispatch
import Foundation
import PrismCore
import Synchronization

/// Per-frame face regions for the engine: it asks which pictures of a frame the detector wants, hands them
/// over, and asks for the faces to draw each frame with. Called from the engine's threads.
package protocol FaceRegionProvider: Sendable {
    /// The pictures the detector wants of this frame (none: it does not look at it): the whole frame, and a
    /// closer look at each face it missed last time.
    func requests(frameIndex: Int, pts: MediaTime, frameSize: Size) -> [DetectionRequest]
    /// Hands the pictures asked for (in the order asked) to the detector. Never waits for a detection.
    func submit(frameIndex: Int, pts: MediaTime, images: [DetectionImage])
    /// The faces for this frame. Throws the detector's or the sidecar's error (a bad model, a sidecar
    /// without this pts).
    func regions(frameIndex: Int, pts: MediaTime, frameSize: Size) throws -> FaceFrame
    /// What detection cost so far (for `--stats`, bench and the dev page).
    var statistics: FaceDetectorStatistics { get }
    /// Files: how many frames ahead of the GPU the pictures are read (`read`, on the source thread); 0: none,
    /// the pictures are asked for on the GPU thread (`requests`).
    var lookAhead: Int { get }
    /// Look-ahead: frame `frameIndex` as the source reads it (`scene`: its grey as a `SceneSignature` grid,
    /// for telling cuts); `render` draws the pictures the detector wants of it.
    func read(frameIndex: Int, pts: MediaTime, frameSize: Size, scene: [Double],
              render: (DetectionRequest) throws -> DetectionImage) throws
    /// Look-ahead: no frame will be read after those already read.
    func inputEnded()
}

extension FaceRegionProvider {
    package var lookAhead: Int { 0 }
    package func read(frameIndex: Int, pts: MediaTime, frameSize: Size, scene: [Double],
                      render: (DetectionRequest) throws -> DetectionImage) throws {}
    package func inputEnded() {}
}

/// Runs a `FaceDetecting` on its own thread and tracks what it finds.
///
/// - `.everyNth(N)` (files, raw input: no deadline): frames 0, N, 2N… are detected as the source reads them,
///   ahead of the GPU (`read`); frame k is drawn once the detections before and after it are in, its faces
///   interpolated between them (a face first seen at the later one is covered from the frame after the
///   earlier one). The same input always gives the same faces, however threads are scheduled.
/// - `.live` (cameras): pictures are wanted whenever the detector is idle; `submit` never waits and
///   `regions` answers at once with the newest tracked faces and their age in frames.
///
/// Each detection looks at the whole frame and, closer, at every face the previous one missed (a small
/// picture around its predicted place, in which the face is `lookFaceWidth` pixels wide): a face the whole
/// picture misses (small, turned, blurred) is often found there, and a track ends only when such a look
/// finds nothing.
package final class DetectingFaceProvider: FaceRegionProvider {
    package enum Mode: Sendable, Equatable {
        /// Detect frames 0, N, 2N… ahead of the frames, and wait for them: deterministic (files, raw input).
        case everyNth(Int)
        /// Detect whenever the detector is idle, never wait (cameras).
        case live
    }

    /// Files: detect every fourth frame, ahead of the frames; between two detections a face is interpolated.
    /// `--face-every 1` detects every frame (BENCHMARKS.md, "Faces", has what each costs and finds).
    package static let defaultInterval = 4

    package let mode: Mode
    private let queue = DispatchQueue(label: "prism.faces.detector")
    /// Only the detector queue uses it; the mutex makes handing it to that thread safe.
    private let detector: Mutex<any FaceDetecting>
    /// What the detector reads (its name, channels, the smallest face it finds, its size multiple).
    package let input: DetectorInput

    /// One finished detection: the faces followed then, each at its estimate for that frame.
    struct Detected: Sendable {
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
        /// Look-ahead: the source read its last frame.
        var ended = false
        var error: (any Error)?
        var statistics = FaceDetectorStatistics()
        var lossOutstanding = false
        /// The last picture's grid, to tell a cut (live: the last whole picture; files: the last frame read).
        var signature: SceneSignature?
        /// Files: the frames that begin a new scene.
        var cutFrames: Set<Int> = []
    }
    private let state: Mutex<State>
    /// Signalled whenever a detection finishes or is submitted, or the input ends (files wait on it).
    private let changed = NSCondition()

    /// How tracks are predicted and when they end.
    package let tracking: FaceTrackerSettings
    /// The detection resolution.
    package let scale: FaceDetectionScale
    /// Fail safe: while a lost face has not been re-found, the whole frame is covered (one extra face, id 0).
    package let strict: Bool
    /// Closer looks: the face this wide in the picture, the picture this many face widths across.
    package var lookFaceWidth: Double { max(2 * input.smallestFace, 48) }
    package static let lookSpan = 2.5

    package init(detector: sending any FaceDetecting, mode: Mode, tracker: FaceTrackerSettings = FaceTrackerSettings(),
                 maxPrediction: Double? = nil, scale: FaceDetectionScale? = nil, strict: Bool = false) {
        self.mode = mode
        var tracking = tracker
        if let maxPrediction { tracking.maxPrediction = maxPrediction }
        self.tracking = tracking
        let input = detector.input
        self.input = input
        self.scale = scale ?? FaceDetectionScale(detectorFace: input.smallestFace)
        self.strict = strict
        self.detector = Mutex(detector)
        var statistics = FaceDetectorStatistics()
        statistics.detector = input.name
        statistics.smallestFace = Int(self.scale.minFaceSize.rounded(.up))
        state = Mutex(State(tracker: FaceTracker(settings: tracking), statistics: statistics))
    }

    /// The whole frame's picture for a frame of `frame`'s size.
    package func pictureSize(for frame: Size) -> Size {
        scale.pictureSize(for: frame, multiple: input.sizeMultiple, stretch: input.channels == .rgba)
    }

    private var interval: Int? {
        if case .everyNth(let n) = mode { return max(n, 1) }
        return nil
    }

    package var lookAhead: Int { interval ?? 0 }

    // MARK: Pictures

    /// Live: the pictures wanted now (the detector is idle). Files read theirs ahead (`read`).
    package func requests(frameIndex: Int, pts: MediaTime, frameSize: Size) -> [DetectionRequest] {
        guard mode == .live, state.withLock({ $0.inFlight.isEmpty }) else { return [] }
        return [DetectionRequest(channels: input.channels, size: pictureSize(for: frameSize))]
            + looks(frameIndex: frameIndex, pts: pts, frameSize: frameSize, everyFace: false)
    }

    package func read(frameIndex: Int, pts: MediaTime, frameSize: Size, scene: [Double],
                      render: (DetectionRequest) throws -> DetectionImage) throws {
        guard let n = interval else { return }
        // Every frame is compared with the one before: a cut is placed at its very frame.
        let signature = SceneSignature(cells: scene)
        state.withLock { state in
            if let previous = state.signature, signature.difference(from: previous) > Self.cutDifference { state.cutFrames.insert(frameIndex) }
            state.signature = signature
        }
        guard frameIndex % n == 0 else { return }
        // The closer looks follow from the previous detection: it must be in (deterministic).
        wait { $0.inFlight.isEmpty }
        // After a cut every face gets a closer look: one not found there is not in the new scene.
        let cut = state.withLock { state in state.cutFrames.contains { $0 > frameIndex - n && $0 <= frameIndex } }
        let images = try ([DetectionRequest(channels: input.channels, size: pictureSize(for: frameSize))]
                          + looks(frameIndex: frameIndex, pts: pts, frameSize: frameSize, everyFace: cut)).map(render)
        submit(frameIndex: frameIndex, pts: pts, images: images, cut: cut)
    }

    package func inputEnded() {
        state.withLock { $0.ended = true }
        signal()
    }

    /// A closer look at each face the last detection missed (`everyFace`: at every face followed).
    private func looks(frameIndex: Int, pts: MediaTime, frameSize: Size, everyFace: Bool) -> [DetectionRequest] {
        state.withLock { $0.tracker.predicted(frameIndex: frameIndex, time: pts.seconds) }
            .filter { everyFace || $0.missed }.compactMap { look(at: $0.face, frameSize: frameSize) }
    }

    /// Live: whether `whole` shows another scene than the previous detection's picture (a cut): the mean
    /// difference of their 16x12 grids of mean grey is over `cutDifference` (OpenCV's Megamind: its four cuts
    /// 35–41 codes apart four frames on, everything else under 10). Files compare every frame as it is read.
    private func isCut(_ whole: DetectionImage) -> Bool {
        let signature = SceneSignature(whole)
        return state.withLock { state in
            defer { state.signature = signature }
            guard let previous = state.signature else { return false }
            return signature.difference(from: previous) > Self.cutDifference
        }
    }
    package static let cutDifference = 20.0

    /// A square picture `lookSpan` face widths across around the face's predicted place (its margin included),
    /// sized so that the face is `lookFaceWidth` pixels wide in it; nil when that place is out of the frame.
    func look(at face: TrackedFace, frameSize: Size) -> DetectionRequest? {
        let box = face.coveredBox
        guard FaceTracker.overlaps(box, frameSize) else { return nil }
        let side = Self.lookSpan * max(face.box.width, face.box.height) + 2 * face.margin
        let multiple = Double(input.sizeMultiple)
        let pixels = max(multiple, ((Self.lookSpan * lookFaceWidth) / multiple).rounded(.up) * multiple)
        let centre = box.center
        return DetectionRequest(channels: input.channels, size: Size(width: Int(pixels), height: Int(pixels)),
                                area: FaceBox(x: centre.x - side / 2, y: centre.y - side / 2, width: side, height: side), track: face.id)
    }

    // MARK: Detection

    package func submit(frameIndex: Int, pts: MediaTime, images: [DetectionImage]) {
        guard let whole = images.first else { return }
        submit(frameIndex: frameIndex, pts: pts, images: images, cut: isCut(whole))
    }

    /// Runs the detector on `images` (the whole picture first, then closer looks) on its thread; `cut`: the
    /// whole picture shows another scene than the last one.
    private func submit(frameIndex: Int, pts: MediaTime, images: [DetectionImage], cut: Bool) {
        guard let whole = images.first else { return }
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
        signal()
        let looks = Array(images.dropFirst())
        queue.async { [self] in
            let start = DispatchTime.now().uptimeNanoseconds
            let result = Result { try detector.withLock { detector -> (faces: [FaceDetection], found: Int) in
                var faces = try detector.detect(whole)
                var found = 0
                for image in looks {
                    let closer = try detector.detect(image).map { face in
                        var marked = face
                        marked.fromCloserLook = true
                        marked.lookedFor = image.track
                        return marked
                    }
                    if !closer.isEmpty { found += 1 }
                    faces += closer
                }
                return (looks.isEmpty ? faces : Self.merged(faces), found)
            } }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            state.withLock { state in
                state.inFlight.remove(frameIndex)
                state.statistics.detections += 1
                state.statistics.detectSeconds += seconds
                state.statistics.lastDetectSeconds = seconds
                state.statistics.slowestDetectSeconds = max(state.statistics.slowestDetectSeconds, seconds)
                state.statistics.inputSize = whole.size
                switch result {
                case .success(let (detections, found)):
                    state.statistics.looks += looks.count
                    state.statistics.looksFound += found
                    let faces = state.tracker.update(detections, frameIndex: frameIndex, time: pts.seconds,
                                                     frameSize: whole.frameSize, looked: Set(looks.compactMap(\.track)), cut: cut)
                    if cut { state.statistics.cuts += 1 }
                    let ending = state.tracker.lastEnding
                    state.statistics.facesLost += ending.lost
                    state.statistics.facesLostAtEdge += ending.lostAtEdge
                    // A loss stays outstanding until the detector finds a face again (re-found, or another).
                    if !detections.isEmpty { state.lossOutstanding = false }
                    if ending.lost > 0 { state.lossOutstanding = true }
                    state.detected.append(Detected(frameIndex: frameIndex, pts: pts, faces: faces, lossOutstanding: state.lossOutstanding))
                    state.detected.sort { $0.frameIndex < $1.frameIndex }
                case .failure(let error):
                    if state.error == nil { state.error = error }
                }
            }
            signal()
        }
    }

    /// The same face seen in the whole picture and in a closer look: the stronger detection stays, and keeps
    /// the track the look was for.
    static func merged(_ faces: [FaceDetection]) -> [FaceDetection] {
        var kept = CenterFaceDecoder.suppressed(faces, overlap: 0.3)
        for face in faces where face.lookedFor != nil {
            if let index = kept.firstIndex(where: { $0.lookedFor == nil && $0.box.iou(face.box) >= 0.3 }) {
                kept[index].lookedFor = face.lookedFor
            }
        }
        return kept
    }

    private func signal() {
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }

    /// Blocks until `ready` holds for the state (re-checked whenever it changes).
    private func wait(until ready: (State) -> Bool) {
        changed.lock()
        defer { changed.unlock() }
        while !state.withLock({ ready($0) }) { changed.wait() }
    }

    // MARK: Regions

    package func regions(frameIndex: Int, pts: MediaTime, frameSize: Size) throws -> FaceFrame {
        var later: Int?
        if let n = interval {
            // The detections before and after this frame (the later one unless the input ended first).
            let earlier = frameIndex / n * n
            later = frameIndex == earlier ? nil : earlier + n
            // A detection is in when it finished, or will never come: not submitted by the time the input ended.
            let frameLater = later
            wait { state in
                func settled(_ index: Int) -> Bool {
                    state.detected.contains { $0.frameIndex == index } || (state.ended && !state.submitted.contains(index))
                }
                return state.error != nil || (settled(earlier) && frameLater.map(settled) ?? true)
            }
        }
        return try state.withLock { state in
            if let error = state.error { throw error }
            // Newest detection not after this frame (live: the newest one of all, which may be from a
            // later frame only if frames are asked for out of order).
            guard let usable = state.detected.last(where: { $0.frameIndex <= frameIndex }) else {
                state.statistics.framesServed += 1
                return FaceFrame(frameIndex: frameIndex, pts: pts, frameSize: frameSize, faces: [], age: nil)
            }
            var next = later.flatMap { index in state.detected.first { $0.frameIndex == index } }
            // A cut between the two detections: the frames before it are the earlier scene's, those from it on
            // the later's.
            var from = usable
            if let next = next, let cut = state.cutFrames.filter({ $0 > usable.frameIndex && $0 <= next.frameIndex }).min() {
                if frameIndex >= cut { from = Detected(frameIndex: usable.frameIndex, pts: usable.pts, faces: [], lossOutstanding: false) }
            }
            if let cut = next.flatMap({ next in state.cutFrames.filter { $0 > usable.frameIndex && $0 <= next.frameIndex }.min() }),
               frameIndex < cut {
                next = nil
            }
            state.cutFrames = state.cutFrames.filter { $0 > usable.frameIndex }
            // Older detections will not be needed again: frames are asked for in order.
            state.detected.removeAll { $0.frameIndex < usable.frameIndex }
            state.submitted.removeAll { $0 < usable.frameIndex }
            let age = frameIndex - usable.frameIndex
            state.statistics.framesServed += 1
            state.statistics.ageSum += age
            state.statistics.maxAge = max(state.statistics.maxAge, age)
            var faces = Self.faces(at: pts, frames: age, from: from, to: next, settings: tracking).map { face in
                // At the sidecar's precision (1/100 px), so a run replayed from its sidecar draws the same picture.
                var covered = face
                let box = face.coveredBox
                func hundredths(_ v: Double) -> Double { (v * 100).rounded() / 100 }
                covered.box = FaceBox(x: hundredths(box.x), y: hundredths(box.y), width: hundredths(box.width), height: hundredths(box.height))
                return covered
            }.filter { FaceTracker.overlaps($0.box, frameSize) }
            if !faces.isEmpty { state.statistics.framesWithFaces += 1 }
            if faces.contains(where: \.isPredicted) { state.statistics.framesPredicted += 1 }
            if usable.lossOutstanding {
                state.statistics.framesLost += 1
                if strict { faces.append(Self.wholeFrame(frameSize)) }
            }
            return FaceFrame(frameIndex: frameIndex, pts: pts, frameSize: frameSize, faces: faces, age: age)
        }
    }

    /// The faces at `pts`, `frames` frames after detection `earlier`: each face of `earlier` moved on from it,
    /// or (when `later` has it too) interpolated between the two with a margin for motion that is not linear;
    /// each face first seen at `later` held at its place there, widened for the motion it may have made
    /// meanwhile. Each face's `margin` is what is added around its `box` (`coveredBox`).
    static func faces(at pts: MediaTime, frames: Int, from earlier: Detected, to later: Detected?,
                      settings: FaceTrackerSettings) -> [TrackedFace] {
        let elapsed = max((pts - earlier.pts).seconds, 0)
        guard let later else {
            return earlier.faces.map { $0.extrapolated(by: elapsed, frames: frames, settings: settings) }
        }
        let span = max((later.pts - earlier.pts).seconds, 1e-9), share = min(elapsed / span, 1)
        var faces: [TrackedFace] = earlier.faces.map { face in
            guard let next = later.faces.first(where: { $0.id == face.id }) else {
                return face.extrapolated(by: elapsed, frames: frames, settings: settings)
            }
            let from = face.coveredBox, to = next.coveredBox
            func mix(_ a: Double, _ b: Double) -> Double { a + (b - a) * share }
            var between = face
            between.box = FaceBox(x: mix(from.x, to.x), y: mix(from.y, to.y), width: mix(from.width, to.width), height: mix(from.height, to.height))
            // A face does not move in a straight line between two looks: a twentieth of its width, and a quarter
            // of the distance it went, on every side (beyond the margins both ends already have).
            between.margin = 0.05 * between.box.width + 0.25 * simdLength(to.center - from.center)
            between.framesSinceSeen = face.framesSinceSeen + frames
            between.secondsSinceSeen = face.secondsSinceSeen + elapsed
            return between
        }
        let known = Set(earlier.faces.map(\.id))
        for face in later.faces where !known.contains(face.id) {
            var held = face
            let before = max((later.pts - pts).seconds, 0)
            held.margin = settings.margin(width: face.box.width, speed: 0, age: before, velocityKnown: false)
            held.framesSinceSeen = 1
            faces.append(held)
        }
        return faces
    }

    /// A face box centred on the frame and so much wider than it that any `face-mask` is opaque over the
    /// whole frame.
    static func wholeFrame(_ frame: Size) -> TrackedFace {
        let side = 8 * Double(max(frame.width, frame.height))
        return TrackedFace(id: 0, box: FaceBox(x: Double(frame.width) / 2 - side / 2, y: Double(frame.height) / 2 - side / 2,
                                               width: side, height: side), score: 0)
    }

    package var statistics: FaceDetectorStatistics { state.withLock { $0.statistics } }

    /// Waits for every submitted detection (end of a run, tests).
    package func drain() { queue.sync {} }
}

/// A picture reduced to a 16x12 grid of mean grey (0...255): two pictures of one scene are close, a cut is not.
package struct SceneSignature: Sendable {
    package static let columns = 16, rows = 12
    let cells: [Double]

    /// A grid made elsewhere (`FramePictures.greyGrid`), `columns`×`rows` cells.
    package init(cells: [Double]) { self.cells = cells }

    package init(_ image: DetectionImage) {
        let w = image.size.width, h = image.size.height, step = image.channels.bytesPerPixel
        var sums = [Double](repeating: 0, count: Self.columns * Self.rows), counts = sums
        image.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<h {
                let row = y * Self.rows / max(h, 1) * Self.columns
                for x in 0..<w {
                    let i = (y * w + x) * step
                    let grey = step == 1 ? Double(pixels[i])
                        : 0.299 * Double(pixels[i]) + 0.587 * Double(pixels[i + 1]) + 0.114 * Double(pixels[i + 2])
                    sums[row + x * Self.columns / max(w, 1)] += grey
                    counts[row + x * Self.columns / max(w, 1)] += 1
                }
            }
        }
        cells = zip(sums, counts).map { $1 > 0 ? $0 / $1 : 0 }
    }

    /// The mean absolute difference of the cells, in grey codes.
    package func difference(from other: SceneSignature) -> Double {
        zip(cells, other.cells).reduce(0) { $0 + abs($1.0 - $1.1) } / Double(cells.count)
    }
}
