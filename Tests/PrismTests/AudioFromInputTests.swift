import Foundation
import XCTest
import PrismCore
import PrismMedia

/// The run's sound from an input other than the first (`prism run A --offset S B --audio-from 1|NAME`), end to
/// end through the built `prism`: two clips with different tones (440 Hz with the first, 1000 Hz with the
/// second, which is longer and starts 0.5 s into the run). The output's decoded sound says whose it is (its
/// frequency from zero crossings), where it starts (the offset) and where it ends (with the video).
final class AudioFromInputTests: XCTestCase {
    let dir = ScratchDirectory()
    static let rate = 30
    static let firstSeconds = 2.5

    /// A small lossless clip with an AAC sine at `tone` Hz (none when nil).
    private func clip(_ name: String, seconds: Double, tone: Int?) throws -> String {
        let path = dir.path(name)
        var arguments = ["-f", "lavfi", "-i", "color=c=gray:s=64x48:r=\(Self.rate):d=\(seconds),format=yuv420p"]
        if let tone {
            arguments += ["-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=48000:duration=\(seconds)", "-c:a", "aac"]
        }
        try Tools.ffmpeg(arguments + ["-c:v", "ffv1", path])
        return path
    }

    private func run(_ arguments: [String]) throws -> ProcessResult {
        try Tools.run(Tools.prism, ["run"] + arguments + ["--filter", "[0][1]over", "--quiet"], timeout: 120)
    }

    /// Checks the movie's sound: one track at `tone` Hz, from `start` seconds to the end of the video.
    private func checkSound(_ path: String, tone: Double, start: Double, file: StaticString = #filePath, line: UInt = #line) throws {
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.audioStreamCount, 1, file: file, line: line)
        let rate = try XCTUnwrap(report.audioSampleRate, file: file, line: line)
        let audioSeconds = Double(report.audioSampleCount) / Double(rate)
        let firstAudio = try XCTUnwrap(report.firstAudioPTS, file: file, line: line).seconds
        let firstVideo = try XCTUnwrap(report.videoPTS.min(), file: file, line: line).seconds
        let videoEnd = Double(report.videoFrameCount) / Double(Self.rate)
        XCTAssertEqual(report.videoFrameCount, Int(Self.firstSeconds * Double(Self.rate)), file: file, line: line)
        XCTAssertEqual(firstAudio - firstVideo, start, accuracy: 1.0 / Double(Self.rate),
                       "audio starts at \(firstAudio) s, video at \(firstVideo) s", file: file, line: line)
        XCTAssertEqual(firstAudio - firstVideo + audioSeconds, videoEnd, accuracy: 0.1,
                       "audio ends at \(firstAudio - firstVideo + audioSeconds) s, video at \(videoEnd) s", file: file, line: line)
        XCTAssertGreaterThan(report.audioPeak, 0.1, file: file, line: line)  // lavfi's sine is at 1/8 of full scale
        let frequency = Double(report.audioZeroCrossings) / 2 / audioSeconds
        XCTAssertEqual(frequency, tone, accuracy: tone * 0.05, "decoded tone at \(frequency) Hz", file: file, line: line)
    }

    func testSoundComesFromTheChosenInputAtItsOffset() throws {
        let first = try clip("first.mkv", seconds: Self.firstSeconds, tone: 440)
        let second = try clip("second.mkv", seconds: 3, tone: 1000)

        let byIndex = dir.path("index.mp4")
        var result = try run([first, "--offset", "0.5", second, "--audio-from", "1", "-o", byIndex])
        XCTAssertEqual(result.status, 0, result.stderr)
        try checkSound(byIndex, tone: 1000, start: 0.5)

        let byName = dir.path("name.mp4")
        result = try run(["--input", "main=\(first)", "--offset", "0.5", "--input", "voice=\(second)",
                          "--audio-from", "voice", "-o", byName])
        XCTAssertEqual(result.status, 0, result.stderr)
        try checkSound(byName, tone: 1000, start: 0.5)

        // Without it (or naming the first): the first input's sound, from its start.
        let plain = dir.path("plain.mp4")
        result = try run([first, "--offset", "0.5", second, "-o", plain])
        XCTAssertEqual(result.status, 0, result.stderr)
        try checkSound(plain, tone: 440, start: 0)
        let firstByName = dir.path("first.mp4")
        result = try run(["--input", "main=\(first)", "--offset", "0.5", second, "--audio-from", "main", "-o", firstByName])
        XCTAssertEqual(result.status, 0, result.stderr)
        try checkSound(firstByName, tone: 440, start: 0)
    }

    func testBadChoicesAreOneLineAndWriteNothing() throws {
        let first = try clip("first.mkv", seconds: 0.5, tone: 440)
        let second = try clip("second.mkv", seconds: 0.5, tone: 1000)
        let silent = try clip("silent.mkv", seconds: 0.5, tone: nil)
        let output = dir.path("out.mp4")
        let cases: [(arguments: [String], message: String)] = [
            ([first, second, "--audio-from", "2"], "--audio-from 2: the run has 2 inputs"),
            ([first, second, "--audio-from", "-1"], "--audio-from -1: the run has 2 inputs"),
            (["--input", "main=\(first)", "--input", "b=\(second)", "--audio-from", "voice"], "no input is named 'voice'"),
            ([first, silent, "--audio-from", "1"], "--audio-from: input 1 has no sound"),
            ([first, "--input", "quiet=\(silent)", "--audio-from", "quiet"], "input 1 (quiet) has no sound"),
            (["pattern", second, "--audio", "default", "--audio-from", "1"], "--audio-from and --audio"),
        ]
        for (arguments, message) in cases {
            let result = try run(arguments + ["-o", output])
            let label = arguments.joined(separator: " ")
            XCTAssertNotEqual(result.status, 0, label)
            let lines = result.stderr.split(separator: "\n").filter { !$0.isEmpty }
            XCTAssertEqual(lines.count, 1, "\(label): \(result.stderr)")
            XCTAssert(result.stderr.contains(message), "\(label): \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(label) wrote \(output)")
            XCTAssertEqual(dir.contents().filter { !$0.hasSuffix(".mkv") }, [], "\(label) left files")
        }
    }
}
