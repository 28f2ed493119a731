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

    // MARK: the only output, lost

    /// `tcp://` to a server that takes the connection, closes it at once and listens no more: the run's only
    /// output is gone. The run (a file's frames, held while the stream reconnects) fails when
    /// `--reconnect-output` runs out — non-zero, with the line saying so, and no summary claiming frames sent.
    func testTheOnlyStreamLostForGoodFailsTheRun() throws {
        let server = try OneConnectionServer()
        let result = try Tools.run(Tools.prism, ["run", "--size", "320x240", "--frames", "75", "--reconnect-output", "1",
                                                 "-o", "tcp://127.0.0.1:\(server.port)"], timeout: 60)
        XCTAssertNotEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("it reconnects for 1 s; the run waits for it"), result.stderr)
        XCTAssertTrue(result.stderr.contains("the stream was lost and did not come back within"), result.stderr)
        XCTAssertFalse(result.stderr.contains("frames in"), "no summary of frames sent: \(result.stderr)")
        XCTAssertFalse(result.stderr.contains("still down when the run ended"), result.stderr)
    }

    /// A live input's only output, an RTMP server killed mid-run that does not come back before the run's
    /// frames are done: the run fails, saying the stream was still down and how many frames were not sent.
    func testALiveRunWhoseOnlyStreamIsStillDownAtTheEndFails() throws {
        let port = Loopback.freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/cam"
        let server = try Receiver(input: ["-listen", "1", "-i", url], output: dir.path("server.flv"))
        XCTAssertTrue(Loopback.waitForListener(port: port))
        let run = try Running(Tools.prism, ["run", CameraTests.camera, "--size", "320x240", "--fps", "30", "--frames", "150",
                                            "--preset", "ultrafast", "-o", url, "--progress", "json"],
                              environment: try cameraEnvironment(), deadline: 150)
        XCTAssertTrue(LiveOutputTests.waitForFrames(run, 30))
        server.kill()
        let status = run.waitForExit(), stderr = run.stderr
        XCTAssertNotEqual(status, 0, stderr)
        XCTAssertTrue(stderr.contains("\(url): the stream was lost") && stderr.contains("was still down when the run ended"), stderr)
        XCTAssertTrue(stderr.contains("frame(s) not sent"), stderr)
    }

    /// A file's frames into one RTMP server, which is killed mid-run; another takes its port a second
    /// later. The run waits for the stream (nothing to keep up with), reconnects and sends the rest: exit 0,
    /// no frame skipped for it, the second server gets the frames from the reconnection to the end.
    func testTheOnlyStreamOfAFileWaitsForItsServerToComeBack() throws {
        let port = Loopback.freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/x"
        let first = try Receiver(input: ["-listen", "1", "-i", url], output: dir.path("first.flv"))
        XCTAssertTrue(Loopback.waitForListener(port: port))
        let run = try Running(Tools.prism, ["run", "--size", "320x240", "--frames", "240", "--preset", "ultrafast",
                                            "--reconnect-output", "30", "-o", url, "--progress", "json"], deadline: 150)
        XCTAssertTrue(LiveOutputTests.waitForFrames(run, 45))
        first.kill()
        Thread.sleep(forTimeInterval: 1)
        let second = try Receiver(input: ["-listen", "1", "-i", url], output: dir.path("second.flv"))
        let status = run.waitForExit(), stderr = run.stderr
        XCTAssertEqual(status, 0, stderr)
        XCTAssertTrue(stderr.contains("the run waits for it"), stderr)
        XCTAssertTrue(stderr.contains("reconnected after"), stderr)
        XCTAssertFalse(stderr.contains("skipped"), stderr)
        XCTAssertTrue(second.wait())
        let resumed = try MediaInspector.inspect(dir.path("second.flv")).videoFrameCount
        XCTAssertGreaterThan(resumed, 240 - 45 - 60, "the rest of the run went to the second server: \(stderr)")
    }

    // MARK: a file streamed beside a recording

    /// OpenCV's Megamind.avi (AC3 sound, its first packet damaged) to an RTMP server and a local MP4 at once,
    /// without --realtime: the file is read at its own pace (said), so the stream keeps up; the frames it
    /// lacks are exactly the skips reported (none here, on loopback), and it carries the clip's sound as AAC.
    func testAFileStreamedBesideARecordingIsPacedAndCountedRight() throws {
        let clip = try TestFixtures.opencv("Megamind.avi")
        let port = Loopback.freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/x"
        let received = dir.path("server.flv"), local = dir.path("local.mp4")
        let server = try Receiver(input: ["-listen", "1", "-i", url], output: received)
        XCTAssertTrue(Loopback.waitForListener(port: port))
        let result = try Tools.run(Tools.prism, ["run", clip, "--preset", "ultrafast", "-o", url, "-o", local], timeout: 180)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("\(url) plays in real time: the input is read at its own pace"), result.stderr)
        XCTAssertTrue(server.wait(), "the server did not end when the stream ended")
        XCTAssertEqual(try MediaInspector.inspect(local).videoFrameCount, 270)
        let streamed = try MediaInspector.inspect(received)
        let skipped = LiveOutputTests.skipped(result.stderr, output: url)
        XCTAssertEqual(streamed.videoFrameCount, 270 - skipped, result.stderr)
        XCTAssertFalse(result.stderr.contains("sound packet(s) dropped"), result.stderr)
        XCTAssertEqual(streamed.audioCodecName, "aac")
        let seconds = Double(streamed.audioSampleCount) / Double(try XCTUnwrap(streamed.audioSampleRate))
        XCTAssertEqual(seconds, 11.23, accuracy: 0.1, "the clip's sound, all of it after the damaged packet")
        XCTAssertGreaterThan(streamed.audioPeak, 0.05)
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
        guard bound == 0, listen(fd, 1) == 0 else { throw InvalidRequest("cannot listen on loopback") }
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
