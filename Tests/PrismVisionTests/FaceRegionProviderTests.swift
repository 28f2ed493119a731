import Synchronization
import XCTest
import PrismCore
import PrismVision

/// The provider as the engine drives it, without the engine: a file's pictures are read ahead on one thread
/// while another asks for each frame's faces, and the answers never depend on their timing; live never waits.
final class FaceRegionProviderTests: XCTestCase {
    private static func pts(_ frame: Int) -> MediaTime { MediaTime(value: Int64(frame), timescale: 30) }
    /// A frame's grey grid: one grey everywhere (frames of one scene share it; a cut changes it).
    private static func scene(_ grey: Double) -> [Double] {
        [Double](repeating: grey, count: SceneSignature.columns * SceneSignature.rows)
    }
    private static let frameSize = Size(width: 640, height: 360)

    /// A detector that sees the frame number in the picture and puts the face at x = 10·frame (centre 40 px
    /// further), after a random delay (so thread timing varies from run to run). `from`: the face shows from then on.
    private static func movingFaceDetector(seed: UInt64, from: Int = 0) -> ScriptedDetector {
        let state = Mutex(seed)
        return ScriptedDetector { image in
            let delay = state.withLock { state -> UInt64 in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return (state >> 33) % 4000
            }
            usleep(UInt32(delay))
            let frame = Int(image.pixels[0])
            guard frame >= from else { return [] }
            return [FaceDetection(box: FaceBox(x: 10 * Double(frame), y: 50, width: 80, height: 80), score: 5)]
        }
    }

    /// 30 frames the way the engine runs a file: a source thread reads every frame (`read`, drawing the pictures
    /// asked for) up to `ahead` frames before the frame being drawn, which asks for its faces (`regions`).
    private func runFile(_ provider: DetectingFaceProvider, ahead: Int, frames count: Int = 30,
                         scene: @escaping @Sendable (Int) -> Double = { _ in 100 }) throws -> [FaceFrame] {
        let drawn = Atomic<Int>(-1)
        let reader = Thread {
            for frame in 0..<count {
                while frame > drawn.load(ordering: .acquiring) + ahead + 1 { usleep(200) }
                try? provider.read(frameIndex: frame, pts: Self.pts(frame), frameSize: Self.frameSize,
                                   scene: Self.scene(scene(frame))) { markedImage(frame, $0) }
            }
            provider.inputEnded()
        }
        reader.start()
        var frames: [FaceFrame] = []
        for frame in 0..<count {
            frames.append(try provider.regions(frameIndex: frame, pts: Self.pts(frame), frameSize: Self.frameSize))
            drawn.store(frame, ordering: .releasing)
        }
        return frames
    }

    func testFilesAreDeterministicAndInterpolatedBetweenDetections() throws {
        let every = 3
        let reference = try runFile(DetectingFaceProvider(detector: Self.movingFaceDetector(seed: 1), mode: .everyNth(every)), ahead: every)
        for frame in reference {
            XCTAssertEqual(frame.age, frame.frameIndex % every, "frame \(frame.frameIndex): the detection before it")
            XCTAssertEqual(frame.faces.map(\.id), [1], "frame \(frame.frameIndex)")
            // The face moves 10 px a frame; between two detections it is where it is, not where it was.
            XCTAssertEqual(frame.faces.first?.box.center.x ?? 0, 10 * Double(frame.frameIndex) + 40, accuracy: 0.02, "frame \(frame.frameIndex)")
            let margin = frame.faces.first.map { ($0.box.width - 80) / 2 } ?? 0
            XCTAssertGreaterThanOrEqual(margin, 8 - 0.01, "frame \(frame.frameIndex): a tenth of the width around every box")
        }
        XCTAssertEqual(reference.filter { $0.faces.first?.isPredicted == true }.map(\.frameIndex),
                       (0..<30).filter { $0 % every != 0 })
        // Other timings, pictures read further ahead: the same faces for every frame.
        for (ahead, seed) in [(3, 2), (5, 3), (8, 4)] {
            let provider = DetectingFaceProvider(detector: Self.movingFaceDetector(seed: UInt64(seed)), mode: .everyNth(every))
            XCTAssertEqual(try runFile(provider, ahead: ahead), reference, "ahead \(ahead)")
            XCTAssertEqual(provider.statistics.detections, 10)
            XCTAssertEqual(provider.lookAhead, every)
        }
        // Files read their pictures ahead; the GPU thread is asked for none.
        XCTAssertEqual(DetectingFaceProvider(detector: Self.movingFaceDetector(seed: 0), mode: .everyNth(3))
                        .requests(frameIndex: 3, pts: Self.pts(3), frameSize: Self.frameSize), [])
    }

