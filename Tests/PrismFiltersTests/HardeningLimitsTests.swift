import XCTest
import PrismCore
import PrismGPU
@testable import PrismFilters

/// The checks behind issue 9's crash and limit fixes, in process: numeric conversion without traps,
/// bounded size expressions, shader array limits, and the compiler's limits read from the GL context.
final class HardeningLimitsTests: XCTestCase {
    func testIntegerParametersRefuseValuesBeyondIntWithoutTrapping() {
        let spec = ParameterSpec("x", .int(0...16383), default: .int(0), "")
        for value in [1e19, -1e19, 9.223372036854775807e18, -9.3e18, 1e300] {
            XCTAssertThrowsError(try spec.validate(.float(value)), "\(value)") { error in
                XCTAssertTrue("\(error)".contains("must be in"), "\(error)")
            }
        }
        XCTAssertThrowsError(try spec.validate(.float(.infinity)))
        XCTAssertThrowsError(try spec.validate(.float(.nan)))
        XCTAssertEqual(try spec.validate(.float(12)), .int(12))
        let wide = ParameterSpec("n", .int(Int.min...Int.max), default: .int(0), "")
        XCTAssertThrowsError(try wide.validate(.float(9.223372036854775808e18)), "2⁶³ is past Int.max")
        XCTAssertEqual(try wide.validate(.float(-9.223372036854775808e18)), .int(Int.min))
        let unbounded = ParameterSpec("f", .float(-.infinity...(.infinity)), default: .float(0), "")
        XCTAssertThrowsError(try unbounded.validate(.float(.infinity)))
        XCTAssertThrowsError(try unbounded.validate(.float(.nan)))
        XCTAssertEqual(try unbounded.validate(.float(1e300)), .float(1e300))
        XCTAssertEqual(Int(clamping: 1e300), .max)
        XCTAssertEqual(Int(clamping: -.infinity), .min)
        XCTAssertEqual(Int(clamping: .nan), 0)
        XCTAssertEqual(Int(clamping: -12.7), -12)
    }

    func testGraphNumbersPastDoubleAreRefused() {
        XCTAssertNil(GraphParser.number(from: "1e309"))
        XCTAssertNil(GraphParser.number(from: "-1e309"))
        XCTAssertEqual(GraphParser.number(from: "1e308"), 1e308)
        XCTAssertThrowsError(try GraphParser.parse("rotate(angle=1e309)")) { error in
            XCTAssertTrue("\(error)".contains("too large"), "\(error)")
        }
    }

    func testSizeExpressionsClampInsteadOfTrapping() throws {
        let wide = try ISFSizeExpression.parse("$WIDTH*1e20")
        XCTAssertEqual(wide.pixels(width: 1920, height: 1080, fallback: 5), ISFSizeExpression.pixelCeiling)
        XCTAssertEqual(try ISFSizeExpression.parse("pow(2,1000)").pixels(width: 1, height: 1, fallback: 5),
                       ISFSizeExpression.pixelCeiling)
        XCTAssertEqual(try ISFSizeExpression.parse("-$WIDTH*1e300").pixels(width: 10, height: 1, fallback: 5), 1)
        XCTAssertEqual(try ISFSizeExpression.parse("$scale").pixels(width: 10, height: 1, inputs: ["scale": 1e300], fallback: 5),
                       ISFSizeExpression.pixelCeiling)
        XCTAssertEqual(try ISFSizeExpression.parse("0/0").pixels(width: 10, height: 1, fallback: 5), 5)
        XCTAssertEqual(try ISFSizeExpression.parse("$WIDTH/4").pixels(width: 640, height: 1, fallback: 5), 160)
    }

    func testSizeExpressionsAreBoundedInDepthAndLength() throws {
        for text in [String(repeating: "(", count: 20_000) + "1", String(repeating: "-", count: 20_000) + "1",
                     String(repeating: "abs(", count: 100) + "1" + String(repeating: ")", count: 100)] {
            XCTAssertThrowsError(try ISFSizeExpression.parse(text)) { error in
                XCTAssertTrue("\(error)".contains("nests") || "\(error)".contains("longer"), "\(error)")
            }
        }
        let operations = Array(repeating: "1", count: 300).joined(separator: "+")
        XCTAssertThrowsError(try ISFSizeExpression.parse(operations)) { error in
            XCTAssertTrue("\(error)".contains("operations"), "\(error)")
        }
        // Within the bounds, deep but legal expressions still parse.
        let nested = String(repeating: "(", count: 60) + "$WIDTH" + String(repeating: ")", count: 60)
        XCTAssertEqual(try ISFSizeExpression.parse(nested).pixels(width: 33, height: 1, fallback: 0), 33)
    }

