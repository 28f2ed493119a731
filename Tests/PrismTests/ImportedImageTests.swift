import Foundation
import XCTest
import PrismCore
import PrismMedia

/// ISF IMPORTED images through the built tool: the reader it installs is PrismMedia's `ImageFile.read`
/// (libavcodec), so PNG, JPEG, PPM and PAM files all reach the shader with their pixels.
final class ImportedImageTests: XCTestCase {
    /// 16×16, four 8×8 quadrants: red, green / blue, white; alpha in the last quadrant when asked.
    static func quadrants(alpha: UInt8 = 255) -> RGBAImage {
        let colors: [[UInt8]] = [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 255, alpha]]
        var pixels: [UInt8] = []
        for y in 0..<16 { for x in 0..<16 { pixels += colors[(y < 8 ? 0 : 2) + (x < 8 ? 0 : 1)] } }
        return RGBAImage(size: Size(width: 16, height: 16), pixels: pixels)
    }

    /// Netpbm files written by hand (P6: RGB, P7: RGB_ALPHA), so the reader is checked against bytes
    /// it did not write itself.
    static func netpbm(_ image: RGBAImage, pam: Bool) -> Data {
        var bytes = Array((pam ? "P7\nWIDTH 16\nHEIGHT 16\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n"
                               : "P6\n16 16\n255\n").utf8)
        for pixel in 0..<(16 * 16) {
            bytes += image.pixels[(pixel * 4)..<(pixel * 4 + (pam ? 4 : 3))]
        }
        return Data(bytes)
    }

    func testEveryImportedFormatReachesTheShader() throws {
        let scratch = ScratchDirectory()
        let input = scratch.path("in.png")
        try ImageFile.write(RGBAImage(size: Size(width: 16, height: 16), pixels: [UInt8](repeating: 90, count: 16 * 16 * 4)),
                            to: input)
        let image = Self.quadrants(alpha: 128)
        try ImageFile.write(image, to: scratch.path("pic.png"))
        try ImageFile.write(Self.quadrants(), to: scratch.path("pic.jpg"), jpegQuality: 100)
        try Self.netpbm(image, pam: false).write(to: URL(fileURLWithPath: scratch.path("pic.ppm")))
        try Self.netpbm(image, pam: true).write(to: URL(fileURLWithPath: scratch.path("pic.pam")))

        for (file, tolerance, keepsAlpha) in [("pic.png", 0, true), ("pic.jpg", 12, false), ("pic.ppm", 0, false),
                                              ("pic.pam", 0, true)] {
            let shader = scratch.path("show-\(file).fs")
            try """
            /*{
                "ISFVSN": "2",
                "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
                "IMPORTED": { "pic": { "PATH": "\(file)" } }
            }*/
            void main() { gl_FragColor = IMG_NORM_PIXEL(pic, isf_FragNormCoord) + 0.0 * IMG_THIS_PIXEL(inputImage); }
            """.write(toFile: shader, atomically: true, encoding: .utf8)
            let output = scratch.path("out-\(file).png")
            let result = try Tools.run(Tools.prism, ["render", "--filter", "'\(shader)'", input, "-o", output])
            XCTAssertEqual(result.status, 0, "\(file): \(result.stderr)")
            guard result.status == 0 else { continue }
            let out = try ImageFile.read(path: output)
            XCTAssertEqual(out.size, image.size)
            // Quadrant centres away from the edges between colours (JPEG blurs those).
            for (x, y) in [(3, 3), (12, 3), (3, 12), (12, 12)] {
                let got = out.pixel(x: x, y: y), want = image.pixel(x: x, y: y)
                let pairs = [(got.r, want.r), (got.g, want.g), (got.b, want.b), (got.a, keepsAlpha ? want.a : 255)]
                for (a, b) in pairs {
                    XCTAssertLessThanOrEqual(abs(Int(a) - Int(b)), tolerance, "\(file) at (\(x), \(y)): \(got) vs \(want)")
                }
            }
        }
    }

    func testAMissingImportedImageIsOneLineAndAFailure() throws {
        let scratch = ScratchDirectory()
        let input = scratch.path("in.png")
        try ImageFile.write(Self.quadrants(), to: input)
        let shader = scratch.path("missing.fs")
        try """
        /*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ],
            "IMPORTED": { "pic": { "PATH": "nowhere.png" } } }*/
        void main() { gl_FragColor = IMG_NORM_PIXEL(pic, isf_FragNormCoord) + IMG_THIS_PIXEL(inputImage); }
        """.write(toFile: shader, atomically: true, encoding: .utf8)
        let result = try Tools.run(Tools.prism, ["render", "--filter", "'\(shader)'", input, "-o", scratch.path("out.png")])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("nowhere.png"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("out.png")))
    }
}
