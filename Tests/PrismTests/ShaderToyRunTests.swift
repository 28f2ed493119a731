import Foundation
import XCTest
import PrismCore
import PrismMedia

/// ShaderToy shaders through the built tool: the run's frame rate reaches `iFrameRate`, channel images are
/// read by the tool's own reader (libavcodec), binding errors are one line, and `prism filters` explains
/// the channels. The shaders are PrismFiltersTests' `ISFCorpus/shadertoy/`.
final class ShaderToyRunTests: XCTestCase {
    static let corpus = Tools.repositoryRoot.appendingPathComponent("Tests/PrismFiltersTests/ISFCorpus/shadertoy").path

    func testRunFrameRateReachesIFrameRate() throws {
        let scratch = ScratchDirectory()
        let shader = scratch.path("rate.frag")
        try """
        void mainImage(out vec4 fragColor, in vec2 fragCoord) {
            fragColor = vec4(iFrameRate / 100.0, float(iFrame) / 10.0, 0.0, 1.0);
        }
        """.write(toFile: shader, atomically: true, encoding: .utf8)
        for rate in [24, 50] {
            let output = scratch.path("rate-\(rate).png")
            let result = try Tools.run(Tools.prism, ["run", "--filter", "'\(shader)'", "--fps", "\(rate)", "--size", "64x36",
                                                     "-o", output, "--quiet"])
            XCTAssertEqual(result.status, 0, result.stderr)
            guard result.status == 0 else { continue }
            let pixel = try ImageFile.read(path: output).pixel(x: 10, y: 10)
            XCTAssertEqual(Double(pixel.r), Double(rate) / 100 * 255, accuracy: 1.5, "iFrameRate at --fps \(rate)")
            XCTAssertEqual(pixel.g, 0, "iFrame of the first frame")
        }
    }

    func testImageChannelThroughTheToolsReader() throws {
        let scratch = ScratchDirectory()
        let input = scratch.path("in.png")
        try ImageFile.write(RGBAImage(size: Size(width: 32, height: 32), pixels: [UInt8](repeating: 90, count: 32 * 32 * 4)), to: input)
        let output = scratch.path("out.png")
        // texture.frag's own `// @iChannel2 quad.png`, resolved beside the shader.
        let result = try Tools.run(Tools.prism, ["render", "--filter", "'\(Self.corpus)/texture.frag'", input, "-o", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        let out = try ImageFile.read(path: output)
        let expected: [(Int, Int, (UInt8, UInt8, UInt8))] = [(8, 8, (255, 0, 0)), (24, 8, (0, 255, 0)), (8, 24, (0, 0, 255)),
                                                             (24, 24, (255, 255, 255))]
        for (x, y, color) in expected {
            let p = out.pixel(x: x, y: y)
            XCTAssertEqual([p.r, p.g, p.b], [color.0, color.1, color.2], "quadrant at (\(x), \(y))")
        }
    }

    func testBindingErrorsAreOneLine() throws {
        let scratch = ScratchDirectory()
        let input = scratch.path("in.png")
        try ImageFile.write(RGBAImage(size: Size(width: 8, height: 8), pixels: [UInt8](repeating: 90, count: 8 * 8 * 4)), to: input)
        for (argument, words) in [("iChannel1=nowhere.png", ["iChannel1", "no image file nowhere.png"]),
                                  ("iChannel2=sparkle", ["iChannel2", "unknown channel 'sparkle'"]),
                                  ("iChannel9=previous", ["no parameter 'iChannel9'"]),
                                  ("iChannel3=buffer:gone.frag", ["iChannel3", "no buffer shader gone.frag"])] {
            let output = scratch.path("out.png")
            let result = try Tools.run(Tools.prism, ["render", "--filter", "'\(Self.corpus)/mix.frag'(\(argument))", input, "-o", output])
            XCTAssertNotEqual(result.status, 0, argument)
            XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
            for word in words { XCTAssertTrue(result.stderr.contains(word), "\(argument): \(result.stderr)") }
            XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        }
    }

    func testFiltersDescribesAShaderToyShader() throws {
        let result = try Tools.run(Tools.prism, ["filters", "\(Self.corpus)/buffered.frag"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = String(decoding: result.stdout, as: UTF8.self)
        for expected in ["ShaderToy shader", "uses: iResolution", "reads iChannel0", "iChannel0: buffer:", "bufA.frag",
                         "iChannel1: none (not read)", "previous", "iMouse"] {
            XCTAssertTrue(text.contains(expected), "'\(expected)' missing from:\n\(text)")
        }
    }
}