    func testShaderArraysOverTheLimitAreRefusedWithTheirLine() throws {
        func lines(_ text: String) -> [SourceLine] {
            text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                .map { SourceLine(text: String($0.element), file: "a.fs", line: $0.offset + 1) }
        }
        XCTAssertNoThrow(try GLSLLimits.check(lines("float a[64];\nvec4 b[3];\nx = a[i] + a[b[0].x] + a[0x10];")))
        XCTAssertNoThrow(try GLSLLimits.check(lines("// float huge[100000000];\nfloat a[65536];")))
        for (text, line) in [("void f();\nfloat a[100000000];", 2), ("float g[65536][65536];", 1), ("int h[0x7fffffff];", 1),
                             ("float i[99999999999999999999999];", 1), ("float j[ 70000u ];", 1)] {
            XCTAssertThrowsError(try GLSLLimits.check(lines(text)), text) { error in
                XCTAssertEqual((error as? ShaderLoadError)?.line, line, text)
                XCTAssertTrue("\(error)".contains("PRISM_MAX_ARRAY_ELEMENTS"), "\(error)")
            }
        }
        XCTAssertNoThrow(try GLSLLimits.check(lines("float a[70000];"), maxElements: 70000), "raised")
    }

    func testLimitsComeFromTheContextAndCanBeRaised() throws {
        let gpu = GPULimits(maxTextureSize: 16384, maxRenderSize: 16384)
        let defaults = try GraphLimits.make(gpu: gpu, environment: [:])
        XCTAssertEqual(defaults.maxSide, 8192)
        XCTAssertEqual(try GraphLimits.make(gpu: gpu, environment: ["PRISM_MAX_TEXTURE_SIZE": "16384"]).maxSide, 16384)
        XCTAssertThrowsError(try GraphLimits.make(gpu: gpu, environment: ["PRISM_MAX_TEXTURE_SIZE": "16385"])) { error in
            XCTAssertTrue("\(error)".contains("16384"), "\(error)")
        }
        XCTAssertEqual(try GraphLimits.make(gpu: gpu, environment: ["PRISM_MAX_GPU_MEMORY": "3G"]).maxTextureBytes, 3 << 30)
        XCTAssertThrowsError(try GraphLimits.make(gpu: gpu, environment: ["PRISM_MAX_GPU_MEMORY": "99999999999T"]))
        XCTAssertThrowsError(try GraphLimits.make(gpu: gpu, environment: ["PRISM_MAX_PASSES": "-1"]))
        XCTAssertEqual(try GraphLimits.make(gpu: GPULimits(maxTextureSize: 4096, maxRenderSize: 4096), environment: [:]).maxSide, 4096)

        // The context's own answer, on llvmpipe.
        let context = try SharedGPU.get()
        let read = try context.perform { GPULimits.query() }
        XCTAssertGreaterThanOrEqual(read.maxTextureSize, 2048)
        XCTAssertGreaterThanOrEqual(read.maxTargetSide, 2048)
    }

    /// The compiler refuses, before allocating, a graph over any limit; each message names its limit.
    func testCompilerChecksLimitsBeforeAllocating() throws {
        let image = TestImage.varied(width: 96, height: 64)
        func compile(_ graph: FilterGraph, _ limits: GraphLimits) throws {
            _ = try renderStill(graph, rgba: image.rgba, size: image.size, options: CompileOptions(limits: limits))
        }
        let small = GraphLimits(maxSide: 64, contextMaxSide: 16384)
        XCTAssertThrowsError(try compile(try chain([("invert", [:])]), small)) { error in
            XCTAssertTrue("\(error)".contains("96x64") && "\(error)".contains("PRISM_MAX_TEXTURE_SIZE"), "\(error)")
        }
        let scaled = try chain([("scale", ["size": .size(Size(width: 200, height: 20))])])
        XCTAssertThrowsError(try compile(scaled, GraphLimits(maxSide: 128))) { error in
            XCTAssertTrue("\(error)".contains("scale"), "\(error)")
        }
        let three = try chain([("invert", [:]), ("mono", [:]), ("invert", [:])])
        XCTAssertThrowsError(try compile(three, GraphLimits(maxSide: 8192, maxNodes: 2))) { error in
            XCTAssertTrue("\(error)".contains("3 filters") && "\(error)".contains("PRISM_MAX_FILTERS"), "\(error)")
        }
        XCTAssertThrowsError(try compile(three, GraphLimits(maxSide: 8192, maxTextureBytes: 1000))) { error in
            XCTAssertTrue("\(error)".contains("PRISM_MAX_GPU_MEMORY"), "\(error)")
        }
        let unfusedPixellate = try chain([("pixellate", ["scale": .float(4)]), ("blur", ["radius": .float(2)])])
        XCTAssertThrowsError(try compile(unfusedPixellate, GraphLimits(maxSide: 8192, maxPasses: 1))) { error in
            XCTAssertTrue("\(error)".contains("PRISM_MAX_PASSES"), "\(error)")
        }
        // Within the limits the same graphs render.
        XCTAssertNoThrow(try compile(three, GraphLimits(maxSide: 8192)))
    }
}
