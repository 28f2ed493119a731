import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Network inputs: real servers on loopback, started by the tests (FFmpeg serving RTMP and SRT,
/// sending MPEG-TS over UDP, publishing RTSP and RTMP to prism listening), a server killed mid-stream and
/// another started in its place, and servers that refuse or never answer. Every process runs under a
/// deadline, so a hang fails the test instead of stalling the suite.
final class NetworkInputTests: XCTestCase {
    let dir = ScratchDirectory()

    private var ffmpeg: String {
        get throws {
            guard let path = Tools.which("ffmpeg") else { throw InvalidRequest("these tests need ffmpeg on PATH (with rtmp, srt, rtsp, udp)") }
            return path
        }
    }

    // MARK: Servers and processes

    /// A loopback port nothing listens on now (the kernel's pick, released at once).
    private func freePort(udp: Bool = false) throws -> Int { Loopback.freePort(udp: udp) }

    /// FFmpeg sending `seconds` of a solid `color` at 25 fps in real time (`-re`) to `output` (its
    /// format and URL arguments), as a server (`-listen 1`, `mode=listener`) or a sender.
    private func sender(color: String, size: String = "160x120", seconds: Double, codec: String = "flv1",
                        output: [String]) throws -> Running {
        try Running(try ffmpeg, ["-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi",
                                 "-i", "color=c=\(color):size=\(size):rate=25", "-t", String(seconds),
                                 "-c:v", codec, "-g", "10"] + output, deadline: seconds + 60)
    }

    /// `prism run INPUT -o OUTPUT --progress json ARGS`: its progress objects arrive on stdout as it runs.
    private func prism(_ input: String, _ output: String, _ arguments: [String]) throws -> Running {
        try Running(Tools.prism, ["run", input, "-o", output, "--progress", "json"] + arguments, deadline: 120)
    }

    /// prism on a server just started: a first connection that fails before any frame (the server not yet
    /// listening: refused, or SRT's setup timing out) is tried again; one that runs is returned.
    private func prismConnecting(_ url: String, _ output: String, _ arguments: [String]) throws -> Running {
        Thread.sleep(forTimeInterval: 0.5)
        for _ in 0..<20 {
            let run = try prism(url, output, arguments)
            guard let status = run.waitForExit(within: 4), status != 0,
                  !FileManager.default.fileExists(atPath: output) else { return run }
            usleep(250_000)
        }
        return try prism(url, output, arguments)
    }

    /// The last progress object prism printed.
    private func lastProgress(_ run: Running) -> [String: Any] {
        let lines = run.stdoutLines.filter { $0.hasPrefix("{") }
        return lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
    }

    /// The centre pixel of frame `index`.
    private func centre(_ path: String, _ index: Int) throws -> (r: Int, g: Int, b: Int) {
        let image = try MediaInspector.frameRGBA(path, index: index)
        let offset = ((image.size.height / 2) * image.size.width + image.size.width / 2) * 4
        return (Int(image.pixels[offset]), Int(image.pixels[offset + 1]), Int(image.pixels[offset + 2]))
    }

    private func assertBlue(_ pixel: (r: Int, g: Int, b: Int), _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(pixel.b > 180 && pixel.r < 70 && pixel.g < 70, "\(label) is not blue: \(pixel)", file: file, line: line)
    }

    private func assertRed(_ pixel: (r: Int, g: Int, b: Int), _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(pixel.r > 180 && pixel.g < 70 && pixel.b < 70, "\(label) is not red: \(pixel)", file: file, line: line)
    }

    /// A live recording is a fragmented MP4 (`moof` boxes), so a killed run still leaves a playable file.
    private func isFragmented(_ path: String) throws -> Bool {
        try Data(contentsOf: URL(fileURLWithPath: path)).range(of: Data("moof".utf8)) != nil
    }

    /// Output timestamps only go forward, and no two frames are further apart than `limit` seconds.
    private func assertContinuous(_ path: String, limit: Double, file: StaticString = #filePath, line: UInt = #line) throws -> MediaReport {
        let report = try MediaInspector.inspect(path)
        let times = report.videoPTS.map(\.seconds)
        XCTAssertGreaterThan(times.count, 1, file: file, line: line)
        let steps = zip(times.dropFirst(), times).map { $0 - $1 }
        XCTAssertTrue(steps.allSatisfy { $0 > 0 }, "timestamps go back or repeat: \(times)", file: file, line: line)
        XCTAssertLessThanOrEqual(steps.max() ?? 0, limit, "a hole in the time line: \(times)", file: file, line: line)
        return report
    }

    /// The time line closed over a reconnection's gap — the mechanism, whatever the machine's load: the
    /// timestamps only go forward, and the time from the first frame to the last is that of the frames
    /// written and those the report says were dropped (each leaves a hole of its own), not the gap, which
    /// was measured and reported apart (`gap_seconds`).
    private func assertGapClosed(_ path: String, progress: [String: Any], frameRate: Double,
                                 file: StaticString = #filePath, line: UInt = #line) throws -> MediaReport {
        let report = try MediaInspector.inspect(path)
        let times = report.videoPTS.map(\.seconds)
        XCTAssertGreaterThan(times.count, 1, file: file, line: line)
        XCTAssertTrue(zip(times.dropFirst(), times).allSatisfy { $0 > $1 }, "timestamps go back or repeat: \(times)", file: file, line: line)
        let dropped = progress["dropped"] as? Int ?? 0, gap = progress["gap_seconds"] as? Double ?? 0
        let span = (times.last ?? 0) - (times.first ?? 0)
        let accounted = Double(times.count - 1 + dropped) / frameRate
        XCTAssertLessThan(span - accounted, gap / 2,
                          "\(span - accounted) s of the time line is neither a frame nor a dropped one: the \(gap) s gap is in it: \(times)",
                          file: file, line: line)
        return report
    }

    // MARK: Streams

    /// prism as the client of FFmpeg's RTMP server, its SRT listener and its HTTP server (a live MPEG-TS):
    /// every frame the server sent is written or counted as dropped, the picture is the server's, and the
    /// output is a live recording.
    func testRTMPSRTAndHTTPStreamsAreRecordedLive() throws {
        for scheme in ["rtmp", "srt", "http"] {
            let port = try freePort(udp: scheme == "srt")
            let url = ["rtmp": "rtmp://127.0.0.1:\(port)/live/x", "srt": "srt://127.0.0.1:\(port)",
                       "http": "http://127.0.0.1:\(port)/live.ts"][scheme]!
            let server = try sender(color: "blue", seconds: 2, codec: scheme == "rtmp" ? "flv1" : "mpeg2video",
                                    output: ["rtmp": ["-f", "flv", "-listen", "1", url],
                                             "srt": ["-f", "mpegts", url + "?mode=listener"],
                                             "http": ["-f", "mpegts", "-listen", "1", url]][scheme]!)
            defer { server.stop() }
            let output = dir.path("\(scheme).mp4")
            let run = try prismConnecting(url, output, ["--no-reconnect", "--input-timeout", "10"])
            defer { run.stop() }
            XCTAssertEqual(run.waitForExit(), 0, "\(scheme): \(run.stderr)")
            let progress = lastProgress(run)
            let dropped = progress["dropped"] as? Int ?? -1
            let report = try assertContinuous(output, limit: 0.5)
            // 50 frames sent; SRT may lose the few before the first full picture.
            XCTAssertGreaterThanOrEqual(report.videoFrameCount + dropped, scheme == "srt" ? 40 : 48, "\(scheme): \(run.stderr)")
            XCTAssertLessThanOrEqual(report.videoFrameCount, 50, scheme)
            XCTAssertEqual(report.size, Size(width: 160, height: 120))
            assertBlue(try centre(output, 0), "\(scheme): the first frame")
            XCTAssertTrue(try isFragmented(output), "\(scheme): a network input is a live recording, written fragmented")
            XCTAssertTrue(run.stderr.contains("live"), run.stderr)
        }
    }

    /// The RTMP server is killed mid-stream and another one, with another size and colour, takes its port a
    /// second later: prism reconnects, the run goes on, the gap is reported, and the output's time line
    /// closes over it (no hole, no step back); the new size goes through the size-change path.
    func testAStreamKilledMidwayIsReconnectedAndTheGapReported() throws {
        let port = try freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/x"
        let first = try sender(color: "blue", seconds: 30, output: ["-f", "flv", "-listen", "1", url])
        defer { first.stop() }
        let output = dir.path("reconnected.mp4")
        let run = try prismConnecting(url, output, ["--reconnect-for", "8", "--input-timeout", "5"])
        defer { run.stop() }
        let framesBefore = run.waitForLine(within: 60) { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["frames"] as? Int ?? 0 >= 10
        }
        XCTAssertNotNil(framesBefore, "prism wrote no frames from the first server: \(run.stderr)")
        first.kill()
        Thread.sleep(forTimeInterval: 1)
        let second = try sender(color: "red", size: "320x240", seconds: 2, output: ["-f", "flv", "-listen", "1", url])
        defer { second.stop() }
        XCTAssertEqual(run.waitForExit(), 0, run.stderr)
        let progress = lastProgress(run)
        XCTAssertEqual(progress["reconnects"] as? Int, 1, "\(progress) \(run.stderr)")
        XCTAssertGreaterThanOrEqual(progress["gaps"] as? Int ?? 0, 1, "\(progress)")
        XCTAssertGreaterThan(progress["gap_seconds"] as? Double ?? 0, 0.2, "\(progress)")
        XCTAssertTrue(run.stderr.contains("input lost"), run.stderr)
        XCTAssertTrue(run.stderr.contains("reconnected"), run.stderr)
        XCTAssertTrue(run.stderr.contains("gave up reconnecting"), run.stderr)
        XCTAssertTrue(run.stderr.contains("missing"), "the summary reports the gap: \(run.stderr)")
        // Continuous: the gap (a second and more) is not in the time line; only dropped frames leave holes,
        // however many a busy machine drops.
        let report = try assertGapClosed(output, progress: progress, frameRate: 25)
        XCTAssertEqual(report.size, Size(width: 160, height: 120), "the output keeps its size")
        XCTAssertEqual(report.videoFrameCount, progress["frames"] as? Int)
        assertBlue(try centre(output, 0), "the first frame")
        assertRed(try centre(output, report.videoFrameCount - 1), "the last frame (from the second server)")
        XCTAssertTrue(try isFragmented(output))
    }

    /// MPEG-TS over UDP into prism listening on its port. The sender is restarted behind the same port: its
    /// timestamps start again, and prism continues them after the last frame (a gap, no step back). When
    /// the second sender stops, the stall (no data for the input timeout) ends the run cleanly with
    /// --no-reconnect: the output is finished, not failed.
    func testAUDPSenderRestartedIsContinuedAndAStallEndsTheRunCleanly() throws {
        let port = try freePort(udp: true)
        let url = "udp://127.0.0.1:\(port)"
        let output = dir.path("udp.mp4")
        let run = try prism(url, output, ["--no-reconnect", "--input-timeout", "4"])
        defer { run.stop() }
        Thread.sleep(forTimeInterval: 1)  // prism binds its port before FFmpeg sends (a live stream waits for no one)
        let first = try sender(color: "blue", seconds: 3, codec: "mpeg2video", output: ["-f", "mpegts", url])
        defer { first.stop() }
        XCTAssertEqual(first.waitForExit(), 0)
        let second = try sender(color: "red", seconds: 2, codec: "mpeg2video", output: ["-f", "mpegts", url])
        defer { second.stop() }
        XCTAssertEqual(run.waitForExit(), 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("timestamps jumped"), run.stderr)
        XCTAssertTrue(run.stderr.contains("no data for 4 s"), run.stderr)
        let progress = lastProgress(run)
        XCTAssertGreaterThanOrEqual(progress["gaps"] as? Int ?? 0, 1, "\(progress)")
        XCTAssertEqual(progress["reconnects"] as? Int, 0, "\(progress)")
        let report = try assertContinuous(output, limit: 0.5)
        XCTAssertGreaterThanOrEqual(report.videoFrameCount + (progress["dropped"] as? Int ?? 0), 80, run.stderr)
        assertBlue(try centre(output, 0), "the first frame")
        assertRed(try centre(output, report.videoFrameCount - 1), "the last frame")
        XCTAssertTrue(try isFragmented(output))
    }

    /// Ctrl-C while prism waits on a stream that went silent (a minute's input timeout): the stop interrupts
    /// the read, and the recording is finished at once, not a minute later.
    func testCtrlCEndsARunWaitingOnASilentStream() throws {
        let port = try freePort(udp: true)
        let url = "udp://127.0.0.1:\(port)"
        let output = dir.path("stopped.mp4")
        let run = try prism(url, output, ["--input-timeout", "60"])
        defer { run.stop() }
        Thread.sleep(forTimeInterval: 1)
        let sender = try sender(color: "blue", seconds: 3, codec: "mpeg2video", output: ["-f", "mpegts", url])
        defer { sender.stop() }
        XCTAssertNotNil(run.waitForLine(within: 60) { $0.contains("\"frames\"") }, "no frames came: \(run.stderr)")
        XCTAssertEqual(sender.waitForExit(), 0)
        Thread.sleep(forTimeInterval: 1)
        run.process.interrupt()
        XCTAssertEqual(run.waitForExit(within: 30), 0, "prism did not stop on Ctrl-C while the stream was silent")
        XCTAssertTrue(run.stderr.contains("stopped early"), run.stderr)
        let report = try assertContinuous(output, limit: 0.5)
        assertBlue(try centre(output, report.videoFrameCount - 1), "the last frame")
    }

    /// --listen: prism is the server FFmpeg publishes to, over RTMP, and over RTSP with its media interleaved
    /// in TCP and in UDP (--rtsp-transport).
    func testListeningInputsTakeAPublisher() throws {
        for (scheme, transport) in [("rtmp", ""), ("rtsp", "tcp"), ("rtsp", "udp")] {
            let port = try freePort()
            let url = scheme == "rtmp" ? "rtmp://127.0.0.1:\(port)/live/x" : "rtsp://127.0.0.1:\(port)/live"
            let label = scheme + transport
            let output = dir.path("listen-\(label).mp4")
            let extra = scheme == "rtsp" ? ["--rtsp-transport", transport] : []
            let run = try prism(url, output, ["--listen", "--no-reconnect", "--input-timeout", "30"] + extra)
            defer { run.stop() }
            // Publish once prism listens (a refused publisher tries again).
            let format = scheme == "rtmp" ? ["-f", "flv", url] : ["-f", "rtsp", "-rtsp_transport", transport, url]
            var published = false
            for _ in 0..<40 where !published {
                let publisher = try sender(color: "blue", seconds: 2, codec: scheme == "rtmp" ? "flv1" : "mpeg2video", output: format)
                published = publisher.waitForExit() == 0
                if !published { usleep(250_000) }
            }
            XCTAssertTrue(published, "\(label): FFmpeg could not publish to prism: \(run.stderr)")
            XCTAssertEqual(run.waitForExit(), 0, "\(label): \(run.stderr)")
            let report = try assertContinuous(output, limit: 0.5)
            XCTAssertGreaterThanOrEqual(report.videoFrameCount + (lastProgress(run)["dropped"] as? Int ?? 0), 45, "\(label): \(run.stderr)")
            assertBlue(try centre(output, 0), "\(label): the first frame")
        }
    }

    /// A publisher whose H.264 has B-frames hangs up after its last packet: the frames the decoder still
    /// holds (reordered, not yet out) came before the loss and are written, as FFmpeg's listener writes them.
    func testTheFramesTheDecoderHoldsWhenAPublisherHangsUpAreKept() throws {
        let port = try freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/x"
        let output = dir.path("hung-up.mp4")
        let run = try prism(url, output, ["--listen", "--no-reconnect", "--input-timeout", "30"])
        defer { run.stop() }
        var published = false
        for _ in 0..<40 where !published {
            let publisher = try Running(try ffmpeg, ["-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi",
                                                     "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "50",
                                                     "-c:v", "libx264", "-bf", "3", "-g", "25", "-f", "flv", url], deadline: 60)
            published = publisher.waitForExit() == 0
            if !published { usleep(250_000) }
        }
        XCTAssertTrue(published, "FFmpeg could not publish to prism: \(run.stderr)")
        XCTAssertEqual(run.waitForExit(), 0, run.stderr)
        let dropped = lastProgress(run)["dropped"] as? Int ?? 0
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount + dropped, 50, run.stderr)
    }

    /// A UDP sender whose first packets come within `--input-timeout` but too few to probe, and the rest a
    /// few seconds later (a sender starting up): the deadline is "no data for N s", as FFmpeg's read timeouts
    /// are, so the stream is taken whole. (It bounded the whole open, which it cut short mid-probe, leaving a
    /// session whose reads failed after the first part's 5 frames.)
    func testASenderThatStartsSlowlyIsTakenWhole() throws {
        let port = try freePort(udp: true)
        // Frames 0-4 and 5-74 of one stream, as two MPEG-TS files with the timestamps running on.
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "75", "-c:v", "libx264",
                          "-bf", "3", "-g", "5", "-f", "segment", "-segment_format", "mpegts", "-segment_frames", "5",
                          "-reset_timestamps", "0", dir.path("part%d.ts")])
        let output = dir.path("slow-start.mp4")
        let run = try prism("udp://127.0.0.1:\(port)", output, ["--no-reconnect", "--input-timeout", "6"])
        defer { run.stop() }
        let bound = Date().addingTimeInterval(30)
        let entry = String(format: ":%04X ", port)
        while Date() < bound, !((try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8))?.contains(entry) ?? false) {
            usleep(20_000)
        }
        // The first part 3 s after prism bound the port, the rest 3.5 s later: past 6 s from the start, never
        // 6 s without data.
        for (index, pause) in [(0, 3.0), (1, 3.5)] {
            Thread.sleep(forTimeInterval: pause)
            let sender = try Running(try ffmpeg, ["-hide_banner", "-loglevel", "error", "-re", "-i", dir.path("part\(index).ts"),
                                                  "-c", "copy", "-copyts", "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"],
                                     deadline: 60)
            XCTAssertEqual(sender.waitForExit(), 0)
        }
        XCTAssertEqual(run.waitForExit(), 0, run.stderr)
        let dropped = lastProgress(run)["dropped"] as? Int ?? 0
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount + dropped, 75, run.stderr)
    }

    /// A publisher that stops and another that comes back to the listening prism (a streaming app
    /// reconnecting): the run takes the second one after the first, on one continuous time line.
    func testAListeningInputTakesThePublisherBack() throws {
        let port = try freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/x"
        let output = dir.path("republished.mp4")
        let run = try prism(url, output, ["--listen", "--reconnect-for", "6", "--input-timeout", "30"])
        defer { run.stop() }
        for color in ["blue", "red"] {
            var published = false
            for _ in 0..<40 where !published {
                let publisher = try sender(color: color, seconds: 2, output: ["-f", "flv", url])
                published = publisher.waitForExit() == 0
                if !published { usleep(250_000) }
            }
            XCTAssertTrue(published, "\(color): FFmpeg could not publish to prism: \(run.stderr)")
        }
        XCTAssertEqual(run.waitForExit(), 0, run.stderr)
        let progress = lastProgress(run)
        XCTAssertEqual(progress["reconnects"] as? Int, 1, "\(progress) \(run.stderr)")
        let report = try assertContinuous(output, limit: 0.5)
        XCTAssertGreaterThanOrEqual(report.videoFrameCount + (progress["dropped"] as? Int ?? 0), 90, run.stderr)
        assertBlue(try centre(output, 0), "the first publisher's first frame")
        assertRed(try centre(output, report.videoFrameCount - 1), "the second publisher's last frame")
    }

    // MARK: Servers that are not there

    /// A refused connection, a server that accepts but never answers, a UDP port nobody sends to: one line
    /// naming the URL and the reason, a non-zero status within the timeout, and no output.
    func testUnreachableAndSilentServersAreOneLine() throws {
        let refusedPort = try freePort()
        // Listening, never accepting: the kernel completes the TCP handshake, RTMP's never comes.
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(silent, pointer, length) == 0 && listen(silent, 4) == 0 && getsockname(silent, pointer, &length) == 0
            }
        }
        XCTAssertTrue(listening)
        let silentPort = Int(UInt16(bigEndian: address.sin_port))
        let udpPort = try freePort(udp: true)
        let cases: [(url: String, reason: String)] = [
            ("rtmp://127.0.0.1:\(refusedPort)/live/x", "Connection refused"),
            ("rtmp://127.0.0.1:\(silentPort)/live/x", "no answer within 2 s"),
            ("udp://127.0.0.1:\(udpPort)", "within 2 s"),
        ]
        for (url, reason) in cases {
            let output = dir.path("none.mp4")
            let result = try Running(Tools.prism, ["run", url, "-o", output, "--input-timeout", "2"], deadline: 60)
            XCTAssertNotEqual(result.waitForExit(), 0, url)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains(url) && result.stderr.contains(reason), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), url)
        }
    }

    /// A scheme FFmpeg does not read, a URL without a host, network flags on a file: one line, before anything opens.
    func testBadURLsAndMisplacedFlagsAreOneLine() throws {
        let clip = dir.path("clip.mp4")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=64x48:rate=5", "-frames:v", "2", clip])
        let cases: [(arguments: [String], words: [String])] = [
            (["foo://127.0.0.1/x"], ["foo://127.0.0.1/x", "unknown protocol 'foo'"]),
            (["rtmp://"], ["rtmp://", "no host"]),
            (["rtmp://user:secret@127.0.0.1:1/x", "--input-timeout", "2"], ["user:***@127.0.0.1"]),
            ([clip, "--listen"], ["--listen", "network input"]),
            ([clip, "--reconnect", "3"], ["--reconnect", "network input"]),
            (["rtmp://127.0.0.1:1/x", "--rtsp-transport", "tcp"], ["--rtsp-transport", "rtsp://"]),
            (["rtmp://127.0.0.1:1/x", "--no-reconnect", "--reconnect-for", "5"], ["--no-reconnect"]),
        ]
        for (arguments, words) in cases {
            let output = dir.path("bad.mp4")
            let result = try Running(Tools.prism, ["run"] + arguments + ["-o", output], deadline: 60)
            XCTAssertNotEqual(result.waitForExit(), 0, "\(arguments)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
            for word in words { XCTAssertTrue(result.stderr.contains(word), "\(arguments): \(result.stderr)") }
            XCTAssertFalse(result.stderr.contains("secret"), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(arguments)")
        }
    }
}
