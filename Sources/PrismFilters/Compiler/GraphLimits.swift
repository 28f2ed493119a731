import Foundation
import PrismCore
import PrismGPU

/// How much one compiled graph may ask of the GPU, checked before anything is allocated so that a
/// typo in a shader or a graph (400 filters, a 16384² pass, `$WIDTH*1e20`) is one clear error rather
/// than gigabytes of textures and a machine swapping.
///
/// The side limit comes from the context (`GPULimits`: `GL_MAX_TEXTURE_SIZE`, renderbuffer and
/// viewport limits) and is capped lower by default; every limit can be raised explicitly with an
/// environment variable (named in the error), never past what the GL context reports.
package struct GraphLimits: Sendable, Hashable {
    /// The widest or tallest pass target.
    package var maxSide: Int
    /// Filters in one graph.
    package var maxNodes: Int
    /// Draws per frame.
    package var maxPasses: Int
    /// Bytes of render targets one graph may hold.
    package var maxTextureBytes: Int
    /// The context's own side limit, for messages.
    package var contextMaxSide: Int

    package static let defaultMaxSide = 8192
    package static let defaultMaxNodes = 128
    package static let defaultMaxPasses = 256
    package static let defaultMaxTextureBytes = 2 << 30

    /// Environment variables that raise (or lower) the defaults.
    package static let sideVariable = "PRISM_MAX_TEXTURE_SIZE"
    package static let nodesVariable = "PRISM_MAX_FILTERS"
    package static let passesVariable = "PRISM_MAX_PASSES"
    package static let bytesVariable = "PRISM_MAX_GPU_MEMORY"

    package init(maxSide: Int, maxNodes: Int = defaultMaxNodes, maxPasses: Int = defaultMaxPasses,
                maxTextureBytes: Int = defaultMaxTextureBytes, contextMaxSide: Int? = nil) {
        self.maxSide = maxSide
        self.maxNodes = maxNodes
        self.maxPasses = maxPasses
        self.maxTextureBytes = maxTextureBytes
        self.contextMaxSide = contextMaxSide ?? maxSide
    }

    /// The limits for the context current on this thread (call on the GPU thread), with the
    /// environment's overrides. An override that is not a positive number is an error.
    package static func current(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> GraphLimits {
        try make(gpu: GPULimits.query(), environment: environment)
    }

    /// Filters allowed in one graph (the default, or `PRISM_MAX_FILTERS`). Needs no GPU: a batch checks
    /// its manifest's graphs with it before any job starts.
    package static func maxNodes(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Int {
        try number(nodesVariable, in: environment) ?? defaultMaxNodes
    }

    /// Throws when a graph of `count` filters is over `limit`.
    package static func checkNodeCount(_ count: Int, limit: Int) throws {
        guard count <= limit else {
            throw InvalidRequest("the graph has \(count) filters, over the limit of \(limit) (set \(nodesVariable) to allow more)")
        }
    }

    private static func number(_ name: String, in environment: [String: String]) throws -> Int? {
        guard let text = environment[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        guard let value = parseBytes(text), value > 0 else {
            throw InvalidRequest("\(name) takes a positive number (like 4096, or 4G for bytes), not '\(text)'")
        }
        return value
    }

    static func make(gpu: GPULimits, environment: [String: String]) throws -> GraphLimits {
        func number(_ name: String) throws -> Int? { try Self.number(name, in: environment) }
        let contextSide = gpu.maxTargetSide
        var side = min(defaultMaxSide, contextSide)
        if let asked = try number(sideVariable) {
            guard asked <= contextSide else {
                throw InvalidRequest("\(sideVariable)=\(asked) is over this GPU's limit of \(contextSide) (GL_MAX_TEXTURE_SIZE)")
            }
            side = asked
        }
        return GraphLimits(maxSide: side, maxNodes: try maxNodes(environment: environment),
                           maxPasses: try number(passesVariable) ?? defaultMaxPasses,
                           maxTextureBytes: try number(bytesVariable) ?? defaultMaxTextureBytes,
                           contextMaxSide: contextSide)
    }

    /// `4096`, `512M`, `2G` (powers of 1024); nil when malformed or past Int.
    static func parseBytes(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = Substring(text)
        var scale = 1
        if let last = digits.last?.uppercased().first, let unit = units[last] {
            scale = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: scale)
        return overflow ? nil : product
    }

    static func describeBytes(_ bytes: Int) -> String {
        bytes >= 1 << 30 ? String(format: "%.1f GiB", Double(bytes) / Double(1 << 30))
            : String(format: "%.0f MiB", Double(bytes) / Double(1 << 20))
    }

    /// Checks one size a pass would render at; `what` names it ("blur (pass 2)").
    func checkSide(_ size: Size, _ what: String) throws {
        guard size.width > 0, size.height > 0 else { throw InvalidRequest("\(what) would make a \(size) frame") }
        guard size.width <= maxSide, size.height <= maxSide else {
            let raise = maxSide < contextMaxSide
                ? "set \(Self.sideVariable) up to \(contextMaxSide) to allow more"
                : "this GPU's GL_MAX_TEXTURE_SIZE"
            throw InvalidRequest("\(what) would render \(size.width)x\(size.height), over the \(maxSide)-pixel limit (\(raise))")
        }
    }
}

/// Adds up what one compile allocates and stops at the first limit it crosses.
struct GraphBudget {
    let limits: GraphLimits
    private(set) var passes = 0
    private(set) var bytes = 0

    init(limits: GraphLimits) { self.limits = limits }

    mutating func add(_ size: Size, format: TextureFormat, attachments: Int = 1, what: String) throws {
        try addPass(size, what: what)
        bytes += size.width * size.height * format.bytesPerTexel * attachments  // sides ≤ maxSide: no overflow
        guard bytes <= limits.maxTextureBytes else {
            throw InvalidRequest("the graph needs more than \(GraphLimits.describeBytes(limits.maxTextureBytes)) of render targets "
                             + "(\(what) is \(size.width)x\(size.height)); set \(GraphLimits.bytesVariable) to allow more")
        }
    }

    /// Counts a pass that draws into a target counted already (`TargetSharing`).
    mutating func addPass(_ size: Size, what: String) throws {
        try limits.checkSide(size, what)
        passes += 1
        guard passes <= limits.maxPasses else {
            throw InvalidRequest("the graph needs more than \(limits.maxPasses) passes per frame "
                             + "(set \(GraphLimits.passesVariable) to allow more)")
        }
    }

    /// Counts the packed target of each sink, as `shape` lays it out (every route ends so).
    mutating func addSinks(_ layouts: [PackedFrameLayout], shape: (PackedFrameLayout) -> PackPlan) throws {
        for layout in layouts {
            let plan = shape(layout)
            try add(plan.targetSize, format: .rgba8, attachments: plan.attachments, what: "the output")
        }
    }
}
