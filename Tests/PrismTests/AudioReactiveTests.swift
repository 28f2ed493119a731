import Foundation
import PrismCore
import PrismMedia
import XCTest

/// Audio-reactive ISF shaders through the built tool: fed from a movie's own track (decoded for real,
/// each frame's window ending at its time) or from the microphone (the emulated ALSA PCM of
/// `AudioCaptureTests`), and refused with one line when there is no sound to give them.
final class AudioReactiveTests: XCTestCase {
    static func corpus(_ name: String) -> String {
        Tools.repositoryRoot.appendingPathComponent("Tests/PrismFiltersTests/ISFCorpus/\(name)").path
    }

    /// ffmpeg's `sine` source: amplitude 1/8, phase 0 at its first sample.
    static func sine(_ n: Int, frequency: Double, rate: Double = 48000) -> Double {
        sin(2 * Double.pi * frequency * Double(n) / rate) / 8
    }

    /// `frames` frames of raw RGBA from `prism run … -o - --output-format rgba`.
    func runRaw(_ arguments: [String], size: Size) throws -> [[UInt8]] {
        let result = try Tools.run(Tools.prism, ["run"] + arguments + ["-o", "-", "--output-format", "rgba", "--quiet"], timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let bytes = [UInt8](result.stdout), frame = size.pixelCount * 4
        return stride(from: 0, to: bytes.count - frame + 1, by: frame).map { Array(bytes[$0..<($0 + frame)]) }
    }

    func testTheWaveformOfEachFrameIsTheSoundEndingAtItsTime() throws {
        let scratch = ScratchDirectory()
        // 30 fps video; a 1 kHz tone in PCM (exact samples) starting 0.2 s after the picture.
        let clip = scratch.path("tone.mkv")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x4:rate=30:duration=1",
                          "-itsoffset", "0.2", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=1",
                          "-map", "0:v", "-map", "1:a", "-c:v", "ffv1", "-c:a", "pcm_s16le", clip])
        let frames = try runRaw([clip, "--filter", Self.corpus("audio-waveform.fs"), "--frames", "20"], size: Size(width: 64, height: 4))
        XCTAssertEqual(frames.count, 20)
        for (index, frame) in frames.enumerated() {
            // Frame k's window ends at its time, k/30 s as Matroska stores it (whole milliseconds, 48 samples
            // each); the tone's sample 0 is at 0.2 s.
            let milliseconds = Int((Double(index) * 1000 / 30).rounded())
            let end = 48 * milliseconds - 9600
            for x in 0..<64 {
                // MAX 64: column x is the loudest of samples end-1024+16x ..< +16 (before the tone: silence).
                let run = (0..<16).map { i -> Double in
                    let n = end - 1024 + 16 * x + i
                    return n < 0 ? 0 : Self.sine(n, frequency: 1000)
                }
                let loudest = run.max { abs($0) < abs($1) }!
                let expected = (0.5 + loudest / 2) * 255
                XCTAssertEqual(Double(frame[x * 4]), expected, accuracy: 1.5, "frame \(index) column \(x)")
            }
            XCTAssertEqual(frame[2], 64, "the audio image is MAX = 64 samples wide")
        }
    }

    /// One second of H.264 test pattern (`size`) with a 1875 Hz tone in AAC.
    static func makeToneClip(_ path: String, size: String) throws {
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30:duration=1",
                          "-f", "lavfi", "-i", "sine=frequency=1875:sample_rate=48000:duration=1",
                          "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                          "-c:a", "aac", "-b:a", "192k", path])
    }

    func testTheSpectrumPeaksAtTheTrackTonesBin() throws {
        let scratch = ScratchDirectory()
        // 1875 Hz = bin 40 of a 1024-sample window at 48 kHz; AAC, decoded as any movie's sound is.
        let clip = scratch.path("tone.mp4")
        try AudioReactiveTests.makeToneClip(clip, size: "512x2")
        let frames = try runRaw([clip, "--filter", Self.corpus("audio-spectrum.fs"), "--frames", "10"], size: Size(width: 512, height: 2))
        XCTAssertEqual(frames.count, 10)
        for index in 3..<10 {
            let reds = (0..<512).map { Double(frames[index][$0 * 4]) / 255 }
            XCTAssertEqual(reds.indices.max { reds[$0] < reds[$1] }, 39, "frame \(index): the tone's bin is the peak")
            XCTAssertEqual(reds[39], 0.125, accuracy: 0.02, "frame \(index): amplitude 1/8 reads 1/8")
            XCTAssertLessThan(reds[300], 0.02, "frame \(index): nothing far from the tone")
        }
    }

    func testTheMicrophoneFeedsAudioInputsLive() throws {
        let scratch = ScratchDirectory()
        let environment = try AudioCaptureTests.emulatedMicrophone(in: scratch)
        let output = scratch.path("mic.mkv")
        let result = try Tools.run(Tools.prism, ["run", "--frames", "45", "--size", "512x16", "--fps", "30", "--audio", "prismtest",
                                                 "--filter", Self.corpus("audio-spectrum.fs"), "--codec", "ffv1", "-o", output,
                                                 "--quiet"], environment: environment, timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let report = try MediaInspector.inspect(output)
        XCTAssertEqual(report.videoFrameCount, 45)
        // 440 Hz lies between bins 9 and 10 (422 and 469 Hz): columns 8 and 9.
        let last = try MediaInspector.frameRGBA(output, index: 44)
        let reds = (0..<512).map { Double(last.pixels[(8 * 512 + $0) * 4]) / 255 }
        let peak = reds.indices.max { reds[$0] < reds[$1] }!
        XCTAssertTrue((7...10).contains(peak), "the microphone's 440 Hz peaks at column \(peak)")
        XCTAssertGreaterThan(reds[peak], 0.15)
        XCTAssertLessThan(reds[300], 0.05)
    }

    func testTheMicrophoneCanFeedShadersWithoutBeingRecorded() throws {
        let scratch = ScratchDirectory()
        let environment = try AudioCaptureTests.emulatedMicrophone(in: scratch)
        // Raw frames out: the microphone only feeds the shader.
        let result = try Tools.run(Tools.prism, ["run", "--frames", "30", "--size", "512x16", "--fps", "30", "--audio", "prismtest",
                                                 "--filter", Self.corpus("audio-spectrum.fs"), "-o", "-", "--output-format", "rgba",
                                                 "--quiet"], environment: environment, timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let frame = 512 * 16 * 4
        XCTAssertEqual(result.stdout.count, 30 * frame)
        let last = [UInt8](result.stdout.suffix(frame))
        let reds = (0..<512).map { Double(last[(8 * 512 + $0) * 4]) / 255 }
        let peak = reds.indices.max { reds[$0] < reds[$1] }!
        XCTAssertTrue((7...10).contains(peak), "the microphone's 440 Hz peaks at column \(peak)")
        // Without a shader to feed, the microphone still needs a movie to go into.
        let refused = try Tools.run(Tools.prism, ["run", "--frames", "3", "--audio", "prismtest", "-o", "-", "--output-format", "rgba"],
                                    environment: environment)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("--audio needs a movie output (-o FILE), or a filter with audio inputs to feed"), refused.stderr)
    }

    func testNoSoundIsOneClearLineNotSilence() throws {
        let scratch = ScratchDirectory()
        let silent = scratch.path("silent.mp4")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x4:rate=30:duration=0.2", "-c:v", "libx264", "-preset", "ultrafast",
                          "-pix_fmt", "yuv420p", silent])
        let shader = Self.corpus("audio-spectrum.fs")
        for arguments in [[silent, "--filter", shader, "-o", scratch.path("a.mp4")],
                          ["--frames", "3", "--filter", shader, "-o", scratch.path("b.mp4")]] {
            let result = try Tools.run(Tools.prism, ["run"] + arguments)
            XCTAssertNotEqual(result.status, 0)
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("audio-spectrum.fs: input 'spectrum' needs audio: the input has no audio track; give --audio PCM"),
                          result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("a.mp4")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("b.mp4")))

        let image = scratch.path("in.png")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=32x32", "-frames:v", "1", image])
        let still = try Tools.run(Tools.prism, ["render", "--filter", shader, image, "-o", scratch.path("out.png")])
        XCTAssertNotEqual(still.status, 0)
        XCTAssertEqual(still.stderrLines.count, 1, still.stderr)
        XCTAssertTrue(still.stderr.contains("needs audio: a still image has no sound"), still.stderr)
    }

    func testFiltersDescribesAudioInputs() throws {
        let result = try Tools.run(Tools.prism, ["filters", Self.corpus("audio-waveform.fs")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = String(decoding: result.stdout, as: UTF8.self)
        XCTAssertTrue(text.contains("audio input: wave (audio, MAX 64: 64 samples"), text)
    }
}

/// `prism dev` with an audio-reactive shader: a looping clip's own track feeds it, across the loop.
final class DevAudioReactiveTests: XCTestCase {
    func testALoopingClipsToneReachesTheShader() throws {
        let scratch = ScratchDirectory()
        let clip = scratch.path("tone.mp4")
        try AudioReactiveTests.makeToneClip(clip, size: "512x16")
        let dev = try DevProcess(arguments: [AudioReactiveTests.corpus("audio-spectrum.fs"), clip])
        defer { dev.stop() }
        // Past the first loop (30 frames), the tone is still there.
        let state = try dev.waitForState(timeout: 60, "frames past the loop") {
            ($0["frames"] as? Int ?? 0) > 45 || $0["error"] as? [String: Any] != nil
        }
        XCTAssertNil(state["error"] as? [String: Any], "\(state)")
        let image = try dev.snapshot()
        XCTAssertEqual(image.size, Size(width: 512, height: 16))
        let reds = (0..<512).map { Double(image.pixels[(8 * 512 + $0) * 4]) / 255 }
        XCTAssertEqual(reds.indices.max { reds[$0] < reds[$1] }, 39, "the clip's 1875 Hz tone peaks at its bin")
        XCTAssertEqual(reds[39], 0.125, accuracy: 0.03)
    }

    func testAReloadIntoAnAudioShaderOnASilentInputIsAnErrorNotSilence() throws {
        let directory = try TemporaryDirectory()
        try DevTests.isfShader.write(toFile: directory.file("look.fs"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("look.fs"), "--size", "160x90"])
        defer { dev.stop() }
        _ = try dev.waitForState("frames flowing") { ($0["frames"] as? Int ?? 0) > 5 }
        try directory.save("look.fs", try String(contentsOfFile: AudioReactiveTests.corpus("audio-waveform.fs"), encoding: .utf8))
        let failed = try dev.waitForState("the reload's error") { $0["error"] as? [String: Any] != nil }
        let text = try XCTUnwrap((failed["error"] as? [String: Any])?["text"] as? String)
        XCTAssertTrue(text.contains("look.fs: input 'wave' needs audio: this run decodes no sound"), text)
        let before = failed["frames"] as? Int ?? 0
        _ = try dev.waitForState("the last good shader keeps running") { ($0["frames"] as? Int ?? 0) > before + 10 }
    }

    func testAnAudioShaderWithoutSoundDoesNotStart() throws {
        let result = try Tools.run(Tools.prism, ["dev", AudioReactiveTests.corpus("audio-waveform.fs"), "--port", "0"], timeout: 60)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("audio-waveform.fs: input 'wave' needs audio: the input has no audio track; give --audio PCM"),
                      result.stderr)
    }
}
