import Foundation
import XCTest
import PrismCore
import PrismFilters
import PrismGPU
import PrismMedia
@testable import PrismPipeline

/// The engine's sound for audio-reactive filters from a movie's track: each frame's window is the sound
/// ending at its time whatever order the demuxer delivers packets in, because frames wait for it.
final class AudioFeedTests: XCTestCase {
    func makeClip() throws -> (path: String, cleanUp: () -> Void) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("audio-feed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("tone.mkv").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
                             "-f", "lavfi", "-i", "testsrc2=size=32x16:rate=30:duration=0.4",
                             "-f", "lavfi", "-i", "sine=frequency=750:sample_rate=48000:duration=0.4",
                             "-c:v", "ffv1", "-c:a", "pcm_s16le", path]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg made the clip")
        return (path, { try? FileManager.default.removeItem(at: directory) })
    }

    /// Every frame of the clip with its window, feeding the track's events in `order`.
    func windows(_ path: String, videoFirst: Bool) throws -> [(pts: MediaTime, audio: AudioWindow?)] {
        let source = try MovieSource(url: path)
        let feed = try XCTUnwrap(try AudioFeed.make(for: FilterGraph(), source: source.info, capture: nil, always: true))
        XCTAssertFalse(feed.isLive)
        var sound = try XCTUnwrap(feed.trackTimeline())
        var video: [TimedFrame] = [], audio: [AudioPacket] = []
        while let event = try source.next() {
            switch event {
            case .video(let frame): video.append(TimedFrame(frame: frame, pts: frame.pts, duration: frame.duration))
            case .audio(let packet): audio.append(packet)
            }
        }
        var released: [TimedFrame] = []
        if videoFirst {
            // The worst interleaving: every frame before any sound. None may leave before its sound is in.
            released += sound.hold(video)
            XCTAssertTrue(released.isEmpty, "frames wait for their sound")
            for packet in audio { released += try sound.decode(packet) }
        } else {
            // Sound first: each frame leaves as soon as it is held.
            for packet in audio { released += try sound.decode(packet) }
            for frame in video { released += sound.hold([frame]) }
        }
        released += try sound.finish()
        return released.map { ($0.pts, $0.audio) }
    }

    func testWindowsDoNotDependOnTheInterleaving() throws {
        let clip = try makeClip()
        defer { clip.cleanUp() }
        let late = try windows(clip.path, videoFirst: true)
        let early = try windows(clip.path, videoFirst: false)
        XCTAssertEqual(late.count, 12)
        XCTAssertEqual(late.map(\.pts), early.map(\.pts), "frames keep their order")
        for (a, b) in zip(late, early) { XCTAssertTrue(a.audio == b.audio, "frame at \(a.pts): the windows differ") }
        // Frame 0 ends at time 0: nothing before it. Frame 6 ends at 0.2 s: the tone's samples 8576..<9600
        // (ffmpeg's sine: amplitude 1/8), as 16-bit PCM.
        let first = try XCTUnwrap(late[0].audio)
        XCTAssertTrue(first.samples[0].allSatisfy { $0 == 0 })
        let sixth = try XCTUnwrap(late[6].audio)
        XCTAssertEqual(sixth.sampleRate, 48000)
        XCTAssertEqual(sixth.channelCount, 1)
        for i in stride(from: 0, to: AudioWindow.sampleCount, by: 37) {
            let n = 9600 - AudioWindow.sampleCount + i
            XCTAssertEqual(Double(sixth.samples[0][i]), sin(2 * Double.pi * 750 * Double(n) / 48000) / 8, accuracy: 2e-4, "sample \(n)")
        }
    }

    func testAGraphWithAudioInputsOnASilentInputIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("audio-feed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let shader = directory.appendingPathComponent("wave.fs").path
        try """
            /*{ "INPUTS": [ { "NAME": "level", "TYPE": "audio", "MAX": 1 } ] }*/
            void main() { gl_FragColor = IMG_NORM_PIXEL(level, vec2(0.5)); }
            """.write(toFile: shader, atomically: true, encoding: .utf8)
        let graph = try GraphBinder().bind(shader)
        let pattern = try SourceSpec(input: .pattern, size: Size(width: 32, height: 32)).open()
        XCTAssertNil(try AudioFeed.make(for: graph, source: pattern.info, capture: nil, always: false), "no sound to decode")
        XCTAssertThrowsError(try FrameEngine(source: pattern, graph: graph, sinks: [DiscardSink(format: .rgba)], gpu: GPUContext())) { error in
            XCTAssertEqual("\(error)", "\(shader): input 'level' needs audio: the input has no audio track; give \(Setting.audio) PCM (with a camera or the pattern)")
        }
        XCTAssertNil(try AudioFeed.make(for: FilterGraph(), source: pattern.info, capture: nil, always: false),
                     "a graph without audio inputs decodes nothing")
    }
}
