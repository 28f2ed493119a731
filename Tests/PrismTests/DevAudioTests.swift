import Foundation
import XCTest
import PrismCore
import PrismMedia

/// `prism dev --audio`: the page's recordings carry the microphone, in sync with the picture.
final class DevAudioTests: XCTestCase {
    func testRecordingsFromThePageCarryTheMicrophone() throws {
        let scratch = ScratchDirectory()
        let directory = try TemporaryDirectory()
        try DevTests.invertCube.write(toFile: directory.file("invert.cube"), atomically: true, encoding: .utf8)
        let microphone = try AudioCaptureTests.emulatedMicrophone(in: scratch)
        let dev = try DevProcess(arguments: [directory.file("invert.cube"), "--size", "160x120", "--audio", "prismtest",
                                             "--out", scratch.url.path], environment: microphone)
        defer { dev.stop() }
        _ = try dev.waitForState("frames flowing") { ($0["frames"] as? Int ?? 0) > 5 }
        XCTAssertEqual(try dev.post("/record", ["action": "start"]).status, 202)
        _ = try dev.waitForState("recording") { ($0["recording"] as? [String: Any])?["frames"] as? Int ?? 0 > 45 }
        XCTAssertEqual(try dev.post("/record", ["action": "stop"]).status, 202)
        let state = try dev.waitForState("the recording finished") {
            (($0["recording"] as? [String: Any])?["last"] as? String) != nil
        }
        let file = try XCTUnwrap((state["recording"] as? [String: Any])?["last"] as? String)
        let report = try MediaInspector.inspect(file)
        XCTAssertEqual(report.audioCodecName, "aac")
        XCTAssertGreaterThan(report.videoFrameCount, 45)
        let video = report.videoPTS.map(\.seconds)
        let videoSeconds = try XCTUnwrap(video.max()) - XCTUnwrap(video.min()) + 1.0 / 30
        let audioSeconds = Double(report.audioSampleCount) / Double(try XCTUnwrap(report.audioSampleRate))
        XCTAssertEqual(audioSeconds, videoSeconds, accuracy: 0.15, "the sound lasts as long as the picture")
        XCTAssertEqual(try XCTUnwrap(report.firstAudioPTS).seconds, try XCTUnwrap(video.min()), accuracy: 0.1)
        XCTAssertGreaterThan(report.audioPeak, 0.2, "the tone is there")
    }
}
