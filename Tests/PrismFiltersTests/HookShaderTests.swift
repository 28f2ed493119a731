import Foundation
import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters
import PrismPipeline
import PrismMedia

/// mpv hook shaders (`//!HOOK` files): the parser, the planner and the kernel on the GPU, each directive
/// against a CPU reference. Every hook here is written for these tests.
final class HookShaderTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("prism-hooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    func write(_ name: String, _ text: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func bind(_ text: String) throws -> FilterGraph { try GraphBinder().bind(text) }

    let image = TestImage.varied(width: 48, height: 30)

    static let invert = """
        // Comments before the first directive are skipped, as libplacebo does.
        //!HOOK MAIN
        //!BIND HOOKED
        //!DESC invert
        vec4 hook() {
            vec4 c = HOOKED_tex(HOOKED_pos);
            return vec4(1.0 - c.rgb, c.a);
        }
        """

    // MARK: Parsing (no GPU)

    func testTheParserReadsEveryDirective() throws {
        let file = try HookFile.parse(text: """
            //!PARAM strength
            //!DESC how strong
            //!TYPE DYNAMIC float
            //!MINIMUM 0.0
            //!MAXIMUM 2.0
            0.5
            //!PARAM mode
            //!TYPE ENUM int
            soft
            hard
            //!TEXTURE lut
            //!SIZE 2 1
            //!FORMAT rgba8
            //!FILTER LINEAR
            //!BORDER REPEAT
            ff000080 00ff00ff
            //!HOOK LUMA
            //!HOOK CHROMA
            //!BIND HOOKED
            //!BIND lut
            //!SAVE first
            //!WIDTH HOOKED.w 2 *
            //!HEIGHT HOOKED.height 2 *
            //!WHEN OUTPUT.w HOOKED.w / 1.2 >
            //!OFFSET -0.5 0.25
            //!COMPONENTS 1
            //!COMPUTE 32 8 16 4
            void hook() {}
            """, path: "/x/all.glsl")
        XCTAssertEqual(file.parameters.map(\.name), ["strength", "mode"])
        XCTAssertEqual(file.parameters[0].mode, .dynamic)
        XCTAssertEqual(file.parameters[0].initial, 0.5)
        XCTAssertEqual(file.parameters[0].maximum, 2)
        XCTAssertEqual(file.parameters[1].names, ["soft", "hard"])
        let lut = try XCTUnwrap(file.textures.first)
        XCTAssertEqual([lut.width, lut.height], [2, 1])
        XCTAssertEqual(lut.data, [0xff, 0, 0, 0x80, 0, 0xff, 0, 0xff])
        XCTAssertTrue(lut.linear)
        XCTAssertEqual(lut.border, .repeat)
        let pass = try XCTUnwrap(file.passes.first)
        XCTAssertEqual(pass.hooks, ["LUMA", "CHROMA"])
        XCTAssertEqual(pass.binds.map(\.name), ["HOOKED", "lut"])
        XCTAssertEqual(pass.save, "first")
        XCTAssertEqual(pass.offset, SIMD2(-0.5, 0.25))
        XCTAssertEqual(pass.components, 1)
        XCTAssertEqual(pass.compute, HookPass.Compute(blockWidth: 32, blockHeight: 8, threadsWidth: 16, threadsHeight: 4))
        XCTAssertEqual(pass.bodyLine, 28)
        let size: (String) -> (width: Double, height: Double)? = { $0 == "OUTPUT" ? (130, 80) : $0 == "HOOKED" ? (100, 50) : nil }
        XCTAssertEqual(try pass.width.evaluate(size: size, variable: { _ in nil }), 200)
        XCTAssertEqual(try pass.height.evaluate(size: size, variable: { _ in nil }), 100)
        XCTAssertEqual(try pass.when.evaluate(size: size, variable: { _ in nil }), 1)  // 1.3 > 1.2
    }

    func testRPNOperatorsFollowLibplacebo() throws {
        func value(_ text: String) throws -> Double {
            try XCTUnwrap(HookExpression(text)).evaluate(size: { _ in (10, 4) }, variable: { $0 == "k" ? 3 : nil })
        }
        XCTAssertEqual(try value("7 2 %"), 1)
        XCTAssertEqual(try value("X.w X.h -"), 6)
        XCTAssertEqual(try value("k 3 ="), 1)
        XCTAssertEqual(try value("k 2 = !"), 1)
        XCTAssertEqual(try value("1 2 <"), 1)
        XCTAssertEqual(try value("5 2 /"), 2.5)
        XCTAssertThrowsError(try value("1 +")) { XCTAssertEqual($0 as? HookExpression.EvaluationError, .underflow("1 +")) }
        XCTAssertThrowsError(try value("1 0 /"))
        XCTAssertThrowsError(try value("1 2"))
        XCTAssertThrowsError(try value("nothere"))
    }

    /// Each bad hook file: one line naming file:line.
    func testBadHookFilesAreRefusedAtTheirLine() throws {
        func error(_ text: String) -> String {
            do { _ = try HookKernel(files: [HookFile.parse(text: text, path: "/h/bad.glsl")]); return "no error" } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(error("//!HOOK MAIN\n//!BIND HOOKED\n//!FROB 1\nvec4 hook() { return vec4(0.0); }"),
                       "/h/bad.glsl:3: unknown directive '//!FROB 1'")
        XCTAssertEqual(error("//!HOOK MAIN\n//!BIND HOOKED\n//!WIDTH HOOKED.w *\nvec4 hook() { return vec4(0.0); }"),
                       "/h/bad.glsl:3: //!WIDTH: stack underflow in the expression 'HOOKED.w *'")
        XCTAssertEqual(error("//!HOOK MAIN\n//!BIND HOOKED\n//!BIND nowhere\nvec4 hook() { return vec4(0.0); }"),
                       "/h/bad.glsl:3: //!BIND nowhere: no pass saves a texture of that name and no //!TEXTURE has it")
        XCTAssertEqual(error("//!TEXTURE t\n//!SIZE 2 2\n//!FORMAT rgba8\n00ff00ff\n//!HOOK MAIN\n//!BIND t\nvec4 hook() { return vec4(0.0); }"),
                       "/h/bad.glsl:1: //!TEXTURE t: the data is 4 bytes; 2x2 texels of rgba8 need 16")
        XCTAssertTrue(error("//!HOOK NOWHERE\nvec4 hook() { return vec4(0.0); }").hasPrefix("/h/bad.glsl:1: //!HOOK NOWHERE: unknown stage"))
        XCTAssertEqual(error("//!PARAM x\n//!TYPE float\n//!MAXIMUM 1.0\n2.0\n//!HOOK MAIN\nvec4 hook() { return vec4(x); }"),
                       "/h/bad.glsl:1: //!PARAM x: the initial value 2.0 is outside -inf...1.0")
    }

    /// Sizes no target can have are errors at their directive, never a trap when they become integers (1e39
    /// and 1e400 were infinities in float, 1e19 beyond Int, a parameter of 1e20 in WIDTH, COMPUTE of Int.max);
    /// OFFSET must be finite; CRLF and CR line ends are line ends.
    func testSizesBeyondRangeAreErrorsAtTheirDirective() throws {
        func plan(_ directives: String, values: [String: Double] = [:]) -> String {
            let text = "//!PARAM k\n//!TYPE float\n1.0\n//!HOOK MAIN\n//!BIND HOOKED\n" + directives
                + "\nvec4 hook() { return HOOKED_tex(HOOKED_pos); }"
            do {
                let file = try HookFile.parse(text: text, path: "/h/s.glsl")
                let made = try HookPlan.make(files: [file], inputSize: Size(width: 64, height: 48), outputSize: Size(width: 64, height: 48),
                                             values: ["k": 1].merging(values) { $1 })
                return made.steps.first.map { "\($0.size)" } ?? "no step"  // the pass (a resize to OUTPUT may follow)
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(plan("//!WIDTH 1e39"), "/h/s.glsl:6: //!WIDTH: 1e+39 in '1e39' is beyond single precision (hook expressions are evaluated in float)")
        XCTAssertTrue(plan("//!HEIGHT 1e400").hasPrefix("/h/s.glsl:6: //!HEIGHT: inf in '1e400' is beyond single precision"))
        XCTAssertEqual(plan("//!WIDTH 1e19"), "/h/s.glsl:6: the pass's size 1e+19x48 is outside 1...16384")
        XCTAssertEqual(plan("//!WIDTH HOOKED.w\n//!HEIGHT 0 1e19 -"), "/h/s.glsl:7: the pass's size 64x-1e+19 is outside 1...16384")
        XCTAssertEqual(plan("//!WIDTH HOOKED.w k *", values: ["k": 1e20]), "/h/s.glsl:6: the pass's size 6.4e+21x48 is outside 1...16384")
        XCTAssertTrue(plan("//!WIDTH HOOKED.w k *", values: ["k": 1e39]).contains("beyond single precision"))
        XCTAssertEqual(plan("//!WIDTH HOOKED.w k *", values: ["k": 0.5]), "32x48")
        XCTAssertTrue(plan("//!COMPUTE 9223372036854775807 2").hasPrefix("/h/s.glsl:6: //!COMPUTE takes block width and height"))
        XCTAssertTrue(plan("//!OFFSET nan nan").hasPrefix("/h/s.glsl:6: //!OFFSET takes two numbers within ±16384"))
        XCTAssertEqual(plan("//!OFFSET 0.5 -0.5"), "64x48")
        let crlf = "//!HOOK MAIN\r\n//!BIND HOOKED\r\n//!WIDTH HOOKED.w 2 /\r\nvec4 hook() { return HOOKED_tex(HOOKED_pos); }\r\n"
        for text in [crlf, crlf.replacingOccurrences(of: "\r\n", with: "\r")] {
            let file = try HookFile.parse(text: text, path: "/h/crlf.glsl")
            XCTAssertEqual(file.passes.first?.hooks, ["MAIN"])
            XCTAssertEqual(file.passes.first?.bodyLine, 4)
            XCTAssertTrue(HookFile.isHookFile(text: text))
        }
    }

    // MARK: Planning (no GPU)

    /// Passes run by stage, then file, then pass order; a false WHEN leaves its pass out; sizes come from RPN.
    func testThePlanOrdersByStageAndEvaluatesSizesAndConditions() throws {
        let late = try HookFile.parse(text: "//!HOOK OUTPUT\n//!BIND HOOKED\n//!DESC late\nvec4 hook() { return HOOKED_tex(HOOKED_pos); }",
                                      path: "/h/late.glsl")
        let early = try HookFile.parse(text: """
            //!HOOK MAIN
            //!BIND HOOKED
            //!DESC double
            //!WIDTH 2 HOOKED.w *
            //!HEIGHT 2 HOOKED.h *
            //!WHEN OUTPUT.w HOOKED.w / 1.2 >
            vec4 hook() { return HOOKED_tex(HOOKED_pos); }
            """, path: "/h/early.glsl")
        let input = Size(width: 40, height: 20)
        let small = try HookPlan.make(files: [late, early], inputSize: input, outputSize: input, values: [:])
        XCTAssertEqual(small.steps.map(\.label), ["late.glsl:1 late"])
        XCTAssertEqual(small.skipped.count, 1)
        let large = try HookPlan.make(files: [late, early], inputSize: input, outputSize: Size(width: 80, height: 40), values: [:])
        XCTAssertEqual(large.steps.map(\.label), ["early.glsl:1 double", "late.glsl:1 late"])
        XCTAssertEqual(large.steps.map(\.size), [Size(width: 80, height: 40), Size(width: 80, height: 40)])
        // Three times: the doubled image is resized to OUTPUT before the OUTPUT hook.
        let odd = try HookPlan.make(files: [early, late], inputSize: input, outputSize: Size(width: 120, height: 60), values: [:])
        XCTAssertEqual(odd.steps.map(\.label), ["early.glsl:1 double", "resize to OUTPUT (bilinear)", "late.glsl:1 late"])
    }

    // MARK: On the GPU

    func testAMainHookInvertsThePicture() throws {
        let path = try write("invert.glsl", Self.invert)
        let graph = try bind("'\(path)'")
        XCTAssertTrue(graph.nodes[0].kernel is HookKernel)
        let out = try render(graph, image)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(1 - p.x, 1 - p.y, 1 - p.z, p.w)
        }
        assertClose(out, expected, tolerance: 1, "invert hook")
    }

    /// The alpha a MAIN hook writes is not the picture's: libplacebo ignores it (Anime4K's upscalers leave
    /// 1 + a residual there), so the group's output keeps its input's alpha; an ALPHA hook does change it.
    func testTheOutputKeepsTheInputsAlphaUnlessAnAlphaHookRuns() throws {
        let main = try write("alpha-main.glsl", "//!HOOK MAIN\n//!BIND HOOKED\nvec4 hook() { return vec4(HOOKED_tex(HOOKED_pos).rgb, 0.25); }\n")
        let out = try render(try bind("'\(main)'"), image)
        assertClose(out, image, tolerance: 1, "a MAIN hook's alpha is ignored")
        let plane = try write("alpha-plane.glsl", "//!HOOK ALPHA\n//!BIND HOOKED\nvec4 hook() { return vec4(0.25); }\n")
        let halfClear = try render(try bind("'\(plane)'"), image)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(p.x, p.y, p.z, 0.25)
        }
        assertClose(halfClear, expected, tolerance: 2, "an ALPHA hook sets the alpha")
    }

    /// WIDTH/HEIGHT from RPN, OUTPUT from the run's size, a WHEN that is false without it.
    func testRPNSizesAndWhenFollowTheOutputSize() throws {
        let path = try write("double.glsl", """
            //!HOOK MAIN
            //!BIND HOOKED
            //!WIDTH HOOKED.w 2 *
            //!HEIGHT HOOKED.h 2 *
            //!WHEN OUTPUT.w MAIN.w / 1.2 >
            vec4 hook() {
                // Where this pixel samples, as colour: the position's exact value is the check.
                return vec4(HOOKED_pos, (HOOKED_pt.x + HOOKED_pt.y) * 8.0, 1.0);
            }
            """)
        // Without an output size, OUTPUT is the input's: the pass does not run.
        let same = try render(try bind("'\(path)'"), image)
        assertClose(same, image, tolerance: 0, "WHEN false: the picture unchanged")
        let graph = try bind("'\(path)'")
        let doubled = Size(width: image.size.width * 2, height: image.size.height * 2)
        try graph.appendScale(to: doubled)
        XCTAssertEqual(graph.nodes.count, 1, "no scale after a hook group: it resizes to OUTPUT itself")
        let out = try render(graph, image)
        let expected = TestImage.from(size: doubled) { x, y in
            SIMD4((Double(x) + 0.5) / Double(doubled.width), (Double(y) + 0.5) / Double(doubled.height),
                  8.0 / Double(self.image.size.width) + 8.0 / Double(self.image.size.height), 1)
        }
        assertClose(out, expected, tolerance: 1, "HOOKED_pos and HOOKED_pt at 2x")
    }

    /// The resize to OUTPUT, shrinking one axis by 3 and growing the other by 2: libplacebo's bilinear, whose
    /// triangle is widened by the ratio on the shrinking axis (every texel under it counts) and is a plain
    /// bilinear tap on the growing one. A single bilinear tap would skip two texels of three.
    func testTheResizeToOutputWidensItsTriangleToShrink() throws {
        let path = try write("identity.glsl", "//!HOOK MAIN\n//!BIND HOOKED\nvec4 hook() { return HOOKED_tex(HOOKED_pos); }\n")
        let graph = try bind("'\(path)'")
        let target = Size(width: image.size.width / 3, height: image.size.height * 2)
        try graph.appendScale(to: target)
        let out = try render(graph, image)
        func tent(_ centre: Double, _ radius: Double, _ count: Int) -> [(Int, Double)] {
            let lo = Int((centre - radius).rounded(.down)) + 1, hi = Int((centre + radius).rounded(.up)) - 1
            return (lo...hi).map { (min(max($0, 0), count - 1), max(0, 1 - abs(Double($0) - centre) / radius)) }
        }
        let expected = TestImage.from(size: target) { x, y in
            let xs = tent((Double(x) + 0.5) * 3 - 0.5, 3, self.image.size.width)
            let ys = tent((Double(y) + 0.5) / 2 - 0.5, 1, self.image.size.height)
            var sum = SIMD4<Double>(repeating: 0), total = 0.0
            for (sy, wy) in ys { for (sx, wx) in xs { sum += wx * wy * self.image.pixel(sx, sy); total += wx * wy } }
            return sum / total
        }
        assertClose(out, expected, tolerance: 1, "widened bilinear shrink, bilinear growth")
    }

    /// SAVE to a name, BIND it in a later pass, at another size; `//!TEXTURE` data read with NEAREST.
    func testSavedTexturesAndEmbeddedLookupsAreBound() throws {
        let path = try write("lut.glsl", """
            //!TEXTURE palette
            //!SIZE 2 1
            //!FORMAT rgba8
            //!FILTER NEAREST
            ff000080 00ff40ff
            //!HOOK MAIN
            //!BIND HOOKED
            //!SAVE small
            //!WIDTH HOOKED.w 2 /
            //!HEIGHT HOOKED.h 2 /
            vec4 hook() { return vec4(HOOKED_tex(HOOKED_pos).rgb * 0.5, 1.0); }

            //!HOOK MAIN
            //!BIND HOOKED
            //!BIND small
            //!BIND palette
            vec4 hook() {
                // Column parity picks a palette entry; `small` is read at its own texel centres.
                vec4 pal = texture(palette, vec2(mod(gl_FragCoord.x - 0.5, 2.0) < 0.5 ? 0.25 : 0.75, 0.5));
                vec2 texel = (floor(HOOKED_pos * small_size) + 0.5) * small_pt;
                return vec4(pal.g, pal.a, small_tex(texel).b, 1.0);
            }
            """)
        let out = try render(try bind("'\(path)'"), image)
        // The half-size pass is a bilinear read at the centre of each 2x2 block: their mean.
        let expected = TestImage.from(size: image.size) { x, y in
            let bx = x / 2 * 2, by = y / 2 * 2
            var blue = 0.0
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] { blue += self.image.pixel(bx + dx, by + dy).z / 4 }
            let pal: SIMD4<Double> = x % 2 == 0 ? SIMD4(1, 0, 0, 128.0 / 255) : SIMD4(0, 1, 64.0 / 255, 1)
            return SIMD4(pal.y, pal.w, blue * 0.5, 1)
        }
        assertClose(out, expected, tolerance: 2, "SAVE/BIND and //!TEXTURE")
    }

    /// libplacebo's format names say what the hex holds: `rgba16f` is a half-float texture given 32-bit float
    /// data (as ravu's and nnedi3's weights are), `rg16hf` half floats, `r32f` 32-bit floats.
    func testFloatLookupTexturesReadTheirDataAsLibplaceboDoes() throws {
        let path = try write("floats.glsl", """
            //!TEXTURE lut_a
            //!SIZE 1 1
            //!FORMAT rgba16f
            0000803e 0000003f 0000403f 0000803f
            //!TEXTURE lut_b
            //!SIZE 1 1
            //!FORMAT rg16hf
            0030 0036
            //!TEXTURE lut_c
            //!SIZE 1 1
            //!FORMAT r32f
            0000203f
            //!HOOK MAIN
            //!BIND lut_a
            //!BIND lut_b
            //!BIND lut_c
            vec4 hook() { return vec4(lut_a_tex(vec2(0.5)).r + lut_a_tex(vec2(0.5)).b - 0.75, lut_b_tex(vec2(0.5)).g, lut_c_tex(vec2(0.5)).r, lut_a_tex(vec2(0.5)).a); }
            """)
        let out = try render(try bind("'\(path)'"), image)
        // (0.25 + 0.75 - 0.75, 0.375, 0.625, 1.0)
        assertClose(out, TestImage.from(size: image.size) { _, _ in SIMD4(0.25, 0.375, 0.625, 1) }, tolerance: 1, "float lookups")
    }

    /// `//!PARAM`s are graph parameters: set in the graph, read by the GLSL by name.
    func testParametersComeFromTheGraph() throws {
        let path = try write("gain.glsl", """
            //!PARAM gain
            //!TYPE float
            //!MINIMUM 0.0
            //!MAXIMUM 1.0
            1.0
            //!PARAM offset
            //!TYPE CONSTANT float
            0.0
            //!HOOK MAIN
            //!BIND HOOKED
            vec4 hook() { return vec4(HOOKED_tex(HOOKED_pos).rgb * gain + offset, 1.0); }
            """)
        let out = try render(try bind("'\(path)'(gain=0.5, offset=0.25)"), image)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(p.x * 0.5 + 0.25, p.y * 0.5 + 0.25, p.z * 0.5 + 0.25, 1)
        }
        assertClose(out, expected, tolerance: 1, "PARAM gain=0.5, offset=0.25")
        XCTAssertThrowsError(try bind("'\(path)'(gain=3)"), "above its MAXIMUM")
    }

    /// A compute pass: shared memory, a barrier, imageStore to out_image; each 8x8 block becomes its mean.
    func testAComputePassWithSharedMemoryMatchesItsReference() throws {
        let path = try write("blocks.glsl", """
            //!HOOK MAIN
            //!BIND HOOKED
            //!COMPUTE 8 8
            shared vec4 tile[64];
            void hook() {
                uint i = gl_LocalInvocationIndex;
                ivec2 pixel = ivec2(gl_GlobalInvocationID.xy);
                tile[i] = HOOKED_tex((vec2(pixel) + 0.5) * HOOKED_pt);
                barrier();
                vec4 sum = vec4(0.0);
                for (int k = 0; k < 64; k++) sum += tile[k];
                imageStore(out_image, pixel, vec4(sum.rgb / 64.0, 1.0));
            }
            """)
        let square = TestImage.varied(width: 32, height: 24)
        let out = try render(try bind("'\(path)'"), square)
        let expected = TestImage.from(size: square.size) { x, y in
            var sum = SIMD4<Double>(0, 0, 0, 0)
            for dy in 0..<8 { for dx in 0..<8 { sum += square.pixel(x / 8 * 8 + dx, y / 8 * 8 + dy) } }
            return SIMD4(sum.x / 64, sum.y / 64, sum.z / 64, 1)
        }
        assertClose(out, expected, tolerance: 1, "compute block means")
    }

    /// A LUMA and a CHROMA hook in two files: each sees its plane (BT.709 limited range Y'CbCr of the picture).
    func testLumaAndChromaHooksWorkOnTheirPlanes() throws {
        let luma = try write("luma.glsl", """
            //!HOOK LUMA
            //!BIND HOOKED
            vec4 hook() { return vec4(HOOKED_tex(HOOKED_pos).x * 0.5 + 0.1, 0.0, 0.0, 1.0); }
            """)
        let chroma = try write("chroma.glsl", """
            //!HOOK CHROMA
            //!BIND HOOKED
            vec4 hook() { return vec4(HOOKED_tex(HOOKED_pos).yx, 0.0, 1.0); }
            """)
        let graph = try bind("'\(luma)', '\(chroma)'")
        XCTAssertEqual(graph.nodes.count, 1, "consecutive hook files are one group")
        let out = try render(graph, image)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            let yy = 0.2126 * p.x + 0.7152 * p.y + 0.0722 * p.z
            var Y = yy * 219 / 255 + 16.0 / 255
            var cb = (p.z - yy) / 1.8556 * 224 / 255 + 0.5, cr = (p.x - yy) / 1.5748 * 224 / 255 + 0.5
            Y = Y * 0.5 + 0.1
            swap(&cb, &cr)
            let ly = (Y - 16.0 / 255) * 255 / 219, ccb = (cb - 0.5) * 255 / 224, ccr = (cr - 0.5) * 255 / 224
            let r = ly + 1.5748 * ccr, b = ly + 1.8556 * ccb, g = (ly - 0.2126 * r - 0.0722 * b) / 0.7152
            return SIMD4(r, g, b, p.w)
        }
        assertClose(out, expected, tolerance: 2, "LUMA halved, CHROMA swapped")
    }

    /// Files mix with built-ins; a group's order is by stage whatever the file order.
    func testAGroupRunsByStageAndMixesWithBuiltins() throws {
        let output = try write("output.glsl", "//!HOOK OUTPUT\n//!BIND HOOKED\nvec4 hook() { return HOOKED_tex(HOOKED_pos) + vec4(0.25, 0.25, 0.25, 0.0); }\n")
        let main = try write("main.glsl", "//!HOOK MAIN\n//!BIND HOOKED\nvec4 hook() { return HOOKED_tex(HOOKED_pos) * vec4(0.5, 0.5, 0.5, 1.0); }\n")
        let out = try render(try bind("'\(output)', '\(main)', invert"), image)
        let expected = TestImage.from(size: image.size) { x, y in
            let p = self.image.pixel(x, y)
            return SIMD4(1 - (p.x * 0.5 + 0.25), 1 - (p.y * 0.5 + 0.25), 1 - (p.z * 0.5 + 0.25), p.w)
        }
        assertClose(out, expected, tolerance: 2, "MAIN before OUTPUT, then invert")
    }

    /// A compile error names the hook file's line, not the generated code's.
    func testACompileErrorNamesTheHookFilesLine() throws {
        let path = try write("broken.glsl", "//!HOOK MAIN\n//!BIND HOOKED\nvec4 hook() {\n    return HOOKED_tex(HOOKED_pos) * undefinedThing;\n}\n")
        let graph = try bind("'\(path)'")
        XCTAssertThrowsError(try render(graph, image)) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(path):4"), "\(error)")
        }
    }

    /// A compute pass on a GLES 3.0 context: refused at the pass's line.
    func testAComputePassOnAGLWithoutComputeIsRefused() throws {
        let path = try write("compute.glsl", "//!HOOK MAIN\n//!BIND HOOKED\n//!COMPUTE 8 8\nvoid hook() { imageStore(out_image, ivec2(0), vec4(1.0)); }\n")
        let graph = try bind("'\(path)'")
        let old = try GPUContext(options: GPUOptions(maxGLESMinorVersion: 0))
        XCTAssertThrowsError(try FrameEngine.renderStill(graph, image: PrismMedia.RGBAImage(size: image.size, pixels: image.rgba), gpu: old)) { error in
            XCTAssertEqual("\(error)", "\(path):3: //!COMPUTE needs OpenGL ES 3.1 compute shaders; this GL is OpenGL ES 3.0")
        }
    }
}
