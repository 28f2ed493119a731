import Foundation
import XCTest

/// `prism --version`: Prism's version and the commit it was built from, then each library as loaded.
final class VersionTests: XCTestCase {
    func testVersionNamesTheBuildAndEveryLibrary() throws {
        let result = try Tools.run(Tools.prism, ["--version"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 7, "\(lines)")
        let head = try XCTUnwrap(lines.first?.wholeMatch(of: /prism (\d+\.\d+\.\d+) \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)/),
                                 "\(lines)")
        // The commit is the checkout's the tests were built from (the plugin reads it before each build).
        let git = try? Tools.run("/usr/bin/env", ["git", "-C", Tools.repositoryRoot.path, "rev-parse", "--short=12", "HEAD"])
        if let git, git.status == 0 {
            XCTAssertEqual(String(head.2.prefix(12)), String(decoding: git.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let expected: [Regex<Substring>] = [
            /FFmpeg \S+: libavcodec \d+\.\d+\.\d+, libavformat \d+\.\d+\.\d+, libavutil \d+\.\d+\.\d+/,
            /GL: .+; OpenGL ES \d\.\d.*; vendor .+/,
            /EGL \d\.\d \(.+, \w+ platform\)/,
            /OpenCV \d+\.\d+\.\d+.*/,
            /libmicrohttpd \d+\.\d+\.\d+/,
            /alsa-lib \d+\.\d+\.\d+/,
        ]
        for (line, pattern) in zip(lines.dropFirst(), expected) {
            XCTAssertNotNil(try pattern.wholeMatch(in: line), line)
        }
    }
}

/// Every release has its notes: the version `prism --version` names is a heading of CHANGELOG.md.
final class ReleaseNotesTests: XCTestCase {
    func testTheVersionHasAChangelogEntry() throws {
        let result = try Tools.run(Tools.prism, ["--version"])
        let first = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        let version = try XCTUnwrap(first.firstMatch(of: /prism (\d+\.\d+\.\d+)/)?.1, first)
        let notes = try String(contentsOf: Tools.repositoryRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        XCTAssertTrue(notes.split(separator: "\n").contains { $0 == "## \(version)" || $0.hasPrefix("## \(version) ") },
                      "CHANGELOG.md has no '## \(version)' heading")
    }
}
