import Foundation
import XCTest
import PrismCore
import PrismMedia
import TestFixtures

/// Damaged and truncated input, end to end, on material nobody on the project made (OpenCV's sample clips)
/// and on files cut the way downloads and crashed recorders cut them: Prism goes on where FFmpeg's command
/// line goes on — a damaged packet is skipped and counted, a truncated file keeps what decoded and says where
/// it ended — and FFmpeg, run on the same file, is the reference for what survives. `--strict-decode` fails.
final class DamagedInputTests: XCTestCase {
    let dir = ScratchDirectory()

    func prism(_ arguments: [String]) throws -> ProcessResult {
        try Tools.run(Tools.prism, arguments, timeout: 300)
    }

    /// The frames FFmpeg's command line decodes from `path` with its default error resilience.
    func ffmpegFrameCount(_ path: String) throws -> Int {
        let result = try Tools.run(try XCTUnwrap(Tools.which("ffmpeg")), ["-hide_banner", "-v", "quiet", "-i", path, "-map", "0:v:0",
                                                                           "-fps_mode", "passthrough", "-f", "framemd5", "-"])
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.count
    }

    // MARK: a damaged packet

    /// Megamind.avi's first AC3 packet is cut short: FFmpeg logs one "Error while decoding stream #0:1" and
    /// goes on. Re-encoded to AAC for two outputs at once (MPEG-TS and FLV, each with its own transcoder), the
    /// run goes on too, says once how many packets it skipped and where, and both outputs carry every frame
    /// and the sound after the damaged packet.
    func testMegamindsDamagedAudioPacketIsSkippedAndCounted() throws {
        let clip = try TestFixtures.opencv("Megamind.avi")
        let outputs = [dir.path("megamind.ts"), dir.path("megamind.flv")]
        let result = try prism(["run", clip, "--preset", "ultrafast", "-o", outputs[0], "-o", outputs[1]])
        XCTAssertEqual(result.status, 0, result.stderr)
        let warning = "prism: warning: \(clip): 1 damaged packet skipped in audio stream 1 (ac3) at 0.00 s "
            + "(cannot decode audio: Invalid data found when processing input); --strict-decode fails instead"
        XCTAssertEqual(result.stderrLines.filter { $0.contains("damaged") }, [warning], "said once, counted once: \(result.stderr)")
        for output in outputs {
            let report = try MediaInspector.inspect(output)
            XCTAssertEqual(report.videoFrameCount, 270, output)
            XCTAssertEqual(report.audioCodecName, "aac", output)
            // The sound from the second packet (32 ms) on: 11.23 s of the 11.26 s clip.
            let seconds = Double(report.audioSampleCount) / Double(try XCTUnwrap(report.audioSampleRate))
            XCTAssertEqual(seconds, 11.23, accuracy: 0.06, output)
            XCTAssertGreaterThan(report.audioPeak, 0.05, "\(output): the sound is there, not silence")
        }
    }

    /// `--strict-decode`: the same packet fails the run, one line naming the stream and the time, nothing written.
    func testStrictDecodeFailsAtTheDamagedPacket() throws {
        let output = dir.path("strict.ts")
        let result = try prism(["run", try TestFixtures.opencv("Megamind.avi"), "--strict-decode", "-o", output, "--quiet"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("audio stream 1 (ac3) at 0.00 s: cannot decode audio: Invalid data found"), result.stderr)
        XCTAssertTrue(result.stderr.contains("--strict-decode"), result.stderr)
        XCTAssertEqual(dir.contents(), [], "a failed run leaves nothing")
    }

    /// OpenCV's other clips — Megamind_bugy.avi (an index OpenCV once misread), tree.avi (Cinepak) — run
    /// clean: every frame FFmpeg decodes, and nothing said about damage.
    func testTheOtherOpenCVClipsRunLikeFFmpeg() throws {
        for name in ["Megamind_bugy.avi", "tree.avi"] {
            let clip = try TestFixtures.opencv(name)
            let output = dir.path(name + ".mkv")
            let result = try prism(["run", clip, "--preset", "ultrafast", "-o", output, "--quiet"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(result.stderr, "", name)
            XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, try ffmpegFrameCount(clip), name)
        }
    }

    // MARK: a truncated file

    /// OpenCV's vtest.avi as H.264 in an MP4 with its index at the front, cut in half (a download that
    /// stopped): the index announces 100 frames, the data holds 47 and a part. FFmpeg keeps what decodes;
    /// so does Prism — the same count — saying which packet it skipped and where the file ended; exit 0.
    func testAHalfTruncatedMP4KeepsWhatDecodes() throws {
        let whole = dir.path("whole.mp4"), half = dir.path("half.mp4")
        try Tools.ffmpeg(["-i", try TestFixtures.opencv("vtest.avi"), "-frames:v", "100", "-c:v", "libx264", "-preset", "ultrafast",
                          "-pix_fmt", "yuv420p", "-movflags", "+faststart", whole])
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: half))
        let kept = try ffmpegFrameCount(half)
        XCTAssertGreaterThan(kept, 10, "FFmpeg decodes the first half")
        XCTAssertLessThan(kept, 100)

        let output = dir.path("kept.mkv")
        let result = try prism(["run", half, "--preset", "ultrafast", "-o", output, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, kept, result.stderr)
        let lines = result.stderrLines
        XCTAssertTrue(lines.contains { $0.contains("\(half): 1 damaged packet skipped in video stream 0 (h264) at") }, result.stderr)
        let end = String(format: "at %.2f s", Double(kept) / 10)
        XCTAssertTrue(lines.contains("prism: warning: \(half) ended after \(kept) of the 100 frames its header announces, \(end) (truncated or damaged?)"),
                      result.stderr)

        let strict = try prism(["run", half, "--strict-decode", "-o", dir.path("strict.mkv"), "--quiet"])
        XCTAssertNotEqual(strict.status, 0)
        XCTAssertTrue(strict.stderr.contains("video stream 0 (h264)") && strict.stderr.contains("--strict-decode"), strict.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("strict.mkv")))
    }

