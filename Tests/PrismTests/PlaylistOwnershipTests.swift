import Foundation
import XCTest
import PrismCore
import PrismMedia
#if canImport(Glibc)
import Glibc
#endif

/// An HLS or DASH output deletes and writes only what Prism wrote for it (the list beside the playlist,
/// `.NAME.m3u8.written`): never an input, another output, a sidecar or a file another program put in the
/// folder with a segment's name. Before, the start-up clean-up removed anything shaped like a segment
/// after the input was open (`live0.ts` as input was overwritten, `live7.ts` beside it deleted).
final class PlaylistOwnershipTests: XCTestCase {
    let dir = ScratchDirectory()

    private func movie(_ path: String, frames: Int = 4) throws {
        let format = path.hasSuffix(".m4s") ? ["--format", "mp4"] : []
        let result = try Tools.run(Tools.prism, ["run", "--frames", String(frames), "--size", "64x48", "--preset", "ultrafast",
                                                 "-o", path, "--quiet"] + format)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    private func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    private func prism(_ arguments: [String]) throws -> ProcessResult {
        try Tools.run(Tools.prism, ["run", "--size", "64x48", "--preset", "ultrafast", "--quiet"] + arguments, timeout: 120)
    }

    /// The issue's three runs, and an unrelated file with a segment's name: each refused in one line before
    /// anything is written, every file as it was.
    func testInputsAndOtherFilesWithSegmentNamesAreNeverTouched() throws {
        let folder = dir.path("show")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for name in ["live0.ts", "live7.ts", "show-init.mp4", "show-0-00001.m4s", "other.mp4"] { try movie(folder + "/" + name) }
        var before: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) { before[name] = try bytes(folder + "/" + name) }
        let cases: [([String], String)] = [
            ([folder + "/live0.ts", "-o", folder + "/live.m3u8"], "(the input \(folder)/live0.ts)"),
            ([folder + "/show-init.mp4", "-o", folder + "/show.m3u8", "--segment-type", "fmp4"], "the input"),
            ([folder + "/show-0-00001.m4s", "-o", folder + "/show.mpd"], "the input"),
            // Not the input: live0.ts and live7.ts are someone's files that no run of live.m3u8 wrote.
            ([folder + "/other.mp4", "-o", folder + "/live.m3u8"], "live0.ts has the name of one of its segments"),
            ([folder + "/other.mp4", "-o", folder + "/live.m3u8", "--segment-type", "fmp4"], "has the name of one of its segments"),
            // The same folder spelled otherwise, the input through a link.
            ([folder + "/./live0.ts", "-o", dir.url.path + "/show/../show/live.m3u8"], "the input"),
        ]
        try FileManager.default.createSymbolicLink(atPath: dir.path("link.ts"), withDestinationPath: folder + "/live0.ts")
        for (arguments, message) in cases + [([dir.path("link.ts"), "-o", folder + "/live.m3u8"], "the input")] {
            let result = try prism(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            let now = try FileManager.default.contentsOfDirectory(atPath: folder)
            XCTAssertEqual(Set(now), Set(before.keys), "\(arguments): files appeared or went")
            for (name, data) in before { XCTAssertEqual(try bytes(folder + "/" + name), data, "\(arguments): \(name) changed") }
        }
    }

    /// Other outputs and sidecars that would be segments are refused before anything runs: `-o live.m3u8
    /// -o live0.ts` wrote a playlist whose first segment was the whole movie; `--faces-out live1.ts` was
    /// replaced by a segment; two playlists whose names overlap would write each other's names.
    func testOutputsAndSidecarsWithSegmentNamesAreRefused() throws {
        let cases: [([String], String)] = [
            (["-o", dir.path("live.m3u8"), "-o", dir.path("live0.ts")], "(-o \(dir.path("live0.ts")))"),
            (["-o", dir.path("live0.ts"), "-o", dir.path("live.m3u8")], "(-o \(dir.path("live0.ts")))"),
            (["-o", dir.path("d.mpd"), "--format", "mp4", "-o", dir.path("d-0-00001.m4s")], "d-0-00001.m4s"),
            (["-o", dir.path("live.m3u8"), "--faces-out", dir.path("live1.ts"), "--filter", "face-pixellate"], "--faces-out"),
            (["-o", dir.path("a.m3u8"), "-o", dir.path("a0.m3u8")], "a00.ts"),
        ]
        for (arguments, message) in cases {
            let result = try prism(["pattern", "--frames", "3"] + arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertEqual(dir.contents(), [], "\(arguments): something was written")
        }
    }

    /// What an earlier run wrote (its list) goes when the playlist is written again, a killed run's
    /// temporaries included; what it did not write stays, and refuses the run.
    func testAnEarlierRunsFilesAndOnlyThoseAreReplaced() throws {
        let folder = dir.path("hls")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let playlist = folder + "/live.m3u8"
        var result = try prism(["pattern", "--frames", "150", "--segment-duration", "1", "--playlist", "event", "-o", playlist])
        XCTAssertEqual(result.status, 0, result.stderr)
        let first = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".ts") }.sorted()
        XCTAssertGreaterThanOrEqual(first.count, 4, "\(first)")
        let ledger = try String(contentsOfFile: folder + "/.live.m3u8.written", encoding: .utf8)
        for name in first { XCTAssertTrue(ledger.contains(" \(name)"), "\(name) is not in the list:\n\(ledger)") }
        // A shorter run: the first run's later segments do not pile up beside its own.
        result = try prism(["pattern", "--frames", "30", "--segment-duration", "1", "-o", playlist])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".ts") }, ["live0.ts"])

        // A killed run: its list is complete up to its last file; the next run clears what it wrote and runs.
        let killed = Process()
        killed.executableURL = URL(fileURLWithPath: Tools.prism)
        killed.arguments = ["run", "pattern", "--realtime", "--size", "64x48", "--frames", "900", "--segment-duration", "1",
                            "-o", playlist, "--quiet"]
        try killed.run()
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline, ((try? String(contentsOfFile: folder + "/.live.m3u8.written", encoding: .utf8)) ?? "")
                .split(separator: "\n").count < 4 { usleep(50_000) }
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        XCTAssertGreaterThanOrEqual(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".ts") }.count, 2)
        result = try prism(["pattern", "--frames", "30", "--segment-duration", "1", "-o", playlist])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix(".") }.sorted(),
                       ["live.m3u8", "live0.ts"])

        // A segment replaced by someone since (another file under its name): never deleted.
        unlink(folder + "/live0.ts")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/live0.ts"))
        result = try prism(["pattern", "--frames", "30", "--segment-duration", "1", "-o", playlist])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("live0.ts has the name of one of its segments"), result.stderr)
        XCTAssertEqual(try bytes(folder + "/live0.ts"), Data("mine".utf8))
    }

    /// A file that appears mid-run with the name of the next segment is not written over: that output ends
    /// there with one line, and (a file input's failed run) what it wrote is removed, the file kept.
    func testAFileThatAppearsWithTheNextSegmentsNameIsKept() throws {
        let playlist = dir.path("g.m3u8")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["run", "pattern", "--realtime", "--size", "64x48", "--frames", "180", "--segment-duration", "1",
                             "-o", playlist, "--quiet"]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // Paced to the clock: segment 4 (from 4 s of media on) is opened well after this.
        Thread.sleep(forTimeInterval: 1.5)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: dir.path("g4.ts")))
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertNotEqual(process.terminationStatus, 0, stderr)
        XCTAssertTrue(stderr.contains("g4.ts appeared with the name of its next file"), stderr)
        XCTAssertEqual(try bytes(dir.path("g4.ts")), Data("mine".utf8))
        XCTAssertEqual(dir.contents(), ["g4.ts"], "what the failed run wrote is removed, the other file kept")
    }
}
