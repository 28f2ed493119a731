import Foundation
import XCTest

/// `--audio` takes capture devices only. alsa-lib's file plugin writes what passes
/// through it to its `file` (or pipes it to a shell command): such a PCM is refused before it is set up,
/// so the file is untouched and no command runs. The emulated microphone the other tests use reads its
/// `infile` and writes to /dev/null, and stays allowed.
final class AudioDeviceSafetyTests: XCTestCase {
    let dir = ScratchDirectory()

    /// alsa-lib's own configuration, whatever an earlier test in this process set ALSA_CONFIG_PATH to (the
    /// `file:` PCM is defined there).
    static let standardALSA = ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf"]

    private func assertRefused(_ device: String, environment: [String: String] = standardALSA, mentioning words: [String],
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let output = dir.path("out.mp4")
        let result = try Tools.run(Tools.prism, ["run", "--frames", "10", "--size", "160x120", "--audio", device, "-o", output],
                                   environment: environment, timeout: 60)
        XCTAssertNotEqual(result.status, 0, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr, file: file, line: line)
        for word in words { XCTAssertTrue(result.stderr.contains(word), result.stderr, file: file, line: line) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "nothing written", file: file, line: line)
    }

    func testTheFilePluginIsRefusedAndItsFileKept() throws {
        let victim = dir.path("notes.txt")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        try assertRefused("file:\(victim)", mentioning: ["file plugin", "would overwrite \(victim)"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: victim)), Data("keep me".utf8))
    }

    func testAPipeThroughTheFilePluginRunsNothing() throws {
        let marker = dir.path("ran")
        try assertRefused("file:\"|touch \(marker)\"", mentioning: ["would run the command"])
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the shell command must not run")
    }

    func testAFilePluginInsideADefinedPCMIsFoundToo() throws {
        let victim = dir.path("victim.wav")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        let config = dir.path("asound.conf")
        try """
            pcm.innocent {
                type plug
                slave.pcm { type file slave.pcm { type null } file "\(victim)" format "raw" }
            }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        try assertRefused("innocent", environment: ["ALSA_CONFIG_PATH": config], mentioning: ["innocent", "would overwrite \(victim)"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: victim)), Data("keep me".utf8))
    }
}