    /// A read that fails part-way (an image of a sequence that cannot be read) ends the input there, as
    /// FFmpeg ends it: the frames before it are kept, the line says after which time and why.
    func testAReadErrorEndsTheInputEarlyAndKeepsWhatCameBefore() throws {
        let pattern = dir.path("img%03d.png")
        // img001.png … img010.png, the fourth made unreadable.
        try Tools.ffmpeg(["-i", try TestFixtures.opencv("vtest.avi"), "-frames:v", "10", "-s", "192x144", pattern])
        let fourth = dir.path("img004.png")
        try FileManager.default.removeItem(atPath: fourth)
        try FileManager.default.createDirectory(atPath: fourth, withIntermediateDirectories: false)
        let kept = try ffmpegFrameCount(pattern)
        XCTAssertEqual(kept, 3)

        let output = dir.path("seq.mp4")
        let result = try prism(["run", pattern, "-o", output, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try MediaInspector.inspect(output).videoFrameCount, kept)
        // At 30 images a second: the third image is at 0.07 s.
        XCTAssertEqual(result.stderrLines, ["prism: warning: \(pattern): the input ends early, after 0.07 s of the 0.33 s it announces "
                                            + "(cannot read: Is a directory); what decoded before it is kept"])
        let strict = try prism(["run", pattern, "--strict-decode", "-o", dir.path("strict.mp4"), "--quiet"])
        XCTAssertNotEqual(strict.status, 0)
        XCTAssertTrue(strict.stderr.contains("the input ends early after 0.07 s: cannot read: Is a directory (av_read_frame); --strict-decode"),
                      strict.stderr)
    }

    /// Nothing usable read is still a failure: a file cut inside its first frame gives no frame, and the
    /// run says so in one line — naming the damaged packet — and exits non-zero without an output.
    func testAFileCutInsideItsFirstFrameIsAFailure() throws {
        let whole = dir.path("whole.mp4"), cut = dir.path("cut.mp4")
        try Tools.ffmpeg(["-i", try TestFixtures.opencv("vtest.avi"), "-frames:v", "10", "-c:v", "libx264", "-preset", "ultrafast",
                          "-pix_fmt", "yuv420p", "-movflags", "+faststart", whole])
        let probe = try Tools.run(try XCTUnwrap(Tools.which("ffprobe")), ["-v", "error", "-show_entries", "packet=pos,size", "-of", "csv=p=0", whole])
        let first = String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n")[0].split(separator: ",").compactMap { Int($0) }
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        try data.prefix(first[1] + first[0] / 2).write(to: URL(fileURLWithPath: cut))
        let output = dir.path("nothing.mp4")
        let result = try prism(["run", cut, "-o", output, "--quiet"])
        XCTAssertNotEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("no frames"), result.stderr)
        XCTAssertTrue(result.stderr.contains("\(cut): 1 damaged packet skipped in video stream 0 (h264) at 0.00 s"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    // MARK: prism dev

    /// `prism dev` opens Megamind.avi and its sound reaches an audio-reactive shader: the damaged first packet
    /// is skipped, the preview runs on.
    func testDevPlaysMegamindWithItsSound() throws {
        let dev = try DevProcess(arguments: [AudioReactiveTests.corpus("audio-spectrum.fs"), try TestFixtures.opencv("Megamind.avi")])
        defer { dev.stop() }
        let state = try dev.waitForState(timeout: 90, "frames from the clip") {
            ($0["frames"] as? Int ?? 0) > 40 || $0["error"] as? [String: Any] != nil
        }
        XCTAssertNil(state["error"] as? [String: Any], "\(state)")
        XCTAssertTrue(dev.process.isRunning, dev.stderr)
        XCTAssertFalse(dev.stderr.contains("cannot decode"), dev.stderr)
        // The spectrum shader draws the sound's FFT magnitudes in red: silence (no sound decoded) draws none.
        // The clip is quiet in places (frames 42-43 and 185-215 draw no red at all), so the preview is
        // looked at until it shows sound, for at most the clip's length: silence shows none in any frame.
        var loudest = 0
        let deadline = Date().addingTimeInterval(15)
        while loudest <= 1, Date() < deadline {
            let image = try dev.snapshot()
            let reds = stride(from: 0, to: image.pixels.count, by: 4).map { image.pixels[$0] }
            loudest = max(loudest, Int(reds.max() ?? 0))
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertGreaterThan(loudest, 1, "the spectrum of the clip's sound is drawn")
    }
}
