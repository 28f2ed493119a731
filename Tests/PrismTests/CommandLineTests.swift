import XCTest
import PrismCore
import PrismMedia

/// The built `prism` binary: exit status, one-line errors, outputs decoded again.
final class CommandLineTests: XCTestCase {
    let dir = ScratchDirectory()

    /// Runs prism and checks the failure contract: non-zero exit, exactly one line on stderr that
    /// mentions `expected`, and no output file (nor a temporary) left behind.
    private func assertFails(_ arguments: [String], mentioning expected: [String], stdin: Data? = nil,
                             file: StaticString = #filePath, line: UInt = #line) throws {
        let before = Set(dir.contents())
        let result = try Tools.run(Tools.prism, arguments, stdin: stdin)
        XCTAssertNotEqual(result.status, 0, "\(arguments) should fail", file: file, line: line)
        XCTAssertEqual(result.stderrLines.count, 1, "one line, got: \(result.stderr)", file: file, line: line)
        for word in expected {
            XCTAssertTrue(result.stderr.lowercased().contains(word.lowercased()),
                          "'\(result.stderr)' should mention \(word)", file: file, line: line)
        }
        XCTAssertFalse(result.stderr.contains("Fatal error"), file: file, line: line)
        XCTAssertEqual(Set(dir.contents()), before, "a failed run must leave no files", file: file, line: line)
    }

