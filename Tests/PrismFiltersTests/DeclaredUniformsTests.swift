import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// Uniforms are declared as data: each kernel lists its uniforms (name, type, where the value comes from), the
/// plan names the kernels in each pass (its members) and the planner writes exactly those declarations into the
/// pass's text. Planned without a GPU context, like `RoutePlanningTests`.
final class DeclaredUniformsTests: XCTestCase {
    static let size = Size(width: 70, height: 38)
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ISFCorpus")

    /// The graph last planned: the kernels the passes' members name.
    private var graph: FilterGraph!

    private func plan(_ text: String, source: PixelFormat = .rgba, sinks: [PixelFormat] = [.rgba]) throws -> [CompiledPass] {
        graph = try GraphBinder().bind(text)
        return try GraphCompiler.compile(graph, sourceFormat: source, sourceSize: Self.size, sinks: sinks,
                                         options: CompileOptions(limits: GraphLimits(maxSide: 16384))).passes
    }

    /// The kernel whose code `member` puts in its pass.
    private func kernel(_ member: CompiledPass.Member) -> FilterKernel { graph.nodes[member.node].kernel }

    /// The `uniform` declarations of `source` whose names start with `prefix`: name → declared type.
    private func declarations(in source: String, prefix: String) -> [(name: String, type: String)] {
        source.split(separator: "\n").compactMap { line -> (String, String)? in
            let words = line.split(whereSeparator: { $0 == " " || $0 == ";" || $0 == "[" })
            guard words.count >= 3, words[0] == "uniform" else { return nil }
            let type = words.count >= 4 && words[1] == "highp" ? String(words[2]) : String(words[1])
            let name = String(words.count >= 4 && words[1] == "highp" ? words[3] : words[2])
            return name.hasPrefix(prefix) ? (name, type) : nil
        }
    }

    /// Every member's declared uniforms and textures appear in each of the pass's programs once, with their
    /// declared types, and the programs declare no other uniform of that member's prefix besides the
    /// planner's texture bindings (`$srcN`, `$passN`): names and types are defined once, as data.
    private func assertDeclaredOnce(_ passes: [CompiledPass], file: StaticString = #filePath, line: UInt = #line) {
        for pass in passes {
            let bound = Set(pass.textures.map(\.uniform))
            for member in pass.members {
                let expected = kernel(member).uniforms.filter { !$0.inSource }.map { (member.prefix + $0.name.dropFirst(), $0.type.glsl) }
                    + kernel(member).textures.filter { !$0.inSource }.map { (member.prefix + $0.name.dropFirst(), $0.type == .sampler3D ? "sampler3D" : "sampler2D") }
                for draw in pass.draws {
                    let found = declarations(in: draw.fragmentSource, prefix: member.prefix)
                        .filter { !bound.contains($0.name) && !$0.name.hasPrefix(member.prefix + "src") }
                    XCTAssertEqual(found.map(\.name).sorted(), expected.map(\.0).sorted(),
                                   "\(pass.label): declared uniforms of \(member.prefix)", file: file, line: line)
                    for (name, type) in expected {
                        XCTAssertEqual(found.filter { $0.name == name }.map(\.type), [type], "\(pass.label): \(name)",
                                       file: file, line: line)
                    }
                }
            }
        }
    }

    private func uniforms(_ pass: CompiledPass, node: Int) -> [String: UniformType] {
        let member = pass.members.first { $0.node == node }
        return Dictionary(uniqueKeysWithValues: (member.map { kernel($0).uniforms } ?? []).map { ($0.name, $0.type) })
    }

    func testPixellateDeclaresItsGridUniforms() throws {
        let passes = try plan("pixellate(12)")
        XCTAssertEqual(passes.map(\.label), ["pixellate prepass 0", "pixellate prepass 1", "pixellate → pack rgba"])
        for pass in passes {
            XCTAssertEqual(uniforms(pass, node: 0), ["$scale": .float, "$origin": .vec2, "$inputSize": .vec2], pass.label)
        }
        // The kernel's GLSL itself declares nothing.
        XCTAssertFalse(try GraphBinder().bind("pixellate(12)").nodes[0].kernel.library.contains("uniform "))
        assertDeclaredOnce(passes)
    }

