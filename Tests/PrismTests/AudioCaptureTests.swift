import Foundation
import PrismCore
import PrismMedia
import XCTest

/// `prism run --audio`: ALSA capture recorded alongside the video, through real alsa-lib. The microphone
/// is emulated by a PCM defined in an ALSA configuration the test writes (ALSA_CONFIG_PATH): alsa-lib's
/// `file` plugin with an `infile` (a 440 Hz sine, raw S16_LE stereo 48 kHz) over a `null` slave, so
/// `snd_pcm_open` / hw params / `snd_pcm_readi` run as on hardware. The null slave is not paced by a
/// clock; AudioCaptureSource paces such PCMs to CLOCK_MONOTONIC (real hardware never runs ahead).
final class AudioCaptureTests: XCTestCase {
    static func emulatedMicrophone(in scratch: ScratchDirectory, seconds: Int = 6) throws -> [String: String] {
        var samples = [Int16]()
        samples.reserveCapacity(48000 * seconds * 2)
        for i in 0..<(48000 * seconds) {
            let value = Int16(12000 * sin(2 * Double.pi * 440 * Double(i) / 48000))
            samples.append(value)
            samples.append(value)
        }
        let raw = scratch.path("sine.raw")
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
        let config = scratch.path("asound.conf")
        try """
            pcm.prismtest {
                type file
                slave.pcm { type null }
                file "/dev/null"
                infile "\(raw)"
                format "raw"
            }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        return ["ALSA_CONFIG_PATH": config]
    }

    func testPatternWithEmulatedMicrophone() throws {
        let scratch = ScratchDirectory()
        let environment = try Self.emulatedMicrophone(in: scratch)
        let output = scratch.path("out.mp4")
        let result = try Tools.run(Tools.prism, ["run", "--frames", "60", "--size", "320x240", "--fps", "30",
                                                 "--audio", "prismtest", "-o", output], environment: environment, timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, 60)
        XCTAssertEqual(report.audioStreamCount, 1)
        XCTAssertEqual(report.audioCodecName, "aac")
        let rate = try XCTUnwrap(report.audioSampleRate)
        XCTAssertEqual(rate, 48000)
        let audioSeconds = Double(report.audioSampleCount) / Double(rate)
        let videoSeconds = 60.0 / 30.0
        XCTAssertEqual(audioSeconds, videoSeconds, accuracy: 0.1, "audio \(audioSeconds) s, video \(videoSeconds) s")
        let firstAudio = try XCTUnwrap(report.firstAudioPTS).seconds
        let firstVideo = try XCTUnwrap(report.videoPTS.min()).seconds
        XCTAssertEqual(firstAudio, firstVideo, accuracy: 1.0 / 30, "audio starts at \(firstAudio) s, video at \(firstVideo) s")
        // The sine came through: loud, and 440 Hz (two sign changes a period).
        XCTAssertGreaterThan(report.audioPeak, 0.2)
        let frequency = Double(report.audioZeroCrossings) / 2 / audioSeconds
        XCTAssertEqual(frequency, 440, accuracy: 25, "decoded tone at \(frequency) Hz")
    }

    func testCtrlCStopsVideoAndAudioTogether() throws {
        let scratch = ScratchDirectory()
        let environment = try Self.emulatedMicrophone(in: scratch, seconds: 2)
        let output = scratch.path("stopped.mkv")
        let status = try Tools.interrupt(["run", "--size", "160x96", "--duration", "600", "--preset", "ultrafast",
                                          "--audio", "prismtest", "-o", output, "--quiet"], environment: environment)
        XCTAssertEqual(status, 0)
        let report = try MediaInspector.inspect(output)
        XCTAssertGreaterThan(report.videoFrameCount, 10)
        let videoSeconds = Double(report.videoFrameCount) / 30
        XCTAssertEqual(Double(report.audioSampleCount) / 48000, videoSeconds, accuracy: 0.1)
    }

    func testMissingDeviceIsOneLineAndLeavesNoFile() throws {
        let scratch = ScratchDirectory()
        let environment = try Self.emulatedMicrophone(in: scratch, seconds: 1)
        let output = scratch.path("out.mp4")
        let result = try Tools.run(Tools.prism, ["run", "--frames", "10", "--size", "320x240", "--audio", "nosuchpcm",
                                                 "-o", output, "--quiet"], environment: environment, timeout: 60)
        XCTAssertNotEqual(result.status, 0)
        let lines = result.stderrLines.filter { !$0.isEmpty }
        XCTAssertEqual(lines.count, 1, result.stderr)
        XCTAssert(result.stderr.contains("audio device nosuchpcm:") && result.stderr.contains("(snd_pcm_open)"), result.stderr)
        XCTAssertEqual(scratch.contents().filter { $0.contains("out.mp4") }, [])
    }

    func testMovieInputWithAudioIsRefused() throws {
        let scratch = ScratchDirectory()
        // Refused before the input is opened: any file will do.
        XCTAssert(FileManager.default.createFile(atPath: scratch.path("in.mp4"), contents: Data("x".utf8)))
        let result = try Tools.run(Tools.prism, ["run", scratch.path("in.mp4"), "--audio", "default", "-o", scratch.path("o.mp4")])
        XCTAssertNotEqual(result.status, 0)
        XCTAssert(result.stderr.contains("--audio records alongside the camera or the pattern"), result.stderr)
        XCTAssertEqual(scratch.contents(), ["in.mp4"])
    }
}