    /// A face that first shows between two detections is covered from the frame after the earlier one: the
    /// later detection saw it, and the frames between wait for it.
    func testAFaceFirstSeenAtTheNextDetectionIsCoveredBeforeIt() throws {
        let provider = DetectingFaceProvider(detector: Self.movingFaceDetector(seed: 5, from: 6), mode: .everyNth(4))
        let frames = try runFile(provider, ahead: 4, frames: 12)
        XCTAssertEqual(frames.map { $0.faces.count }, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1])
        // Held where the later detection saw it (x 80…160 at frame 8), widened for the motion it may have made.
        for frame in frames[5...7] {
            let box = try XCTUnwrap(frame.faces.first?.box)
            XCTAssertLessThanOrEqual(box.x, 80, "frame \(frame.frameIndex)")
            XCTAssertGreaterThanOrEqual(box.x + box.width, 160, "frame \(frame.frameIndex)")
        }
    }

    /// A cut at frame 6 between detections 4 and 8: frames 5 is the old scene's (its face moved on), frames 6
    /// and 7 the new one's (the new face, held where detection 8 saw it); the old face's track ends at the cut
    /// once a look at its place finds nothing, instead of lingering over the new scene for its second.
    func testACutEndsTheOldScenesFacesAtItsFrame() throws {
        let detector = ScriptedDetector { image in
            let frame = Int(image.pixels[0])
            if frame < 6 { return image.track == nil ? [FaceDetection(box: FaceBox(x: 100, y: 50, width: 80, height: 80), score: 5)] : [] }
            return image.track == nil ? [FaceDetection(box: FaceBox(x: 400, y: 200, width: 60, height: 60), score: 5)] : []
        }
        let provider = DetectingFaceProvider(detector: detector, mode: .everyNth(4))
        let frames = try runFile(provider, ahead: 4, frames: 16) { $0 < 6 ? 100 : 30 }
        XCTAssertEqual(frames[5].faces.map(\.id), [1])
        for n in 6..<16 {
            XCTAssertEqual(frames[n].faces.map(\.id), [2], "frame \(n): only the new scene's face")
            XCTAssertGreaterThan(frames[n].faces.first?.box.x ?? 0, 300, "frame \(n)")
        }
        XCTAssertEqual(provider.statistics.cuts, 1)
        XCTAssertEqual(provider.statistics.facesLost, 0, "ended at the cut, not lost")
    }

    /// The input ends between two detections: the last frames are drawn from the last detection alone.
    func testTheLastFramesAfterTheLastDetectionDoNotWait() throws {
        let provider = DetectingFaceProvider(detector: Self.movingFaceDetector(seed: 6), mode: .everyNth(4))
        let frames = try runFile(provider, ahead: 4, frames: 11)
        XCTAssertEqual(frames.count, 11)
        XCTAssertEqual(frames.map(\.age), [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2])
        XCTAssertEqual(provider.statistics.detections, 3)
    }

    /// A face the whole picture misses gets a closer look around its predicted place; while looks find it,
    /// its track goes on, and once a look finds nothing (and its grace time is up) it ends.
    func testMissedFacesGetACloserLookAndEndOnlyWhenItFindsNothing() throws {
        let looks = Mutex<[(frame: Int, area: FaceBox)]>([])
        let detector = ScriptedDetector { image in
            let frame = Int(image.pixels[0])
            if image.track != nil {
                looks.withLock { $0.append((frame, image.area)) }
                // Closer looks find the face until frame 20.
                return frame < 20 ? [FaceDetection(box: FaceBox(x: 300, y: 100, width: 60, height: 60), score: 1)] : []
            }
            // The whole picture sees it on frame 0 only.
            return frame == 0 ? [FaceDetection(box: FaceBox(x: 300, y: 100, width: 60, height: 60), score: 1)] : []
        }
        let provider = DetectingFaceProvider(detector: detector, mode: .everyNth(2))
        let frames = try runFile(provider, ahead: 2, frames: 60)
        let covered = frames.filter { !$0.faces.isEmpty }.map(\.frameIndex)
        // Looked at from frame 4 (frame 2 missed it) at every detection, found until frame 18; then looks find
        // nothing, and the track ends once it is unseen for more than its second (seen more than once): at the
        // first detection after frame 48, frame 50; frame 49 still has it (between 48 and 50).
        XCTAssertEqual(looks.withLock { $0.first?.frame }, 4)
        XCTAssertTrue(looks.withLock { $0.allSatisfy { $0.area.x < 300 && $0.area.x + $0.area.width > 360 } }, "looks around the face")
        XCTAssertEqual(covered.first, 0)
        XCTAssertEqual(covered.last, 49, "\(covered)")
        XCTAssertEqual(Set(covered), Set(0...49))
        let statistics = provider.statistics
        XCTAssertGreaterThan(statistics.looks, 10)
        XCTAssertEqual(statistics.looksFound, 8)
        XCTAssertEqual(statistics.facesLost, 1)
    }

    func testLiveSubmitNeverWaitsAndRegionsReportTheirAge() throws {
        let gate = DispatchSemaphore(value: 0)
        let detector = ScriptedDetector(gate: gate) { image in
            [FaceDetection(box: FaceBox(x: Double(image.pixels[0]), y: 0, width: 50, height: 50), score: 3)]
        }
        let provider = DetectingFaceProvider(detector: detector, mode: .live)
        XCTAssertEqual(provider.requests(frameIndex: 0, pts: Self.pts(0), frameSize: Self.frameSize).count, 1)
        XCTAssertEqual(provider.lookAhead, 0)
        // The detector is stuck on frame 0 until the gate opens; the engine's thread must not be.
        let finished = DispatchSemaphore(value: 0)
        let frames = SharedList<FaceFrame>()
        Thread {
            provider.submit(frameIndex: 0, pts: Self.pts(0), images: [markedImage(0)])
            for frame in 1..<10 {
                XCTAssertEqual(provider.requests(frameIndex: frame, pts: Self.pts(frame), frameSize: Self.frameSize), [])
                provider.submit(frameIndex: frame, pts: Self.pts(frame), images: [markedImage(frame)])  // offered anyway: dropped
                if let got = try? provider.regions(frameIndex: frame, pts: Self.pts(frame), frameSize: Self.frameSize) {
                    frames.append(got)
                }
            }
            finished.signal()
        }.start()
        let completed = finished.wait(timeout: .now() + 20) == .success
        XCTAssertTrue(completed, "submit or regions waited for a busy detector")
        gate.signal()
        guard completed else { return }
        // Nothing detected yet: no faces and no age, for every frame asked meanwhile.
        XCTAssertEqual(frames.value.count, 9)
        XCTAssertTrue(frames.value.allSatisfy { $0.faces.isEmpty && $0.age == nil })
        XCTAssertEqual(provider.statistics.skipped, 9)
        provider.drain()
        // Frame 12 gets frame 0's face, 12 frames old.
        let later = try provider.regions(frameIndex: 12, pts: Self.pts(12), frameSize: Self.frameSize)
        XCTAssertEqual(later.age, 12)
        XCTAssertEqual(later.faces.map(\.id), [1])
        XCTAssertEqual(later.faces.first?.framesSinceSeen, 12)
        XCTAssertEqual(provider.requests(frameIndex: 13, pts: Self.pts(13), frameSize: Self.frameSize).count, 1)
        let stats = provider.statistics
        XCTAssertEqual(stats.detections, 1)
        XCTAssertEqual(stats.maxAge, 12)
        XCTAssertEqual(stats.inputSize, Size(width: 4, height: 4))
        XCTAssertTrue(stats.summary.contains("max 12"), stats.summary)
        XCTAssertTrue(stats.summary.hasPrefix("face detector: scripted, "), stats.summary)
    }

    func testADetectorFailureReachesTheEngine() throws {
        let provider = DetectingFaceProvider(detector: ScriptedDetector { _ in throw FaceDetectorError("detector broke") },
                                             mode: .everyNth(1))
        try provider.read(frameIndex: 0, pts: Self.pts(0), frameSize: Self.frameSize, scene: Self.scene(100)) { markedImage(0, $0) }
        XCTAssertThrowsError(try provider.regions(frameIndex: 0, pts: Self.pts(0), frameSize: Self.frameSize)) { error in
            XCTAssertEqual("\(error)", "detector broke")
        }
    }

    func testRegionsAreFaceCentresRadiiAndAspectsForTheGraph() {
        let frame = FaceFrame(frameIndex: 0, pts: .zero, frameSize: Self.frameSize,
                              faces: [TrackedFace(id: 1, box: FaceBox(x: 100, y: 60, width: 80, height: 90), score: 1)], age: 0)
        XCTAssertEqual(frame.regions.count, 1)
        XCTAssertEqual(frame.regions[0].center.x, 140.0 / 640, accuracy: 1e-12)
        XCTAssertEqual(frame.regions[0].center.y, 105.0 / 360, accuracy: 1e-12)
        XCTAssertEqual(frame.regions[0].radius, 40.0 / 640, accuracy: 1e-12)
        XCTAssertEqual(frame.regions[0].aspect, 90.0 / 80, accuracy: 1e-12)
    }

    /// "No face found" is said with the size below which faces are not looked for; a run that found one says nothing.
    func testTheRunSaysWhenNoFaceWasFound() throws {
        let none = DetectingFaceProvider(detector: ScriptedDetector { _ in [] }, mode: .everyNth(1),
                                         scale: FaceDetectionScale(minFaceSize: 40, detectorFace: 24))
        _ = try runFile(none, ahead: 1, frames: 3)
        XCTAssertEqual(none.statistics.noFaceNote, "no face found; faces under 40 px are not looked for (\(Setting.faceMinSize))")
        let some = DetectingFaceProvider(detector: Self.movingFaceDetector(seed: 7), mode: .everyNth(1))
        _ = try runFile(some, ahead: 1, frames: 3)
        XCTAssertNil(some.statistics.noFaceNote)
    }
}