    func testAFusedChainDeclaresEachKernelsUniformsOnceUnderItsPrefix() throws {
        let passes = try plan("[in]flip, face-outline(color=#ff0000)[a]; face-mask[m]; [m][a]over, scale(size=35x19)")
        assertDeclaredOnce(passes)
        let all = passes.flatMap(\.members)
        XCTAssertTrue(all.contains { $0.node == 1 && kernel($0).uniforms.map(\.name) == ["$faces", "$faceCount", "$halfWidth", "$color"] })
        let faces = kernel(all.first { $0.node == 1 }!).uniforms[0]
        XCTAssertEqual(faces.count, FaceMaskKernel.maxFaces)
        XCTAssertEqual(faces.declaration, "uniform vec4 $faces[\(FaceMaskKernel.maxFaces)];\n")
        XCTAssertTrue(all.contains { $0.node == 4 && kernel($0).uniforms.map(\.name) == ["$offset", "$content", "$origin", "$ratio"] })
        XCTAssertTrue(all.contains { $0.node == 0 && kernel($0).uniforms.map(\.name) == ["$inSize", "$offset"] })
        // flip, the outline, the mask and `over` fuse into one pass, each kernel declared under its own prefix.
        let fused = try XCTUnwrap(passes.first { pass in Set(pass.members.map(\.node)).isSuperset(of: [0, 1, 2, 3]) })
        XCTAssertEqual(declarations(in: fused.draws[0].fragmentSource, prefix: "n2_").map(\.name), ["n2_faces", "n2_faceCount", "n2_inner"])
        XCTAssertEqual(declarations(in: fused.draws[0].fragmentSource, prefix: "n1_").map(\.name),
                       ["n1_faces", "n1_faceCount", "n1_halfWidth", "n1_color"])
    }

