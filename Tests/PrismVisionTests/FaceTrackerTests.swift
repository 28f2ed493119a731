import XCTest
import PrismCore
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

    func testMissedFacesArePredictedFromTheirMotionThenLost() {
        var settings = FaceTrackerSettings()
        settings.lostAfter = 0.1
        var tracker = FaceTracker(settings: settings)
        // Seen on frames 0 and 1, moving 6 px a frame (180 px/s).
        _ = tracker.update([detection(0, 0)], frameIndex: 0, time: 0)
        _ = tracker.update([detection(6, 0)], frameIndex: 1, time: 1.0 / 30)
        for frame in 2...4 {
            let faces = tracker.update([], frameIndex: frame, time: Double(frame) / 30)
            XCTAssertEqual(faces.map(\.id), [1], "frame \(frame)")
            XCTAssertEqual(faces.first?.framesSinceSeen, frame - 1)
            XCTAssertTrue(faces.first?.isPredicted == true)
            // Where the face would be at that speed, not where it was last seen; less sure the longer it is unseen.
            XCTAssertEqual(faces.first?.box.x ?? 0, 6 * Double(frame), accuracy: 0.01, "frame \(frame)")
            XCTAssertGreaterThan(faces.first?.margin ?? 0, frame == 2 ? 0 : 3, "frame \(frame)")
            XCTAssertEqual(tracker.lastEnding, FaceTrackEnding())
        }
        // 0.1 s unseen: lost (its box was still in the frame).
        XCTAssertEqual(tracker.update([], frameIndex: 5, time: 5.0 / 30, frameSize: Size(width: 640, height: 360)), [])
        XCTAssertEqual(tracker.lastEnding.lost, 1)
        // Seen again after being dropped: a new face.
        XCTAssertEqual(tracker.update([detection(0, 0)], frameIndex: 6, time: 6.0 / 30).map(\.id), [2])
    }

    func testAFacePredictedOutOfTheFrameHasLeftNotBeenLost() {
        var tracker = FaceTracker()
        let frame = Size(width: 640, height: 360)
        _ = tracker.update([detection(560, 100, 60)], frameIndex: 0, time: 0, frameSize: frame)
        _ = tracker.update([detection(580, 100, 60)], frameIndex: 1, time: 1.0 / 30, frameSize: frame)
        // 20 px a frame to the right: out of the frame three frames later.
        var ended = FaceTrackEnding()
        for n in 2...5 {
            _ = tracker.update([], frameIndex: n, time: Double(n) / 30, frameSize: frame)
            ended.left += tracker.lastEnding.left
            ended.lost += tracker.lastEnding.lost
        }
        XCTAssertEqual(ended, FaceTrackEnding(lost: 0, left: 1))
    }

    func testTwoCrossingFacesKeepTheirIds() {
        // Side by side, moving towards each other 8 px a frame, 70 px apart vertically: predicted boxes keep
        // each detection with its own track while they pass.
        var tracker = FaceTracker()
        for frame in 0..<40 {
            let a = detection(100 + 8 * Double(frame), 100, 60), b = detection(500 - 8 * Double(frame), 170, 60)
            let faces = tracker.update(frame % 2 == 0 ? [a, b] : [b, a], frameIndex: frame, time: Double(frame) / 30)
            XCTAssertEqual(faces.map(\.id), [1, 2], "frame \(frame)")
            guard faces.count == 2 else { continue }
            XCTAssertEqual(faces[0].box.center.y, 130, accuracy: 8, "frame \(frame): face 1 stays the upper one")
            XCTAssertEqual(faces[1].box.center.y, 200, accuracy: 8, "frame \(frame)")
        }
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
