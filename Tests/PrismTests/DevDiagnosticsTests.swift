import Foundation
import PrismCore
import PrismFilters
import XCTest
@testable import Prism

/// Structured errors: a reload failure reaches the dev page's `/state` with the file, line and
/// column the error carries (`PrismError.diagnostics`), not what a pattern could read back out of its text,
/// so a shader in a folder whose name has a space, a colon or a comma is still pointed at exactly.
final class DevDiagnosticsTests: XCTestCase {
    private func error(_ state: [String: Any]) -> [String: Any]? { state["error"] as? [String: Any] }

    /// A compile error (the driver's log, mapped to the author's line and column) and a `.cube` parse
    /// error (its line), each in a folder named `My Shaders, v2`.
    func testCompileAndParseErrorsReachThePageWithTheirPlace() throws {
        let directory = try TemporaryDirectory()
        // Standardised: the loader names files as they are on disk (no `//`).
        let folder = URL(fileURLWithPath: directory.file("My Shaders, v2")).standardizedFileURL.path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let shader = folder + "/tint.fs"
        try DevTests.isfShader.write(toFile: shader, atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [shader, "--size", "160x90"])
        defer { dev.stop() }
        let first = try dev.waitForState("the first frames or an error") { ($0["frames"] as? Int ?? 0) > 2 || error($0) != nil }
        XCTAssertNil(error(first), "the shader should load")

        let temporary = folder + "/.tint.fs.swp"
        try DevTests.brokenISF.write(toFile: temporary, atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(temporary, shader), 0)
        let failed = try dev.waitForState("the compile error") { error($0) != nil }
        let diagnostic = try XCTUnwrap(error(failed))
        XCTAssertEqual(diagnostic["file"] as? String, shader, "\(diagnostic)")
        XCTAssertEqual(diagnostic["line"] as? Int, 5, "\(diagnostic)")
        // The column is the driver's, when it gives one (Mesa does); a number or null, never text.
        XCTAssertTrue(diagnostic["column"] is Int || diagnostic["column"] is NSNull, "\(diagnostic)")
        XCTAssertFalse((diagnostic["message"] as? String ?? "").contains(shader), "the message is the message alone: \(diagnostic)")
        XCTAssertTrue((diagnostic["text"] as? String ?? "").hasPrefix("\(shader):5"), "\(diagnostic)")
    }

    func testALookFileParseErrorReachesThePageWithItsLine() throws {
        let directory = try TemporaryDirectory()
        let folder = URL(fileURLWithPath: directory.file("grades: day 2")).standardizedFileURL.path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let look = folder + "/look.cube"
        try DevTests.invertCube.write(toFile: look, atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [look, "--size", "160x90"])
        defer { dev.stop() }
        _ = try dev.waitForState("the first frames") { ($0["frames"] as? Int ?? 0) > 2 }
        let temporary = folder + "/.look.cube.swp"
        try DevTests.brokenCube.write(toFile: temporary, atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(temporary, look), 0)
        let failed = try dev.waitForState("the parse error") { error($0) != nil }
        let diagnostic = try XCTUnwrap(error(failed))
        XCTAssertEqual(diagnostic["file"] as? String, look, "\(diagnostic)")
        XCTAssertEqual(diagnostic["line"] as? Int, 3, "\(diagnostic)")
    }

    /// The page takes the place from the error's diagnostics, whatever its one-line text says; an error
    /// without any is its text against the shader.
    func testThePlaceComesFromTheDiagnosticsNotTheText() throws {
        struct Located: PrismError {
            var description: String { "no place in this text:99:1: at all" }
            var diagnostics: [Diagnostic] {
                [Diagnostic(file: "/a/b c/look.fs", line: 7, column: 3, severity: .warning, message: "unused x"),
                 Diagnostic(file: "/a/b c/look.fs", line: 12, column: 5, message: "'y' undeclared"),
                 Diagnostic(file: "/a/b c/inc.glsl", line: 2, message: "bad include")]
            }
        }
        let diagnostic = DevDiagnostic.from(Located(), fallbackFile: "/shader.fs")
        XCTAssertEqual(diagnostic, DevDiagnostic(file: "/a/b c/look.fs", line: 12, column: 5, message: "'y' undeclared (and 1 more error)"))
        XCTAssertEqual(DevDiagnostic.from(InvalidRequest("a.fs:3: looks like a place"), fallbackFile: "/shader.fs"),
                       DevDiagnostic(file: "/shader.fs", line: nil, column: nil, message: "a.fs:3: looks like a place"))
        // Through the binder: a `.cube` error wrapped in the graph's error keeps its place.
        let directory = try TemporaryDirectory()
        let look = directory.file("x, y.cube")
        try DevTests.brokenCube.write(toFile: look, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try PrismGraphs.binder().bind("\"\(look)\"")) { error in
            XCTAssertEqual(error.prismDiagnostics.first?.file, look)
            XCTAssertEqual(error.prismDiagnostics.first?.line, 3)
        }
        // The page's JSON.
        let state = DevState()
        state.update { $0.error = diagnostic }
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(state.json().utf8)) as? [String: Any])
        let error = try XCTUnwrap(json["error"] as? [String: Any])
        XCTAssertEqual(error["file"] as? String, "/a/b c/look.fs")
        XCTAssertEqual(error["line"] as? Int, 12)
        XCTAssertEqual(error["column"] as? Int, 5)
        XCTAssertTrue(json["camera"] is NSNull, "absent values are null, not missing")
    }
}
