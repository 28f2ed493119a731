import Foundation
import PrismCore
@testable import PrismMedia
import Synchronization
import XCTest

final class SourceTests: XCTestCase {
    func testPatternFramesMoveAndCarryTimestamps() throws {
        let pattern = try TestPatternSource(size: Size(width: 160, height: 90), frameRate: Rational(30, 1), frameCount: 5)
        XCTAssertEqual(pattern.info.pixelFormat, .yuv420p)
        XCTAssertEqual(pattern.info.timeBase, Rational(1, 30))
        XCTAssertEqual(pattern.info.colorSpace, YUVColorSpace(matrix: .bt601, range: .limited))
        XCTAssertEqual(pattern.info.estimatedFrameCount, 5)
        XCTAssertEqual(pattern.info.duration, MediaTime(value: 5, timescale: 30))
        var frames: [VideoFrame] = []
        while let event = try pattern.next() {
            guard case .video(let frame) = event else { return XCTFail("pattern made audio") }
            frames.append(frame)
        }
        XCTAssertEqual(frames.count, 5)
        for (index, frame) in frames.enumerated() {
            XCTAssertEqual(frame.pts, MediaTime(value: Int64(index), timescale: 30))
            XCTAssertEqual(frame.duration, MediaTime(value: 1, timescale: 30))
            XCTAssertEqual(frame.size, Size(width: 160, height: 90))
            XCTAssertEqual(frame.planes.count, 3)
        }
        let bytes = frames.map { $0.packedBytes() }
        for index in 1..<bytes.count {
            XCTAssertNotEqual(bytes[index], bytes[index - 1], "frame \(index) equals the previous one")
        }
        XCTAssertNil(pattern.nextFrame())
    }

    func testPatternNTSCRateAndHDColour() throws {
        let pattern = try TestPatternSource(size: Size(width: 1280, height: 720), frameRate: Rational(30000, 1001), frameCount: nil)
        XCTAssertEqual(pattern.info.colorSpace, YUVColorSpace(matrix: .bt709, range: .limited))
        XCTAssertNil(pattern.info.estimatedFrameCount)
        _ = pattern.nextFrame()
        let second = try XCTUnwrap(pattern.nextFrame())
        XCTAssertEqual(second.pts, MediaTime(value: 1001, timescale: 30000))
        // Bars: the leftmost is 75% white (Y = 16 + 0.75 * 219 = 180), the rightmost 75% blue, which in
        // BT.709 limited is Y = 16 + 219 * 0.0722 * 0.75 = 28 (BT.601 would give 30).
        let luma = second.planes[0]
        XCTAssertEqual(luma.base.load(fromByteOffset: 2 * luma.rowBytes + 1, as: UInt8.self), 180)
        XCTAssertEqual(luma.base.load(fromByteOffset: 2 * luma.rowBytes + 1279, as: UInt8.self), 28)
        XCTAssertThrowsError(try TestPatternSource(size: Size(width: 4, height: 4), frameRate: Rational(30, 1)))
    }

    func testRawVideoFormatParsing() throws {
        let format = try RawVideoFormat(parsing: "1280x720:yuv420p:30")
        XCTAssertEqual(format.size, Size(width: 1280, height: 720))
        XCTAssertEqual(format.pixelFormat, .yuv420p)
        XCTAssertEqual(format.frameRate, Rational(30, 1))
        XCTAssertEqual(format.frameBytes, 1280 * 720 * 3 / 2)
        XCTAssertEqual(try RawVideoFormat(parsing: "640x480:rgba:30000/1001").frameRate, Rational(30000, 1001))
        assertPrismError(["expected WxH:PIXFMT:RATE"]) { _ = try RawVideoFormat(parsing: "640x480") }
        assertPrismError(["bad size", "640y480"]) { _ = try RawVideoFormat(parsing: "640y480:rgba:30") }
        assertPrismError(["unknown pixel format", "yuv411p", "yuv420p", "rgba"]) {
            _ = try RawVideoFormat(parsing: "640x480:yuv411p:30")
        }
        assertPrismError(["bad frame rate", "fast"]) { _ = try RawVideoFormat(parsing: "640x480:rgba:fast") }
    }

    func testRawVideoSourceReadsFramesAndRejectsShortLastFrame() throws {
        let dir = try TempDirectory()
        defer { dir.cleanUp() }
        let format = try RawVideoFormat(parsing: "16x8:yuv420p:25")
        var data: [UInt8] = []
        for frame in 0..<3 { data += [UInt8](repeating: UInt8(frame * 40), count: format.frameBytes) }
        let whole = dir.path("whole.yuv")
        XCTAssertTrue(FileManager.default.createFile(atPath: whole, contents: Data(data)))
        let fd = open(whole, O_RDONLY)
        defer { close(fd) }
        let source = RawVideoSource(fileDescriptor: fd, format: format)
        var count = 0
        while let event = try source.next() {
            guard case .video(let frame) = event else { return XCTFail() }
            XCTAssertEqual(frame.pts, MediaTime(value: Int64(count), timescale: 25))
            XCTAssertEqual(frame.packedBytes(), [UInt8](repeating: UInt8(count * 40), count: format.frameBytes))
            count += 1
        }
        XCTAssertEqual(count, 3)

        let short = dir.path("short.yuv")
        XCTAssertTrue(FileManager.default.createFile(atPath: short, contents: Data(data.dropLast(10))))
        let fd2 = open(short, O_RDONLY)
        defer { close(fd2) }
        let source2 = RawVideoSource(fileDescriptor: fd2, format: format)
        _ = try source2.next()
        _ = try source2.next()
        assertPrismError(["short"]) { _ = try source2.next() }
    }

