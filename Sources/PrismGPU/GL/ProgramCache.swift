import PrismCore

/// Linked programs by their full source (vertex and fragment text and how they draw, or compute text), kept for the
/// life of a GPU context: a graph compiled again (a second take, a photo's attach and detach, a dev
/// recording, a size change that leaves the code alone) links nothing it linked before. Lives and dies
/// on its GPU thread (`GPUThread.resources`).
///
/// A program is shared by every renderer that asks for the same source; each sets all the uniforms
/// it uses before each draw, so sharing one changes nothing a draw sees.
package final class ProgramCache {
    private struct Key: Hashable {
        var vertex: String?
        var fragment: String
        var drawsQuad: Bool
        /// Set (with an empty fragment) for a compute program.
        var compute: String? = nil
    }

    private var programs: [Key: ShaderProgram] = [:]
    /// Insertion order, for the bound: the oldest entries go first (renderers holding them keep them).
    private var order: [Key] = []
    /// The most programs kept; a long dev session editing a shader would otherwise keep every version.
    package let capacity: Int

    package init(capacity: Int = 512) { self.capacity = capacity }

    /// The program for this source: the cached one, or a new link (errors are not cached: a shader
    /// that fails fails again, with its log).
    package func program(label: String, vertex: String? = nil, fragment: String, drawsQuad: Bool = false) throws -> ShaderProgram {
        let key = Key(vertex: vertex, fragment: fragment, drawsQuad: drawsQuad)
        if let cached = programs[key] { return cached }
        return try insert(key) { try ShaderProgram(label: label, vertex: vertex, fragment: fragment, drawsQuad: drawsQuad) }
    }

    /// The compute program for this source (see `ShaderProgram.init(label:compute:)`), cached like the others.
    package func program(label: String, compute: String) throws -> ShaderProgram {
        let key = Key(vertex: nil, fragment: "", drawsQuad: false, compute: compute)
        if let cached = programs[key] { return cached }
        return try insert(key) { try ShaderProgram(label: label, compute: compute) }
    }

    private func insert(_ key: Key, _ make: () throws -> ShaderProgram) throws -> ShaderProgram {
        let program = try make()
        programs[key] = program
        order.append(key)
        if order.count > capacity { programs[order.removeFirst()] = nil }
        return program
    }

    /// Programs held.
    package var count: Int { programs.count }

    package func removeAll() {
        programs.removeAll()
        order.removeAll()
    }

    /// The cache of the context current on the calling thread; stops off a GPU thread.
    package static var current: ProgramCache { GPUResources.current.programs }
}

/// What a GPU context keeps for its whole life and every renderer on it shares: linked programs and
/// free render targets. Owned by the context's `GPUThread`, dropped when the context closes.
package final class GPUResources {
    package let programs = ProgramCache()
    package let targets = TexturePool()

    init() {}

    /// Deletes what no renderer still holds.
    func removeAll() {
        programs.removeAll()
        targets.removeAll()
    }

    /// The resources of the context current on the calling thread; stops off a GPU thread.
    package static var current: GPUResources {
        guard let thread = GPUThread.current else {
            preconditionFailure("GPU resources used off a GPU thread; GL work goes through GPUContext.perform")
        }
        return thread.resources
    }
}
