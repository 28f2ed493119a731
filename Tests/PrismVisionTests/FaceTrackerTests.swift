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

    /// A face seen once and then missed stays for its grace time (a one-off detection is not dropped at its
    /// first miss), and ends only when a closer look at its place finds nothing.
    func testAFaceSeenOnceStaysForItsGraceTimeAndEndsOnlyAfterALook() {
        let frame = Size(width: 1280, height: 720)
        var tracker = FaceTracker()
        _ = tracker.update([detection(500, 300, 49)], frameIndex: 0, time: 0, frameSize: frame)
        for n in 1...15 {
            let faces = tracker.update([], frameIndex: n, time: Double(n) / 30, frameSize: frame, looked: [1])
            XCTAssertEqual(faces.map(\.id), [1], "frame \(n): within 0.5 s of being seen")
        }
        // Past the grace time, but no look at its place was made this time: kept.
        XCTAssertEqual(tracker.update([], frameIndex: 16, time: 16.0 / 30, frameSize: frame, looked: []).map(\.id), [1])
        XCTAssertEqual(tracker.lastEnding, FaceTrackEnding())
        // A look found nothing: it ends, lost while in view.
        XCTAssertEqual(tracker.update([], frameIndex: 17, time: 17.0 / 30, frameSize: frame, looked: [1]), [])
        XCTAssertEqual(tracker.lastEnding, FaceTrackEnding(lost: 1))
        // A face seen twice keeps its second (lostAfter), not the grace time.
        var twice = FaceTracker()
        _ = twice.update([detection(500, 300, 49)], frameIndex: 0, time: 0, frameSize: frame)
        _ = twice.update([detection(500, 300, 49)], frameIndex: 1, time: 1.0 / 30, frameSize: frame)
        XCTAssertEqual(twice.update([], frameIndex: 20, time: 20.0 / 30, frameSize: frame, looked: [1]).map(\.id), [1])
        XCTAssertEqual(twice.update([], frameIndex: 32, time: 32.0 / 30, frameSize: frame, looked: [1]), [])
    }

    /// A face leaving through the top is moved on at its speed until its box is out of the frame, however
    /// long that takes (beyond the second of prediction), and counted as having left, not lost.
    func testAFaceLeavingThroughAnEdgeIsFollowedUntilItsBoxIsOut() {
        let frame = Size(width: 1280, height: 720)
        var tracker = FaceTracker()
        // 125 px wide, moving up 3 px a frame, last seen with its top 36 px from the edge: out after 1.8 s.
        for n in 0..<5 { _ = tracker.update([detection(480, 48 - 3 * Double(n), 125)], frameIndex: n, time: Double(n) / 30, frameSize: frame) }
        var ended = FaceTrackEnding(), lastCovered = 0
        for n in 5..<80 {
            let faces = tracker.update([], frameIndex: n, time: Double(n) / 30, frameSize: frame, looked: [1])
            ended.lost += tracker.lastEnding.lost
            ended.left += tracker.lastEnding.left
            guard let face = faces.first else { continue }
            lastCovered = n
            // Where the face is: its bottom edge at 48 + 125 - 3n.
            XCTAssertEqual(face.box.y + face.box.height, 173 - 3 * Double(n), accuracy: 3, "frame \(n)")
        }
        XCTAssertEqual(ended, FaceTrackEnding(lost: 0, left: 1))
        XCTAssertEqual(lastCovered, 57, "covered until the chin is out (frame 57.7)")
    }

    /// A face that grows fast is never drawn smaller than measured (the size follows growth at once), and a
    /// jump of more than a tenth of its width is taken as measured.
    func testSmoothingNeverLeavesAGrowingOrJumpingFaceOutOfItsBox() {
        var tracker = FaceTracker()
        _ = tracker.update([detection(100, 100, 100)], frameIndex: 0, time: 0)
        _ = tracker.update([detection(100, 100, 100)], frameIndex: 1, time: 1.0 / 30)
        let grown = tracker.update([detection(80, 80, 140)], frameIndex: 2, time: 2.0 / 30)
        XCTAssertGreaterThanOrEqual(grown[0].box.width, 140)
        let jumped = tracker.update([detection(110, 80, 140)], frameIndex: 3, time: 3.0 / 30)
        XCTAssertEqual(jumped.map(\.id), [1])
        XCTAssertEqual(jumped[0].box.center.x, 180, accuracy: 0.01)
    }
}
