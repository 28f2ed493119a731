import Foundation
import XCTest
import PrismCore
import PrismMedia

/// Live outputs end to end against real servers on loopback, started by the tests: FFmpeg itself as the
/// RTMP server (`-listen 1`), the SRT listener, the RTSP server receiving a publish (`-rtsp_flags listen`)
/// and the UDP receiver; HLS and DASH played by FFmpeg while they are written and after. What a server
/// received is decoded and checked frame by frame against the local recording made in the same run: the
/// emulated camera (libFakeV4L2) writes each frame's number into the picture, so frames are matched by
/// number, not by position.
final class LiveOutputTests: XCTestCase {
    let dir = ScratchDirectory()

    // MARK: servers

    /// FFmpeg receiving a stream and copying it into a file, as a server (or listener) would.
    final class Receiver {
        let process = Process()
        let output: String
        init(input: [String], output: String, timeout: Int = 120) throws {
            self.output = output
            process.executableURL = URL(fileURLWithPath: try XCTUnwrap(Tools.which("ffmpeg")))
            process.arguments = ["-hide_banner", "-loglevel", "error", "-y", "-t", "\(timeout)"] + input
                + ["-c", "copy", output]
            process.standardError = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        /// Ends the server as a crash would (SIGKILL): what it wrote so far stays.
        func kill() {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        /// Waits (bounded) for the server to end by itself (its client went away).
        func wait(seconds: Double = 30) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(); return false }
            return true
        }
        deinit { if process.isRunning { kill() } }
    }

    /// `prism` on the emulated camera in the background, `--progress json` on its stdout.
    func prism(_ arguments: [String]) throws -> Running {
        try Running(Tools.prism, arguments + ["--progress", "json"], environment: try liveEnvironment(), deadline: 150)
    }

