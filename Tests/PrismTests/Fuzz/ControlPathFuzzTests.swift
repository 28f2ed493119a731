import Foundation
import XCTest
import PrismCore
import PrismMedia
#if canImport(Glibc)
import Glibc
#endif

/// Control commands that reach the file system, under a seeded fuzzer on the built tool: `snapshot` paths
/// that name existing files, links, folders and FIFOs, and fresh paths where a link, a file, a folder or a
/// FIFO is made between the reply and the next frame (when the still is written); `record` takes under whose
/// names one is made while they record. Whatever happens, no
/// file the run did not make is written or replaced, a FIFO never blocks the run, every reply is one JSON
/// line, and the run ends cleanly. Deterministic (`PRISM_FUZZ_SEED`), bounded (`PRISM_FUZZ_SECONDS`).
final class ControlPathFuzzTests: XCTestCase {
    let dir = ScratchDirectory()

    /// What is at a snapshot's path when the command arrives, or what appears there after the reply.
    enum Hazard: CaseIterable {
        case none, file, link, danglingLink, folder, fifo
    }

    /// Places `hazard` at `path`; false when something is there already (the still was written first).
    static func place(_ hazard: Hazard, at path: String, victim: String, nowhere: String) -> Bool {
        switch hazard {
        case .none: return true
        case .file:
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            guard fd >= 0 else { return false }
            let text = Array("not a picture".utf8)
            defer { close(fd) }
            return write(fd, text, text.count) == text.count
        case .link: return symlink(victim, path) == 0
        case .danglingLink: return symlink(nowhere, path) == 0
        case .folder: return mkdir(path, 0o755) == 0
        case .fifo: return mkfifo(path, 0o644) == 0
        }
    }

