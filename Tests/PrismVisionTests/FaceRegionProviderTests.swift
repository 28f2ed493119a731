import Synchronization
import XCTest
import PrismCore
import PrismVision

/// The provider as the engine will drive it, without the engine: files are deterministic, live never waits.
final class FaceRegionProviderTests: XCTestCase {
    private static func pts(_ frame: Int) -> MediaTime { MediaTime(value: Int64(frame), timescale: 30) }

    /// A detector that sees the frame number in the thumbnail and puts the face at x = 10·frame,
    /// after a random delay (so thread timing varies from run to run).
    private static func movingFaceDetector(seed: UInt64) -> ScriptedDetector {
        var state = seed
        return ScriptedDetector { luma in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            usleep(UInt32((state >> 33) % 4000))
            let frame = Double(luma.pixels[0])
            return [FaceDetection(box: FaceBox(x: 10 * frame, y: 50, width: 80, height: 80), score: 5)]
        }
    }

    /// Runs 30 frames the way the engine does; `ahead` thumbnails are submitted before a frame's regions are asked for.
    private func runFile(every: Int, ahead: Int, seed: UInt64) throws -> [FaceFrame] {
        let provider = DetectingFaceProvider(detector: Self.movingFaceDetector(seed: seed), mode: .everyNth(every))
        var frames: [FaceFrame] = []
        var submitted = -1
        for frame in 0..<30 {
            while submitted < min(frame + ahead, 29) {
                submitted += 1
                if provider.wantsLuma(frameIndex: submitted) {
                    provider.submit(frameIndex: submitted, pts: Self.pts(submitted), luma: markedLuma(submitted))
                }
            }
            frames.append(try provider.regions(frameIndex: frame, pts: Self.pts(frame), frameSize: Size(width: 640, height: 360)))
        }
        XCTAssertEqual(provider.statistics.detections, (29 / every) + 1)
        return frames
    }

    func testFilesAreDeterministicEveryNthFrameAndWaitedFor() throws {
        let every = 3
        let reference = try runFile(every: every, ahead: 0, seed: 1)
        for frame in reference {
            // Frame k uses the detection of frame k - k mod N, whatever the threads did.
            XCTAssertEqual(frame.age, frame.frameIndex % every, "frame \(frame.frameIndex)")
            XCTAssertEqual(frame.faces.count, 1, "frame \(frame.frameIndex)")
            XCTAssertEqual(frame.faces.first?.id, 1)
        }
        // The smoothed face moves with the detections, only from detection frames on.
        XCTAssertEqual(reference[0].faces[0].box.x, 0)
        // Seen once: no velocity yet, so the same centre, covered more widely the older the detection.
        XCTAssertEqual(reference[1].faces[0].box.center.x, reference[2].faces[0].box.center.x, accuracy: 0.011)
        XCTAssertEqual(reference[1].faces[0].box.center.y, reference[2].faces[0].box.center.y, accuracy: 0.011)
        XCTAssertGreaterThan(reference[2].faces[0].box.width, reference[1].faces[0].box.width)
        XCTAssertGreaterThan(reference[3].faces[0].box.x, reference[2].faces[0].box.x)
        // Other timings, thumbnails handed over ahead of time: the same faces for every frame.
        for (ahead, seed) in [(0, 2), (2, 3), (5, 4)] {
            XCTAssertEqual(try runFile(every: every, ahead: ahead, seed: UInt64(seed)), reference, "ahead \(ahead)")
        }
        XCTAssertFalse(DetectingFaceProvider(detector: Self.movingFaceDetector(seed: 0), mode: .everyNth(3)).wantsLuma(frameIndex: 4))
    }

    func testFacesMoveOnAtTheirVelocityBetweenDetections() throws {
        // The face moves 10 px a frame (300 px/s at 30 fps); detections every third frame.
        func centres(maxPrediction: Double) throws -> [Double] {
            let provider = DetectingFaceProvider(detector: Self.movingFaceDetector(seed: 9), mode: .everyNth(3), maxPrediction: maxPrediction)
            return try (0..<30).map { frame in
                if provider.wantsLuma(frameIndex: frame) {
                    provider.submit(frameIndex: frame, pts: Self.pts(frame), luma: markedLuma(frame))
                }
                let faces = try provider.regions(frameIndex: frame, pts: Self.pts(frame), frameSize: Size(width: 640, height: 360)).faces
                return faces[0].box.center.x
            }
        }
        let held = try centres(maxPrediction: 0), moved = try centres(maxPrediction: 0.25)
        var heldError = 0.0, movedError = 0.0
        for frame in 15..<30 where frame % 3 != 0 {
            let truth = 10 * Double(frame) + 40
            heldError += abs(held[frame] - truth)
            movedError += abs(moved[frame] - truth)
            XCTAssertGreaterThan(moved[frame], moved[frame - 1], "frame \(frame): moves on between detections")
            // (boxes are kept to 1/100 px, so a centre may move by half of that as the box grows)
            XCTAssertEqual(held[frame], held[frame - frame % 3], accuracy: 0.011, "frame \(frame): held without prediction")
        }
        XCTAssertLessThan(movedError, heldError / 2, "prediction follows the face: \(movedError) vs \(heldError) px")
        // Detection frames are the same either way.
        for frame in stride(from: 0, to: 30, by: 3) { XCTAssertEqual(moved[frame], held[frame]) }
    }