    /// Waits until the run reports `count` frames written (by its progress, not a clock).
    static func waitForFrames(_ run: Running, _ count: Int) -> Bool {
        run.waitForLine(within: 60) { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return false }
            return (object["frames"] as? Int ?? 0) >= count
        } != nil
    }

    /// The emulated camera (320x240 at 30 fps, YUYV) and microphone (a 440 Hz sine).
    func liveEnvironment() throws -> [String: String] {
        var environment = try AudioCaptureTests.emulatedMicrophone(in: dir, seconds: 20)
        environment["LD_PRELOAD"] = try CameraTests.fakeLibrary()
        environment["PRISM_FAKE_V4L2"] = CameraTests.camera
        environment["PRISM_FAKE_V4L2_SIZES"] = "320x240"
        environment["PRISM_FAKE_V4L2_FPS"] = "30"
        return environment
    }

    /// The camera frame numbers of every frame of `path`, in order (the fake draws frame k's number as 16
    /// white or black blocks of 16x16 pixels at (8 + 16 i, 8)).
    static func frameNumbers(_ path: String, size: Size = Size(width: 320, height: 240)) throws -> [Int] {
        let result = try Tools.run(try XCTUnwrap(Tools.which("ffmpeg")),
                                   ["-hide_banner", "-loglevel", "error", "-i", path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray",
                                    "-s", "\(size.width)x\(size.height)", "-"], timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let frameBytes = size.width * size.height
        let bytes = [UInt8](result.stdout)
        return stride(from: 0, to: bytes.count - frameBytes + 1, by: frameBytes).map { start in
            (0..<16).reduce(0) { value, bit in
                bytes[start + 16 * size.width + 16 + 16 * bit] > 128 ? value | 1 << bit : value
            }
        }
    }

    /// The frames a sink skipped to keep up, as the run's report says (0 when it says nothing).
    static func skipped(_ stderr: String, output: String) -> Int {
        for line in stderr.split(separator: "\n") where line.contains(output) && line.contains("frame(s) skipped") {
            if let number = line.split(separator: ":").last?.split(separator: " ").first.flatMap({ Int($0) }) { return number }
        }
        return 0
    }

    // MARK: RTMP beside a local recording

    /// The issue's scene: camera → face-pixellate → an RTMP server and a local MP4 at once, with the
    /// microphone. The server's stream decodes to the frames of the MP4 (by camera frame number, less the
    /// frames the report says the stream skipped), with its sound in sync. PRISM_LIVE_SECONDS runs it longer.
    func testCameraToRTMPServerAndLocalMovieAtOnce() throws {
        let seconds = Int(ProcessInfo.processInfo.environment["PRISM_LIVE_SECONDS"] ?? "") ?? 5
        let port = Loopback.freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/cam"
        let received = dir.path("server.flv"), local = dir.path("local.mp4")
        let server = try Receiver(input: ["-listen", "1", "-i", url], output: received)
        XCTAssertTrue(Loopback.waitForListener(port: port), "the RTMP server did not start")
        let result = try Tools.run(Tools.prism, ["run", CameraTests.camera, "--size", "320x240", "--fps", "30",
                                                 "--frames", "\(seconds * 30)", "--audio", "prismtest",
                                                 "--filter", "face-pixellate", "--preset", "ultrafast",
                                                 "-o", url, "-o", local], environment: try liveEnvironment(), timeout: 180)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(server.wait(), "the server did not end when the stream ended")

        let recorded = try Self.frameNumbers(local)
        let streamed = try Self.frameNumbers(received)
        XCTAssertEqual(recorded.count, seconds * 30, result.stderr)
        XCTAssertEqual(recorded, recorded.sorted(), "the recording's frames are in camera order")
        // Every frame the server got is one the recording has, in order; those it lacks are the skips reported.
        XCTAssertEqual(streamed, streamed.sorted(), "the stream's frames are in camera order")
        XCTAssertTrue(Set(streamed).isSubset(of: Set(recorded)), "the stream has frames the recording lacks")
        XCTAssertEqual(recorded.count - streamed.count, Self.skipped(result.stderr, output: url), result.stderr)

        // Sound: AAC in the stream, as long as its video and starting with it.
        let report = try MediaInspector.inspect(received)
        XCTAssertEqual(report.audioCodecName, "aac")
        let rate = Double(try XCTUnwrap(report.audioSampleRate))
        // (The camera's frames are timed as it delivered them: the video spans its first to its last frame.)
        let videoSeconds = (report.videoPTS.max()! - report.videoPTS.min()!).seconds + 1.0 / 30
        XCTAssertEqual(Double(report.audioSampleCount) / rate, videoSeconds, accuracy: 0.15)
        let firstAudio = try XCTUnwrap(report.firstAudioPTS).seconds, firstVideo = try XCTUnwrap(report.videoPTS.min()).seconds
        XCTAssertEqual(firstAudio, firstVideo, accuracy: 0.05, "A/V offset in the stream")
        // A stream has a keyframe every 2 s and no B-frames; the server got video it can join.
        let frames = try Self.pictureTypes(received)
        XCTAssertFalse(frames.contains("B"), "a live stream has no B-frames")
        let keyframes = frames.enumerated().filter { $0.element == "I" }.map(\.offset)
        XCTAssertEqual(keyframes.first, 0)
        if keyframes.count > 1 { XCTAssertLessThanOrEqual(zip(keyframes, keyframes.dropFirst()).map { $1 - $0 }.max()!, 60) }
    }

    /// The server is killed mid-stream: the stream is given up alone (said once) and the local MP4 is
    /// whole — every frame of the run, playable — and the run succeeds.
    func testKillingTheServerMidStreamLeavesTheLocalMovieComplete() throws {
        let port = Loopback.freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/cam"
        let local = dir.path("local.mp4")
        let server = try Receiver(input: ["-listen", "1", "-i", url], output: dir.path("server.flv"))
        XCTAssertTrue(Loopback.waitForListener(port: port))
        let run = try prism(["run", CameraTests.camera, "--size", "320x240", "--fps", "30", "--frames", "180",
                             "--preset", "ultrafast", "--reconnect-output", "1", "-o", url, "-o", local])
        // Let the stream get going, then take the server away.
        XCTAssertTrue(Self.waitForFrames(run, 45))
        server.kill()
        let status = run.waitForExit(), stderr = run.stderr
        XCTAssertEqual(status, 0, stderr)
        XCTAssertEqual(stderr.components(separatedBy: "gave up").count - 1, 1, "said once: \(stderr)")
        let recorded = try Self.frameNumbers(local)
        XCTAssertEqual(recorded.count, 180, stderr)
        XCTAssertEqual(recorded, recorded.sorted())
        XCTAssertTrue(stderr.contains("180 frames"), stderr)
    }

    /// A server that comes back within `--reconnect-output`: the stream reconnects and the new server gets
    /// the frames from then on; the local recording has every frame.
    func testAStreamReconnectsWhenItsServerComesBack() throws {
        let port = Loopback.freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/cam"
        let local = dir.path("local.mp4")
        let first = try Receiver(input: ["-listen", "1", "-i", url], output: dir.path("first.flv"))
        XCTAssertTrue(Loopback.waitForListener(port: port))
        let run = try prism(["run", CameraTests.camera, "--size", "320x240", "--fps", "30", "--frames", "240",
                             "--preset", "ultrafast", "--reconnect-output", "30", "-o", local, "-o", url])
        XCTAssertTrue(Self.waitForFrames(run, 45))
        first.kill()
        let second = try Receiver(input: ["-listen", "1", "-i", url], output: dir.path("second.flv"))
        let status = run.waitForExit(), stderr = run.stderr
        XCTAssertEqual(status, 0, stderr)
        XCTAssertTrue(stderr.contains("reconnected after"), stderr)
        XCTAssertTrue(second.wait())
        let recorded = try Self.frameNumbers(local)
        XCTAssertEqual(recorded.count, 240, stderr)
        let resumed = try Self.frameNumbers(dir.path("second.flv"))
        XCTAssertGreaterThan(resumed.count, 10, "the second server got the stream")
        XCTAssertEqual(resumed, resumed.sorted())
        XCTAssertEqual(resumed.last, recorded.last, "the resumed stream runs to the last frame")
        XCTAssertTrue(Set(resumed).isSubset(of: Set(recorded)))
    }

    // MARK: SRT, RTSP, UDP

    /// Each protocol to a real receiver: every frame arrives, in order, decodable.
    func testSRTRTSPAndUDPReceiversGetEveryFrame() throws {
        let cases: [(name: String, udp: Bool, listen: (Int) -> [String], url: (Int) -> String)] = [
            ("srt", true, { ["-i", "srt://127.0.0.1:\($0)?mode=listener"] }, { "srt://127.0.0.1:\($0)" }),
            ("rtsp", false, { ["-rtsp_flags", "listen", "-i", "rtsp://127.0.0.1:\($0)/live"] }, { "rtsp://127.0.0.1:\($0)/live" }),
            // UDP has no end of stream: the receiver ends after 3 s without a datagram.
            ("udp", true, { ["-i", "udp://127.0.0.1:\($0)?timeout=3000000"] }, { "udp://127.0.0.1:\($0)" }),
        ]
        for item in cases {
            let port = Loopback.freePort(udp: item.udp)
            let received = dir.path("\(item.name).mkv")
            let server = try Receiver(input: item.listen(port), output: received, timeout: 20)
            XCTAssertTrue(Loopback.waitForListener(port: port, udp: item.udp), item.name)
            let result = try Tools.run(Tools.prism, ["run", CameraTests.camera, "--size", "320x240", "--fps", "30",
                                                     "--frames", "60", "--preset", "ultrafast", "-o", item.url(port)],
                                       environment: try liveEnvironment(), timeout: 120)
            XCTAssertEqual(result.status, 0, "\(item.name): \(result.stderr)")
            XCTAssertTrue(server.wait(seconds: 30), item.name)
            let numbers = try Self.frameNumbers(received)
            XCTAssertEqual(numbers.count, 60 - Self.skipped(result.stderr, output: item.url(port)), "\(item.name): \(result.stderr)")
            XCTAssertEqual(numbers, numbers.sorted(), item.name)
        }
    }

    /// Prism as the SRT listener: the run waits for its reader (FFmpeg, calling) and streams to it.
    func testSRTListenerStreamsToTheCallerThatConnects() throws {
        let port = Loopback.freePort(udp: true)
        let run = try prism(["run", CameraTests.camera, "--size", "320x240", "--fps", "30", "--frames", "60",
                             "--preset", "ultrafast", "-o", "srt://127.0.0.1:\(port)?mode=listener"])
        XCTAssertTrue(Loopback.waitForListener(port: port, udp: true), "prism did not listen")
        let received = dir.path("called.mkv")
        let caller = try Receiver(input: ["-i", "srt://127.0.0.1:\(port)?mode=caller"], output: received, timeout: 30)
        let status = run.waitForExit(), stderr = run.stderr
        XCTAssertEqual(status, 0, stderr)
        XCTAssertTrue(caller.wait())
        let numbers = try Self.frameNumbers(received)
        XCTAssertEqual(numbers.count, 60 - Self.skipped(stderr, output: "srt://"), stderr)
        XCTAssertEqual(numbers, numbers.sorted())
    }

    // MARK: HLS and DASH

    /// A live HLS playlist followed by a player (FFmpeg) while the run writes it: segments named after the
    /// playlist, a rolling window whose old segments are deleted, ENDLIST at the end (the player then stops
    /// by itself), and nothing hidden or temporary left in the folder.
    func testLiveHLSCanBeFollowedWhileWritten() throws {
        let folder = dir.path("hls")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // What an earlier, longer run left: its segments (its list says which) must not pile up beside this run's.
        let playlist = folder + "/live.m3u8"
        let earlier = try Tools.run(Tools.prism, ["run", "pattern", "--size", "64x48", "--frames", "300", "--segment-duration", "1",
                                                  "--playlist", "event", "--preset", "ultrafast", "-o", playlist, "--quiet"])
        XCTAssertEqual(earlier.status, 0, earlier.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/live9.ts"))
        try FileManager.default.removeItem(atPath: playlist)  // so the player below joins this run's playlist
        _ = FileManager.default.createFile(atPath: folder + "/livestock.ts", contents: Data([1]))  // not a segment: kept
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        let local = dir.path("local.mkv")
        process.arguments = ["run", CameraTests.camera, "--size", "320x240", "--fps", "30", "--frames", "240",
                             "--preset", "ultrafast", "--segment-duration", "1", "--window", "3", "-o", playlist,
                             "-o", local, "-q"]
        process.environment = ProcessInfo.processInfo.environment.merging(try liveEnvironment()) { $1 }
        try process.run()
        // Join once the playlist lists two segments and is not finished.
        var text = ""
        let started = Date()
        while Date().timeIntervalSince(started) < 60 {
            text = (try? String(contentsOfFile: playlist, encoding: .utf8)) ?? ""
            if text.components(separatedBy: "#EXTINF").count > 2 { break }
            usleep(50_000)
        }
        XCTAssertFalse(text.contains("#EXT-X-ENDLIST"), "joined a finished playlist: \(text)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/live9.ts"), "an earlier run's segments were left")
        let watched = dir.path("watched.mkv")
        let player = try Receiver(input: ["-i", playlist], output: watched, timeout: 60)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertTrue(player.wait(seconds: 40), "the player did not stop at the playlist's end")

        let final = try String(contentsOfFile: playlist, encoding: .utf8)
        XCTAssertTrue(final.contains("#EXT-X-ENDLIST"), final)
        let listed = final.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        XCTAssertEqual(listed.count, 3, final)
        for name in listed {
            XCTAssertNotNil(name.range(of: #"^live\d+\.ts$"#, options: .regularExpression), name)
            XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/" + name), name)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        // Hidden: only the list of what this run wrote (for the next run of the playlist).
        XCTAssertEqual(files.filter { $0.hasPrefix(".") }, [".live.m3u8.written"])
        XCTAssertFalse(files.contains { $0.hasSuffix(".tmp") || $0.hasSuffix(".partial") }, "\(files)")
        // The window (3) and the one segment FFmpeg keeps past it; 8 s of 1-s segments were written.
        XCTAssertLessThanOrEqual(files.filter { $0.hasSuffix(".ts") && $0 != "livestock.ts" }.count, 4, "\(files)")
        XCTAssertTrue(files.contains("livestock.ts"))
        // The player followed the live playlist to the end: from where it joined, every frame the run wrote
        // (the local recording of the same run), none missed, up to the last.
        let seen = try Self.frameNumbers(watched)
        let written = try Self.frameNumbers(local)
        XCTAssertEqual(written.count, 240)
        XCTAssertGreaterThan(seen.count, 60, "the player saw \(seen.count) frames")
        XCTAssertEqual(seen, Array(written.suffix(seen.count)), "the player missed frames")
        // Played after the run: the finished playlist's window, the run's last frames.
        let window = try Self.frameNumbers(playlist)
        XCTAssertGreaterThan(window.count, 30)
        XCTAssertEqual(window, Array(written.suffix(window.count)))
    }

    /// VOD HLS with fragmented MP4 and VOD DASH of a file: every frame through the playlist, the init
    /// segment and the segments named after it, a finished (VOD / static) playlist.
    func testVODPlaylistsHoldEveryFrame() throws {
        let clip = dir.path("clip.mp4")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=5", "-pix_fmt", "yuv420p", clip])
        for (name, extra) in [("vod.m3u8", ["--segment-type", "fmp4"]), ("vod.mpd", [])] {
            let folder = dir.path(name + "-dir")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let result = try Tools.run(Tools.prism, ["run", clip, "--filter", "invert", "--playlist", "vod", "-o", folder + "/" + name,
                                                     "--quiet"] + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try MediaInspector.inspect(folder + "/" + name).videoFrameCount, 150, name)
            let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            let text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            if name.hasSuffix("m3u8") {
                XCTAssertTrue(text.contains("#EXT-X-PLAYLIST-TYPE:VOD") && text.contains("#EXT-X-ENDLIST"), text)
                XCTAssertTrue(files.contains("vod-init.mp4"), "\(files)")
                XCTAssertTrue(files.contains("vod0.m4s"), "\(files)")
            } else {
                XCTAssertTrue(text.contains(#"type="static""#), text)
                XCTAssertTrue(files.contains("vod-init-0.m4s") && files.contains("vod-0-00001.m4s"), "\(files)")
            }
            XCTAssertEqual(files.filter { $0.hasPrefix(".") }, ["." + name + ".written"], "only the list of written files is hidden")
            XCTAssertFalse(files.contains { $0.hasSuffix(".tmp") }, "\(files)")
        }
    }

    // MARK: options per output, pipes

    /// Options before an -o are that output's; after the last -o, every output's that sets none.
    func testEncoderOptionsApplyToTheOutputTheyPrecede() throws {
        let a = dir.path("a.mkv"), b = dir.path("b.mp4"), c = dir.path("c.mp4")
        let result = try Tools.run(Tools.prism, ["run", "--frames", "90", "--size", "320x240",
                                                 "--codec", "hevc", "-o", a,
                                                 "--keyframes", "1", "-o", b,
                                                 "-o", c, "--preset", "ultrafast", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try MediaInspector.inspect(a).streams.first?.codecName, "hevc")
        XCTAssertEqual(try MediaInspector.inspect(b).streams.first?.codecName, "h264")
        XCTAssertEqual(try MediaInspector.inspect(c).streams.first?.codecName, "h264")
        let fixed = try Self.pictureTypes(b).enumerated().filter { $0.element == "I" }.map(\.offset)
        XCTAssertEqual(fixed, [0, 30, 60], "--keyframes 1 before -o b.mp4")
        XCTAssertNotEqual(try Self.pictureTypes(c).enumerated().filter { $0.element == "I" }.map(\.offset), [0, 30, 60],
                          "c.mp4 did not ask for fixed keyframes")
    }

    /// An encoded movie on a pipe: `-o pipe:1` and `-o /dev/stdout` with --format.
    func testMovieOnStandardOutputWithFormat() throws {
        for location in ["pipe:1", "/dev/stdout"] {
            let result = try Tools.run(Tools.prism, ["run", "--frames", "30", "--size", "320x240", "-o", location, "--format", "mpegts"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let file = dir.path("piped.ts")
            try result.stdout.write(to: URL(fileURLWithPath: file))
            XCTAssertEqual(try MediaInspector.inspect(file).videoFrameCount, 30, location)
        }
    }

    // MARK: bad input

    /// Each is one line on stderr, a non-zero exit, and no local file written.
    func testBadOutputsAreOneLineAndWriteNothing() throws {
        let local = dir.path("local.mp4")
        let closed = Loopback.freePort()
        let cases: [(arguments: [String], expected: String)] = [
            (["-o", "rtmp://127.0.0.1:\(closed)/live/x", "-o", local], "cannot connect"),
            (["-o", "foo://127.0.0.1/x", "-o", local], "unknown output protocol 'foo://'"),
            (["-o", dir.path("x.abc")], "unknown output file extension '.abc'"),
            (["-o", "pipe:1"], "--format"),
            (["-o", local, "--format", "nosuch"], "--format nosuch"),
            (["-o", local, "-o", local], "given twice"),
            (["--window", "3", "-o", local], "HLS"),
            (["-o", local, "-o", dir.path("b.mp4"), "--window", "3"], "no -o is one"),
            (["--window", "3", "-o", local, "-o", dir.path("b.m3u8")], "HLS"),
            (["--max-size", "1M", "-o", "udp://127.0.0.1:\(closed)"], "--max-size"),
            (["-o", local, "-o", dir.path("still.png")], "a still"),
            (["-o", "http://127.0.0.1:\(closed)/x"], "--format"),
        ]
        for (arguments, expected) in cases {
            let result = try Tools.run(Tools.prism, ["run", "--frames", "10", "--size", "160x120"] + arguments, timeout: 30)
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            XCTAssertEqual(result.stderrLines.count, 1, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(expected), "\(arguments): \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: local), "\(arguments) left \(local)")
        }
    }

    /// A server that refuses the publish (closes the connection at once) and one that never answers: one
    /// line each, the second within the network deadline, and no local file.
    func testRefusedAndSilentServers() throws {
        for silent in [false, true] {
            let listener = try LoopbackListener(closesAtOnce: !silent)
            let local = dir.path("local.mp4")
            let started = Date()
            let result = try Tools.run(Tools.prism, ["run", "--frames", "10", "--size", "160x120",
                                                     "-o", "rtmp://127.0.0.1:\(listener.port)/live/x", "-o", local], timeout: 60)
            XCTAssertNotEqual(result.status, 0)
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains(silent ? "no answer within" : "cannot connect"), result.stderr)
            XCTAssertLessThan(Date().timeIntervalSince(started), 40)
            XCTAssertFalse(FileManager.default.fileExists(atPath: local))
        }
    }

    // MARK: helpers

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Each frame's picture type (I, P, B) in presentation order.
    static func pictureTypes(_ path: String) throws -> [String] {
        let result = try Tools.run(try XCTUnwrap(Tools.which("ffprobe")),
                                   ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pict_type", "-of", "csv=p=0", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map { String($0.prefix(1)) }
    }
}

/// A TCP server on loopback that takes connections and either closes each at once (a refused publish) or
/// holds it without a word (a server that never answers).
final class LoopbackListener {
    let port: Int
    private let fd: Int32
    private let thread: Thread

    init(closesAtOnce: Bool) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 8) == 0 else { throw InvalidRequest("cannot listen on loopback") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        let box = HeldSockets()
        thread = Thread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                if closesAtOnce { close(client) } else { box.add(client) }
            }
        }
        self.heldSockets = box
        thread.start()
    }
    private let heldSockets: HeldSockets

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        heldSockets.closeAll()
    }

    final class HeldSockets: @unchecked Sendable {
        private let lock = NSLock()
        private var sockets: [Int32] = []
        func add(_ fd: Int32) { lock.withLock { sockets.append(fd) } }
        func closeAll() { lock.withLock { sockets.forEach { close($0) }; sockets = [] } }
    }
}
