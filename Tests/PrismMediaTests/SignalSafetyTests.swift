import Foundation
import PrismCore
@testable import PrismMedia
import XCTest

/// Library code writes to pipes without SIGPIPE ending the process and without changing how the process
/// handles SIGPIPE (a program embedding the library keeps its own handling), and installs no signal
/// handling at all: that is the command-line tool's (`Sources/Prism/`).
final class SignalSafetyTests: XCTestCase {
    /// SIGPIPE's disposition: SIG_DFL is 0, SIG_IGN 1, else a handler's address.
    private func sigpipeDisposition() -> Int {
        var now = sigaction()
        XCTAssertEqual(sigaction(SIGPIPE, nil, &now), 0)
        return unsafeBitCast(now.__sigaction_handler.sa_handler, to: Int.self)
    }

    private var sigpipePending: Bool {
        var pending = sigset_t()
        sigemptyset(&pending)
        return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1
    }

    /// Runs `body` with SIGPIPE at its default action (an earlier test of this process may have ignored
    /// it), as in a program that never touched it; puts back what was there after.
    private func withDefaultSIGPIPE(_ body: () throws -> Void) rethrows {
        let previous = signal(SIGPIPE, SIG_DFL)
        defer { signal(SIGPIPE, previous) }
        XCTAssertEqual(sigpipeDisposition(), 0)
        try body()
    }

    /// A raw sink whose reader went away: EPIPE, a clean end (false, `isClosed`), the process alive, its
    /// SIGPIPE disposition still the default, and no SIGPIPE left pending.
    func testRawSinkOnAClosedPipeLeavesSIGPIPEAlone() throws {
        try withDefaultSIGPIPE {
            var fds: [Int32] = [0, 0]
            XCTAssertEqual(pipe(&fds), 0)
            defer { close(fds[1]) }
            let pool = FrameBufferPool(format: .yuv420p, size: Size(width: 16, height: 8), capacity: 1)!
            let buffer = try pool.acquire()
            let sink = RawVideoSink(fileDescriptor: fds[1], format: .yuv420p)
            XCTAssertEqual(sigpipeDisposition(), 0, "creating a raw sink changed the process's SIGPIPE handling")
            XCTAssertTrue(try sink.write(buffer))
            close(fds[0])
            XCTAssertFalse(try sink.write(buffer))
            XCTAssertTrue(sink.isClosed)
            XCTAssertEqual(sigpipeDisposition(), 0, "writing to a closed pipe changed the process's SIGPIPE handling")
            XCTAssertFalse(sigpipePending)
        }
    }

    /// The helper itself: EPIPE from write(2), the SIGPIPE it raised taken back, the thread's signal mask
    /// as it was.
    func testWithoutSIGPIPEReportsEPIPEAndRestoresTheMask() {
        withDefaultSIGPIPE {
            var fds: [Int32] = [0, 0]
            XCTAssertEqual(pipe(&fds), 0)
            close(fds[0])
            defer { close(fds[1]) }
            var before = sigset_t()
            pthread_sigmask(SIG_SETMASK, nil, &before)
            let byte: UInt8 = 7
            var code: Int32 = 0
            let result = withoutSIGPIPE { () -> Int in
                let written = withUnsafePointer(to: byte) { write(fds[1], $0, 1) }
                code = errno
                return written
            }
            XCTAssertEqual(result, -1)
            XCTAssertEqual(code, EPIPE)
            var after = sigset_t()
            pthread_sigmask(SIG_SETMASK, nil, &after)
            XCTAssertEqual(sigismember(&after, SIGPIPE), sigismember(&before, SIGPIPE))
            XCTAssertFalse(sigpipePending)
        }
    }

    /// A movie written to a FIFO whose reader went away: an error from the writer, not SIGPIPE ending the
    /// process, and the process's SIGPIPE disposition left as it was.
    func testMovieWriterOnAFIFOWithoutReaderFailsWithoutSIGPIPE() throws {
        let dir = try TempDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("out.ts")
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        try withDefaultSIGPIPE {
            let reader = open(path, O_RDONLY | O_NONBLOCK)
            XCTAssertGreaterThanOrEqual(reader, 0)
            let size = Size(width: 64, height: 32)
            let settings = VideoEncoderSettings(codec: .h264, preset: "ultrafast")
            let pool = FrameBufferPool(format: settings.pixelFormat, size: size, capacity: 2)!
            let config = VideoStreamConfig(size: size, timeBase: Rational(1, 30), frameRate: Rational(30, 1),
                                           colorSpace: YUVColorSpace(matrix: .bt601, range: .limited))
            let writer = try MovieWriter(path: path, video: config, settings: settings)
            close(reader)
            var failed = false
            do {
                for index in 0..<300 {
                    let buffer = try pool.acquire(timeout: 10)
                    buffer.data.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: index * 7), count: pool.byteCount)
                    _ = try writer.writeVideo(buffer, pts: MediaTime(value: Int64(index), timescale: 30))
                }
                try writer.finish()
            } catch {
                failed = true
                writer.abort()
            }
            XCTAssertTrue(failed, "writing to a FIFO without a reader did not fail")
            XCTAssertEqual(sigpipeDisposition(), 0, "the movie writer changed the process's SIGPIPE handling")
            XCTAssertFalse(sigpipePending)
        }
    }

    /// Nothing under `Sources/` but the command-line tool (`Sources/Prism/`) installs signal handling:
    /// no `signal(SIG…)`, `sigaction(…)` or signal dispatch source in the libraries or their C shims.
    func testOnlyTheCommandLineToolInstallsSignalHandling() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let pattern = try NSRegularExpression(pattern: #"\bsignal\s*\(\s*SIG|\bsigaction\s*\(|\bsigset\s*\(|makeSignalSource|\bsigwait"#)
        var offenders: [String] = []
        var scanned = 0
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        for case let file as URL in files {
            let relative = String(file.path.dropFirst(sources.path.count + 1))
            guard !relative.hasPrefix("Prism/"), ["swift", "c", "h", "cpp", "hpp", "m"].contains(file.pathExtension),
                  let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            scanned += 1
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") || code.hasPrefix("*") || code.hasPrefix("/*") { continue }
                let range = NSRange(code.startIndex..., in: code)
                if pattern.firstMatch(in: code, range: range) != nil { offenders.append("Sources/\(relative):\(number + 1): \(code)") }
            }
        }
        XCTAssertGreaterThan(scanned, 50, "did not find the sources under \(sources.path)")
        XCTAssertEqual(offenders, [], "signal handling below the command-line tool:\n" + offenders.joined(separator: "\n"))
    }
}