    func testRawSinkWritesPackedFramesAndEndsCleanlyOnEPIPE() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let pool = FrameBufferPool(format: .yuv420p, size: Size(width: 18, height: 10), capacity: 2)!
        let buffer = try pool.acquire()
        // Fill each plane's used bytes with its index, padding with 0xEE (must not reach the pipe).
        buffer.data.initializeMemory(as: UInt8.self, repeating: 0xEE, count: pool.byteCount)
        for (index, plane) in buffer.layout.planes.enumerated() {
            for row in 0..<plane.rows {
                (buffer.data + plane.offset + row * plane.rowBytes).initializeMemory(as: UInt8.self, repeating: UInt8(index + 1), count: plane.usedRowBytes)
            }
        }
        let sink = RawVideoSink(fileDescriptor: fds[1], format: .yuv420p)
        XCTAssertTrue(try sink.write(buffer))
        let expected = [UInt8](repeating: 1, count: 180) + [UInt8](repeating: 2, count: 45) + [UInt8](repeating: 3, count: 45)
        var received = [UInt8](repeating: 0, count: expected.count)
        XCTAssertEqual(read(fds[0], &received, expected.count), expected.count)
        XCTAssertEqual(received, expected)
        close(fds[0])
        XCTAssertFalse(try sink.write(buffer))
        XCTAssertTrue(sink.isClosed)
        close(fds[1])
    }

    /// Frames go out straight from the pooled buffer in pieces (a plane without row padding, or a row): a
    /// frame larger than the pipe holds, with more rows than one writev takes (IOV_MAX), arrives whole and
    /// in plane order while a reader drains it.
    func testRawSinkWritesLargeFramesPieceByPiece() throws {
        for (format, size) in [(PixelFormat.yuv420p, Size(width: 320, height: 2400)), (.nv12, Size(width: 320, height: 240))] {
            try writeLargeFrame(format: format, size: size)
        }
    }

    private func writeLargeFrame(format: PixelFormat, size: Size) throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let pool = FrameBufferPool(format: format, size: size, capacity: 1)!
        let buffer = try pool.acquire()
        buffer.data.initializeMemory(as: UInt8.self, repeating: 0xEE, count: pool.byteCount)
        var expected: [UInt8] = []
        for plane in buffer.layout.planes {
            for row in 0..<plane.rows {
                for x in 0..<plane.usedRowBytes {
                    let value = UInt8(truncatingIfNeeded: row &* 31 &+ x &+ plane.offset)
                    (buffer.data + plane.offset + row * plane.rowBytes + x).storeBytes(of: value, as: UInt8.self)
                    expected.append(value)
                }
            }
        }
        let readEnd = fds[0], writeEnd = fds[1]
        let received = Mutex<[UInt8]>([])
        let drained = expectation(description: "the reader saw the end of the pipe")
        Thread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(readEnd, &chunk, chunk.count)
                if count <= 0 { break }
                received.withLock { $0 += chunk[0..<count] }
            }
            close(readEnd)
            drained.fulfill()
        }.start()
        let sink = RawVideoSink(fileDescriptor: writeEnd, format: format)
        XCTAssertTrue(try sink.write(buffer))
        close(writeEnd)
        wait(for: [drained], timeout: 10)
        let bytes = received.withLock { $0 }
        XCTAssertEqual(bytes.count, expected.count, "\(format)")
        XCTAssertTrue(bytes == expected, "\(format): the planes in order, byte for byte, no padding")
    }

    /// A short writev resumes where it stopped: inside a piece, at a piece's end, across several.
    func testShortWritesResumeInsideAPiece() {
        var storage = [UInt8](repeating: 0, count: 30)
        storage.withUnsafeMutableBytes { bytes in
            let base = bytes.baseAddress!
            var v = [iovec(iov_base: base, iov_len: 10), iovec(iov_base: base + 10, iov_len: 5),
                     iovec(iov_base: base + 15, iov_len: 15)]
            var first = 0
            // Bytes written, then where the rest starts: the piece, its bytes left, its offset in the storage.
            let steps: [(written: Int, first: Int, left: Int, at: Int)] = [(4, 0, 6, 4), (6, 1, 5, 10), (12, 2, 8, 22)]
            for step in steps {
                RawVideoSink.skip(step.written, of: &v, first: &first)
                XCTAssertEqual(first, step.first)
                XCTAssertEqual(v[first].iov_len, step.left)
                XCTAssertEqual(v[first].iov_base, base + step.at)
            }
            RawVideoSink.skip(8, of: &v, first: &first)
            XCTAssertEqual(first, 3, "all written")
        }
    }
}
