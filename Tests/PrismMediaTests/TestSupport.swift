import Foundation
import PrismCore
@testable import PrismMedia
import XCTest

/// A fresh directory under the temporary directory, removed by `cleanUp()`.
final class TempDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("prism-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        FFmpegLog.setLevel(.error)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func cleanUp() { try? FileManager.default.removeItem(at: url) }
    /// Names in the directory (hidden ones included).
    func contents() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] }
}

/// Runs the ffmpeg command-line tool (used only to make test inputs).
func runFFmpeg(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y"] + arguments
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw InvalidRequest("ffmpeg \(arguments.joined(separator: " ")) failed: \(message)")
    }
}

/// Asserts that `body` throws a PrismError whose description is one line containing every `fragment`.
func assertPrismError(_ fragments: [String], file: StaticString = #filePath, line: UInt = #line,
                      _ body: () throws -> Void) {
    do {
        try body()
        XCTFail("expected an error mentioning \(fragments)", file: file, line: line)
    } catch let error as any PrismError {
        let text = error.description
        XCTAssertFalse(text.contains("\n"), "error is not one line: \(text)", file: file, line: line)
        for fragment in fragments {
            XCTAssertTrue(text.contains(fragment), "'\(text)' does not mention '\(fragment)'", file: file, line: line)
        }
    } catch {
        XCTFail("not a PrismError: \(error)", file: file, line: line)
    }
}

/// Converts a yuv420p frame into a yuv422p10le pooled buffer (for the ProRes path): samples shifted
/// to 10 bits, chroma rows repeated.
func copy420pTo422p10(_ frame: VideoFrame, into buffer: PooledFrameBuffer) {
    let layout = buffer.layout
    precondition(layout.format == .yuv422p10le && frame.format == .yuv420p)
    for plane in 0..<3 {
        let src = frame.planes[plane]
        let dst = layout.planes[plane]
        let width = plane == 0 ? frame.size.width : (frame.size.width + 1) / 2
        for row in 0..<dst.rows {
            let srcRow = plane == 0 ? row : row / 2
            let input = src.base.advanced(by: srcRow * src.rowBytes).assumingMemoryBound(to: UInt8.self)
            let output = (buffer.data + dst.offset + row * dst.rowBytes).assumingMemoryBound(to: UInt16.self)
            for x in 0..<width { output[x] = UInt16(input[x]) << 2 }
        }
    }
}

/// Fills a bgra pooled buffer with a deterministic picture that changes with `index`.
func fillBGRA(_ buffer: PooledFrameBuffer, index: Int) {
    let layout = buffer.layout
    let plane = layout.planes[0]
    for y in 0..<plane.rows {
        let row = (buffer.data + plane.offset + y * plane.rowBytes).assumingMemoryBound(to: UInt8.self)
        for x in 0..<layout.size.width {
            row[4 * x] = UInt8(truncatingIfNeeded: x * 3 + index)
            row[4 * x + 1] = UInt8(truncatingIfNeeded: y * 5 + index * 7)
            row[4 * x + 2] = UInt8(truncatingIfNeeded: (x ^ y) + index * 13)
            row[4 * x + 3] = 255
        }
    }
}

/// The tightly packed bytes of a pooled buffer's plane.
func packedPlane(_ buffer: PooledFrameBuffer, _ index: Int) -> [UInt8] {
    let plane = buffer.layout.planes[index]
    var bytes: [UInt8] = []
    bytes.reserveCapacity(plane.usedRowBytes * plane.rows)
    for row in 0..<plane.rows {
        let start = (buffer.data + plane.offset + row * plane.rowBytes).assumingMemoryBound(to: UInt8.self)
        bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: plane.usedRowBytes))
    }
    return bytes
}

/// Writes `count` test-pattern frames through a MovieWriter; returns the pts written.
/// `ticks`: explicit timestamps (in the pattern's time base, or `timeBase` when given) for VFR cases.
@discardableResult
func writePatternMovie(to path: String, settings: VideoEncoderSettings, count: Int, size: Size = Size(width: 160, height: 90),
                       rate: Rational = Rational(30, 1), timeBase: Rational? = nil, ticks: [Int64]? = nil,
                       colorSpace: YUVColorSpace? = nil, pool: FrameBufferPool? = nil) throws -> [MediaTime] {
    let pattern = try TestPatternSource(size: size, frameRate: rate, frameCount: count)
    let tb = timeBase ?? pattern.info.timeBase
    let config = VideoStreamConfig(size: size, timeBase: tb, frameRate: rate,
                                   colorSpace: colorSpace ?? pattern.info.colorSpace)
    let pool = pool ?? FrameBufferPool(format: settings.pixelFormat, size: size, capacity: 4)!
    let writer = try MovieWriter(path: path, video: config, settings: settings)
    var written: [MediaTime] = []
    var index = 0
    while let frame = pattern.nextFrame() {
        let buffer = try pool.acquire(timeout: 10)
        switch settings.pixelFormat {
        case .yuv420p: try frame.copy(into: buffer)
        case .nv12: try frame.copy(into: buffer)
        case .yuv422p10le: copy420pTo422p10(frame, into: buffer)
        case .bgra: fillBGRA(buffer, index: index)
        default: XCTFail("no test fill for \(settings.pixelFormat)")
        }
        let pts = ticks.map { MediaTime(value: $0[index], timeBase: tb) } ?? frame.pts
        try writer.writeVideo(buffer, pts: pts, duration: ticks == nil ? frame.duration : nil)
        written.append(pts)
        index += 1
    }
    try writer.finish()
    return written
}

/// Copies a movie through MovieSource → MovieWriter (video re-encoded from CPU frames, audio passed on).
@discardableResult
func pipeMovie(from input: String, to output: String, settings: VideoEncoderSettings) throws -> MovieWriter.AudioMode {
    let source = try MovieSource(url: input)
    let pool = FrameBufferPool(format: settings.pixelFormat, size: source.info.size, capacity: 4)!
    let writer = try MovieWriter(path: output, source: source.info, settings: settings)
    while let event = try source.next() {
        switch event {
        case .video(let frame):
            let buffer = try pool.acquire(timeout: 10)
            try frame.copy(into: buffer)
            try writer.writeVideo(buffer, pts: frame.pts, duration: frame.duration)
        case .audio(let packet):
            try writer.writeAudio(packet)
        }
    }
    try writer.finish()
    return writer.audioMode
}

func readBytes(_ path: String) -> [UInt8] {
    (FileManager.default.contents(atPath: path).map { [UInt8]($0) }) ?? []
}

/// Offset of the first occurrence of a four-character box type.
func boxOffset(_ name: String, in bytes: [UInt8]) -> Int? {
    let needle = Array(name.utf8)
    guard bytes.count >= 4 else { return nil }
    for i in 0...(bytes.count - 4) where bytes[i] == needle[0] && bytes[i + 1] == needle[1]
        && bytes[i + 2] == needle[2] && bytes[i + 3] == needle[3] {
        return i
    }
    return nil
}
