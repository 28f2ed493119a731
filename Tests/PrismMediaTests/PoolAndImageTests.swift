import CFFmpeg
import Foundation
import PrismCore
@testable import PrismMedia
import XCTest

final class PoolAndImageTests: XCTestCase {
    private var dir: TempDirectory!
    override func setUpWithError() throws { dir = try TempDirectory() }
    override func tearDown() { dir.cleanUp() }

    func testPoolAllocatesLazilyUpToCapacityAndReuses() throws {
        let pool = FrameBufferPool(format: .nv12, size: Size(width: 100, height: 50), capacity: 2)!
        XCTAssertEqual(pool.byteCount, pool.layout.byteCount)
        XCTAssertEqual(pool.allocatedCount, 0)
        var first: PooledFrameBuffer? = try pool.acquire()
        XCTAssertEqual(Int(bitPattern: first!.data) % 64, 0, "not 64-byte aligned")
        let firstAddress = first!.data
        let second = try pool.acquire()
        XCTAssertEqual(pool.allocatedCount, 2)
        XCTAssertEqual(pool.outstandingCount, 2)
        XCTAssertNil(pool.tryAcquire())
        XCTAssertThrowsError(try pool.acquire(timeout: 0.05)) { error in
            XCTAssertEqual((error as? PoolError)?.reason, .timedOut)
        }
        first = nil
        XCTAssertEqual(pool.outstandingCount, 1)
        let again = try pool.acquire(timeout: 1)
        XCTAssertEqual(again.data, firstAddress, "buffer was not reused")
        XCTAssertEqual(pool.allocatedCount, 2)
        _ = second
    }

    func testWaitingAcquireWakesOnReleaseAndOnCancel() throws {
        let pool = FrameBufferPool(format: .rgba, size: Size(width: 8, height: 8), capacity: 1)!
        var held: PooledFrameBuffer? = try pool.acquire()
        let released = expectation(description: "acquire returns after release")
        Thread.detachNewThread {
            if (try? pool.acquire(timeout: 5)) != nil { released.fulfill() }
        }
        Thread.sleep(forTimeInterval: 0.05)
        held = nil
        wait(for: [released], timeout: 5)
        XCTAssertNil(held)

        let blocker = try pool.acquire()
        let cancelled = expectation(description: "acquire throws after cancel")
        Thread.detachNewThread {
            do { _ = try pool.acquire() } catch let error as PoolError { if error.reason == .cancelled { cancelled.fulfill() } } catch {}
        }
        Thread.sleep(forTimeInterval: 0.05)
        pool.cancel()
        wait(for: [cancelled], timeout: 5)
        pool.reset()
        _ = blocker
    }

    func testAVBufferRefKeepsTheBufferUntilFFmpegLetsGo() throws {
        let pool = FrameBufferPool(format: .gray, size: Size(width: 8, height: 8), capacity: 1)!
        var ref = try pool.acquire().avBufferRef()
        XCTAssertNotNil(ref)
        XCTAssertEqual(pool.outstandingCount, 1, "the AVBufferRef must keep the buffer out of the pool")
        av_buffer_unref(&ref)  // as the encoder would
        XCTAssertEqual(pool.outstandingCount, 0)
    }

    func testPNGRoundTripIsExact() throws {
        let size = Size(width: 33, height: 17)
        var pixels = [UInt8](repeating: 0, count: size.pixelCount * 4)
        for i in 0..<size.pixelCount { pixels[4 * i] = UInt8(i % 251); pixels[4 * i + 1] = UInt8((i * 7) % 256); pixels[4 * i + 2] = UInt8((i * 13) % 256); pixels[4 * i + 3] = UInt8(255 - i % 200) }
        let image = RGBAImage(size: size, pixels: pixels)
        let path = dir.path("still.png")
        try ImageFile.write(image, to: path)
        XCTAssertEqual(try ImageFile.read(path: path), image)
        XCTAssertEqual(dir.contents(), ["still.png"])
    }

    func testJPEGRoundTripIsClose() throws {
        let size = Size(width: 64, height: 48)
        var pixels = [UInt8](repeating: 255, count: size.pixelCount * 4)
        for y in 0..<size.height { for x in 0..<size.width {
            let i = (y * size.width + x) * 4
            pixels[i] = UInt8(x * 4); pixels[i + 1] = UInt8(y * 5); pixels[i + 2] = 128
        } }
        let image = RGBAImage(size: size, pixels: pixels)
        let path = dir.path("still.jpg")
        try ImageFile.write(image, to: path, jpegQuality: 95)
        let small = dir.path("small.jpeg")
        try ImageFile.write(image, to: small, jpegQuality: 5)
        XCTAssertLessThan(readBytes(small).count, readBytes(path).count, "quality did not change the size")
        let back = try ImageFile.read(path: path)
        XCTAssertEqual(back.size, size)
        var worst = 0
        for i in 0..<pixels.count where i % 4 != 3 { worst = max(worst, abs(Int(back.pixels[i]) - Int(pixels[i]))) }
        XCTAssertLessThan(worst, 12, "JPEG round trip is off by \(worst)")
        assertPrismError(["still.gif", "unknown image extension"]) { try ImageFile.write(image, to: self.dir.path("still.gif")) }
        assertPrismError(["nothere.png"]) { _ = try ImageFile.read(path: self.dir.path("nothere.png")) }
    }

    func testInspectorReturnsRawPlanesOfYUVFrames() throws {
        let path = dir.path("lossless-yuv.mkv")
        // x264 lossless (crf 0) keeps yuv420p samples exactly.
        try writePatternMovie(to: path, settings: VideoEncoderSettings(codec: .h264, preset: "ultrafast", crf: 0), count: 3)
        let pattern = try TestPatternSource(size: Size(width: 160, height: 90), frameRate: Rational(30, 1), frameCount: 3)
        for index in 0..<3 {
            let frame = try XCTUnwrap(pattern.nextFrame())
            let decoded = try MediaInspector.framePlanes(path, index: index)
            XCTAssertEqual(decoded.pixelFormat, "yuv420p")
            XCTAssertEqual(decoded.planes.reduce([], +), frame.packedBytes(), "frame \(index)")
        }
        assertPrismError(["no frame 7"]) { _ = try MediaInspector.framePlanes(path, index: 7) }
    }
}
