import Foundation
import XCTest
import PrismCore
import PrismMedia

/// `prism record DIR`: takes started and stopped from stdin and SIGUSR1, collision-free names, segments,
/// photos, each file decoded again.
final class RecordTests: XCTestCase {
    let dir = ScratchDirectory()

    /// Starts `prism record` with a pipe on its stdin.
    private func start(_ arguments: [String], environment: [String: String] = [:]) throws -> (Process, FileHandle, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["record"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return (process, input.fileHandleForWriting, errors)
    }

    private func say(_ handle: FileHandle, _ line: String, thenWait seconds: Double) {
        handle.write(Data((line + "\n").utf8))
        Thread.sleep(forTimeInterval: seconds)
    }

    private func finish(_ process: Process, _ errors: Pipe) -> String {
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(process.isRunning, "record did not quit")
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    private func takes() -> [String] { dir.contents().filter { $0.hasPrefix("take-") && $0.hasSuffix(".mp4") } }

    /// A take's name is chosen free, but a file or a link can appear under it while it records: the take is
    /// then saved beside it (`NAME-2.mp4`) and what appeared is left as it was (before: renamed over).
    func testWhatAppearsUnderATakesNameWhileItRecordsIsKept() throws {
        let victim = dir.path("victim.mp4")
        try Data("the user's movie".utf8).write(to: URL(fileURLWithPath: victim))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["record", dir.url.path, "--size", "160x120", "--preset", "ultrafast"]
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let lines = LineCollector(errors.fileHandleForReading)
        func line(after count: Int, starting prefix: String) throws -> String {
            let deadline = Date(timeIntervalSinceNow: 30)
            while Date() < deadline {
                if let found = lines.all.dropFirst(count).first(where: { $0.hasPrefix(prefix) }) { return found }
                usleep(20_000)
            }
            throw DevProcessError(message: "no '\(prefix)' line: \(lines.all)")
        }
        var saved: [String] = []
        for makeLink in [false, true] {
            let before = lines.all.count
            input.fileHandleForWriting.write(Data("start\n".utf8))
            let path = String(try line(after: before, starting: "prism: recording ").dropFirst("prism: recording ".count))
            if makeLink {
                XCTAssertEqual(symlink(victim, path), 0)
            } else {
                try Data("mine".utf8).write(to: URL(fileURLWithPath: path))
            }
            Thread.sleep(forTimeInterval: 0.5)
            input.fileHandleForWriting.write(Data("stop\n".utf8))
            let finished = try line(after: before, starting: "prism: finished ")
            let name = String(finished.dropFirst("prism: finished ".count).prefix { $0 != " " })
            XCTAssertEqual(name, String(path.dropLast(4)) + "-2.mp4", finished)
            saved.append(name)
            if makeLink {
                XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: path), victim)
            } else {
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data("mine".utf8))
            }
        }
        input.fileHandleForWriting.write(Data("quit\n".utf8))
        let deadline = Date(timeIntervalSinceNow: 30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(process.isRunning)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: victim)), Data("the user's movie".utf8))
        for name in saved { XCTAssertGreaterThan(try MediaInspector.inspect(name).videoFrameCount, 3, name) }
        XCTAssertEqual(dir.contents().filter { $0.hasSuffix(".partial") }, [])
    }

    func testTakesFromStdinGetNamesOfTheirOwnAndPlay() throws {
        let (process, input, errors) = try start([dir.url.path, "--size", "160x120", "--preset", "ultrafast"])
        Thread.sleep(forTimeInterval: 1)
        // Two takes within the same second or so, a photo between them, an unknown word, then quit.
        say(input, "start", thenWait: 0.6)
        say(input, "stop", thenWait: 0.1)
        say(input, "start", thenWait: 0.3)
        say(input, "snap", thenWait: 0.3)
        say(input, "stop", thenWait: 0.1)
        say(input, "sparkle", thenWait: 0.1)
        say(input, "quit", thenWait: 0)
        let log = finish(process, errors)
        XCTAssertEqual(process.terminationStatus, 0, log)
        let names = takes()
        XCTAssertEqual(names.count, 2, "\(dir.contents())\n\(log)")
        XCTAssertEqual(Set(names).count, 2)
        for name in names {
            let report = try MediaInspector.inspect(dir.path(name))
            XCTAssertGreaterThan(report.videoFrameCount, 3, name)
            XCTAssertEqual(report.size, Size(width: 160, height: 120))
            XCTAssertEqual(report.videoPTS.first?.seconds, 0, "\(name) starts at its own zero")
            XCTAssert(log.contains("finished \(dir.path(name))"), log)
        }
        let photos = dir.contents().filter { $0.hasPrefix("photo-") && $0.hasSuffix(".jpg") }
        XCTAssertEqual(photos.count, 1, "\(dir.contents())")
        XCTAssertEqual(try ImageFile.read(path: dir.path(photos[0])).size, Size(width: 160, height: 120))
        XCTAssert(log.contains("unknown command 'sparkle'"), log)
        XCTAssertEqual(dir.contents().filter { $0.hasPrefix(".") }, [], "no temporaries left")
    }

    func testSegmentsRollOverWithoutLosingFrames() throws {
        let (process, input, errors) = try start([dir.url.path, "--size", "160x120", "--preset", "ultrafast",
                                                  "--segment", "1s", "--start"])
        // Timed from the first take, not from the launch (a loaded box is slow to start).
        var early = Data()
        while !String(decoding: early, as: UTF8.self).contains("prism: recording ") {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            early.append(chunk)
        }
        Thread.sleep(forTimeInterval: 3.5)
        say(input, "quit", thenWait: 0)
        let log = String(decoding: early, as: UTF8.self) + finish(process, errors)
        XCTAssertEqual(process.terminationStatus, 0, log)
        // In the order recorded: by name, a `-2` take (two segments begun within one second) sorts first.
        let names = log.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("prism: recording ") ? URL(fileURLWithPath: String(line.dropFirst(17))).lastPathComponent : nil
        }
        XCTAssertEqual(names.sorted(), takes().sorted(), log)
        XCTAssertGreaterThanOrEqual(names.count, 3, "\(names)\n\(log)")
        // The paced pattern is a live source: frames that arrive while the pipeline is behind (on a loaded box,
        // mostly while the first frame's shaders compile) are dropped before any take sees them, and counted.
        // The rollover itself loses none: every frame rendered is in a take, and every segment but the last
        // is one second of the 30 fps pattern less only what was dropped.
        let counts = try XCTUnwrap(log.firstMatch(of: /(\d+) frame\(s\) from the input, (\d+) dropped.*, (\d+) went to takes/), log)
        let rendered = Int(counts.1)! - Int(counts.2)!, dropped = Int(counts.2)!, toTakes = Int(counts.3)!
        let frames = try names.map { try MediaInspector.inspect(dir.path($0)).videoFrameCount }
        // Every frame rendered while a take was attached is in a take: none lost at a rollover. (The first
        // frame is rendered before `--start`'s take is attached after it; `quit` detaches the last take and
        // the frames rendered until the run stops go to none.)
        XCTAssertEqual(frames.reduce(0, +), toTakes, "frames lost between takes: \(names) \(frames)\n\(log)")
        XCTAssertLessThanOrEqual(toTakes, rendered - 1, log)
        XCTAssertGreaterThanOrEqual(toTakes, rendered - 4, "quit stops the run within a few frames\n\(log)")
        for (name, count) in zip(names, frames).dropLast() {
            XCTAssertLessThanOrEqual(count, 30, name)
            XCTAssertGreaterThanOrEqual(count, 30 - dropped, name)
        }
        // The next segment starts with the very next frame: the pattern's counter goes on from one to the next.
        guard dropped == 0 else { return }  // (a dropped frame at the seam would be the box's doing)
        let first = try MediaInspector.frameRGBA(dir.path(names[0]), index: 29)
        let second = try MediaInspector.frameRGBA(dir.path(names[1]), index: 0)
        let third = try MediaInspector.frameRGBA(dir.path(names[1]), index: 1)
        func distance(_ a: RGBAImage, _ b: RGBAImage) -> Int { zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } }
        XCTAssertLessThanOrEqual(distance(first, second), distance(second, third) * 2 + 1000,
                                 "the segments meet at consecutive frames")
    }

    func testSIGUSR1TogglesAndSIGINTFinishesTheTake() throws {
        let (process, _, errors) = try start([dir.url.path, "--size", "160x120", "--preset", "ultrafast"])
        Thread.sleep(forTimeInterval: 1)
        kill(process.processIdentifier, SIGUSR1)
        Thread.sleep(forTimeInterval: 0.8)
        kill(process.processIdentifier, SIGUSR1)
        Thread.sleep(forTimeInterval: 0.3)
        kill(process.processIdentifier, SIGUSR1)
        Thread.sleep(forTimeInterval: 0.8)
        kill(process.processIdentifier, SIGINT)
        let log = finish(process, errors)
        XCTAssertEqual(process.terminationStatus, 0, log)
        let names = takes()
        XCTAssertEqual(names.count, 2, "one take per toggle on; the second finished by Ctrl-C\n\(log)")
        for name in names { XCTAssertGreaterThan(try MediaInspector.inspect(dir.path(name)).videoFrameCount, 5, name) }
    }

    func testBadArgumentsAreOneLine() throws {
        for (arguments, words) in [([dir.path("missing")], ["missing", "no such directory"]),
                                   ([dir.url.path, "-"], ["camera or the pattern"]),
                                   ([dir.url.path, "--segment", "soon"], ["--segment", "soon"])] {
            let result = try Tools.run(Tools.prism, ["record"] + arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            for word in words { XCTAssert(result.stderr.contains(word), result.stderr) }
        }
    }

    /// Commands already read are carried out in order, the same way every time: the
    /// take started has frames and is written, the photo is taken, `quit` finishes both.
    func testCommandsReadAtOnceAreCarriedOutInOrderEveryTime() throws {
        for attempt in 0..<3 {
            let scratch = ScratchDirectory()
            let run = try Tools.run(Tools.prism, ["record", scratch.url.path, "--size", "160x120", "--preset", "ultrafast"],
                                    stdin: Data("start\nsnap\nquit\n".utf8), timeout: 60)
            XCTAssertEqual(run.status, 0, "attempt \(attempt): \(run.stderr)")
            XCTAssertFalse(run.stderr.contains("failed"), "attempt \(attempt): \(run.stderr)")
            let names = scratch.contents()
            let takes = names.filter { $0.hasPrefix("take-") && $0.hasSuffix(".mp4") }
            let photos = names.filter { $0.hasPrefix("photo-") && $0.hasSuffix(".jpg") }
            XCTAssertEqual(takes.count, 1, "attempt \(attempt): \(names)\n\(run.stderr)")
            XCTAssertEqual(photos.count, 1, "attempt \(attempt): \(names)\n\(run.stderr)")
            for take in takes {
                let report = try MediaInspector.inspect(scratch.path(take))
                XCTAssertGreaterThanOrEqual(report.videoFrameCount, 1, "attempt \(attempt): \(take)")
                XCTAssertEqual(report.size, Size(width: 160, height: 120))
            }
            for photo in photos { XCTAssertEqual(try ImageFile.read(path: scratch.path(photo)).size, Size(width: 160, height: 120)) }
            XCTAssertEqual(names.filter { $0.hasPrefix(".") }, [], "attempt \(attempt): no temporaries left")
        }
    }

    /// A huge line on stdin is skipped with a short message (never echoed whole, never
    /// held whole), and the commands after it still run.
    func testOverlongStdinLinesAreSkippedWithABoundedMessage() throws {
        var input = Data(repeating: UInt8(ascii: "A"), count: 20 << 20)
        input.append(contentsOf: Array("\n\u{1B}]0;title\u{07}sparkle\nquit\n".utf8))
        let run = try Tools.run(Tools.prism, ["record", dir.url.path, "--size", "160x120", "--preset", "ultrafast"], stdin: input,
                                timeout: 120)
        XCTAssertEqual(run.status, 0, String(run.stderr.prefix(2000)))
        XCTAssertLessThan(run.stderr.utf8.count, 4096, "stderr echoes the line: \(run.stderr.utf8.count) bytes")
        let skipped = run.stderrLines.filter { $0.contains("skipped") }
        XCTAssertEqual(skipped.count, 1, run.stderr)
        XCTAssertTrue(skipped.first?.contains("\(20 << 20) bytes") ?? false, run.stderr)
        XCTAssertTrue(run.stderr.contains("unknown command '\\x1b]0;title\\x07sparkle'"), run.stderr)
        XCTAssertFalse(run.stderr.contains("\u{1B}"), "escape sequences are shown escaped")
    }
}
