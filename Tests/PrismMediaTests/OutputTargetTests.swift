import Foundation
import PrismCore
@testable import PrismMedia
import XCTest

/// What an output path really names, decided before writing (issue 9: never replace what was not meant).
final class OutputTargetTests: XCTestCase {
    private var dir: TempDirectory!

    override func setUpWithError() throws { dir = try TempDirectory() }
    override func tearDown() { dir.cleanUp() }

    func testSymlinksAreFollowedToTheirEndEvenWhenItDoesNotExistYet() throws {
        let real = dir.path("real.mp4")
        try FileManager.default.createSymbolicLink(atPath: dir.path("b.mp4"), withDestinationPath: "real.mp4")
        try FileManager.default.createSymbolicLink(atPath: dir.path("a.mp4"), withDestinationPath: dir.path("b.mp4"))
        let dangling = try OutputTarget(path: dir.path("a.mp4"))
        XCTAssertEqual(dangling.path, real, "a chain ending nowhere yet resolves to where the file will be")
        XCTAssertFalse(dangling.isStream)
        try Data("x".utf8).write(to: URL(fileURLWithPath: real))
        XCTAssertEqual(try OutputTarget(path: dir.path("a.mp4")).path, real)
        XCTAssertEqual(try OutputTarget(path: real).path, real)
        let temporary = try OutputTarget(path: dir.path("a.mp4")).makeTemporaryPath()
        XCTAssertTrue(temporary.hasPrefix(dir.path(".real.mp4.\(getpid())-")), temporary)
        XCTAssertTrue(temporary.hasSuffix(".partial"))
    }

    func testWhatCannotBeAnOutputIsRefused() throws {
        try FileManager.default.createSymbolicLink(atPath: dir.path("loop1"), withDestinationPath: "loop2")
        try FileManager.default.createSymbolicLink(atPath: dir.path("loop2"), withDestinationPath: "loop1")
        assertPrismError(["loop1", "symbolic links"]) { _ = try OutputTarget(path: self.dir.path("loop1")) }
        assertPrismError(["is a directory"]) { _ = try OutputTarget(path: self.dir.url.path) }
        let device = try OutputTarget(path: "/dev/null")
        XCTAssertTrue(device.isStream, "written in place, never replaced")
        XCTAssertEqual(device.streamKind, "character device")
        XCTAssertEqual(mkfifo(dir.path("fifo"), 0o600), 0)
        let fifo = try OutputTarget(path: dir.path("fifo"))
        XCTAssertTrue(fifo.isStream)
        XCTAssertEqual(fifo.streamKind, "FIFO")
    }

    func testTheSameFileUnderAnyNameIsTheInput() throws {
        let input = dir.path("in.mp4")
        try Data("movie".utf8).write(to: URL(fileURLWithPath: input))
        try FileManager.default.linkItem(atPath: input, toPath: dir.path("hard.mp4"))
        for spelling in [input, dir.url.path + "/./in.mp4", dir.path("hard.mp4")] {
            assertPrismError(["is the input file"]) { try OutputTarget.checkNotInput(input, output: spelling) }
        }
        try Data("other".utf8).write(to: URL(fileURLWithPath: dir.path("out.mp4")))
        XCTAssertNoThrow(try OutputTarget.checkNotInput(input, output: dir.path("out.mp4")))
        XCTAssertNoThrow(try OutputTarget.checkNotInput(input, output: dir.path("new.mp4")), "an output that does not exist yet")
    }

    /// "." and ".." are folders like any other (Foundation's path functions trap on them bare: `--faces-out .`
    /// crashed the run's output check).
    func testDotAndDotDotAreTheFoldersTheyName() {
        let here = FileManager.default.currentDirectoryPath
        XCTAssertTrue(OutputTarget.sameFile(".", here))
        XCTAssertTrue(OutputTarget.sameFile("..", (here as NSString).deletingLastPathComponent))
        XCTAssertFalse(OutputTarget.sameFile(".", dir.path("new.mp4")))
    }

    func testOnlyTheTemporariesOfDeadProcessesAreRemoved() throws {
        // A process that has exited: its pid names no process (until reused, which a test cannot rule out
        // but which would only keep the file).
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let dead = ".take.mp4.\(finished.processIdentifier)-42.partial"
        let live = ".take.mp4.\(getpid())-43.partial"
        let other = ".other.mp4.\(finished.processIdentifier)-44.partial"
        let odd = ".take.mp4.notapid.partial"
        for name in [dead, live, other, odd] { try Data().write(to: URL(fileURLWithPath: dir.path(name))) }
        let removed = try OutputTarget(path: dir.path("take.mp4")).removeStaleTemporaries().removed
        XCTAssertEqual(removed, [dead])
        XCTAssertEqual(Set(dir.contents()), [live, other, odd])
    }

    /// A killed run's recording is recovered under a name nothing has: `NAME.recovered-PID.EXT` when free,
    /// else `-2`, `-3`… (PIDs repeat). Before, an existing `recovered-PID` name got the recording deleted.
    func testARecoveredRecordingNeverReplacesNorIsDeleted() throws {
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let pid = finished.processIdentifier
        let movie = dir.path("movie.mp4")
        try runFFmpeg(["-f", "lavfi", "-i", "testsrc2=s=64x48:r=10:d=1", "-c:v", "libx264", "-movflags", "+frag_keyframe+empty_moov",
                       "-f", "mp4", movie])
        let recording = try Data(contentsOf: URL(fileURLWithPath: movie))
        let earlier = Data("an earlier recovery of another run with the same pid".utf8)
        try earlier.write(to: URL(fileURLWithPath: dir.path("take.recovered-\(pid).mp4")))
        for random in [1, 2] {
            try recording.write(to: URL(fileURLWithPath: dir.path(".take.mp4.\(pid)-\(random).partial")))
        }
        let result = try OutputTarget(path: dir.path("take.mp4")).removeStaleTemporaries()
        XCTAssertEqual(result.removed, [])
        XCTAssertEqual(Set(result.recovered.map { ($0.path as NSString).lastPathComponent }),
                       ["take.recovered-\(pid)-2.mp4", "take.recovered-\(pid)-3.mp4"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.path("take.recovered-\(pid).mp4"))), earlier)
        for name in ["take.recovered-\(pid)-2.mp4", "take.recovered-\(pid)-3.mp4"] {
            XCTAssertEqual(try MediaInspector.inspect(dir.path(name)).videoFrameCount, 10, name)
        }
        XCTAssertEqual(dir.contents().filter { $0.hasSuffix(".partial") }, [])
    }
}
