import CGLES
import XCTest
import PrismCore
@testable import PrismGPU

/// GLES 3.1 compute in PrismGPU (what mpv hooks' `//!COMPUTE` passes run on): a compute program links
/// through the cache, dispatches over a grid larger than its image, shares data in a work group, and
/// its writes are seen by the next dispatch; a broken one fails at `.compute` with its line; a context
/// capped at GLES 3.0 says it has no compute and refuses compute programs.
final class ComputeTests: XCTestCase {
    /// The image is smaller than the 3 × 2 grid of 8 × 8 groups (24 × 16), so the shader's bounds check matters.
    static let size = Size(width: 20, height: 13)

    /// Each output texel: the mean of its 8 × 8 group's input (texels outside the image count as zero),
    /// plus its own input. The mean goes through `shared` memory after a `barrier()`.
    static let groupMean = """
        #version 310 es
        layout(local_size_x = 8, local_size_y = 8) in;
        layout(binding = 0) uniform highp sampler2D inputImage;
        layout(rgba16f, binding = 0) writeonly uniform highp image2D outputImage;
        shared vec4 tile[64];
        void main() {
            ivec2 p = ivec2(gl_GlobalInvocationID.xy);
            bool inside = all(lessThan(p, textureSize(inputImage, 0)));
            vec4 value = inside ? texelFetch(inputImage, p, 0) : vec4(0.0);
            tile[gl_LocalInvocationIndex] = value;
            barrier();
            vec4 sum = vec4(0.0);
            for (int i = 0; i < 64; i++) sum += tile[i];
            if (inside) imageStore(outputImage, p, sum / 64.0 + value);
        }
        """

    /// Each texel: the first pass's texel (sampled) plus its point mirror through the centre (an image
    /// load from other work groups), so it reads what other groups of the previous dispatch wrote.
    static let mirrorSum = """
        #version 310 es
        layout(local_size_x = 8, local_size_y = 8) in;
        layout(binding = 1) uniform highp sampler2D first;
        layout(rgba16f, binding = 1) readonly uniform highp image2D firstImage;
        layout(rgba16f, binding = 2) writeonly uniform highp image2D outputImage;
        void main() {
            ivec2 p = ivec2(gl_GlobalInvocationID.xy);
            ivec2 size = imageSize(firstImage);
            if (any(greaterThanEqual(p, size))) return;
            imageStore(outputImage, p, texelFetch(first, p, 0) + imageLoad(firstImage, size - 1 - p));
        }
        """

    /// Halves an r32f image in place and adds the second pass's red (load and store on one read-write
    /// image, which GLSL ES allows in r32f only).
    static let halveInPlace = """
        #version 310 es
        layout(local_size_x = 8, local_size_y = 8) in;
        layout(binding = 2) uniform highp sampler2D second;
        layout(r32f, binding = 3) uniform highp image2D image;
        void main() {
            ivec2 p = ivec2(gl_GlobalInvocationID.xy);
            if (any(greaterThanEqual(p, imageSize(image)))) return;
            imageStore(image, p, imageLoad(image, p) * 0.5 + texelFetch(second, p, 0).r);
        }
        """

    /// An RGBA8 test image with every channel varying, as bytes.
    static func input(_ size: Size) -> [UInt8] {
        var bytes: [UInt8] = []
        for y in 0..<size.height {
            for x in 0..<size.width {
                let r = (x * 13 + y * 7) % 256, g = (x * 3 + y * 29) % 256, b = (x * y * 5 + 17) % 256
                bytes += [UInt8(r), UInt8(g), UInt8(b), UInt8(255 - x * 4)]
            }
        }
        return bytes
    }

    /// `groupMean` on the CPU, as floats (RGBA, rows top first as uploaded).
    static func groupMeanOnCPU(_ bytes: [UInt8], _ size: Size) -> [Float] {
        var out = [Float](repeating: 0, count: size.width * size.height * 4)
        for y in 0..<size.height {
            for x in 0..<size.width {
                for c in 0..<4 {
                    var sum: Float = 0
                    for gy in (y / 8 * 8)..<(y / 8 * 8 + 8) where gy < size.height {
                        for gx in (x / 8 * 8)..<(x / 8 * 8 + 8) where gx < size.width {
                            sum += Float(bytes[(gy * size.width + gx) * 4 + c]) / 255
                        }
                    }
                    out[(y * size.width + x) * 4 + c] = sum / 64 + Float(bytes[(y * size.width + x) * 4 + c]) / 255
                }
            }
        }
        return out
    }

