import XCTest
import PrismCore
import PrismMedia
@testable import PrismPipeline

final class FrameTimerTests: XCTestCase {
    /// A 1×1 frame at `index / rate`.
    private func frame(_ index: Int, rate: Int = 30) -> VideoFrame {
        VideoFrame(format: .gray, size: Size(width: 2, height: 2), colorSpace: YUVColorSpace(matrix: .bt601, range: .full),
                   pts: MediaTime(value: Int64(index), timescale: Int32(rate)),
                   duration: MediaTime(value: 1, timescale: Int32(rate)))
    }

    private func run(_ timer: inout FrameTimer, frames: Int, rate: Int = 30) -> [TimedFrame] {
        var out: [TimedFrame] = []
        for index in 0..<frames {
            out += timer.admit(frame(index, rate: rate))
            if timer.isDone { return out }
        }
        return out + timer.finish()
    }

    func testFrameLimitPassesExactlyThatMany() throws {
        var timer = try FrameTimer(frameLimit: 7, durationLimit: nil, rate: nil)
        let out = run(&timer, frames: 30)
        XCTAssertEqual(out.count, 7)
        XCTAssertTrue(timer.isDone)
        XCTAssertEqual(out.map { $0.pts.ticks(in: Rational(1, 30)) }, Array(0..<7).map(Int64.init))
    }

    func testDurationLimitStopsBeforeTheLimit() throws {
        // 0.5 s of 30 fps: frames at 0 … 14/30 (15/30 is at the limit, not before it).
        var timer = try FrameTimer(frameLimit: nil, durationLimit: MediaTime(value: 1, timescale: 2), rate: nil)
        XCTAssertEqual(run(&timer, frames: 60).count, 15)
    }

    func testConversionToHalfTheRateKeepsEveryOtherFrame() throws {
        var timer = try FrameTimer(frameLimit: nil, durationLimit: nil, rate: Rational(15, 1))
        let out = run(&timer, frames: 30)
        XCTAssertEqual(out.count, 15)
        for (index, timed) in out.enumerated() {
            XCTAssertEqual(timed.pts, MediaTime(value: Int64(index), timescale: 15))
            // The latest input frame at or before the output time: input 2k.
            XCTAssertEqual(timed.frame.pts, MediaTime(value: Int64(2 * index), timescale: 30))
            XCTAssertEqual(timed.duration, MediaTime(value: 1, timescale: 15))
        }
    }

    func testConversionToTwiceTheRateRepeatsEachFrame() throws {
        var timer = try FrameTimer(frameLimit: nil, durationLimit: nil, rate: Rational(60, 1))
        let out = run(&timer, frames: 30)
        XCTAssertEqual(out.count, 60, "the last frame covers its whole display time")
        for (index, timed) in out.enumerated() {
            XCTAssertEqual(timed.frame.pts, MediaTime(value: Int64(index / 2), timescale: 30), "output \(index)")
        }
    }

    func testOneFrameInputGivesOneConvertedFrame() throws {
        var timer = try FrameTimer(frameLimit: nil, durationLimit: nil, rate: Rational(24, 1))
        let out = run(&timer, frames: 1, rate: 1000)
        XCTAssertEqual(out.count, 1)
    }

    func testFrameLimitAppliesToConvertedFrames() throws {
        var timer = try FrameTimer(frameLimit: 10, durationLimit: nil, rate: Rational(60, 1))
        XCTAssertEqual(run(&timer, frames: 30).count, 10)
    }

    /// A rate with a zero term (what "0.0001" fps once parsed to) is a typed error, not a trap.
    func testARateThatIsNotPositiveIsAnErrorNotATrap() {
        for rate in [Rational(0, 1000), Rational(30, 0), Rational(-30, 1)] {
            XCTAssertThrowsError(try FrameTimer(frameLimit: nil, durationLimit: nil, rate: rate)) { error in
                XCTAssertTrue(error is FrameRateError, "\(error)")
                XCTAssertTrue("\(error)".contains("not a positive rate"), "\(error)")
            }
        }
        XCTAssertNil(Rational(parsing: "0.0001"), "rounds to 0/1000: not a rate")
        XCTAssertEqual(Rational(parsing: "0.001"), Rational(1, 1000))
    }
}
