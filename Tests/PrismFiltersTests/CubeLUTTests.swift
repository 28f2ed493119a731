import XCTest
@testable import PrismFilters

final class CubeLUTTests: XCTestCase {
    /// Writes a 3D table of `size` computed by `f`, red fastest.
    private func cube3D(size: Int, header: String = "", _ f: (SIMD3<Float>) -> SIMD3<Float>) -> String {
        var text = header + "LUT_3D_SIZE \(size)\n"
        let step = 1 / Float(size - 1)
        for b in 0..<size { for g in 0..<size { for r in 0..<size {
            let v = f(SIMD3(Float(r) * step, Float(g) * step, Float(b) * step))
            text += "\(v.x) \(v.y) \(v.z)\n"
        } } }
        return text
    }

    private func assertClose(_ a: SIMD3<Float>, _ b: SIMD3<Float>, _ tolerance: Float = 1e-5,
                             file: StaticString = #filePath, line: UInt = #line) {
        let d = a - b
        XCTAssertTrue(max(abs(d.x), abs(d.y), abs(d.z)) <= tolerance, "\(a) vs \(b)", file: file, line: line)
    }

    private func assertError(_ text: String, line: Int, contains fragment: String,
                             file: StaticString = #filePath, testLine: UInt = #line) {
        XCTAssertThrowsError(try CubeLUT(parsing: text), file: file, line: testLine) { error in
            guard let e = error as? CubeLUTError else { return XCTFail("\(error)", file: file, line: testLine) }
            XCTAssertEqual(e.line, line, "\(e)", file: file, line: testLine)
            XCTAssertTrue(e.message.contains(fragment), "\(e)", file: file, line: testLine)
        }
    }

    func testIdentitySize2WithHeaderCommentsAndCRLF() throws {
        let text = "# made by hand\r\nTITLE \"Identity two\"\r\n\r\nLUT_3D_SIZE 2\r\n"
            + "0 0 0\r\n1 0 0\r\n0 1 0\r\n1 1 0\r\n# halfway comment\r\n0 0 1\r\n1 0 1\r\n0 1 1\r\n1 1 1\r\n"
        let lut = try CubeLUT(parsing: text)
        XCTAssertEqual(lut.title, "Identity two")
        XCTAssertEqual(lut.kind, .threeD(size: 2))
        XCTAssertEqual(lut.values.count, 8)
        XCTAssertEqual(lut.values[1], SIMD3(1, 0, 0)) // red varies fastest
        XCTAssertEqual(lut.values[2], SIMD3(0, 1, 0))
        XCTAssertEqual(lut.values[4], SIMD3(0, 0, 1))
        for p in [SIMD3<Float>(0.2, 0.5, 0.9), SIMD3(0, 0, 0), SIMD3(1, 1, 1), SIMD3(0.7, 0.1, 0.3)] {
            assertClose(lut.apply(p), p)
            assertClose(lut.applyTetrahedral(p), p)
        }
        XCTAssertEqual(lut, { var l = CubeLUT.identity(.threeD(size: 2)); l.title = "Identity two"; return l }())
    }

    func testIdentitySize17() throws {
        let lut = try CubeLUT(parsing: cube3D(size: 17) { $0 })
        XCTAssertEqual(lut.kind, .threeD(size: 17))
        XCTAssertEqual(lut.values.count, 17 * 17 * 17)
        for p in [SIMD3<Float>(0.123, 0.456, 0.789), SIMD3(0.999, 0.001, 0.5), SIMD3(1, 0, 1)] {
            assertClose(lut.apply(p), p)
            assertClose(lut.applyTetrahedral(p), p)
        }
        // Outside the domain: clamped.
        assertClose(lut.apply(SIMD3(-0.5, 1.5, 0.5)), SIMD3(0, 1, 0.5))
        assertClose(lut.apply(SIMD3(.nan, 0.5, 0.5)), SIMD3(0, 0.5, 0.5))
    }