    func testAColourTableDeclaresItsSamplerAndConstants() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("declared-uniforms-\(getpid()).cube")
        // Not affine (the last corner is off the others' plane), so the table is a texture.
        let cube = "LUT_3D_SIZE 2\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n0.2 0.3 0.4\n"
        try cube.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let passes = try plan("lut(file=\"\(file.path)\", intensity=0.5)")
        assertDeclaredOnce(passes)
        let lut = kernel(passes.flatMap(\.members).first { $0.node == 0 }!)
        XCTAssertEqual(lut.textures.map(\.name), ["$lut"])
        XCTAssertEqual(lut.textures.map(\.type), [.sampler3D])
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: lut.uniforms.map { ($0.name, $0.type) })["$intensity"], .float)
        // The intensity is the parameter's value when the frame is drawn, not when planned.
        let intensity = lut.uniforms.first { $0.name == "$intensity" }!
        guard case .parameter("intensity") = intensity.source else { return XCTFail("intensity comes from the parameter") }
    }

    func testAnISFFileDeclaresItsParametersAsData() throws {
        // Fused (point-wise): the planner declares the inputs under the node's prefix.
        let path = Self.corpus.appendingPathComponent("missing-defaults.fs").path
        let passes = try plan("\"\(path)\"")
        assertDeclaredOnce(passes)
        let shader = kernel(passes.flatMap(\.members).first { $0.node == 0 }!)
        let types = Dictionary(uniqueKeysWithValues: shader.uniforms.map { ($0.name, $0.type) })
        XCTAssertEqual(types["$Ucentred"], .float)
        XCTAssertEqual(types["$Ulowest"], .float)
        XCTAssertEqual(types["$Utint"], .vec4)
        XCTAssertEqual(types["$Uflag"], .bool)
        XCTAssertEqual(types["$Uspot"], .vec2)
        XCTAssertEqual(types["$Umode"], .int)
        XCTAssertEqual(types["$UTIME"], .float)
    }

    func testABuiltInMadeFromAnISFFileDeclaresItsParameters() throws {
        let passes = try plan("radial-gradient(radius1=90)[m]; [m][in]over")
        assertDeclaredOnce(passes)
        let names = kernel(passes.flatMap(\.members).first { $0.node == 0 }!).uniforms.map(\.name)
        for name in ["$Ucenter", "$Uradius0", "$Uradius1", "$Ucolor0", "$Ucolor1"] { XCTAssertTrue(names.contains(name), name) }
    }

    func testTheYUVColourChainDeclaresItsUniformsOnce() throws {
        // noir (a grey curve) then the packing (a matrix step of its own), and the lean draws' uniforms.
        let passes = try plan("noir", source: .yuv420p, sinks: [.nv12])
        let pack = try XCTUnwrap(passes.last)
        let chain = try XCTUnwrap(pack.colorChain)
        XCTAssertEqual(chain.declared.map(\.name), ["prism_w0", "prism_wo0", "prism_gd0", "prism_go0", "prism_i0", "prism_m1", "prism_o1"])
        let programs = pack.draws.map(\.fragmentSource) + pack.draws.flatMap(\.variants).map(\.program.fragment)
        XCTAssertFalse(pack.draws.flatMap(\.variants).isEmpty)
        for source in programs {
            let found = declarations(in: source, prefix: "prism_").filter { name, _ in
                chain.declared.contains { $0.name == name } || ChainUniforms.leanDeclared.contains { $0.name == name }
            }
            for uniform in chain.declared {
                XCTAssertEqual(found.filter { $0.name == uniform.name }.map(\.type), [uniform.type.glsl], uniform.name)
            }
            // Lean programs declare the lean uniforms once; the full ones none.
            let lean = found.filter { name, _ in ChainUniforms.leanDeclared.contains { $0.name == name } }
            XCTAssertTrue(lean.isEmpty || lean.map(\.name).sorted() == ChainUniforms.leanDeclared.map(\.name).sorted())
        }
        // As many values as declared uniforms, every frame.
        let values = ChainValues(chain, graph: graph).uniformValues(sourceSpace: YUVColorSpace(matrix: .bt709, range: .limited),
                                                                   outputSpace: YUVColorSpace(matrix: .bt709, range: .limited))
        XCTAssertTrue([chain.declared.count, chain.declared.count + ChainUniforms.leanDeclared.count].contains(values.count))
        XCTAssertEqual(zip(chain.declared, values).map { $0.type == $1.type }, Array(repeating: true, count: chain.declared.count))
    }
}

/// The renderer sets declared uniforms from their sources every frame: a parameter changed after the plan
/// was made reaches the next frame (no new plan), as if it had been set from the start.
final class DeclaredUniformValuesTests: XCTestCase {
    func testParameterChangesReachDeclaredUniformsWithoutANewPlan() throws {
        let image = TestImage.varied(width: 48, height: 32)
        let faces: (Int) -> FrameContext = { index in
            FrameContext(time: Double(index) / 30, timeDelta: 1.0 / 30, frameIndex: index,
                         regions: [.init(center: SIMD2(0.5, 0.5), radius: 0.25)])
        }
        for (name, parameter, value) in [("face-outline", "color", ParameterValue.color(SIMD4(1, 0, 0, 1))),
                                         ("radial-gradient", "color1", .color(SIMD4(0, 0, 1, 1)))] {
            let changed = try chain([(name, [:])])
            let late = try renderFrames(changed, [image, image], before: { index in
                if index == 1 { try changed.setParameter(changed.nodes[0].id, parameter, value) }
            }, context: faces)
            let early = try chain([(name, [parameter: value])])
            let fromStart = try renderFrames(early, [image, image], context: faces)
            let untouched = try renderFrames(try chain([(name, [:])]), [image, image], context: faces)
            XCTAssertTrue(late.rgba == fromStart.rgba, "\(name): as if set from the start")
            XCTAssertTrue(late.rgba != untouched.rgba, "\(name): the change shows")
        }
    }
}
