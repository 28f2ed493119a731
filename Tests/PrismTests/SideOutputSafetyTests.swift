import Foundation
import XCTest
import PrismCore
import PrismMedia

/// A side output (`--faces-out`) gets the checks `-o` has, before any work: it never
/// replaces the input or another output, a folder is refused at once, and a FIFO stays a FIFO.
final class SideOutputSafetyTests: XCTestCase {
    let dir = ScratchDirectory()

    private func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    private func makeMovie(_ path: String) throws {
        let made = try Tools.run(Tools.prism, ["run", "--frames", "3", "--size", "64x48", "--preset", "ultrafast", "-o", path, "--quiet"])
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    private func assertRefused(_ arguments: [String], mentioning words: String, keeps path: String,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let original = try bytes(path)
        let result = try Tools.run(Tools.prism, arguments)
        XCTAssertEqual(result.status, 2, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr, file: file, line: line)
        XCTAssertTrue(result.stderr.contains(words), result.stderr, file: file, line: line)
        XCTAssertEqual(try bytes(path), original, "\(path) must be untouched", file: file, line: line)
    }

    func testFacesOutNeverReplacesTheInput() throws {
        let input = dir.path("src.mp4")
        try makeMovie(input)
        try FileManager.default.createSymbolicLink(atPath: dir.path("alias.mp4"), withDestinationPath: input)
        for spelling in [input, dir.url.path + "/./src.mp4", dir.path("alias.mp4")] {
            try assertRefused(["run", input, "-o", dir.path("out.mp4"), "--faces-out", spelling],
                              mentioning: "is the input", keeps: input)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("out.mp4")), "nothing was encoded")
        // render too.
        let image = dir.path("x.png")
        try makeStill(image)
        try assertRefused(["render", image, "-o", dir.path("y.png"), "--faces-out", image], mentioning: "is the input", keeps: image)
        // The sidecar read with --faces-in is an input as well.
        let sidecar = dir.path("faces.jsonl")
        try Data("{}\n".utf8).write(to: URL(fileURLWithPath: sidecar))
        try assertRefused(["run", input, "-o", dir.path("out.mp4"), "--faces-in", sidecar, "--faces-out", dir.url.path + "/./faces.jsonl"],
                          mentioning: "is the input", keeps: sidecar)
    }

    private func makeStill(_ path: String) throws {
        let made = try Tools.run(Tools.prism, ["run", "--frames", "1", "--size", "64x48", "-o", path, "--quiet"])
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    func testFacesOutIsNotTheMainOutput() throws {
        let input = dir.path("src.mp4"), output = dir.path("out.mp4")
        try makeMovie(input)
        try Data("an earlier result".utf8).write(to: URL(fileURLWithPath: output))
        try assertRefused(["run", input, "-o", output, "--faces-out", output], mentioning: "also the -o output", keeps: output)
        // An output that does not exist yet, spelt two ways.
        let result = try Tools.run(Tools.prism, ["run", input, "-o", dir.path("new.mp4"), "--faces-out", dir.url.path + "/../"
                                                 + dir.url.lastPathComponent + "/new.mp4"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("also the -o output"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("new.mp4")))
    }

    func testAFolderAsFacesOutIsRefusedBeforeAnyWork() throws {
        let input = dir.path("src.mp4"), output = dir.path("out.mp4")
        try makeMovie(input)
        try FileManager.default.createDirectory(atPath: dir.path("faces"), withIntermediateDirectories: false)
        let result = try Tools.run(Tools.prism, ["run", input, "-o", output, "--faces-out", dir.path("faces")])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("--faces-out") && result.stderr.contains("directory"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "refused before encoding")
        XCTAssertEqual(dir.contents().filter { $0.hasSuffix(".partial") }, [])
    }

    func testAFIFOAsFacesOutIsWrittenInPlace() throws {
        let input = dir.path("src.mp4")
        try makeMovie(input)
        let fifo = dir.path("faces.fifo"), copy = dir.path("copy.jsonl")
        XCTAssertEqual(mkfifo(fifo, 0o644), 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "timeout 60 cat \"$0\" > \"$1\"", fifo, copy]
        try reader.run()
        Thread.sleep(forTimeInterval: 0.3)  // the reader opens its end first
        let result = try Tools.run(Tools.prism, ["run", input, "-o", dir.path("out.mp4"), "--faces-out", fifo, "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        reader.waitUntilExit()
        var info = stat()
        XCTAssertEqual(lstat(fifo, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO, "the FIFO stays a FIFO")
        let lines = String(decoding: try bytes(copy), as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.count, 3, "one line per frame went through the FIFO")
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("{") })
    }
}