    func testTrilinearAndTetrahedralOnANonLinearTable() throws {
        // A table of a product: trilinear reproduces multilinear functions exactly, tetrahedral does not,
        // but both must hit the lattice points.
        let lut = try CubeLUT(parsing: cube3D(size: 3) { SIMD3($0.x * $0.y, $0.y * $0.z, $0.x + $0.z) })
        let p = SIMD3<Float>(0.3, 0.8, 0.6)
        assertClose(lut.apply(p), SIMD3(0.3 * 0.8, 0.8 * 0.6, 0.3 + 0.6))
        // Tetrahedral by hand in the cell [0,0.5]x[0.5,1]x[0.5,1], fractions r=0.6, g=0.6, b=0.2 → r ≥ g ≥ b.
        func f(_ r: Float, _ g: Float, _ b: Float) -> SIMD3<Float> { SIMD3(r * g, g * b, r + b) }
        let expected = f(0, 0.5, 0.5) * 0.4 + f(0.5, 0.5, 0.5) * 0 + f(0.5, 1, 0.5) * 0.4 + f(0.5, 1, 1) * 0.2
        assertClose(lut.applyTetrahedral(p), expected)
        for q in [SIMD3<Float>(0.5, 0.5, 0.5), SIMD3(0, 1, 0.5), SIMD3(1, 1, 1)] {
            assertClose(lut.applyTetrahedral(q), f(q.x, q.y, q.z))
            assertClose(lut.apply(q), f(q.x, q.y, q.z))
        }
    }

    func testTetrahedralCoversAllSixOrderings() throws {
        // A linear table must be reproduced exactly by any tetrahedron.
        let lut = try CubeLUT(parsing: cube3D(size: 5) { SIMD3(0.2 * $0.x + 0.7 * $0.y + 0.1 * $0.z, 1 - $0.y, $0.z * 0.5) })
        let fractions: [SIMD3<Float>] = [[0.6, 0.4, 0.2], [0.6, 0.2, 0.4], [0.4, 0.2, 0.6], [0.2, 0.4, 0.6], [0.2, 0.6, 0.4], [0.4, 0.6, 0.2]]
        for f in fractions {
            let p = (SIMD3<Float>(1, 2, 1) + f) / 4
            assertClose(lut.applyTetrahedral(p), SIMD3(0.2 * p.x + 0.7 * p.y + 0.1 * p.z, 1 - p.y, p.z * 0.5))
        }
    }

    func testOneDCurve() throws {
        let text = """
        TITLE "gamma-ish"
        LUT_1D_SIZE 3
        0 0 0
        0.25 0.5 0.75
        1 1 1
        """
        let lut = try CubeLUT(parsing: text)
        XCTAssertEqual(lut.kind, .oneD(size: 3))
        XCTAssertEqual(lut.title, "gamma-ish")
        assertClose(lut.apply(SIMD3(0.5, 0.5, 0.5)), SIMD3(0.25, 0.5, 0.75))
        assertClose(lut.apply(SIMD3(0.25, 0.75, 1)), SIMD3(0.125, 0.75, 1))
        assertClose(lut.applyTetrahedral(SIMD3(0.25, 0.75, 1)), SIMD3(0.125, 0.75, 1))
    }

    func testDomainOtherThanUnit() throws {
        let header = "DOMAIN_MIN -1 -1 -1\nDOMAIN_MAX 3 3 3\n"
        let lut = try CubeLUT(parsing: cube3D(size: 2, header: header) { $0 })
        XCTAssertEqual(lut.domainMin, SIMD3(repeating: -1))
        XCTAssertEqual(lut.domainMax, SIMD3(repeating: 3))
        // Input 1 sits halfway through the domain [-1, 3]: the table's 0.5.
        assertClose(lut.apply(SIMD3(1, -1, 3)), SIMD3(0.5, 0, 1))
        let ranged = try CubeLUT(parsing: "LUT_1D_INPUT_RANGE 0 2\nLUT_1D_SIZE 2\n0 0 0\n1 1 1\n")
        assertClose(ranged.apply(SIMD3(1, 0.5, 2)), SIMD3(0.5, 0.25, 1))
    }

