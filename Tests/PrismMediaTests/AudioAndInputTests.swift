import Foundation
import PrismCore
@testable import PrismMedia
import XCTest

final class AudioAndInputTests: XCTestCase {
    private var dir: TempDirectory!
    override func setUpWithError() throws { dir = try TempDirectory() }
    override func tearDown() { dir.cleanUp() }

    private let fast = VideoEncoderSettings(codec: .h264, preset: "ultrafast")
    private let frame30 = 1.0 / 30.0

    /// 1 s of 160x90 30 fps video with a sine whose first sample is `audioDelay` seconds after the video's.
    private func makeInput(_ name: String, audioCodec: String, audioDelay: Double) throws -> String {
        let path = dir.path(name)
        try runFFmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=30:duration=1",
                       "-itsoffset", String(audioDelay), "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1",
                       "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                       "-c:a", audioCodec, path])
        return path
    }

    private func offset(_ report: MediaReport) throws -> Double {
        try XCTUnwrap(report.firstAudioPTS).seconds - XCTUnwrap(report.videoPTS.first).seconds
    }

    func testMovieSourceDescribesItsInput() throws {
        let input = try makeInput("in.mkv", audioCodec: "aac", audioDelay: 0)
        let source = try MovieSource(url: input)
        XCTAssertEqual(source.info.size, Size(width: 160, height: 90))
        XCTAssertEqual(source.info.pixelFormat, .yuv420p)
        XCTAssertEqual(source.info.frameRate, Rational(30, 1))
        XCTAssertNotNil(source.info.audio)
        XCTAssertEqual(source.info.audio?.codecName, "aac")
        XCTAssertFalse(source.info.isLive)
        XCTAssertTrue(source.info.summary.contains("h264"), source.info.summary)
        var frames = 0, packets = 0
        var last: MediaTime?
        while let event = try source.next() {
            switch event {
            case .video(let frame):
                if let last { XCTAssertGreaterThan(frame.pts, last) }
                last = frame.pts
                XCTAssertEqual(frame.format, .yuv420p)
                frames += 1
            case .audio:
                packets += 1
            }
        }
        XCTAssertEqual(frames, 30)
        XCTAssertGreaterThan(packets, 40) // 48000 / 1024 per second
        XCTAssertNil(try source.next())
    }

    func testAudioCopyKeepsTheOffset() throws {
        for (inputName, outputName) in [("copy-in.mp4", "copy-out.mkv"), ("copy-in2.mkv", "copy-out2.mp4")] {
            let input = try makeInput(inputName, audioCodec: "aac", audioDelay: 0.3)
            let output = dir.path(outputName)
            XCTAssertEqual(try pipeMovie(from: input, to: output, settings: fast), .copy)
            let before = try MediaInspector.inspect(input), after = try MediaInspector.inspect(output)
            XCTAssertEqual(after.streams.map(\.type), ["video", "audio"], outputName)
            XCTAssertEqual(after.audioCodecName, "aac")
            XCTAssertEqual(after.videoFrameCount, 30)
            XCTAssertEqual(try XCTUnwrap(after.videoPTS.first).seconds, 0, accuracy: 0.0001, outputName)
            XCTAssertEqual(try offset(after), try offset(before), accuracy: frame30, outputName)
            XCTAssertEqual(Double(after.audioSampleCount), Double(before.audioSampleCount), accuracy: 2048, outputName)
        }
    }

    func testAudioTranscodeToAACKeepsTheOffset() throws {
        let input = try makeInput("pcm.mkv", audioCodec: "pcm_s16le", audioDelay: 0.2)
        let output = dir.path("aac.mp4")
        XCTAssertEqual(try pipeMovie(from: input, to: output, settings: fast), .transcode)
        let before = try MediaInspector.inspect(input), after = try MediaInspector.inspect(output)
        XCTAssertEqual(before.audioCodecName, "pcm_s16le")
        XCTAssertEqual(after.audioCodecName, "aac")
        XCTAssertEqual(after.audioSampleRate, 48000)
        XCTAssertEqual(try XCTUnwrap(after.videoPTS.first).seconds, 0, accuracy: 0.0001)
        XCTAssertEqual(try offset(after), try offset(before), accuracy: frame30)
        XCTAssertEqual(Double(after.audioSampleCount), Double(before.audioSampleCount), accuracy: 2048)
    }

