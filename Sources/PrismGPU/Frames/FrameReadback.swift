import CGLES
import CGPUShims
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
}

/// Reads packed frames (`PackedFrameLayout`) out of render targets into caller-owned memory, keeping
/// each request's tag so the caller learns which frames are complete, in order. One per pipeline, on its
/// GPU thread.
public final class FrameReadback<Tag> {
    public let strategy: ReadbackStrategy
    public let layout: PackedFrameLayout
    private var buffers: [GLuint] = []
    /// The thread the pixel-pack buffers belong to (nil for `.sync`, which makes none).
    private var home: GLObjectHome?
    private var pending: [(buffer: Int, fence: GLsync?, destination: UnsafeMutableRawPointer, tag: Tag)] = []
    private var nextBuffer = 0

    /// The read of a target that holds the layout row for row in attachment 0.
    private let wholeTarget: [ReadRegion]

    public init(strategy: ReadbackStrategy, layout: PackedFrameLayout, ringSize: Int = 3) throws {
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
    public var inFlight: Int { pending.count }

    /// Starts reading `target` into `destination` (layout.byteCount bytes). Returns the tags of the
    /// frames whose bytes are now in their destination, oldest first.
    public func submit(_ target: RenderTarget, into destination: UnsafeMutableRawPointer, tag: Tag) throws -> [Tag] {
        var done: [Tag] = []
        try submit(target, into: destination, tag: tag) { done.append($0) }
        return done
    }

    /// `submit` for the per-frame path: completed frames are handed to `completed`, oldest first, and
    /// nothing is allocated.
    public func submit(_ target: RenderTarget, into destination: UnsafeMutableRawPointer, tag: Tag,
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
                glReadPixels(0, 0, GLsizei(region.width), GLsizei(region.rows), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE),
                             pointer)
            }
            glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), 0)
            glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0))
        }
        switch strategy {
        case .sync:
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
    public func drain() throws -> [Tag] {
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
                let status = glClientWaitSync(fence, GLbitfield(GL_SYNC_FLUSH_COMMANDS_BIT), 5_000_000_000)
                if status == GLenum(GL_WAIT_FAILED) || status == GLenum(GL_TIMEOUT_EXPIRED) {
                    glDeleteSync(fence)
                    throw GLError("glClientWaitSync", detail: "readback fence did not signal within 5 s")
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
