import XCTest
import PrismCore
@testable import PrismFilters

final class GraphBinderTests: XCTestCase {
    let image = TestImage.varied(width: 120, height: 90)

    func testSeedMaskedPixellate() throws {
        // Seed 002: pixellate only inside a radial gradient mask, the original outside, a smooth edge.
        let text = "[in]pixellate(scale=8)[px]; radial-gradient(center=0.5:0.5, radius0=20, radius1=35, "
            + "color0=#ffffff, color1=#000000)[mask]; [px][in][mask]blend-mask"
        let graph = try GraphBinder().bind(text)
        XCTAssertEqual(graph.nodes.map(\.name), ["pixellate", "radial-gradient", "blend-mask"])
        let out = try render(graph, image)
        let pixellated = try render(chain([("pixellate", ["scale": .float(8)])]), image)
        let cx = 60.0, cy = 45.0
        var sawMix = false
        for y in 0..<image.size.height {
            for x in 0..<image.size.width {
                let d = ((Double(x) + 0.5 - cx) * (Double(x) + 0.5 - cx) + (Double(y) + 0.5 - cy) * (Double(y) + 0.5 - cy)).squareRoot()
                let i = (y * image.size.width + x) * 4
                for c in 0..<3 {
                    let o = Int(out.rgba[i + c]), p = Int(pixellated.rgba[i + c]), s = Int(image.rgba[i + c])
                    if d < 20 { XCTAssertLessThanOrEqual(abs(o - p), 1, "inside at \(x),\(y)") }
                    else if d > 35 { XCTAssertLessThanOrEqual(abs(o - s), 1, "outside at \(x),\(y)") }
                    else {
                        // On the edge: between the two, weighted by the gradient.
                        let t = (d - 20) / 15
                        let expected = Double(p) * (1 - t) + Double(s) * t
                        XCTAssertLessThanOrEqual(abs(Double(o) - expected), 1.5, "edge at \(x),\(y)")
                        if abs(p - s) > 20, abs(o - p) > 3, abs(o - s) > 3 { sawMix = true }
                    }
                }
            }
        }
        XCTAssertTrue(sawMix, "the edge should blend, not switch")
    }

    func testPlainChainAndPositionalArguments() throws {
        let graph = try GraphBinder().bind("invert, mono(0.5), pixellate(12)")
        XCTAssertEqual(graph.nodes.map(\.name), ["invert", "mono", "pixellate"])
        XCTAssertEqual(graph.nodes[1].parameters?.double("intensity"), 0.5)
        XCTAssertEqual(graph.nodes[2].parameters?.double("scale"), 12)
        XCTAssertEqual(try GraphBinder().bind("  ").nodes.count, 0)
    }

    func testErrorsPointAtTheColumn() {
        func column(_ text: String) -> Int? {
            do { _ = try GraphBinder().bind(text); return nil } catch let error as GraphTextError {
                XCTAssertFalse(error.description.contains("\n"), "one line: \(error.description)")
                return error.column
            } catch { XCTFail("\(error)"); return nil }
        }
        XCTAssertEqual(column("invert, bogus"), 9)
        XCTAssertEqual(column("invert, pixellate(scale=-4)"), 25)
        XCTAssertEqual(column("invert, pixellate(size=4)"), 19)
        XCTAssertEqual(column("mono(intensity=#ff0000)"), 16)
        XCTAssertEqual(column("invert, (mono"), 9)
        XCTAssertEqual(column("[px]invert"), 1)
        do { _ = try GraphBinder().bind("ivnert") } catch {
            XCTAssertTrue("\(error)".contains("did you mean 'invert'"), "\(error)")
        }
    }

    func testCubeFileThroughTheGraph() throws {
        // A 2³ table that swaps red and blue: exact under any interpolation (it is linear).
        var text = "TITLE \"swap\"\nLUT_3D_SIZE 2\n"
        for b in 0..<2 { for g in 0..<2 { for r in 0..<2 { text += "\(b) \(g) \(r)\n" } } }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("swap-\(UUID().uuidString).cube")
        try text.write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        for form in ["lut(file=\"\(url.path)\")", "\"\(url.path)\""] {
            let out = try render(GraphBinder().bind(form), image)
            let expected = TestImage.from(size: image.size) { x, y in
                let p = self.image.pixel(x, y)
                return SIMD4(p.z, p.y, p.x, p.w)
            }
            assertClose(out, expected, tolerance: 1, form)
        }
    }
}
