import Foundation
import TestFixtures
import XCTest

/// `prism models`: the folders it searches, in order, and each installed model with what its folder's
/// `models.tsv` says of it (source, licence, sha256), and where the defaults come from.
final class ModelsCommandTests: XCTestCase {
    let dir = ScratchDirectory()

    /// A folder of our own in `$PRISM_MODELS` (searched first, so its u2netp.onnx hides the checkout's), with an
    /// index for one file and none for the other; HOME empty so its folder is absent.
    func testListsTheInstalledModelsWithTheirIndex() throws {
        let folder = dir.path("models")
        let home = dir.path("home")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 3 * 1_048_576 / 2).write(to: URL(fileURLWithPath: folder + "/u2netp.onnx"))
        try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: folder + "/mine.onnx"))
        try Data("not a model".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        let sha = String(repeating: "ab", count: 32)
        try ("file\twheel\twheel_sha256\tlicence\tsource\tdescription\tsha256\tbytes\n"
             + "u2netp.onnx\tsome-wheel==1.2.3\t00\tMIT\thttps://example.org/wheel\tA segmenter\t\(sha)\t1572864\n")
            .write(toFile: folder + "/models.tsv", atomically: true, encoding: .utf8)
        let result = try Tools.run(Tools.prism, ["models"], environment: ["PRISM_MODELS": folder, "HOME": home])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = String(decoding: result.stdout, as: UTF8.self)
        let lines = text.split(separator: "\n").map(String.init)
        // The folders in the order searched, with how many models each holds.
        let ours = try XCTUnwrap(lines.firstIndex { $0 == "  \(folder) (2 models)" }, text)
        let homeLine = try XCTUnwrap(lines.firstIndex { $0 == "  \(home)/.local/share/prism/models (absent)" }, text)
        XCTAssertLessThan(ours, homeLine)
        // Ours, with its index's row; the file without a row says so; a file that is not .onnx is not listed.
        XCTAssertTrue(lines.contains("u2netp.onnx  1.5 MiB  MIT  some-wheel==1.2.3 (https://example.org/wheel)"), text)
        XCTAssertTrue(lines.contains("    A segmenter"), text)
        XCTAssertTrue(lines.contains("    sha256 \(sha)"), text)
        XCTAssertTrue(lines.contains("    \(folder)/u2netp.onnx"), text)
        XCTAssertTrue(lines.contains { $0.hasPrefix("    default for background-blur") }, text)
        XCTAssertTrue(lines.contains("mine.onnx  0.0 MiB  licence not recorded  source not recorded (no models.tsv entry)"), text)
        XCTAssertTrue(lines.contains("    no filter's default: run it with model(file=\(folder)/mine.onnx)"), text)
        XCTAssertFalse(text.contains("notes.txt"), text)
        // The same name in a later folder is hidden by ours: u2netp.onnx is listed once.
        XCTAssertEqual(lines.filter { $0.hasPrefix("u2netp.onnx ") }.count, 1, text)
        XCTAssertTrue(lines.contains("  u2netp.onnx (installed): background-blur, background-replace and segment-mask when no --segment-model or model= names one"), text)
    }

    /// With no models anywhere it says how to install the defaults; an argument is refused in one line.
    func testSaysWhereTheDefaultsComeFromAndRefusesArguments() throws {
        let empty = dir.path("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let listed = try Tools.run(Tools.prism, ["models"], environment: ["PRISM_MODELS": empty, "HOME": empty])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let text = String(decoding: listed.stdout, as: UTF8.self)
        XCTAssertTrue(text.contains("u2netp.onnx ("), text)
        if ModelsCommandTests.checkoutHasModels {
            XCTAssertTrue(text.contains("u2netp.onnx (installed)"), text)
        } else {
            XCTAssertTrue(text.contains("u2netp.onnx (not installed: scripts/install-models)"), text)
        }
        let refused = try Tools.run(Tools.prism, ["models", "extra"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertEqual(refused.stderrLines.count, 1, refused.stderr)
    }

    static var checkoutHasModels: Bool {
        FileManager.default.fileExists(atPath: Tools.repositoryRoot.appendingPathComponent(".models/u2netp.onnx").path)
    }
}
