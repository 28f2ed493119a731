import Foundation
import PrismCore
@testable import PrismMedia
import XCTest

final class WriterTests: XCTestCase {
    private var dir: TempDirectory!
    override func setUpWithError() throws { dir = try TempDirectory() }
    override func tearDown() { dir.cleanUp() }

    private let fast = VideoEncoderSettings(codec: .h264, preset: "ultrafast")

    func testH264MP4RoundTripWithFaststart() throws {
        let path = dir.path("out.mp4")
        let written = try writePatternMovie(to: path, settings: fast, count: 12)
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.streams.count, 1)
        XCTAssertEqual(report.streams.first?.codecName, "h264")
        XCTAssertEqual(report.videoFrameCount, 12)
        XCTAssertEqual(report.videoPTS, written)
        XCTAssertEqual(report.size, Size(width: 160, height: 90))
        XCTAssertEqual(report.pixelFormat, "yuv420p")
        XCTAssertEqual(report.colorSpace, YUVColorSpace(matrix: .bt601, range: .limited))
        XCTAssertEqual(try XCTUnwrap(report.duration).seconds, 12.0 / 30.0, accuracy: 0.001)
        let bytes = readBytes(path)
        let moov = try XCTUnwrap(boxOffset("moov", in: bytes)), mdat = try XCTUnwrap(boxOffset("mdat", in: bytes))
        XCTAssertLessThan(moov, mdat, "index is not at the front (faststart)")
        XCTAssertEqual(dir.contents(), ["out.mp4"], "temporary files left behind")
    }

    func testH264WithBFramesKeepsTimestampsInMKV() throws {
        let path = dir.path("out.mkv")
        let written = try writePatternMovie(to: path, settings: VideoEncoderSettings(codec: .h264, preset: "medium", crf: 30),
                                            count: 10, rate: Rational(25, 1))
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.videoFrameCount, 10)
        XCTAssertEqual(report.videoPTS, written) // 1/25 s = 40 ms: exact in Matroska's milliseconds
        XCTAssertEqual(try XCTUnwrap(report.duration).seconds, 0.4, accuracy: 0.001)
    }

    func testVariableFrameRateSurvivesInMP4AndMKV() throws {
        // Irregular gaps, in a 1/90000 time base; multiples of 90 so Matroska's milliseconds hold them too.
        let ticks: [Int64] = [0, 2970, 6030, 9000, 10080, 18000, 21060, 30060, 33030, 36000]
        for name in ["vfr.mp4", "vfr.mkv", "vfr.mov"] {
            let path = dir.path(name)
            let written = try writePatternMovie(to: path, settings: fast, count: ticks.count,
                                                timeBase: Rational(1, 90000), ticks: ticks)
            let report = try MediaInspector.inspect(path)
            XCTAssertEqual(report.videoFrameCount, ticks.count, name)
            XCTAssertEqual(report.videoPTS, written, name)
        }
    }

    func testNTSCRateTimestampsAreExact() throws {
        let path = dir.path("ntsc.mp4")
        let written = try writePatternMovie(to: path, settings: fast, count: 5, rate: Rational(30000, 1001))
        XCTAssertEqual(written[1], MediaTime(value: 1001, timescale: 30000))
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.videoPTS, written)
        XCTAssertEqual(try XCTUnwrap(report.duration).seconds, 5 * 1001 / 30000.0, accuracy: 0.001)
    }

    func testTimestampsAreRebasedToZero() throws {
        let path = dir.path("late.mp4")
        let ticks: [Int64] = (0..<6).map { 900 + $0 * 3 }
        try writePatternMovie(to: path, settings: fast, count: 6, ticks: ticks)
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.videoPTS, (0..<6).map { MediaTime(value: Int64($0 * 3), timescale: 30) })
    }

    func testFFV1IsLossless() throws {
        let path = dir.path("lossless.mkv")
        let settings = VideoEncoderSettings(codec: .ffv1)
        XCTAssertEqual(settings.pixelFormat, .bgra)
        let size = Size(width: 64, height: 36)
        try writePatternMovie(to: path, settings: settings, count: 3, size: size)
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.videoFrameCount, 3)
        XCTAssertEqual(report.streams.first?.codecName, "ffv1")
        let pool = FrameBufferPool(format: .bgra, size: size, capacity: 1)!
        for index in 0..<3 {
            let buffer = try pool.acquire()
            fillBGRA(buffer, index: index)
            let decoded = try MediaInspector.framePlanes(path, index: index)
            XCTAssertEqual(decoded.size, size)
            XCTAssertEqual(decoded.pixelFormat, "bgra")
            XCTAssertEqual(decoded.planes.first, packedPlane(buffer, 0), "frame \(index) changed")
        }
    }

    func testProResInMOV() throws {
        let path = dir.path("prores.mov")
        let settings = VideoEncoderSettings(codec: .prores)
        XCTAssertEqual(settings.pixelFormat, .yuv422p10le)
        let written = try writePatternMovie(to: path, settings: settings, count: 4)
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.streams.first?.codecName, "prores")
        XCTAssertEqual(report.pixelFormat, "yuv422p10le")
        XCTAssertEqual(report.videoFrameCount, 4)
        XCTAssertEqual(report.videoPTS, written)
        let bytes = readBytes(path)
        XCTAssertLessThan(try XCTUnwrap(boxOffset("moov", in: bytes)), try XCTUnwrap(boxOffset("mdat", in: bytes)))
    }

    func testHEVCWhenAvailable() throws {
        guard avcodecHasEncoder("libx265") else {
            assertPrismError(["libx265"]) {
                _ = try MovieWriter(path: self.dir.path("x.mp4"), video: VideoStreamConfig(
                    size: Size(width: 160, height: 90), timeBase: Rational(1, 30), frameRate: Rational(30, 1),
                    colorSpace: YUVColorSpace(matrix: .bt601, range: .limited)), settings: VideoEncoderSettings(codec: .hevc))
            }
            return
        }
        let path = dir.path("hevc.mp4")
        let written = try writePatternMovie(to: path, settings: VideoEncoderSettings(codec: .hevc, preset: "ultrafast"), count: 5)
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.streams.first?.codecName, "hevc")
        XCTAssertEqual(report.videoPTS, written)
    }

    func testColourTagsAreWrittenAndHonouredByInspector() throws {
        // Tag BT.709 limited; frame 0 decoded to RGBA must match a CPU conversion with BT.709, not BT.601.
        let path = dir.path("tagged.mkv")
        let space709 = YUVColorSpace(matrix: .bt709, range: .limited)
        try writePatternMovie(to: path, settings: VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 0),
                              count: 1, colorSpace: space709)
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.colorSpace, space709)
        let image = try MediaInspector.frameRGBA(path, index: 0)
        let frame = try XCTUnwrap(try TestPatternSource(size: Size(width: 160, height: 90), frameRate: Rational(30, 1)).nextFrame())
        // Centre of each bar, on a row well inside the bars (clear of the clock panel).
        let y = 54
        for bar in 0..<7 {
            let x = (2 * bar + 1) * 160 / 14
            let luma = Double(frame.planes[0].base.load(fromByteOffset: y * frame.planes[0].rowBytes + x, as: UInt8.self)) / 255
            let cb = Double(frame.planes[1].base.load(fromByteOffset: (y / 2) * frame.planes[1].rowBytes + x / 2, as: UInt8.self)) / 255
            let cr = Double(frame.planes[2].base.load(fromByteOffset: (y / 2) * frame.planes[2].rowBytes + x / 2, as: UInt8.self)) / 255
            let expected = space709.rgb(fromY: luma, cb: cb, cr: cr)
            let got = image.pixel(x: x, y: y)
            for (value, reference) in [(got.r, expected.r), (got.g, expected.g), (got.b, expected.b)] {
                XCTAssertEqual(Double(value), max(0, min(255, reference * 255)), accuracy: 2.5, "bar \(bar)")
            }
        }
    }

    func testPoolNeverExceedsCapacityThroughTheEncoder() throws {
        let size = Size(width: 64, height: 32)
        let pool = FrameBufferPool(format: fast.pixelFormat, size: size, capacity: 3)!
        let writer = try MovieWriter(path: dir.path("pool.mkv"), video: VideoStreamConfig(
            size: size, timeBase: Rational(1, 30), frameRate: Rational(30, 1),
            colorSpace: YUVColorSpace(matrix: .bt601, range: .limited)), settings: fast)
        for index in 0..<300 {
            let buffer = try pool.acquire(timeout: 10)
            buffer.data.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: index), count: pool.byteCount)
            try writer.writeVideo(buffer, pts: MediaTime(value: Int64(index), timescale: 30))
            XCTAssertLessThanOrEqual(pool.outstandingCount, 3)
            XCTAssertLessThanOrEqual(pool.allocatedCount, 3)
        }
        try writer.finish()
        XCTAssertEqual(pool.outstandingCount, 0, "buffers did not come back after the encoder finished")
        XCTAssertLessThanOrEqual(pool.allocatedCount, 3)
        XCTAssertEqual(try MediaInspector.inspect(dir.path("pool.mkv")).videoFrameCount, 300)
    }

    /// Raw PCM on the video's time line: samples before the first frame are dropped, a lost stretch is
    /// filled with silence, and the audio is cut at the end of the last frame.
    func testRawPCMIsEncodedAsAACOnTheVideoTimeLine() throws {
        let size = Size(width: 64, height: 32)
        let path = dir.path("pcm.mp4")
        let pool = FrameBufferPool(format: fast.pixelFormat, size: size, capacity: 3)!
        let pcm = PCMFormat(sampleRate: 48000, channels: 1)
        let writer = try MovieWriter(path: path, video: VideoStreamConfig(
            size: size, timeBase: Rational(1, 30), frameRate: Rational(30, 1),
            colorSpace: YUVColorSpace(matrix: .bt601, range: .limited)), settings: fast, pcm: pcm)
        XCTAssertEqual(writer.audioMode, .transcode)
        // 440 Hz from 9.9 s to 11.9 s (video: 10 s to 12 s), with 0.2 s lost at 10.5 s.
        func chunk(at sample: Int, count: Int) -> [Int16] {
            (sample..<(sample + count)).map { Int16(12000 * sin(2 * Double.pi * 440 * Double($0) / 48000)) }
        }
        var sample = 9_900 * 48
        var frame = 300
        while sample < 11_900 * 48 {
            let count = min(1000, 11_900 * 48 - sample)
            if !(10_500 * 48..<10_700 * 48).contains(sample) {
                try chunk(at: sample, count: count).withUnsafeBytes {
                    try writer.writeAudio(pcm: $0, pts: MediaTime(value: Int64(sample), timescale: 48000))
                }
            }
            sample += count
            // Video interleaved as a live pipeline would deliver it.
            while frame < 360, Double(frame) / 30 < Double(sample) / 48000 {
                let buffer = try pool.acquire(timeout: 10)
                buffer.data.initializeMemory(as: UInt8.self, repeating: 128, count: pool.byteCount)
                try writer.writeVideo(buffer, pts: MediaTime(value: Int64(frame), timescale: 30))
                frame += 1
            }
        }
        XCTAssertThrowsError(try [UInt8](repeating: 0, count: 3).withUnsafeBytes { try writer.writeAudio(pcm: $0, pts: .zero) },
                             "not whole frames")
        while frame < 360 {
            let buffer = try pool.acquire(timeout: 10)
            buffer.data.initializeMemory(as: UInt8.self, repeating: 128, count: pool.byteCount)
            try writer.writeVideo(buffer, pts: MediaTime(value: Int64(frame), timescale: 30))
            frame += 1
        }
        try writer.finish()
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.videoFrameCount, 60)
        XCTAssertEqual(report.audioCodecName, "aac")
        XCTAssertEqual(report.audioSampleRate, 48000)
        XCTAssertEqual(try XCTUnwrap(report.firstAudioPTS).seconds, 0, accuracy: 1.0 / 30)
        // 1.9 s: from the video's start to the audio's end, the lost 0.2 s kept as silence.
        XCTAssertEqual(Double(report.audioSampleCount) / 48000, 1.9, accuracy: 0.05)
        XCTAssertGreaterThan(report.audioPeak, 0.2)
        XCTAssertEqual(Double(report.audioZeroCrossings) / 2 / 1.7, 440, accuracy: 20)
    }

    func testRawPCMAudioEndsWithTheVideo() throws {
        let size = Size(width: 64, height: 32)
        let path = dir.path("cut.mkv")
        let pool = FrameBufferPool(format: fast.pixelFormat, size: size, capacity: 3)!
        let writer = try MovieWriter(path: path, video: VideoStreamConfig(
            size: size, timeBase: Rational(1, 30), frameRate: Rational(30, 1),
            colorSpace: YUVColorSpace(matrix: .bt601, range: .limited)), settings: fast,
            pcm: PCMFormat(sampleRate: 44100, channels: 2))
        let second = [Int16](repeating: 1000, count: 44100 * 2)
        for index in 0..<30 {
            let buffer = try pool.acquire(timeout: 10)
            buffer.data.initializeMemory(as: UInt8.self, repeating: 128, count: pool.byteCount)
            try writer.writeVideo(buffer, pts: MediaTime(value: Int64(index), timescale: 30))
        }
        for start in 0..<3 {
            try second.withUnsafeBytes { try writer.writeAudio(pcm: $0, pts: MediaTime(value: Int64(start), timescale: 1)) }
        }
        try writer.finish()
        let report = try MediaInspector.inspect(path)
        XCTAssertEqual(report.audioSampleRate, 44100)
        XCTAssertEqual(Double(report.audioSampleCount) / 44100, 1.0, accuracy: 0.05)
    }

    func testAbortLeavesNoFileAndKeepsExistingTarget() throws {
        let path = dir.path("keep.mp4")
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("precious".utf8)))
        let size = Size(width: 64, height: 32)
        let pool = FrameBufferPool(format: fast.pixelFormat, size: size, capacity: 2)!
        let config = VideoStreamConfig(size: size, timeBase: Rational(1, 30), frameRate: Rational(30, 1),
                                       colorSpace: YUVColorSpace(matrix: .bt601, range: .limited))
        do {
            let writer = try MovieWriter(path: path, video: config, settings: fast)
            for index in 0..<5 {
                let buffer = try pool.acquire(timeout: 10)
                try writer.writeVideo(buffer, pts: MediaTime(value: Int64(index), timescale: 30))
            }
            writer.abort()
            XCTAssertThrowsError(try writer.finish())
        }
        XCTAssertEqual(readBytes(path), Array("precious".utf8))
        XCTAssertEqual(dir.contents(), ["keep.mp4"])
        // Dropped without finish(): same.
        do {
            let writer = try MovieWriter(path: dir.path("dropped.mkv"), video: config, settings: fast)
            try writer.writeVideo(try pool.acquire(timeout: 10), pts: .zero)
        }
        XCTAssertEqual(dir.contents(), ["keep.mp4"])
        XCTAssertEqual(pool.outstandingCount, 0)
        // finish() replaces the target.
        try writePatternMovie(to: path, settings: fast, count: 2)
        XCTAssertEqual(try MediaInspector.inspect(path).videoFrameCount, 2)
    }

    func testOutputErrorsComeBeforeAnyFrame() throws {
        let config = VideoStreamConfig(size: Size(width: 64, height: 32), timeBase: Rational(1, 30), frameRate: Rational(30, 1),
                                       colorSpace: YUVColorSpace(matrix: .bt601, range: .limited))
        assertPrismError(["/nonexistent-prism-dir/out.mp4"]) {
            _ = try MovieWriter(path: "/nonexistent-prism-dir/out.mp4", video: config, settings: self.fast)
        }
        assertPrismError(["out.xyz", "unknown output file extension"]) {
            _ = try MovieWriter(path: self.dir.path("out.xyz"), video: config, settings: self.fast)
        }
        assertPrismError(["no file extension"]) {
            _ = try MovieWriter(path: self.dir.path("out"), video: config, settings: self.fast)
        }
        assertPrismError(["is a directory"]) {
            _ = try MovieWriter(path: self.dir.url.path, video: config, settings: self.fast)
        }
        assertPrismError(["even frame size", "161x90"]) {
            var odd = config
            odd.size = Size(width: 161, height: 90)
            _ = try MovieWriter(path: self.dir.path("odd.mp4"), video: odd, settings: self.fast)
        }
        assertPrismError(["mp4", "cannot hold ffv1"]) {
            _ = try MovieWriter(path: self.dir.path("lossless.mp4"), video: config, settings: VideoEncoderSettings(codec: .ffv1))
        }
        XCTAssertEqual(dir.contents(), [])
    }

    func testWrongBufferIsRejected() throws {
        let config = VideoStreamConfig(size: Size(width: 64, height: 32), timeBase: Rational(1, 30), frameRate: Rational(30, 1),
                                       colorSpace: YUVColorSpace(matrix: .bt601, range: .limited))
        let writer = try MovieWriter(path: dir.path("w.mkv"), video: config, settings: fast)
        let pool = FrameBufferPool(format: .rgba, size: Size(width: 64, height: 32), capacity: 1)!
        assertPrismError(["rgba", "nv12"]) { try writer.writeVideo(try pool.acquire(), pts: .zero) }
        writer.abort()
    }
}

func avcodecHasEncoder(_ name: String) -> Bool {
    VideoEncoderSettings.encoderAvailable(name)
}