    func testLiveSubmitNeverWaitsAndRegionsReportTheirAge() throws {
        let gate = DispatchSemaphore(value: 0)
        let detector = ScriptedDetector(gate: gate) { luma in
            [FaceDetection(box: FaceBox(x: Double(luma.pixels[0]), y: 0, width: 50, height: 50), score: 3)]
        }
        let provider = DetectingFaceProvider(detector: detector, mode: .live)
        XCTAssertTrue(provider.wantsLuma(frameIndex: 0))
        // The detector is stuck on frame 0 until the gate opens; the engine's thread must not be.
        let finished = DispatchSemaphore(value: 0)
        let frames = SharedList<FaceFrame>()
        Thread {
            provider.submit(frameIndex: 0, pts: Self.pts(0), luma: markedLuma(0))
            for frame in 1..<10 {
                XCTAssertFalse(provider.wantsLuma(frameIndex: frame))
                provider.submit(frameIndex: frame, pts: Self.pts(frame), luma: markedLuma(frame))  // offered anyway: dropped
                if let got = try? provider.regions(frameIndex: frame, pts: Self.pts(frame), frameSize: Size(width: 640, height: 360)) {
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
        let later = try provider.regions(frameIndex: 12, pts: Self.pts(12), frameSize: Size(width: 640, height: 360))
        XCTAssertEqual(later.age, 12)
        XCTAssertEqual(later.faces.map(\.id), [1])
        XCTAssertEqual(later.faces.first?.framesSinceSeen, 12)
        XCTAssertTrue(provider.wantsLuma(frameIndex: 13))
        let stats = provider.statistics
        XCTAssertEqual(stats.detections, 1)
        XCTAssertEqual(stats.maxAge, 12)
        XCTAssertEqual(stats.inputSize, Size(width: 4, height: 4))
        XCTAssertTrue(stats.summary.contains("12 frames old") || stats.summary.contains("max 12"), stats.summary)
    }

    func testADetectorFailureReachesTheEngine() throws {
        let provider = DetectingFaceProvider(detector: ScriptedDetector { _ in throw FaceDetectorError("detector broke") },
                                             mode: .everyNth(1))
        provider.submit(frameIndex: 0, pts: Self.pts(0), luma: markedLuma(0))
        XCTAssertThrowsError(try provider.regions(frameIndex: 0, pts: Self.pts(0), frameSize: Size(width: 640, height: 360))) { error in
            XCTAssertEqual("\(error)", "detector broke")
        }
    }

    func testRegionsAreFaceCentresAndRadiiForTheGraph() {
        let frame = FaceFrame(frameIndex: 0, pts: .zero, frameSize: Size(width: 640, height: 360),
                              faces: [TrackedFace(id: 1, box: FaceBox(x: 100, y: 60, width: 80, height: 90), score: 1)], age: 0)
        XCTAssertEqual(frame.regions.count, 1)
        XCTAssertEqual(frame.regions[0].center.x, 140.0 / 640, accuracy: 1e-12)
        XCTAssertEqual(frame.regions[0].center.y, 105.0 / 360, accuracy: 1e-12)
        XCTAssertEqual(frame.regions[0].radius, 40.0 / 640, accuracy: 1e-12)
    }
}

/// A list shared with a helper thread in a test.
final class SharedList<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    var value: [Element] { items.withLock { $0 } }
    func append(_ element: Element) { items.withLock { $0.append(element) } }
}

final class FaceSideInputTests: XCTestCase {
    func testOneCallPerFrameRendersThumbnailsOnlyWhenWantedAndWritesTheSidecar() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prism-side-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("faces.jsonl").path
        let detector = ScriptedDetector { luma in
            [FaceDetection(box: FaceBox(x: Double(luma.pixels[0]), y: 10, width: 40, height: 40), score: 2)]
        }
        let faces = FaceSideInput(provider: DetectingFaceProvider(detector: detector, mode: .everyNth(2)),
                                  writer: try FaceSidecarWriter(path: path))
        var thumbnails: [Int] = []
        for frame in 0..<5 {
            let regions = try faces.regions(frameIndex: frame, pts: MediaTime(value: Int64(frame), timescale: 25),
                                            frameSize: Size(width: 640, height: 360)) {
                thumbnails.append(frame)
                return markedLuma(frame)
            }
            XCTAssertEqual(regions.count, 1)
        }
        XCTAssertEqual(thumbnails, [0, 2, 4], "thumbnails only for the frames the detector runs on")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        try faces.finish()
        let replay = try SidecarFaceProvider(path: path)
        XCTAssertEqual(try replay.regions(frameIndex: 3, pts: MediaTime(value: 3, timescale: 25), frameSize: Size(width: 640, height: 360)).faces.count, 1)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count, 5)
        XCTAssertEqual(faces.statistics.detections, 3)
    }
}
