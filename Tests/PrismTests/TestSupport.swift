import Foundation
import XCTest
import PrismCore
import TestFixtures

/// A scratch directory removed at the end of the test.
final class ScratchDirectory {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("prism-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func contents() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() }
    /// Writes `lines` as a JSON Lines file (a manifest, a results file) named `name`; returns its path.
    func writeLines(_ lines: [String], name: String = "jobs.jsonl") throws -> String {
        let path = path(name)
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

extension XCTestCase {
    /// The objects of a JSON Lines file (a batch's results file), lines that are not one skipped.
    func results(_ path: String) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}

/// The result of running a program.
struct ProcessResult {
    var status: Int32
    var stdout: Data
    var stderr: String
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

enum Tools {
    /// The built `prism` next to the test bundle (swift build puts both in .build/<config>), or
    /// `PRISM_TEST_BINARY` (to run the end-to-end tests against another build, e.g. the code before a fix).
    static var prism: String {
        if let other = ProcessInfo.processInfo.environment["PRISM_TEST_BINARY"], !other.isEmpty { return other }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return bundle.appendingPathComponent("prism").path
    }

    /// Starts prism, lets it run for `seconds`, sends Ctrl-C and waits (at most 30 s) for it to end.
    /// Returns its exit status; fails the test if it does not stop.
    static func interrupt(_ arguments: [String], environment: [String: String] = [:], after seconds: Double = 2,
                          file: StaticString = #filePath, line: UInt = #line) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: prism)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: seconds)
        kill(process.processIdentifier, SIGINT)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(process.isRunning, "prism did not stop after SIGINT", file: file, line: line)
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// A test photograph (see `TestFixtures`).
    static func fixture(_ name: String) throws -> String { try TestFixtures.path(name) }

    static func which(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs a program to completion, feeding `stdin` and collecting both outputs. `environment` is added
    /// to this process's own.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
                    timeout: TimeInterval = 120) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        let writer = Thread {
            if let stdin {
                try? input.fileHandleForWriting.write(contentsOf: stdin)
                try? input.fileHandleForWriting.close()
            }
        }
        writer.start()
        // Drain both pipes concurrently so a chatty child cannot block.
        // Written by the reader before `errDone.signal()`, read after `errDone.wait()` (polling
        // `Thread.isFinished` ordered nothing: ThreadSanitizer reported the race).
        final class Box: @unchecked Sendable { var data = Data() }
        let errBox = Box()
        let errDone = DispatchSemaphore(value: 0)
        let errReader = Thread {
            errBox.data = err.fileHandleForReading.readDataToEndOfFile()
            errDone.signal()
        }
        errReader.start()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            XCTFail("\(executable) \(arguments.joined(separator: " ")) timed out")
        }
        process.waitUntilExit()
        errDone.wait()
        return ProcessResult(status: process.terminationStatus, stdout: output,
                             stderr: String(decoding: errBox.data, as: UTF8.self))
    }

    static func ffmpeg(_ arguments: [String]) throws {
        guard let ffmpeg = which("ffmpeg") else { throw InvalidRequest("these tests need ffmpeg on PATH to make inputs (.ci/run installs it)") }
        let result = try run(ffmpeg, ["-hide_banner", "-loglevel", "error", "-y"] + arguments)
        guard result.status == 0 else { throw InvalidRequest("ffmpeg failed: \(result.stderr)") }
    }
}
