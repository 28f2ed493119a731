import XCTest
import PrismVision

final class FaceTrackerTests: XCTestCase {
    private func detection(_ x: Double, _ y: Double, _ size: Double = 100) -> FaceDetection {
        FaceDetection(box: FaceBox(x: x, y: y, width: size, height: size), score: 10)
    }

    func testEveryFaceKeepsItsOwnIdAcrossFrames() {
        var tracker = FaceTracker()
        let first = tracker.update([detection(0, 0), detection(400, 0)], frameIndex: 0, time: 0)
        XCTAssertEqual(first.map(\.id), [1, 2])
        // Listed in the other order and moved a little: matched by overlap, not by position in the list.
        let second = tracker.update([detection(410, 5), detection(8, 2)], frameIndex: 1, time: 1.0 / 30)
        XCTAssertEqual(second.map(\.id), [1, 2])
        XCTAssertLessThan(second[0].box.x, 100)
        XCTAssertGreaterThan(second[1].box.x, 300)
        // A third face gets the next id.
        let third = tracker.update([detection(8, 2), detection(410, 5), detection(800, 300)], frameIndex: 2, time: 2.0 / 30)
        XCTAssertEqual(third.map(\.id), [1, 2, 3])
    }

    func testFacesAreHeldAfterAMissThenDropped() {
        var settings = FaceTrackerSettings()
        settings.holdFrames = 3
        var tracker = FaceTracker(settings: settings)
        _ = tracker.update([detection(0, 0)], frameIndex: 0, time: 0)
        for frame in 1...3 {
            let faces = tracker.update([], frameIndex: frame, time: Double(frame) / 30)
            XCTAssertEqual(faces.map(\.id), [1], "frame \(frame)")
            XCTAssertEqual(faces.first?.framesSinceSeen, frame)
        }
        XCTAssertEqual(tracker.update([], frameIndex: 4, time: 4.0 / 30), [])
        // Seen again after being dropped: a new face.
        XCTAssertEqual(tracker.update([detection(0, 0)], frameIndex: 5, time: 5.0 / 30).map(\.id), [2])
    }

    func testSmoothingDampsJitterAndFollowsMotion() {
        // A still face with ±3 px of detector jitter: the smoothed centre moves much less.
        var tracker = FaceTracker()
        var raw: [Double] = [], smoothed: [Double] = []
        for frame in 0..<60 {
            let jitter = frame % 2 == 0 ? 3.0 : -3.0
            let faces = tracker.update([detection(200 + jitter, 100)], frameIndex: frame, time: Double(frame) / 30)
            raw.append(200 + jitter + 50)
            smoothed.append(faces[0].box.center.x)
        }
        func spread(_ values: ArraySlice<Double>) -> Double { values.max()! - values.min()! }
        XCTAssertEqual(spread(raw[30...]), 6)
        XCTAssertLessThan(spread(smoothed[30...]), 2.5, "\(smoothed[30...])")
        // A face moving 4 px per frame (120 px/s, over a box width a second): the smoothed centre
        // stays within a few pixels of it.
        var moving = FaceTracker()
        var worst = 0.0
        for frame in 0..<60 {
            let x = 100 + 4 * Double(frame)
            let faces = moving.update([detection(x, 100)], frameIndex: frame, time: Double(frame) / 30)
            if frame >= 10 { worst = max(worst, abs(faces[0].box.center.x - (x + 50))) }
        }
        XCTAssertLessThan(worst, 6, "lag behind a moving face")
        // Without smoothing the boxes are the detector's own.
        var settings = FaceTrackerSettings()
        settings.smoothing = false
        var plain = FaceTracker(settings: settings)
        _ = plain.update([detection(10, 10)], frameIndex: 0, time: 0)
        XCTAssertEqual(plain.update([detection(13, 10)], frameIndex: 1, time: 1.0 / 30)[0].box, detection(13, 10).box)
    }

    func testFastMotionWithLittleOverlapKeepsTheId() {
        var tracker = FaceTracker()
        _ = tracker.update([detection(0, 0)], frameIndex: 0, time: 0)
        // 45 px in one frame: IoU about 0.38 of a 100-px box... then 40 px with a size change.
        XCTAssertEqual(tracker.update([detection(45, 0)], frameIndex: 1, time: 1.0 / 30).map(\.id), [1])
        XCTAssertEqual(tracker.update([detection(90, 10, 80)], frameIndex: 2, time: 2.0 / 30).map(\.id), [1])
        // Far away: another face (and the first is held).
        XCTAssertEqual(tracker.update([detection(600, 400)], frameIndex: 3, time: 3.0 / 30).map(\.id), [1, 2])
    }
}
