import Foundation
import XCTest
import PrismCore
import PrismMedia
import TestFixtures

/// Streams that tell the truth, against real servers on loopback: a run whose only output is a stream that
/// died fails (and says one consistent thing); a file streamed beside a local recording is read at its own
/// pace, the stream gets every frame it is said to get, and its sound; an output whose folder does not
/// exist is refused before any stream connects.
final class StreamOutputTruthTests: XCTestCase {
    let dir = ScratchDirectory()
    typealias Receiver = LiveOutputTests.Receiver

    /// The emulated camera (320x240 at 30 fps).
    func cameraEnvironment() throws -> [String: String] {
        ["LD_PRELOAD": try CameraTests.fakeLibrary(), "PRISM_FAKE_V4L2": CameraTests.camera,
         "PRISM_FAKE_V4L2_SIZES": "320x240", "PRISM_FAKE_V4L2_FPS": "30"]
    }

    // MARK: every output's place first

    /// An HLS playlist into a folder that does not exist beside an RTMP stream: refused in one line before
    /// anything starts — the server never sees a connection (it is still waiting for one afterwards).
    func testAPlaylistIntoAMissingFolderIsRefusedBeforeAStreamBesideItConnects() throws {
        let port = Loopback.freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/x"
        let server = try Receiver(input: ["-listen", "1", "-i", url], output: dir.path("server.flv"))
        XCTAssertTrue(Loopback.waitForListener(port: port))
        let playlist = dir.path("missing/live.m3u8")
        let result = try Tools.run(Tools.prism, ["run", "--size", "320x240", "--frames", "90", "-o", url, "-o", playlist], timeout: 60)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines, ["prism: \(playlist): the folder \(dir.path("missing")) does not exist"])
        XCTAssertTrue(server.process.isRunning, "the stream never connected")
        server.kill()
        for output in ["missing/still.png", "missing/show.mpd", "missing/out.mp4"] {
            let refused = try Tools.run(Tools.prism, ["run", "--size", "320x240", "--frames", "1", "-o", dir.path(output)], timeout: 60)
            XCTAssertNotEqual(refused.status, 0, output)
            XCTAssertEqual(refused.stderrLines, ["prism: \(dir.path(output)): the folder \(dir.path("missing")) does not exist"])
        }
    }
}

/// A TCP server on loopback that takes one connection, closes it at once and listens no more: a server
/// that went away.
final class OneConnectionServer {
    let port: Int
    private let thread: Thread

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 1) == 0 else { throw UsageError("cannot listen on loopback") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        thread = Thread {
            let client = accept(fd, nil, nil)
            if client >= 0 { close(client) }
            close(fd)
        }
        thread.start()
    }
}
