import Foundation
import XCTest
import PrismCore
import PrismFilters
@testable import Prism

/// `/state`'s JSON: the field names and value shapes the preview page's script reads
/// (`PreviewPage.swift`: state.frames, .fps, .passes[].label/.ms, .error.file/.line/.column/.text,
/// .parameters[].node/.name/.type/.min/.max/.options/.value, .recording.*, .size, .camera.*, .selfTest).
final class DevStateJSONTests: XCTestCase {
    private func decode(_ state: DevState) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(state.json().utf8))
        return try XCTUnwrap(object as? [String: Any])
    }

    func testAnIdleStateHasEveryFieldWithNulls() throws {
        let json = try decode(DevState())
        XCTAssertEqual(Set(json.keys), ["frames", "fps", "passes", "timing", "error", "reloads", "failedReloads", "parameters",
                                        "recording", "previewDropped", "size", "input", "renderer", "shader", "watched",
                                        "camera", "selfTest"])
        for key in ["error", "camera", "selfTest"] { XCTAssertTrue(json[key] is NSNull, "\(key) is null, not missing") }
        let recording = try XCTUnwrap(json["recording"] as? [String: Any])
        XCTAssertEqual(Set(recording.keys), ["active", "seconds", "path", "frames", "dropped", "last", "error", "note"])
        XCTAssertEqual(recording["active"] as? Bool, false)
        XCTAssertTrue(recording["path"] is NSNull)
        XCTAssertEqual(json["size"] as? [Int], [0, 0])
    }

    func testABusyStateKeepsTheShapeThePageReads() throws {
        let state = DevState()
        let specs = [
            ParameterSpec("amount", .float(0...2), default: .float(0.5), "how much"),
            ParameterSpec("steps", .int(1...8), default: .int(4), "how many"),
            ParameterSpec("mode", .choice(["soft", "hard"]), default: .choice("soft"), "which"),
            ParameterSpec("tint", .color, default: .color(SIMD4(1, 0.5, 0, 1)), "colour"),
            ParameterSpec("file", .text, default: .text("a/b.cube"), "path"),
        ]
        let values = try ParameterValues(specs: specs, given: ["amount": .float(1.25), "mode": .choice("hard")])
        state.update {
            $0.frames = 42
            $0.fps = 29.97
            $0.passes = [(label: "fused: invert+mono", milliseconds: 5.12345)]
            $0.timing = "GPU timer"
            $0.error = DevDiagnostic(file: "/tmp/look.fs", line: 12, column: nil, message: "'x' : undeclared \"identifier\"")
            $0.parameters = [DevNodeParameters(node: 1, filter: "look.fs", values: values)]
            $0.recordingPath = "/tmp/take.mp4"
            $0.recordingStarted = Date().addingTimeInterval(-2)
            $0.recordingFrames = 60
            $0.outputSize = Size(width: 1280, height: 720)
            $0.input = "pattern <1280x720>"
            $0.watched = ["/tmp/look.fs"]
            $0.cameraDevice = "/dev/video0"
            $0.cameras = [DevCamera(path: "/dev/video0", card: "Fake"), DevCamera(path: "/dev/video1", card: "Other")]
            $0.selfTest = #"{"ok":true,"checks":[1,"two",null]}"#
        }
        XCTAssertFalse(state.json().contains("<"), "escaped as \\u003c, as before")
        let json = try decode(state)
        XCTAssertEqual(json["frames"] as? Int, 42)
        XCTAssertEqual(json["fps"] as? Double, 30.0, "rounded to 0.1")
        let pass = try XCTUnwrap((json["passes"] as? [[String: Any]])?.first)
        XCTAssertEqual(pass["label"] as? String, "fused: invert+mono")
        XCTAssertEqual(pass["ms"] as? Double, 5.123)
        let error = try XCTUnwrap(json["error"] as? [String: Any])
        XCTAssertEqual(error["file"] as? String, "/tmp/look.fs")
        XCTAssertEqual(error["line"] as? Int, 12)
        XCTAssertTrue(error["column"] is NSNull)
        XCTAssertEqual(error["text"] as? String, "/tmp/look.fs:12: 'x' : undeclared \"identifier\"")

        let parameters = try XCTUnwrap(json["parameters"] as? [[String: Any]])
        XCTAssertEqual(parameters.map { $0["name"] as? String }, ["amount", "steps", "mode", "tint", "file"])
        XCTAssertEqual(parameters[0]["type"] as? String, "float")
        XCTAssertEqual(parameters[0]["min"] as? Double, 0)
        XCTAssertEqual(parameters[0]["max"] as? Double, 2)
        XCTAssertEqual(parameters[0]["value"] as? Double, 1.25)
        XCTAssertEqual(parameters[0]["default"] as? Double, 0.5)
        XCTAssertEqual(parameters[0]["node"] as? Int, 1)
        XCTAssertEqual(parameters[0]["filter"] as? String, "look.fs")
        XCTAssertEqual(parameters[0]["settable"] as? Bool, true)
        XCTAssertEqual(parameters[1]["max"] as? Int, 8)
        XCTAssertEqual(parameters[2]["options"] as? [String], ["soft", "hard"])
        XCTAssertEqual(parameters[2]["value"] as? String, "hard")
        XCTAssertNil(parameters[2]["min"], "min/max only for numbers")
        XCTAssertEqual(parameters[3]["value"] as? [Double], [1, 0.5, 0, 1])
        XCTAssertEqual(parameters[4]["settable"] as? Bool, false)
        XCTAssertNil(parameters[4]["options"])

        let recording = try XCTUnwrap(json["recording"] as? [String: Any])
        XCTAssertEqual(recording["active"] as? Bool, true)
        XCTAssertEqual(recording["path"] as? String, "/tmp/take.mp4")
        XCTAssertEqual(try XCTUnwrap(recording["seconds"] as? Double), 2, accuracy: 0.2)
        XCTAssertEqual(recording["frames"] as? Int, 60)
        XCTAssertEqual(json["size"] as? [Int], [1280, 720])
        XCTAssertEqual(json["input"] as? String, "pattern <1280x720>")
        XCTAssertEqual(json["watched"] as? [String], ["/tmp/look.fs"])
        let camera = try XCTUnwrap(json["camera"] as? [String: Any])
        XCTAssertEqual(camera["device"] as? String, "/dev/video0")
        XCTAssertEqual((camera["cameras"] as? [[String: String]])?.map { $0["card"] }, ["Fake", "Other"])
        XCTAssertTrue(camera["pending"] is NSNull)
        let selfTest = try XCTUnwrap(json["selfTest"] as? [String: Any])
        XCTAssertEqual(selfTest["ok"] as? Bool, true)
        XCTAssertEqual((selfTest["checks"] as? [Any])?.count, 3)
    }
}