    func testMalformed() {
        assertError("LUT_3D_SIZE 2\n0 0 0\n1 0 0\n", line: 3, contains: "needs 2×2×2 = 8 rows, found 2")
        assertError("LUT_1D_SIZE 2\n0 0 0\n1 1 1\n\n1 1 1\n", line: 5, contains: "needs 2 rows, found 3")
        assertError("LUT_3D_SIZE 1\n", line: 1, contains: "out of range 2...256")
        assertError("LUT_3D_SIZE 257\n", line: 1, contains: "out of range")
        assertError("# c\nLUT_1D_SIZE 70000\n", line: 2, contains: "out of range 2...65536")
        assertError("LUT_1D_SIZE 2\n0 0 0\n1 x 1\n", line: 3, contains: "'x' is not a number")
        assertError("LUT_1D_SIZE 2\n0 0 0\n1 1\n", line: 3, contains: "three numbers, found 2")
        assertError("LUT_1D_SIZE 2\nLUT_3D_SIZE 2\n", line: 2, contains: "a file holds one table")
        assertError("LUT_3D_SIZE 2\nLUT_1D_SIZE 2\n", line: 2, contains: "a file holds one table")
        assertError("TITLE \"x\"\n\n0 0 0\n", line: 3, contains: "missing LUT_1D_SIZE or LUT_3D_SIZE")
        assertError("LUT_3D_SIZE two\n", line: 1, contains: "not a whole number")
        assertError("DOMAIN_MIN 0 0\n", line: 1, contains: "three numbers")
        assertError("DOMAIN_MIN 1 0 0\nLUT_1D_SIZE 2\n0 0 0\n1 1 1\n", line: 0, contains: "below DOMAIN_MAX")
        assertError("LUT_1D_SIZE 2\n0 0 0\n1 1 1\nDOMAIN_MIN 0 0 0\n", line: 4, contains: "after the data rows")
        assertError("LUT_1D_SIZE 2\nhello world\n", line: 2, contains: "neither a keyword nor a number")
        XCTAssertEqual(CubeLUTError(file: "a.cube", line: 3, message: "m").description, "a.cube, line 3: m")
        XCTAssertEqual(CubeLUTError(line: 3, message: "m").description, "cube LUT, line 3: m")
    }

    func testUnknownKeywordsAreIgnored() throws {
        let lut = try CubeLUT(parsing: "LUT_IN_VIDEO_RANGE\nLUT_1D_SIZE 2\n0 0 0 # black\n1 1 1\n")
        XCTAssertEqual(lut.kind, .oneD(size: 2))
    }

    /// What is wrong with the file, in the user's terms (issue 9, messages): not "permission" for a device,
    /// not "isn't in the correct format" for bytes that are not text, and no long quotes of another file.
    func testFilesThatAreNotCubeFilesAreNamedForWhatTheyAre() throws {
        func message(_ path: String) -> String {
            do { _ = try CubeLUT(contentsOfFile: path); return "loaded" } catch { return "\(error)" }
        }
        XCTAssert(message("/dev/zero").contains("is a device, not a .cube file"), message("/dev/zero"))
        XCTAssert(message("/").contains("is a directory"), message("/"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cube-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = directory.appendingPathComponent("binary.cube").path
        try Data([0x4C, 0x55, 0x54, 0xFF, 0xFE, 0x00, 0x0A]).write(to: URL(fileURLWithPath: binary))
        XCTAssert(message(binary).contains("is not text (not UTF-8)"), message(binary))
        let secret = directory.appendingPathComponent("secret.cube").path
        try "root:$6$averylongsecrethashthatmustnotbeprinted:19000:0:99999:7:::\n".write(toFile: secret, atomically: true, encoding: .utf8)
        XCTAssertFalse(message(secret).contains("mustnotbeprinted"), message(secret))
        XCTAssert(message(secret).contains("is neither a keyword nor a number"), message(secret))
        XCTAssert(message(directory.appendingPathComponent("missing.cube").path).contains("no such file"))
    }
}
