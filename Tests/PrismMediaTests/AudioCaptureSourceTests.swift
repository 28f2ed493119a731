import Foundation
import PrismCore
@testable import PrismMedia
import XCTest

/// AudioCaptureSource through real alsa-lib against PCMs defined in a configuration the test writes.
final class AudioCaptureSourceTests: XCTestCase {
    func testNullCaptureDeliversPacedStampedChunks() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prism-alsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("asound.conf").path
        try "pcm.prismnull { type null }\n".write(toFile: config, atomically: true, encoding: .utf8)
        setenv("ALSA_CONFIG_PATH", config, 1)

        let source = try AudioCaptureSource(device: "prismnull")
        XCTAssertEqual(source.format, PCMFormat(sampleRate: 48000, channels: 2))
        let chunks = LockedChunks()
        let begun = monotonicMicroseconds()
        source.start { chunk in chunks.append(chunk) < 25 }
        Thread.sleep(forTimeInterval: 0.3)
        source.stop()
        let got = chunks.all
        XCTAssertGreaterThan(got.count, 5)
        // Paced to the clock: 0.3 s of sound at most (plus two periods and the stop), not as fast as the plugin returns.
        let seconds = Double(got.reduce(0) { $0 + $1.frameCount }) / 48000
        XCTAssertLessThan(seconds, 0.3 + 0.1)
        XCTAssertEqual(got[0].captureTime - begun, 0, accuracy: 50_000)
        for (a, b) in zip(got, got.dropFirst()) {
            XCTAssertGreaterThan(b.captureTime, a.captureTime)
        }
        XCTAssertEqual(source.overruns, 0)

        XCTAssertThrowsError(try AudioCaptureSource(device: "prismmissing")) { error in
            XCTAssert("\(error)".hasPrefix("audio device prismmissing: "), "\(error)")
            XCTAssert("\(error)".hasSuffix("(snd_pcm_open)"), "\(error)")
        }
    }
}

private final class LockedChunks: @unchecked Sendable {
    private let lock = NSLock()
    private var chunks: [AudioChunk] = []
    func append(_ chunk: AudioChunk) -> Int { lock.withLock { chunks.append(chunk); return chunks.count } }
    var all: [AudioChunk] { lock.withLock { chunks } }
}
