import Foundation
import PrismMedia
import XCTest

/// `prism dev` notices a `NAME.vs` created beside the loaded `NAME.fs` after load, and its deletion: each
/// reloads the shader (ISF hosts pair the two by name, so the vertex file changes the picture).
final class DevVertexShaderReloadTests: XCTestCase {
    static let red = """
        /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ] }*/
        void main() { gl_FragColor = vec4(1.0, 0.0, 0.0, 1.0) + 0.0 * IMG_THIS_PIXEL(inputImage); }
        """
    /// The quad shrunk to the middle half: the border is left transparent black.
    static let shrink = "void main() {\n    isf_vertShaderInit();\n    gl_Position.xy *= 0.5;\n}\n"

    private func frames(_ state: [String: Any]) -> Int { state["frames"] as? Int ?? 0 }
    private func reloads(_ state: [String: Any]) -> Int { state["reloads"] as? Int ?? 0 }
    private func error(_ state: [String: Any]) -> [String: Any]? { state["error"] as? [String: Any] }

    /// The snapshot once frames have flowed after the state `condition` was reached.
    private func picture(_ dev: DevProcess, after what: String, _ condition: @escaping ([String: Any]) -> Bool) throws -> RGBAImage {
        let state = try dev.waitForState(what) { condition($0) && self.error($0) == nil }
        let count = frames(state)
        try dev.waitForState("frames after \(what)") { self.frames($0) > count + 5 }
        return try dev.snapshot()
    }

    private func isRed(_ p: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> Bool { p.r >= 250 && p.g <= 5 && p.b <= 5 }

    func testAVertexShaderCreatedOrDeletedBesideTheFragmentShaderReloads() throws {
        let directory = try TemporaryDirectory()
        try Self.red.write(toFile: directory.file("look.fs"), atomically: true, encoding: .utf8)
        let dev = try DevProcess(arguments: [directory.file("look.fs"), "--size", "160x90"])
        defer { dev.stop() }

        let before = try picture(dev, after: "the first frames") { self.frames($0) > 2 }
        XCTAssertTrue(isRed(before.pixel(x: 2, y: 2)) && isRed(before.pixel(x: 80, y: 45)), "red everywhere without a .vs")
        let reloadsBefore = reloads(try dev.waitForState("state") { _ in true })

        try directory.save("look.vs", Self.shrink)
        let shrunk = try picture(dev, after: "the reload for the new .vs") { self.reloads($0) > reloadsBefore }
        XCTAssertFalse(isRed(shrunk.pixel(x: 2, y: 2)), "the corner is outside the shrunk quad")
        XCTAssertTrue(isRed(shrunk.pixel(x: 80, y: 45)), "the middle is still drawn")
        let reloadsShrunk = reloads(try dev.waitForState("state") { _ in true })

        try FileManager.default.removeItem(atPath: directory.file("look.vs"))
        let after = try picture(dev, after: "the reload for the deleted .vs") { self.reloads($0) > reloadsShrunk }
        XCTAssertTrue(isRed(after.pixel(x: 2, y: 2)), "without the .vs the whole frame is drawn again")
    }
}