    func testAudioBeforeTheFirstVideoFrameIsTrimmed() throws {
        // Video starts 0.5 s after the audio: output audio starts at the first video frame (within a frame).
        let input = dir.path("early-audio.mkv")
        try runFFmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1.5",
                       "-itsoffset", "0.5", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=30:duration=1",
                       "-map", "1:v", "-map", "0:a", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "pcm_s16le", input])
        for name in ["trim-transcode.mp4", "trim-copy.mkv"] {
            let output = dir.path(name)
            try pipeMovie(from: input, to: output, settings: fast)
            let after = try MediaInspector.inspect(output)
            XCTAssertEqual(try offset(after), 0, accuracy: frame30, name)
            XCTAssertEqual(Double(after.audioSampleCount), 48000, accuracy: 2048 + 48000 * frame30, name)
        }
    }

    func testBadInputsFailWithOneLine() throws {
        assertPrismError(["/nonexistent/prism.mp4", "No such file"]) { _ = try MovieSource(url: "/nonexistent/prism.mp4") }

        let text = dir.path("notes.mp4")
        XCTAssertTrue(FileManager.default.createFile(atPath: text, contents: Data("this is not a movie\n".utf8)))
        assertPrismError(["notes.mp4", "cannot open"]) { _ = try MovieSource(url: text) }

        let audioOnly = dir.path("audio.m4a")
        try runFFmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", "-c:a", "aac", audioOnly])
        assertPrismError(["audio.m4a", "no video stream"]) { _ = try MovieSource(url: audioOnly) }
    }

    func testTruncatedMoviesFailCleanly() throws {
        // Faststart (index first): opens, then decoding ends or reports an error; never crashes or hangs.
        let faststart = dir.path("front.mp4")
        try writePatternMovie(to: faststart, settings: fast, count: 60)
        // Index at the end (ffmpeg's default): the cut-off file has no index and fails at open.
        let indexLast = dir.path("back.mp4")
        try runFFmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=30:duration=2", "-c:v", "libx264",
                       "-preset", "ultrafast", indexLast])
        for path in [faststart, indexLast] {
            let bytes = readBytes(path)
            let cut = dir.path("cut-" + (path as NSString).lastPathComponent)
            XCTAssertTrue(FileManager.default.createFile(atPath: cut, contents: Data(bytes[0..<(bytes.count / 2)])))
            do {
                let source = try MovieSource(url: cut)
                var events = 0
                while try source.next() != nil {
                    events += 1
                    XCTAssertLessThan(events, 1000, "no end in sight")
                    if events >= 1000 { break }
                }
                XCTAssertLessThan(events, 60)
            } catch let error as any PrismError {
                XCTAssertFalse(error.description.contains("\n"))
                XCTAssertTrue(error.description.contains("cut-"), error.description)
            }
        }
        assertPrismError(["cut-back.mp4"]) { _ = try MovieSource(url: self.dir.path("cut-back.mp4")) }
    }

    func testCorruptDataInTheMiddleIsReported() throws {
        let path = dir.path("clean.mkv")
        try runFFmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=30:duration=1", "-c:v", "mpeg2video", path])
        var bytes = readBytes(path)
        // Overwrite the middle third with noise.
        var seed: UInt32 = 12345
        for i in (bytes.count / 3)..<(2 * bytes.count / 3) {
            seed = seed &* 1103515245 &+ 12345
            bytes[i] = UInt8(truncatingIfNeeded: seed >> 16)
        }
        let broken = dir.path("broken.mkv")
        XCTAssertTrue(FileManager.default.createFile(atPath: broken, contents: Data(bytes)))
        do {
            let source = try MovieSource(url: broken)
            var events = 0
            while try source.next() != nil {
                events += 1
                if events > 1000 { return XCTFail("no end in sight") }
            }
        } catch let error as any PrismError {
            XCTAssertFalse(error.description.contains("\n"))
            XCTAssertTrue(error.description.contains("broken.mkv"), error.description)
        }
    }

    func testDecoderOutputInOtherFormatsIsConverted() throws {
        let rgb = dir.path("rgb.mkv")
        try runFFmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x32:rate=10:duration=0.3", "-c:v", "ffv1", "-pix_fmt", "rgb48le", rgb])
        let yuv16 = dir.path("yuv16.mkv")
        try runFFmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x32:rate=10:duration=0.3", "-c:v", "ffv1", "-pix_fmt", "yuv444p16le", yuv16])
        let tenBit = dir.path("ten.mkv")
        try runFFmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x32:rate=10:duration=0.3", "-c:v", "ffv1", "-pix_fmt", "yuv420p10le", tenBit])
        // Deep Y'CbCr keeps its bits (4:4:4 16-bit as it is); deep RGB becomes 8-bit RGBA.
        for (path, expected) in [(rgb, PixelFormat.rgba), (yuv16, .yuv444p16le), (tenBit, .yuv420p10le)] {
            let source = try MovieSource(url: path)
            XCTAssertEqual(source.info.pixelFormat, expected, path)
            var frames = 0
            while let event = try source.next() {
                guard case .video(let frame) = event else { continue }
                XCTAssertEqual(frame.format, expected)
                XCTAssertEqual(frame.planes.count, expected.planes.count)
                XCTAssertEqual(frame.pts, MediaTime(value: Int64(frames), timescale: 10))
                frames += 1
            }
            XCTAssertEqual(frames, 3)
        }
    }
}