    func testBadInputsFailWithOneClearLine() throws {
        let out = dir.path("out.mp4")
        try assertFails(["run", dir.path("missing.mp4"), "-o", out], mentioning: ["missing.mp4", "no such file"])
        let text = dir.path("notes.mp4")
        try "this is not a movie\n".write(toFile: text, atomically: true, encoding: .utf8)
        try assertFails(["run", text, "-o", out], mentioning: ["notes.mp4"])
        // A real movie cut in half (index at the end, so the cut loses it).
        let whole = dir.path("whole.mp4")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25:duration=2", "-c:v", "libx264",
                          "-preset", "ultrafast", whole])
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = dir.path("cut.mp4")
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        try assertFails(["run", cut, "-o", out], mentioning: ["cut.mp4"])
        try assertFails(["run", "-o", out, "--filter", "invert, sparkle"], mentioning: ["sparkle", "column 9"])
        try assertFails(["run", "-o", out, "--filter", "pixellate(scale=0)"], mentioning: ["scale"])
        // An output directory that cannot exist (a regular file stands in its way).
        try assertFails(["run", "--frames", "2", "-o", text + "/out.mp4"], mentioning: ["out.mp4"])
        try assertFails(["run", "--frames", "2", "-o", dir.path("out.xyz")], mentioning: ["xyz"])
        try assertFails(["run", "-", "--input-format", "64x48:yuv411p:25", "-o", out], mentioning: ["yuv411p"],
                        stdin: Data(count: 64 * 48 * 2))
        try assertFails(["run", "--frames", "2", "-o", out, "--codec", "vp9"], mentioning: ["vp9"])
        try assertFails(["run", "--frames", "-3", "-o", out], mentioning: ["--frames"])
        try assertFails(["run", "--frames", "2"], mentioning: ["-o"])
        try assertFails(["run", "--colour", "red", "-o", out], mentioning: ["--colour"])
        try assertFails(["frobnicate"], mentioning: ["frobnicate"])
        try assertFails(["run", "--gpu", "7", "--frames", "2", "-o", out], mentioning: ["gpu 7"])
    }

    func testTruncatedStreamAndTheExistingOutputIsLeftAlone() throws {
        // A movie whose index is at the front but whose data stops half way: prism either stops cleanly
        // with what it could decode, or fails with one line; it must not hang, crash or damage the
        // existing output on failure.
        let whole = dir.path("front.mp4")
        try Tools.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x96:rate=25:duration=2", "-c:v", "libx264",
                          "-preset", "ultrafast", "-movflags", "+faststart", whole])
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = dir.path("front-cut.mp4")
        try data.prefix(data.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
        let out = dir.path("precious.mkv")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: out))
        let result = try Tools.run(Tools.prism, ["run", cut, "-o", out, "--quiet"])
        if result.status == 0 {
            let report = try MediaInspector.inspect(out)
            XCTAssertGreaterThan(report.videoFrameCount, 0)
            XCTAssertLessThan(report.videoFrameCount, 50)
        } else {
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), Data("precious".utf8))
        }
    }

    func testRawRGBAThroughFFV1IsPixelExact() throws {
        // Raw RGBA frames in on stdin, invert on the GPU, FFV1 (lossless RGB) out: decoding must give
        // exactly 255 - input for every sample.
        let size = Size(width: 48, height: 30), frames = 5
        var input = Data(count: size.pixelCount * 4 * frames)
        for i in 0..<input.count {
            let scrambled: Int = ((i &* 7919) >> 3) ^ i
            input[i] = i % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: scrambled)
        }
        let out = dir.path("exact.mkv")
        let result = try Tools.run(Tools.prism, ["run", "-", "--input-format", "48x30:rgba:25", "--filter", "invert",
                                                 "--codec", "ffv1", "-o", out, "--quiet"], stdin: input)
        XCTAssertEqual(result.status, 0, result.stderr)
        let report = try MediaInspector.inspect(out)
        XCTAssertEqual(report.videoFrameCount, frames)
        XCTAssertEqual(report.videoPTS.map(\.seconds), (0..<frames).map { Double($0) / 25 })
        for index in 0..<frames {
            let decoded = try MediaInspector.frameRGBA(out, index: index)
            let offset = index * size.pixelCount * 4
            var mismatches = 0
            for i in 0..<(size.pixelCount * 4) where i % 4 != 3 {
                if decoded.pixels[i] != 255 - input[offset + i] { mismatches += 1 }
            }
            XCTAssertEqual(mismatches, 0, "frame \(index)")
        }
    }

    func testRawOutputOnStdout() throws {
        let result = try Tools.run(Tools.prism, ["run", "--size", "64x48", "--frames", "3", "--filter", "mono",
                                                 "-o", "-", "--output-format", "rgba", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.count, 64 * 48 * 4 * 3)
        // mono: every pixel grey.
        let bytes = [UInt8](result.stdout)
        var worst = 0
        for i in stride(from: 0, to: bytes.count, by: 4) {
            let r = Int(bytes[i]), g = Int(bytes[i + 1]), b = Int(bytes[i + 2])
            worst = max(worst, abs(r - g), abs(g - b))
        }
        XCTAssertLessThanOrEqual(worst, 1, "mono output should be grey")
        let nv12 = try Tools.run(Tools.prism, ["run", "--size", "64x48", "--frames", "2", "-o", "-", "--output-format", "nv12", "--quiet"])
        XCTAssertEqual(nv12.stdout.count, (64 * 48 * 3 / 2) * 2)
    }

    func testInterruptedRunLeavesAPlayableFile() throws {
        let out = dir.path("interrupted.mp4")
        // Let it produce frames for a while, then Ctrl-C.
        let status = try Tools.interrupt(["run", "--size", "160x96", "--frames", "100000", "--preset", "ultrafast",
                                          "-o", out, "--quiet"])
        XCTAssertEqual(status, 0)
        let report = try MediaInspector.inspect(out)
        XCTAssertGreaterThan(report.videoFrameCount, 5)
        XCTAssertLessThan(report.videoFrameCount, 100000)
        XCTAssertEqual(report.videoPTS.count, report.videoFrameCount)
        XCTAssertEqual(report.duration?.seconds ?? 0, Double(report.videoFrameCount) / 30, accuracy: 0.1)
    }

    func testRenderStillImageAgainstTheCPU() throws {
        let input = try Tools.fixture("chelsea.png")
        let out = dir.path("chelsea-inverted.png")
        let result = try Tools.run(Tools.prism, ["render", "--filter", "invert", input, "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        let original = try ImageFile.read(path: input), inverted = try ImageFile.read(path: out)
        XCTAssertEqual(original.size, inverted.size)
        var worst = 0
        for i in 0..<original.pixels.count where i % 4 != 3 {
            worst = max(worst, abs(255 - Int(original.pixels[i]) - Int(inverted.pixels[i])))
        }
        XCTAssertEqual(worst, 0)
        // JPEG out works too, and a bad extension is refused.
        XCTAssertEqual(try Tools.run(Tools.prism, ["render", "--filter", "noir", input, "-o", dir.path("c.jpg")]).status, 0)
        try assertFails(["render", input, "-o", dir.path("c.gif")], mentioning: ["c.gif"])
    }

    func testFiltersAndDevicesListings() throws {
        let all = try Tools.run(Tools.prism, ["filters"])
        XCTAssertEqual(all.status, 0)
        let listing = String(decoding: all.stdout, as: UTF8.self)
        for name in ["invert", "mono", "instant", "transfer", "noir", "chrome", "fade", "process", "tonal", "lut",
                     "pixellate", "radial-gradient", "blend-mask", "over", "color"] {
            XCTAssertTrue(listing.contains("\n\(name) — ") || listing.contains("\(name) — "), "\(name) missing")
        }
        let one = try Tools.run(Tools.prism, ["filters", "pixellate"])
        let detail = String(decoding: one.stdout, as: UTF8.self)
        XCTAssertTrue(detail.contains("scale: float in 1...512, default 8"), detail)
        XCTAssertTrue(detail.contains("example: prism run"), detail)
        let devices = try Tools.run(Tools.prism, ["devices"])
        XCTAssertEqual(devices.status, 0)
        XCTAssertTrue(String(decoding: devices.stdout, as: UTF8.self).contains("renderer:"))
    }

    func testMainJobAnnouncesTheRenderer() throws {
        let out = dir.path("pattern.mp4")
        let result = try Tools.run(Tools.prism, ["run", "--frames", "10", "--size", "320x180", "--filter", "invert",
                                                 "-o", out, "--stats"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("GPU: llvmpipe") || result.stderr.contains("GPU: "), result.stderr)
        XCTAssertTrue(result.stderr.contains("software renderer") || !result.stderr.contains("llvmpipe"))
        for stage in ["decode", "upload", "filter", "readback", "encode"] { XCTAssertTrue(result.stderr.contains(stage)) }
        let report = try MediaInspector.inspect(out)
        XCTAssertEqual(report.videoFrameCount, 10)
        // faststart: the index before the media data.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: out))
        let moov = bytes.range(of: Data("moov".utf8))!.lowerBound, mdat = bytes.range(of: Data("mdat".utf8))!.lowerBound
        XCTAssertLessThan(moov, mdat)
    }
}

/// Running out of disk space: one clear line, nothing half-written left, the old output untouched.
final class FullDiskTests: XCTestCase {
    func testRawOutputToAFullDevice() throws {
        // /dev/full answers every write with ENOSPC.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec \"$0\" run --frames 3 --size 64x48 -o - --quiet > /dev/full", Tools.prism]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertNotEqual(process.terminationStatus, 0)
        XCTAssertEqual(message.split(separator: "\n").count, 1, message)
        XCTAssertTrue(message.contains("No space left on device"), message)
    }

    func testMovieOutputOnAFullFilesystem() throws {
        // A 256 KiB tmpfs (the tests run as root, as CI does) holding an earlier output.
        let dir = ScratchDirectory()
        let mountPoint = dir.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try Tools.run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", mountPoint])
        XCTAssertEqual(mount.status, 0, "cannot mount a tmpfs to fill: \(mount.stderr)")
        guard mount.status == 0 else { return }
        defer { _ = try? Tools.run("/bin/umount", [mountPoint]) }
        let target = mountPoint + "/take.mp4"
        try Data("an earlier take".utf8).write(to: URL(fileURLWithPath: target))
        let result = try Tools.run(Tools.prism, ["run", "--frames", "600", "--size", "320x240", "--crf", "0",
                                                 "--preset", "ultrafast", "-o", target, "--quiet"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("No space left on device"), result.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), Data("an earlier take".utf8))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountPoint), ["take.mp4"])
    }
}
