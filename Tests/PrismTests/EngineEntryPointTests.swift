import Foundation
import PrismCore
import PrismMedia
import XCTest
@testable import Prism
@testable import PrismKit

/// Every front end builds its engine through one `Session` entry point: `run`, `render`, `record`, `batch`
/// and `dev`, each run in this process, add to `Session.enginesMade` once per engine they run.
final class EngineEntryPointTests: XCTestCase {
    let dir = ScratchDirectory()

    private func enginesMade(_ body: () throws -> Void) rethrows -> Int {
        let before = Session.enginesMade.load(ordering: .relaxed)
        try body()
        return Session.enginesMade.load(ordering: .relaxed) - before
    }

    /// The commands run here install the tool's signal handling in this process (Ctrl-C and the others
    /// ignored, delivered to dispatch sources, and left so when a command ends, as the tool is then exiting).
    /// What the test process had is put back after: an ignored signal is inherited across exec, so every
    /// program a later test starts would ignore its Ctrl-C.
    override func invokeTest() {
        let numbers = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2]
        var saved = Array(repeating: sigaction(), count: numbers.count)
        for (index, number) in numbers.enumerated() { sigaction(number, nil, &saved[index]) }
        defer { for (index, number) in numbers.enumerated() { sigaction(number, &saved[index], nil) } }
        super.invokeTest()
    }

    func testEveryCommandBuildsItsEngineThroughTheSession() throws {
        let small = ["--size", "64x48"]
        XCTAssertEqual(try enginesMade {
            _ = try RunCommand(arguments: ["--frames", "3", "--codec", "ffv1", "-o", dir.path("run.mkv"), "--quiet"] + small).execute()
        }, 1, "run")

        let image = dir.path("in.png")
        try ImageFile.write(RGBAImage(size: Size(width: 32, height: 24), pixels: [UInt8](repeating: 200, count: 32 * 24 * 4)), to: image)
        XCTAssertEqual(try enginesMade {
            _ = try RenderCommand(arguments: [image, "--filter", "invert", "-o", dir.path("out.png")]).execute()
        }, 1, "render")

        let manifest = dir.path("jobs.jsonl")
        try """
            {"input": "pattern", "output": "a.mkv", "frames": 3, "size": "64x48", "codec": "ffv1"}
            {"input": "pattern", "output": "b.mkv", "frames": 3, "size": "64x48", "codec": "ffv1"}
            """.write(toFile: manifest, atomically: true, encoding: .utf8)
        XCTAssertEqual(try enginesMade {
            _ = try BatchCommand(arguments: [manifest, "--workers", "1", "--quiet"]).execute()
        }, 2, "batch: one engine per job")

        let cube = dir.path("invert.cube")
        try DevTests.invertCube.write(toFile: cube, atomically: true, encoding: .utf8)
        XCTAssertEqual(try enginesMade {
            _ = try DevSession(options: try DevCommand(arguments: [cube] + small).options)
        }, 1, "dev")

        // `record` reads its commands on stdin: it gets `quit`, which it carries out at its first frame.
        let takes = dir.path("takes")
        try FileManager.default.createDirectory(atPath: takes, withIntermediateDirectories: true)
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let savedInput = dup(STDIN_FILENO)
        dup2(ends[0], STDIN_FILENO)
        close(ends[0])
        _ = "quit\n".withCString { write(ends[1], $0, 5) }
        close(ends[1])
        defer {
            dup2(savedInput, STDIN_FILENO)
            close(savedInput)
        }
        XCTAssertEqual(try enginesMade {
            _ = try RecordCommand(arguments: [takes, "--quiet"] + small).execute()
        }, 1, "record")
    }
}
