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

/// `prism dev` with a graph that draws faces: the detector runs beside the preview (live: frames never
/// wait for it) and the seed's face pixellate lands on the astronaut's face.
final class DevFaceTests: XCTestCase {
    func testThePreviewPixellatesTheDetectedFace() throws {
        let scratch = ScratchDirectory()
        let clip = scratch.path("astronaut.mkv")
        try Tools.ffmpeg(["-loop", "1", "-i", Tools.fixture("astronaut.png"), "-t", "2", "-r", "10",
                          "-vf", "scale=320:320", "-c:v", "ffv1", clip])
        // Where the face is: the mask `run` draws for it, white discs on black.
        let maskPath = scratch.path("mask.png")
        let run = try Tools.run(Tools.prism, ["run", clip, "-o", maskPath, "--filter", "face-mask", "--quiet"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let mask = try ImageFile.read(path: maskPath)
        var sum = SIMD2<Int>(0, 0), count = 0
        for y in 0..<mask.size.height { for x in 0..<mask.size.width where mask.pixels[(y * mask.size.width + x) * 4] > 200 {
            sum &+= SIMD2(x, y); count += 1
        } }
        XCTAssertGreaterThan(count, 100, "the detector found the face")
        let centre = SIMD2(sum.x / max(count, 1), sum.y / max(count, 1))

        let directory = try TemporaryDirectory()
        try DevTests.invertCube.write(toFile: directory.file("invert.cube"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("invert.cube"), clip, "--filter", "face-pixellate(scale=16)"])
        defer { dev.stop() }
        _ = try dev.waitForState("frames flowing") { ($0["frames"] as? Int ?? 0) > 20 }
        let image = try dev.snapshot()
        /// Distinct values of R in the 16x16 window centred on (x, y): pixellated by 16, it spans at most
        /// 2x2 blocks (a few values); the picture's own detail has many.
        func distinct(_ x: Int, _ y: Int) -> Int {
            var values = Set<UInt8>()
            for yy in (y - 8)..<(y + 8) { for xx in (x - 8)..<(x + 8) { values.insert(image.pixels[(yy * image.size.width + xx) * 4]) } }
            return values.count
        }
        XCTAssertLessThanOrEqual(distinct(centre.x, centre.y), 4, "the face is pixellated")
        let far = [(24, 280), (56, 296), (280, 280), (296, 200)].map { distinct($0.0, $0.1) }
        XCTAssertGreaterThan(far.max()!, 12, "far from the face the picture keeps its detail: \(far)")
    }
}