/// A list shared with a helper thread in a test.
final class SharedList<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    var value: [Element] { items.withLock { $0 } }
    func append(_ element: Element) { items.withLock { $0.append(element) } }
}

final class FaceSideInputTests: XCTestCase {
    func testLiveFramesDrawOnlyThePicturesWantedAndWriteTheSidecar() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prism-side-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("faces.jsonl").path
        let detector = ScriptedDetector { image in
            [FaceDetection(box: FaceBox(x: Double(image.pixels[0]), y: 10, width: 40, height: 40), score: 2)]
        }
        let provider = DetectingFaceProvider(detector: detector, mode: .live)
        let faces = FaceSideInput(provider: provider, writer: try FaceSidecarWriter(path: path))
        var pictures: [Int] = []
        for frame in 0..<5 {
            let regions = try faces.regions(frameIndex: frame, pts: MediaTime(value: Int64(frame), timescale: 25),
                                            frameSize: Size(width: 640, height: 360)) { request in
                pictures.append(frame)
                return markedImage(frame, request)
            }
            provider.drain()
            // Live: a frame takes the newest finished detection (frame 0's own only if it was quick).
            XCTAssertTrue(frame == 0 || regions.count == 1, "frame \(frame)")
        }
        XCTAssertEqual(pictures, [0, 1, 2, 3, 4], "an idle detector takes every frame's picture")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        try faces.finish()
        let replay = try SidecarFaceProvider(path: path)
        XCTAssertEqual(try replay.regions(frameIndex: 3, pts: MediaTime(value: 3, timescale: 25), frameSize: Size(width: 640, height: 360)).faces.count, 1)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count, 5)
    }

    func testRequireFacesFailsARunWithoutAFaceAndWritesNoSidecar() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prism-side-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("faces.jsonl").path
        let provider = DetectingFaceProvider(detector: ScriptedDetector { _ in [] }, mode: .live)
        let faces = FaceSideInput(provider: provider, writer: try FaceSidecarWriter(path: path), requireFaces: true)
        _ = try faces.regions(frameIndex: 0, pts: .zero, frameSize: Size(width: 640, height: 360)) { markedImage(0, $0) }
        provider.drain()
        XCTAssertThrowsError(try faces.finish()) { error in
            XCTAssertTrue("\(error)".hasPrefix("no face found"), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("(\(Setting.requireFaces))"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }
}
