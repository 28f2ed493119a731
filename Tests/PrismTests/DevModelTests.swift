import Foundation
import PrismMedia
import XCTest

/// `prism dev NET.onnx`: a model is the edited file; replacing it reloads the graph, a broken file is reported
/// while the last good model keeps running.
final class DevModelTests: XCTestCase {
    /// The state's error object (JSON null: none).
    private func error(_ state: [String: Any]) -> [String: Any]? { state["error"] as? [String: Any] }

    /// Pixels whose red, green and blue differ (a one-channel model shows grey).
    private func coloured(_ image: RGBAImage) -> Int {
        var count = 0
        for y in stride(from: 0, to: image.size.height, by: 2) {
            for x in stride(from: 0, to: image.size.width, by: 2) {
                let p = image.pixel(x: x, y: y)
                if p.r != p.g || p.g != p.b { count += 1 }
            }
        }
        return count
    }

    /// Replaces `name` with `bytes` as an editor's save does (a new file renamed over the old).
    private func save(_ bytes: Data, as name: String, in directory: TemporaryDirectory) throws {
        let temporary = directory.file("." + name + ".swp")
        try bytes.write(to: URL(fileURLWithPath: temporary))
        XCTAssertEqual(rename(temporary, directory.file(name)), 0)
    }

    func testAModelHotReloads() throws {
        let directory = try TemporaryDirectory()
        let models = directory.file("models")
        let made = try Tools.run("/usr/bin/python3", [ModelRunTests.script, models])
        XCTAssertEqual(made.status, 0, made.stderr)
        let grey = try Data(contentsOf: URL(fileURLWithPath: models + "/net-seg-red.onnx"))
        let colour = try Data(contentsOf: URL(fileURLWithPath: models + "/net-style-transfer.onnx"))
        try save(grey, as: "net.onnx", in: directory)
        let dev = try DevProcess(arguments: [directory.file("net.onnx"), "--size", "160x90"])
        defer { dev.stop() }
        let first = try dev.waitForState(timeout: 60, "the first frames or an error") { ($0["frames"] as? Int ?? 0) > 2 || error($0) != nil }
        XCTAssertNil(error(first), "the model should load: \(first)")
        XCTAssertEqual(coloured(try dev.snapshot()), 0, "the one-channel model's output is grey")

        try save(Data("not a model".utf8), as: "net.onnx", in: directory)
        let broken = try dev.waitForState(timeout: 30, "the load error") { error($0) != nil }
        let text = error(broken)?["text"] as? String ?? ""
        XCTAssertTrue(text.contains("not an ONNX model"), "\(broken)")
        let before = broken["frames"] as? Int ?? 0
        try dev.waitForState(timeout: 30, "frames while broken") { ($0["frames"] as? Int ?? 0) > before + 3 }
        XCTAssertEqual(coloured(try dev.snapshot()), 0, "the last good model keeps running")

        try save(colour, as: "net.onnx", in: directory)
        let fixed = try dev.waitForState(timeout: 60, "the new model") { error($0) == nil && ($0["reloads"] as? Int ?? 0) >= 1 }
        let after = fixed["frames"] as? Int ?? 0
        try dev.waitForState(timeout: 60, "frames of the new model") { ($0["frames"] as? Int ?? 0) > after + 2 }
        XCTAssertGreaterThan(coloured(try dev.snapshot()), 100, "the three-channel model's output has colour")
    }
}
