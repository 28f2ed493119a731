import CGLES
import CGPUShims
import Foundation
import PrismCore

/// How packed frames come back from the GPU.
public enum ReadbackStrategy: String, Sendable, CaseIterable {
    /// glReadPixels straight into the destination: waits for the GPU, one copy. Best on software
    /// renderers, where there is no DMA to overlap with.
    case sync
    /// glReadPixels into a ring of pixel buffer objects with fences; each buffer is mapped and copied
    /// out a few frames later, so the transfer overlaps with the next frames' rendering on a real GPU.
    case pbo

    /// The engine's choice for a driver.
    public static func preferred(for info: GPUInfo) -> ReadbackStrategy { info.isSoftware ? .sync : .pbo }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// Reads packed frames (`PackedFrameLayout`) out of render targets into caller-owned memory, keeping
/// each request's tag so the caller learns which frames are complete, in order. One per pipeline, on its
/// GPU thread.
package final class FrameReadback<Tag> {
    package let strategy: ReadbackStrategy
    package let layout: PackedFrameLayout
    private var buffers: [GLuint] = []
    /// The thread the pixel-pack buffers belong to (nil for `.sync`, which makes none).
    private var home: GLObjectHome?
    private var pending: [(buffer: Int, fence: GLsync?, destination: UnsafeMutableRawPointer, tag: Tag)] = []
    private var nextBuffer = 0
    /// GPU watchdog: how long a frame may take on the GPU before the read fails with an error instead
    /// of waiting forever (a shader that never finishes; llvmpipe caps loops, vendor drivers may not).
    /// `PRISM_GPU_TIMEOUT` (seconds) sets it; 10 s by default.
    package var timeoutSeconds: Double = FrameReadback.defaultTimeout()

    package static func defaultTimeout(environment: [String: String] = ProcessInfo.processInfo.environment) -> Double {
        guard let text = environment["PRISM_GPU_TIMEOUT"], let seconds = Double(text), seconds.isFinite, seconds > 0 else {
            return 10
        }
        return min(seconds, 3600)
    }

    private var timeoutNanoseconds: GLuint64 { GLuint64(timeoutSeconds * 1e9) }

    private func timeoutError(_ what: String) -> GLError {
        GLError("glClientWaitSync", detail: "the GPU did not finish \(what) within \(ReadbackStrategy.seconds(timeoutSeconds)) s "
                + "(a shader that never ends?); PRISM_GPU_TIMEOUT sets the limit")
    }

    /// Waits for everything drawn so far, up to the timeout (the sync path's watchdog: glReadPixels
    /// itself would wait without a limit).
    private func waitForDrawing() throws {
        guard let fence = glFenceSync(GLenum(GL_SYNC_GPU_COMMANDS_COMPLETE), 0) else { return }
        defer { glDeleteSync(fence) }
        let status = glClientWaitSync(fence, GLbitfield(GL_SYNC_FLUSH_COMMANDS_BIT), timeoutNanoseconds)
        if status == GLenum(GL_TIMEOUT_EXPIRED) { throw timeoutError("the frame") }
        if status == GLenum(GL_WAIT_FAILED) { throw GLError("glClientWaitSync", code: glGetError()) }
    }

    /// The read of a target that holds the layout row for row in attachment 0.
    private let wholeTarget: [ReadRegion]

    package init(strategy: ReadbackStrategy, layout: PackedFrameLayout, ringSize: Int = 3) throws {
        self.strategy = strategy
        self.layout = layout
        wholeTarget = [ReadRegion(attachment: 0, width: layout.textureSize.width, rows: layout.textureSize.height,
                                  destinationOffset: 0, destinationRowBytes: layout.rowBytes)]
        if strategy == .pbo {
            home = GLObjectHome(.buffer, count: max(ringSize, 1))
            buffers = [GLuint](repeating: 0, count: max(ringSize, 1))
            glGenBuffers(GLsizei(buffers.count), &buffers)
            for buffer in buffers {
                glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), buffer)
                glBufferData(GLenum(GL_PIXEL_PACK_BUFFER), layout.byteCount, nil, GLenum(GL_STREAM_READ))
            }
            glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), 0)
            try GLError.check("glBufferData(pixel pack, \(layout.byteCount) bytes)")
        }
    }

    deinit {
        // Fences travel as bit patterns: a GLsync pointer is not Sendable.
        let fences = pending.compactMap { $0.fence.map { UInt(bitPattern: $0) } }, buffers = self.buffers
        home?.delete {
            for fence in fences { glDeleteSync(OpaquePointer(bitPattern: fence)) }
            glDeleteBuffers(GLsizei(buffers.count), buffers)
        }
    }

    /// Frames submitted and not yet delivered.
    package var inFlight: Int { pending.count }

    /// Starts reading `target` into `destination` (layout.byteCount bytes). Returns the tags of the
    /// frames whose bytes are now in their destination, oldest first.
    package func submit(_ target: RenderTarget, into destination: UnsafeMutableRawPointer, tag: Tag) throws -> [Tag] {
        var done: [Tag] = []
        try submit(target, into: destination, tag: tag) { done.append($0) }
        return done
    }

    /// `submit` for the per-frame path: completed frames are handed to `completed`, oldest first, and
    /// nothing is allocated.
    package func submit(_ target: RenderTarget, into destination: UnsafeMutableRawPointer, tag: Tag,
                       completed: (Tag) throws -> Void) throws {
        let regions = target.readPlan ?? wholeTarget
        precondition(target.readPlan != nil || target.size == layout.textureSize,
                     "render target does not match the packed layout")
        home?.check()
        target.bindForReading()
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 4)
        /// Reads every region; `base` is the destination pointer, or an offset into the bound PBO.
        func readRegions(_ base: UnsafeMutableRawPointer?) {
            for region in regions {
                glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0) + GLenum(region.attachment))
                glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), GLint(region.destinationRowBytes / 4))
                let pointer = base.map { $0 + region.destinationOffset }
                    ?? UnsafeMutableRawPointer(bitPattern: region.destinationOffset)
                glReadPixels(GLint(region.x), 0, GLsizei(region.width), GLsizei(region.rows), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE),
                             pointer)
            }
            glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), 0)
            glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0))
        }
        switch strategy {
        case .sync:
            try waitForDrawing()
            readRegions(destination)
            try GLError.check("glReadPixels")
            try completed(tag)
        case .pbo:
            if pending.count == buffers.count { try completed(try completeOldest(wait: true)) }
            let index = nextBuffer
            nextBuffer = (nextBuffer + 1) % buffers.count
            glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), buffers[index])
            readRegions(nil)
            glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), 0)
            let fence = glFenceSync(GLenum(GL_SYNC_GPU_COMMANDS_COMPLETE), 0)
            glFlush()
            pending.append((index, fence, destination, tag))
            try GLError.check("glReadPixels(pixel pack buffer)")
            // Deliver whatever has already landed, without waiting.
            while let first = pending.first, first.buffer != index, isSignalled(first.fence) {
                try completed(try completeOldest(wait: false))
            }
        }
    }

    /// Waits for every frame in flight and returns their tags, oldest first.
    package func drain() throws -> [Tag] {
        var completed: [Tag] = []
        while !pending.isEmpty { completed.append(try completeOldest(wait: true)) }
        return completed
    }

    private func isSignalled(_ fence: GLsync?) -> Bool {
        guard let fence else { return true }
        return glClientWaitSync(fence, 0, 0) != GLenum(GL_TIMEOUT_EXPIRED)
    }

    private func completeOldest(wait: Bool) throws -> Tag {
        let entry = pending.removeFirst()
        if let fence = entry.fence {
            if wait {
                let status = glClientWaitSync(fence, GLbitfield(GL_SYNC_FLUSH_COMMANDS_BIT), timeoutNanoseconds)
                if status == GLenum(GL_WAIT_FAILED) || status == GLenum(GL_TIMEOUT_EXPIRED) {
                    glDeleteSync(fence)
                    throw timeoutError("the readback")
                }
            }
            glDeleteSync(fence)
        }
        glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), buffers[entry.buffer])
        defer { glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), 0) }
        guard let mapped = glMapBufferRange(GLenum(GL_PIXEL_PACK_BUFFER), 0, layout.byteCount,
                                            GLbitfield(GL_MAP_READ_BIT)) else {
            throw GLError("glMapBufferRange", code: glGetError())
        }
        entry.destination.copyMemory(from: mapped, byteCount: layout.byteCount)
        glUnmapBuffer(GLenum(GL_PIXEL_PACK_BUFFER))
        return entry.tag
    }
}
