import CGLES
import Synchronization
import XCTest
import PrismCore
@testable import PrismGPU

/// GL objects belong to the thread of the context they were made on: they know it, count themselves
/// there, and are deleted there even when their last reference goes elsewhere.
final class ConfinementTests: XCTestCase {
    func testObjectsCountThemselvesOnTheirContextOnly() throws {
        let context = try GPUContext()
        let other = try GPUContext()
        XCTAssertEqual(context.liveObjects, GPUObjectCounts())
        let counts = try context.perform { () throws -> (made: GPUObjectCounts, gone: GPUObjectCounts) in
            var target: RenderTarget? = try RenderTarget(size: Size(width: 8, height: 4), attachments: 2)
            var table: Texture? = try Texture(dimension: 2, rgb: Array(repeating: SIMD3(0, 0, 0), count: 8))
            var program: ShaderProgram? = try ShaderProgram(
                label: "test", fragment: "#version 300 es\nprecision mediump float;\nout vec4 o;\nvoid main() { o = vec4(1.0); }\n")
            var readback: FrameReadback<Int>? = try FrameReadback(
                strategy: .pbo, layout: PackedFrameLayout(format: .rgba, size: Size(width: 8, height: 4))!, ringSize: 2)
            let made = context.liveObjects
            XCTAssertNotNil(target); XCTAssertNotNil(table); XCTAssertNotNil(program); XCTAssertNotNil(readback)
            (target, table, program, readback) = (nil, nil, nil, nil)
            return (made, context.liveObjects)
        }
        XCTAssertEqual(counts.made.textures, 3)  // two attachments and the table
        XCTAssertEqual(counts.made.framebuffers, 1)
        XCTAssertEqual(counts.made.programs, 1)
        XCTAssertEqual(counts.made.buffers, 2)
        XCTAssertEqual(counts.gone, GPUObjectCounts())
        XCTAssertEqual(other.liveObjects, GPUObjectCounts(), "another context's objects are not this one's")
    }

    func testAnObjectDroppedOffItsThreadIsDeletedThere() throws {
        let context = try GPUContext()
        var texture: Texture? = try context.perform { try Texture(size: Size(width: 4, height: 4), format: .rgba8) }
        XCTAssertEqual(context.liveObjects.textures, 1)
        let name = try XCTUnwrap(texture?.name)
        XCTAssertEqual(try context.perform { glIsTexture(name) }, GLboolean(GL_TRUE))
        XCTAssertFalse(context.thread.isCurrent)
        texture = nil  // the last reference goes here, on the test's thread: the deletion is posted
        XCTAssertNil(texture)
        // Jobs run in order: by the time this one runs, the posted deletion has, with the context current
        // (a glDeleteTextures here, where no context is current, would have deleted nothing).
        let (count, exists) = try context.perform { (context.liveObjects.textures, glIsTexture(name)) }
        XCTAssertEqual(count, 0)
        XCTAssertEqual(exists, GLboolean(GL_FALSE))
    }

    func testGPUBoundIsOnlyReachableOnItsThread() throws {
        let context = try GPUContext()
        final class State {
            var texture: Texture?
            var frames = 0
        }
        let bound = try context.perform { () throws -> GPUBound<State> in
            let state = State()
            state.texture = try Texture(size: Size(width: 2, height: 2), format: .rgba8)
            return GPUBound(state, on: context)
        }
        XCTAssertFalse(bound.thread.isCurrent)
        XCTAssertTrue(bound.thread === context.thread)
        XCTAssertTrue(try context.perform { bound.thread.isCurrent })
        try context.perform { bound.value.frames += 1 }
        // From here, withValue hops to the GPU thread.
        let frames = try bound.withValue { state -> Int in
            XCTAssertTrue(context.thread.isCurrent)
            state.frames += 1
            return state.frames
        }
        XCTAssertEqual(frames, 2)
        XCTAssertEqual(try context.perform { bound.value.frames }, 2)
    }

    func testGPUBoundDroppedElsewhereReleasesItsValueOnItsThread() throws {
        let context = try GPUContext()
        /// Reports, from its deinit, whether it ran on the context's thread.
        final class Tracked {
            let texture: Texture
            let report: @Sendable (Bool) -> Void
            init(_ texture: Texture, report: @escaping @Sendable (Bool) -> Void) {
                self.texture = texture
                self.report = report
            }
            deinit { report(GPUThread.current != nil) }
        }
        let releasedOnGPUThread = Mutex<Bool?>(nil)
        var bound: GPUBound<Tracked>? = try context.perform {
            GPUBound(Tracked(try Texture(size: Size(width: 2, height: 2), format: .rgba8)) { onGPU in
                releasedOnGPUThread.withLock { $0 = onGPU }
            })
        }
        XCTAssertEqual(context.liveObjects.textures, 1)
        // The box is Sendable: it moves to another thread, whose dropping it is its last reference.
        let done = expectation(description: "dropped on another thread")
        let slot = Mutex(bound.take())
        XCTAssertNil(bound)
        Thread {
            slot.withLock { $0 = nil }
            done.fulfill()
        }.start()
        wait(for: [done], timeout: 10)
        try context.perform {}  // a job after the posted release
        let released = try XCTUnwrap(try context.perform { releasedOnGPUThread.withLock { $0 } })
        XCTAssertTrue(released, "the value was released off its GPU thread")
        XCTAssertEqual(try context.perform { context.liveObjects.textures }, 0)
    }

    func testGPUThreadCurrentIsSetOnlyOnItsThread() throws {
        let context = try GPUContext()
        XCTAssertNil(GPUThread.current)
        XCTAssertTrue(try context.perform { GPUThread.current === context.thread })
        let other = try GPUContext()
        XCTAssertTrue(try other.perform { GPUThread.current === other.thread && !context.thread.isCurrent })
        XCTAssertTrue(try context.perform { try other.perform { GPUThread.current === other.thread } })
    }

    func testFinishAndRendererName() throws {
        let context = try GPUContext()
        XCTAssertEqual(GPUContext.currentRenderer(), "", "no GL off a GPU thread")
        let name = try context.perform { () -> String in
            context.finish()
            return GPUContext.currentRenderer()
        }
        XCTAssertEqual(name, context.info.renderer)
        XCTAssertEqual(GPUInfo.isSoftwareRenderer(name), context.info.isSoftware)
    }
}