    /// Reads a float target back as RGBA floats.
    static func read(_ target: RenderTarget) -> [Float] {
        var texels = [Float](repeating: -1, count: target.size.width * target.size.height * 4)
        target.bindForReading()
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 4)
        glReadPixels(0, 0, GLsizei(target.size.width), GLsizei(target.size.height), GLenum(GL_RGBA), GLenum(GL_FLOAT), &texels)
        return texels
    }

    /// The largest difference between two equally long float arrays.
    static func maxError(_ a: [Float], _ b: [Float]) -> Float {
        XCTAssertEqual(a.count, b.count)
        return zip(a, b).map { abs($0 - $1) }.max() ?? .infinity
    }

    /// (a) and (b): shared memory and a barrier inside a group, a bounds-checked image store, then a
    /// second dispatch that samples and image-loads the first's output, then an in-place read-write one.
    func testDispatchesWriteImagesTheNextDispatchReads() throws {
        let context = try GPUContext()
        let size = Self.size
        let bytes = Self.input(size)
        let (first, second, halved, links) = try context.perform { () throws -> ([Float], [Float], [Float], Int) in
            XCTAssertTrue(GPULimits.query().supportsCompute, "llvmpipe has GLES 3.2")
            let before = context.programLinks
            let realiser = Realiser(programs: context.resources.programs, targets: context.resources.targets)
            let mean = try realiser.program(ProgramSource(label: "group-mean", compute: Self.groupMean))
            let mirror = try realiser.program(ProgramSource(label: "mirror-sum", compute: Self.mirrorSum))
            let halve = try realiser.program(ProgramSource(label: "halve", compute: Self.halveInPlace))
            XCTAssertTrue(mean.isCompute)
            XCTAssertTrue(try realiser.program(ProgramSource(label: "again", compute: Self.groupMean)) === mean,
                          "a compute source links once per context")
            let links = context.programLinks - before

            let input = try Texture(size: size, format: .rgba8, linear: false)
            bytes.withUnsafeBytes { input.upload($0.baseAddress!, rowBytes: size.width * 4) }
            // Targets, so they can be read back; filled with a value no pass writes, so untouched texels show.
            let firstTarget = try RenderTarget(size: size, format: .rgba16f, linear: false)
            let secondTarget = try RenderTarget(size: size, format: .rgba16f, linear: false)
            let inPlace = try RenderTarget(size: size, format: .r32f, linear: false)
            for target in [firstTarget, secondTarget, inPlace] {
                target.bindForDrawing()
                glClearColor(-7, -7, -7, -7)
                glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
            }
            let groups = (x: (size.width + 7) / 8, y: (size.height + 7) / 8)

            input.bind(unit: 0)
            firstTarget.texture.bindImage(unit: 0, access: .writeOnly)
            mean.dispatchCompute(groupsX: groups.x, groupsY: groups.y)

            firstTarget.texture.bind(unit: 1)
            firstTarget.texture.bindImage(unit: 1, access: .readOnly)
            secondTarget.texture.bindImage(unit: 2, access: .writeOnly)
            mirror.dispatchCompute(groupsX: groups.x, groupsY: groups.y)
            let second = Self.read(secondTarget)

            secondTarget.texture.bind(unit: 2)
            inPlace.texture.bindImage(unit: 3, access: .readWrite)
            halve.dispatchCompute(groupsX: groups.x, groupsY: groups.y)
            try GLError.check("compute dispatches")
            return (Self.read(firstTarget), second, Self.read(inPlace), links)
        }
        XCTAssertEqual(links, 3)

        // rgba16f keeps 11 significant bits: values up to 2 are within 2^-10 of the exact result.
        let expected = Self.groupMeanOnCPU(bytes, size)
        XCTAssertLessThan(Self.maxError(first, expected), 2e-3, "the group mean plus each texel")
        var mirrored = [Float](repeating: 0, count: expected.count)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let here = (y * size.width + x) * 4
                let there = ((size.height - 1 - y) * size.width + (size.width - 1 - x)) * 4
                for c in 0..<4 { mirrored[here + c] = first[here + c] + first[there + c] }
            }
        }
        XCTAssertLessThan(Self.maxError(second, mirrored), 4e-3, "the second dispatch saw every texel the first wrote")
        // The r32f target held -7 (its clear): halved in place, plus the second pass's red.
        let halvedRed = stride(from: 0, to: halved.count, by: 4).map { halved[$0] }
        let expectedRed = stride(from: 0, to: second.count, by: 4).map { -3.5 + second[$0] }
        XCTAssertLessThan(Self.maxError(halvedRed, expectedRed), 1e-5, "loaded, halved and stored in place")
    }

    /// (c) A compute shader that does not compile fails at the compute stage, its log at its line.
    func testABrokenComputeShaderFailsAtItsLine() throws {
        let context = try GPUContext()
        let broken = """
            #version 310 es
            layout(local_size_x = 8, local_size_y = 8) in;
            void main() {
                int x = 1 +;
            }
            """
        XCTAssertThrowsError(try context.perform { try context.resources.programs.program(label: "broken", compute: broken) }) { error in
            guard let error = error as? ShaderCompileError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.stage, .compute)
            XCTAssertEqual(error.name, "broken")
            XCTAssertTrue(error.diagnostics.contains { $0.line == 4 }, "the log names line 4: \(error.log)")
            XCTAssertTrue(error.description.hasPrefix("broken: compute shader failed:"), error.description)
        }
        XCTAssertEqual(context.programLinks, 0, "a shader that does not compile never reaches the link")
    }

    /// (d) A context capped at GLES 3.0 reports no compute (and no compute limits) and refuses compute
    /// programs with a message that says why; an uncapped one reports at least GLES 3.1's minimums.
    func testAGLES30ContextHasNoCompute() throws {
        // Mesa hands out a 3.2 context even when 3.0 is asked for: the cap holds all the same.
        let capped = try GPUContext(options: GPUOptions(maxGLESMinorVersion: 0))
        let limits = try capped.perform { GPULimits.query() }
        XCTAssertFalse(limits.supportsCompute)
        XCTAssertEqual(limits.glesMajorVersion, 3)
        XCTAssertEqual(limits.glesMinorVersion, 0)
        XCTAssertEqual(limits.maxComputeWorkGroupInvocations, 0)
        XCTAssertEqual(limits.maxComputeWorkGroupSize, .zero)
        XCTAssertEqual(limits.maxComputeSharedMemorySize, 0)
        XCTAssertThrowsError(try capped.perform {
            try Realiser(programs: capped.resources.programs, targets: capped.resources.targets)
                .program(ProgramSource(label: "mean", compute: Self.groupMean))
        }) { error in
            guard let error = error as? ShaderCompileError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.stage, .compute)
            XCTAssertTrue(error.log.contains("OpenGL ES 3.1") && error.log.contains("OpenGL ES 3.0"), error.log)
        }
        // Drawing still works there.
        XCTAssertNoThrow(try capped.perform { _ = try capped.resources.programs.program(label: "f", fragment: ContextResourcesTests.fragment) })

        let full = try GPUContext()
        let fullLimits = try full.perform { GPULimits.query() }
        XCTAssertTrue(fullLimits.supportsCompute)
        XCTAssertGreaterThanOrEqual(fullLimits.maxComputeWorkGroupInvocations, 128)
        XCTAssertGreaterThanOrEqual(fullLimits.maxComputeWorkGroupSize.x, 128)
        XCTAssertGreaterThanOrEqual(fullLimits.maxComputeWorkGroupSize.y, 128)
        XCTAssertGreaterThanOrEqual(fullLimits.maxComputeSharedMemorySize, 16384)
    }

    /// The cap's sources: the option first, then `PRISM_GLES_MINOR`, else 3.2; nonsense is an error.
    func testTheGLESMinorCapComesFromTheOptionOrTheEnvironment() throws {
        XCTAssertEqual(try GPUOptions().glesMinorVersionCap(environment: [:]), 2)
        XCTAssertEqual(try GPUOptions().glesMinorVersionCap(environment: ["PRISM_GLES_MINOR": "0"]), 0)
        XCTAssertEqual(try GPUOptions().glesMinorVersionCap(environment: ["PRISM_GLES_MINOR": " 1 "]), 1)
        XCTAssertEqual(try GPUOptions(maxGLESMinorVersion: 2).glesMinorVersionCap(environment: ["PRISM_GLES_MINOR": "0"]), 2)
        XCTAssertThrowsError(try GPUOptions().glesMinorVersionCap(environment: ["PRISM_GLES_MINOR": "3"]))
        XCTAssertThrowsError(try GPUOptions().glesMinorVersionCap(environment: ["PRISM_GLES_MINOR": "x"]))
        XCTAssertThrowsError(try GPUContext(options: GPUOptions(maxGLESMinorVersion: -1)))
    }

    /// Only the formats GLES 3.1 can bind as images are image formats.
    func testImageFormatsAreTheOnesGLES31Allows() {
        XCTAssertEqual([TextureFormat.r8, .rg8, .rgba8, .r16ui, .rgba16f, .rgba32f].filter(\.isImageFormat), [.rgba8, .rgba16f, .rgba32f])
        XCTAssertTrue(TextureFormat.r32f.isImageFormat)
        XCTAssertEqual(TextureFormat.r32f.bytesPerTexel, 4)
    }
}
