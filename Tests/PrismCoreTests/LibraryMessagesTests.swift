import Foundation
import PrismCore
import XCTest

/// The libraries name a run's settings by `Setting`, never by a command-line flag: the front end (the
/// command line, the C library, a Swift program) chooses how they are spelt.
final class LibraryMessagesTests: XCTestCase {
    /// The folders of the front ends, which spell flags themselves; everything else under `Sources/` is library.
    private static let frontEnds = ["Prism/", "prism/", "FaceBench/"]

    /// Each line of the library's Swift sources (comments left out unless asked for), with where it is.
    private func libraryLines(withComments: Bool = false) throws -> [(place: String, code: String)] {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        var lines: [(String, String)] = []
        var files = 0
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)! {
            let relative = String(file.path.dropFirst(sources.path.count + 1))
            guard file.pathExtension == "swift", !Self.frontEnds.contains(where: relative.hasPrefix),
                  let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            files += 1
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") && !withComments { continue }
                lines.append(("Sources/\(relative):\(number + 1)", code))
            }
        }
        XCTAssertGreaterThan(files, 100, "did not find the sources under \(sources.path)")
        return lines
    }

    /// No string literal in a library names a `--flag`, or the short `-o`.
    func testNoLibraryStringNamesAFlag() throws {
        let flag = try NSRegularExpression(pattern: #""[^"]*(--[a-z][a-z-]*|[ (]-o [-A-Za-z])"#)
        let offenders = try libraryLines().filter { line in
            flag.firstMatch(in: line.code, range: NSRange(line.code.startIndex..., in: line.code)) != nil
        }
        XCTAssertEqual(offenders.map { "\($0.place): \($0.code)" }, [], "flag names in library strings")
    }

    /// The command line's `UsageError` (a mistake in its flags) is its own: a library's mistake in a request
    /// is an `InvalidRequest`, which each front end reports in its own way.
    func testNoLibraryMentionsUsageError() throws {
        let offenders = try libraryLines(withComments: true).filter { $0.code.contains("UsageError") }
        XCTAssertEqual(offenders.map { "\($0.place): \($0.code)" }, [], "UsageError in the libraries")
    }

    /// Without a front end's spelling a message names the setting as `Session.Options` does; with one, as it says.
    func testMessagesSpellSettingsAsTheFrontEndChose() {
        defer { Setting.spell([:]) }
        Setting.spell([:])
        XCTAssertThrowsError(try ColorOverride(parsing: "=")) {
            XCTAssertEqual("\($0)", "inputColor: '=' names no field (matrix=, primaries=, transfer=, range=, peak=)")
        }
        Setting.spell([.inputColor: "input_color"])
        XCTAssertThrowsError(try ColorOverride(parsing: "peak=5")) {
            XCTAssertEqual("\($0)", "input_color: peak=5 is not a peak in cd/m² (100 to 10000)")
        }
        XCTAssertEqual("\(Setting.codec)", "encoder.codec", "a setting the front end did not spell: its property")
    }
}
