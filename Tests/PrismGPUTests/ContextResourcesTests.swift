import CGLES
import XCTest
import PrismCore
@testable import PrismGPU

/// The context's program cache and target pool: a source links once per context, a target comes back
/// to the pool and out again, and what they hold is counted with the context's objects and goes with it.
final class ContextResourcesTests: XCTestCase {
    static let fragment = "#version 300 es\nprecision mediump float;\nout vec4 o;\nvoid main() { o = vec4(1.0); }\n"

    func testASourceLinksOncePerContext() throws {
        let context = try GPUContext(), other = try GPUContext()
        let (first, again, links) = try context.perform { () throws -> (ShaderProgram, ShaderProgram, Int) in
            let before = context.programLinks
            let first = try context.resources.programs.program(label: "a", fragment: Self.fragment)
            let again = try context.resources.programs.program(label: "b", fragment: Self.fragment)
            return (first, again, context.programLinks - before)
        }
        XCTAssertTrue(first === again, "the same source is the same program")
        XCTAssertEqual(links, 1)
        // Another source (a vertex shader of its own, or drawing a quad) is another program; another
        // context links its own.
        try context.perform {
            let quad = try context.resources.programs.program(label: "c", fragment: Self.fragment, drawsQuad: true)
            XCTAssertFalse(quad === first)
        }
        XCTAssertEqual(context.programLinks, 2)
        try other.perform { _ = try other.resources.programs.program(label: "a", fragment: Self.fragment) }
        XCTAssertEqual(other.programLinks, 1)
        // A failing source fails every time, with its log (nothing is cached for it).
        for _ in 0..<2 {
            XCTAssertThrowsError(try context.perform {
                try context.resources.programs.program(label: "bad", fragment: "#version 300 es\nvoid main() { nope; }\n")
            })
        }
        XCTAssertEqual(context.programLinks, 2, "a shader that does not compile never reaches the link")
    }

    func testTargetsComeBackClearedAndTheCacheGoesWithTheContext() throws {
        let context = try GPUContext()
        let counts = try context.perform { () throws -> (made: Int, pixel: [UInt8], held: GPUObjectCounts, gone: GPUObjectCounts) in
            let pool = context.resources.targets
            let size = Size(width: 4, height: 2)
            var target: RenderTarget? = try pool.acquire(size: size)
            // Drawn into, then handed back: the next taker gets the same target, transparent black again.
            target!.bindForDrawing()
            glClearColor(1, 0, 0, 1)
            glClear(GLbitfield(GL_COLOR_BUFFER_BIT))
            let name = target!.framebuffer
            pool.release(target!)
            target = try pool.acquire(size: size)
            XCTAssertEqual(target!.framebuffer, name, "the free target was taken back")
            var pixel = [UInt8](repeating: 9, count: 4)
            target!.bindForReading()
            glReadPixels(0, 0, 1, 1, GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), &pixel)
            pool.release(target!)
            target = nil
            _ = try context.resources.programs.program(label: "a", fragment: Self.fragment)
            let held = context.liveObjects
            context.releaseResources()
            return (pool.createdCount, pixel, held, context.liveObjects)
        }
        XCTAssertEqual(counts.made, 1)
        XCTAssertEqual(counts.pixel, [0, 0, 0, 0])
        XCTAssertEqual(counts.held.textures, 1)
        XCTAssertEqual(counts.held.programs, 1)
        XCTAssertEqual(counts.gone, GPUObjectCounts(), "emptied, the cache leaves nothing behind")
    }
}