    /// Whether `path` is still exactly what `place` made.
    static func isIntact(_ hazard: Hazard, at path: String, victim: String, nowhere: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        switch hazard {
        case .none: return true
        case .file: return info.st_mode & S_IFMT == S_IFREG && FileManager.default.contents(atPath: path) == Data("not a picture".utf8)
        case .link: return (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == victim
        case .danglingLink: return (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == nowhere
        case .folder: return info.st_mode & S_IFMT == S_IFDIR && (try? FileManager.default.contentsOfDirectory(atPath: path)) == []
        case .fifo: return info.st_mode & S_IFMT == S_IFIFO
        }
    }

    /// The first line after the first `count` that starts with `prefix`, without it.
    static func line(in lines: LineCollector, after count: Int, starting prefix: String) throws -> String {
        let deadline = Date(timeIntervalSinceNow: 30)
        while Date() < deadline {
            if let found = lines.all.dropFirst(count).first(where: { $0.hasPrefix(prefix) }) { return String(found.dropFirst(prefix.count)) }
            usleep(20_000)
        }
        throw DevProcessError(message: "no '\(prefix)' line: \(lines.all)")
    }

    func testFuzzSnapshotPathsAgainstTheFileSystem() throws {
        try fuzz(mode: ["run", "pattern", "--size", "64x48", "--realtime", "--fps", "4", "--frames", "1000000", "--preset", "ultrafast",
                        "-o", dir.path("out.mp4"), "--control", "stdin", "--quiet"], still: "png")
    }

    /// `prism record`'s photos (JSON commands on its stdin): the same promise, through its take controller.
    func testFuzzRecordPhotoPathsAgainstTheFileSystem() throws {
        let takes = dir.path("takes")
        try FileManager.default.createDirectory(atPath: takes, withIntermediateDirectories: true)
        try fuzz(mode: ["record", takes, "--size", "64x48", "--fps", "4", "--preset", "ultrafast", "--quiet"], still: "jpg")
    }

    private func fuzz(mode: [String], still: String) throws {
        var random = Fuzzer.Generator(state: Fuzzer(corpus: [], dictionary: []).seed)
        let budget = Fuzzer(corpus: [], dictionary: []).seconds
        let victim = dir.path("victim.\(still)"), nowhere = dir.path("nowhere.\(still)")
        let victimBytes = Data("the user's own picture".utf8)
        try victimBytes.write(to: URL(fileURLWithPath: victim))

        // A run that ended early (a snapshot that failed it) must fail the test, not kill it with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = mode
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let lines = LineCollector(output.fileHandleForReading), log = LineCollector(errors.fileHandleForReading)

        // One command, its one-line JSON reply.
        var replied = 0
        func send(_ command: String) throws -> [String: Any] {
            try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
            replied += 1
            try lines.wait(for: replied)
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines.all[replied - 1].utf8)) as? [String: Any],
                                 lines.all[replied - 1])
        }
        // (path, hazard there at the command, hazard made after the reply and whether it was made, reply ok)
        var cases: [(path: String, before: Hazard, after: Hazard, made: Bool, ok: Bool)] = []
        let start = Date()
        var index = 0
        while cases.count < 12 || Date().timeIntervalSince(start) < budget {
            if cases.count >= 40 { break }
            let path = dir.path("snap\(index).\(still)")
            index += 1
            let before = Hazard.allCases.randomElement(using: &random)!
            let after = before == .none ? Hazard.allCases.randomElement(using: &random)! : .none
            XCTAssertTrue(Self.place(before, at: path, victim: victim, nowhere: nowhere))
            let reply = try send("{\"snapshot\": \"\(path)\"}")
            let ok = reply["ok"] as? Bool == true
            // Between the reply and the next frame, when the still is written.
            let made = ok && Self.place(after, at: path, victim: victim, nowhere: nowhere)
            cases.append((path, before, after, made, ok))
            XCTAssertEqual(ok, before == .none, "\(path) with \(before) there: \(reply)")
        }
        // Beyond the run's folder: a missing folder, a file as a folder.
        for path in [dir.path("missing/x.\(still)"), victim + "/x.\(still)"] {
            XCTAssertEqual(try send("{\"snapshot\": \"\(path)\"}")["ok"] as? Bool, false, path)
            cases.append((path, .none, .none, false, false))
        }
        // `prism record`'s takes: a hazard made under the take's name while it records.
        var takes: [(asked: String, hazard: Hazard, made: Bool, saved: String)] = []
        for _ in 0..<(mode[0] == "record" ? 3 : 0) {
            let said = log.all.count
            XCTAssertEqual(try send(#"{"record": "start"}"#)["ok"] as? Bool, true)
            let asked = try Self.line(in: log, after: said, starting: "prism: recording ")
            let hazard = Hazard.allCases.randomElement(using: &random)!
            let made = Self.place(hazard, at: asked, victim: victim, nowhere: nowhere)
            Thread.sleep(forTimeInterval: 0.3)
            XCTAssertEqual(try send(#"{"record": "stop"}"#)["ok"] as? Bool, true)
            let finished = try Self.line(in: log, after: said, starting: "prism: finished ")
            takes.append((asked, hazard, made, String(finished.prefix { $0 != " " })))
        }
        Thread.sleep(forTimeInterval: 1)  // the last stills' frames
        try input.fileHandleForWriting.write(contentsOf: Data("{\"quit\": true}\n".utf8))
        let deadline = Date(timeIntervalSinceNow: 60)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        guard !process.isRunning else { return XCTFail("the run did not end (a FIFO blocked it?)") }
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, log.all.joined(separator: "\n"))

        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: victim)), victimBytes, "the victim was written through a link")
        XCTAssertFalse(FileManager.default.fileExists(atPath: nowhere), "a dangling link's target was created")
        var interfered = 0
        for (path, before, after, made, ok) in cases where ok || before != .none {
            if before != .none {
                XCTAssertTrue(Self.isIntact(before, at: path, victim: victim, nowhere: nowhere), "\(path): \(before) was touched")
            } else if made && after != .none {
                interfered += 1
                XCTAssertTrue(Self.isIntact(after, at: path, victim: victim, nowhere: nowhere), "\(path): \(after), made after the reply, was touched")
            } else {
                XCTAssertEqual(try ImageFile.read(path: path).size.width, 64, path)
            }
        }
        for (asked, hazard, made, saved) in takes {
            XCTAssertGreaterThan(try MediaInspector.inspect(saved).videoFrameCount, 0, saved)
            if made && hazard != .none {
                XCTAssertNotEqual(saved, asked, "a take was saved over the \(hazard) made under its name")
                XCTAssertTrue(Self.isIntact(hazard, at: asked, victim: victim, nowhere: nowhere), "\(asked): \(hazard) was touched")
            }
        }
        // Each still that found its name taken said so, and the run went on.
        let refused = log.all.filter { $0.contains("not written") }
        XCTAssertEqual(refused.count, interfered, log.all.joined(separator: "\n"))
        XCTAssertEqual(dir.contents().filter { $0.hasSuffix(".partial") }, [])
        print("fuzz control paths (\(mode[0])): \(cases.count) snapshots, \(interfered) raced")
    }
}
