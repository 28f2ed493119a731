import PrismCore

/// A program as a plan names it: its full source and how it draws (or that it dispatches). What
/// `Realiser` links (once per context: `ProgramCache` is keyed by it).
package struct ProgramSource: Hashable, Sendable {
    package var label: String
    /// nil: the full-target triangle (`ShaderProgram.fullscreenVertexBody`).
    package var vertex: String?
    /// Empty for a compute program.
    package var fragment: String
    /// See `ShaderProgram.drawsQuad`.
    package var drawsQuad: Bool
    /// A compute shader (GLES 3.1): the program is that shader alone, and `vertex`, `fragment` and
    /// `drawsQuad` are unused.
    package var compute: String?

    package init(label: String, vertex: String? = nil, fragment: String, drawsQuad: Bool = false) {
        self.label = label
        self.vertex = vertex
        self.fragment = fragment
        self.drawsQuad = drawsQuad
        self.compute = nil
    }

    /// A compute program (an mpv hook's `//!COMPUTE` pass): see `ShaderProgram.init(label:compute:)`.
    package init(label: String, compute: String) {
        self.label = label
        self.vertex = nil
        self.fragment = ""
        self.drawsQuad = false
        self.compute = compute
    }
}

/// A render target as a plan names it: its shape, how a packed frame is read out of it, and whether it
/// must start transparent black.
package struct TargetSpec: Hashable, Sendable {
    package var size: Size
    package var format: TextureFormat
    package var attachments: Int
    /// See `RenderTarget.readPlan`.
    package var readPlan: [ReadRegion]?
    /// Cleared before first use (a pass that draws only part of it, or reads its own previous frame).
    package var cleared: Bool

    package init(size: Size, format: TextureFormat = .rgba8, attachments: Int = 1, readPlan: [ReadRegion]? = nil,
                cleared: Bool = false) {
        self.size = size
        self.format = format
        self.attachments = attachments
        self.readPlan = readPlan
        self.cleared = cleared
    }

    /// Bytes of storage.
    package var byteCount: Int { size.width * size.height * format.bytesPerTexel * attachments }
}

/// Turns what a plan names into GL objects: programs through the context's cache, targets from a pool
/// (the context's unless told otherwise). The one place a plan meets GL; on the GPU thread.
package struct Realiser {
    package let programs: ProgramCache
    package let targets: TexturePool

    package init(programs: ProgramCache = .current, targets: TexturePool = .current) {
        self.programs = programs
        self.targets = targets
    }

    package func program(_ source: ProgramSource) throws -> ShaderProgram {
        if let compute = source.compute { return try programs.program(label: source.label, compute: compute) }
        return try programs.program(label: source.label, vertex: source.vertex, fragment: source.fragment, drawsQuad: source.drawsQuad)
    }

    package func target(_ spec: TargetSpec) throws -> RenderTarget {
        let target = try targets.acquire(size: spec.size, format: spec.format, attachments: spec.attachments)
        target.readPlan = spec.readPlan
        if spec.cleared { target.clear() }
        return target
    }
}
