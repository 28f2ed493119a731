import PrismCore

/// A directed acyclic graph of filter instances over one source (the input frame).
///
/// Nodes are added producer-first, so the node array is always in topological order; the text form
/// (`GraphBinder`) and code that builds graphs directly both go through `add`.
public final class FilterGraph {
    /// Identifies a node of one graph: its position in `nodes`.
    public struct NodeID: Hashable, Sendable, CustomStringConvertible {
        /// Index into the graph's `nodes` array.
        public let index: Int
        public var description: String { "#\(index)" }
    }

    /// Where a node input (or the graph output) comes from.
    public enum Stream: Hashable, Sendable {
        /// The graph's input frame.
        case source
        /// The output of a node of the graph.
        case node(NodeID)
    }

    /// One filter instance in the graph and the streams it reads.
    public struct Node {
        /// This node's place in the graph.
        public let id: NodeID
        /// The filter's name as the user wrote it (for errors, stats and `prism filters`).
        public let name: String
        /// The kernel that renders the node.
        package let kernel: FilterKernel
        /// The streams feeding the kernel's inputs, in the kernel's input order.
        public let inputs: [Stream]
        /// The instance's parameter values, when it came from a definition.
        public var parameters: ParameterValues?
    }

    /// Every node, producers before consumers (topological order); grown only through `add`.
    public private(set) var nodes: [Node] = []
    /// The stream the graph delivers; the source itself for an empty graph.
    public var output: Stream = .source
    /// The output labels the graph text gave its elements (`mono[m]`), so a live control can name a node
    /// by its label as well as by its filter's name or its place.
    public package(set) var labels: [String: NodeID] = [:]

    /// Reads the image files built-ins name (`background-replace(image=…)`): set by the binder that builds
    /// the graph (its loader, PrismMedia's for the tool), so a shorthand can load its image when it is bound.
    package var imageLoader: ShaderImageLoader?

    /// Effects sized from each frame's faces (`face-pixellate`, `face-blur`), by node index: the engine sets
    /// them before drawing a frame (`fitFaceSizedEffects`).
    package var faceSized: [Int: FaceSized] = [:]

    /// An empty graph: the identity, delivering the source unchanged.
    public init() {}

    /// Adds a node reading `inputs` (which must already exist) and makes it the output.
    @discardableResult
    package func add(_ name: String, kernel: FilterKernel, inputs: [Stream], parameters: ParameterValues? = nil) throws -> NodeID {
        guard inputs.count == kernel.inputCount else {
            throw InvalidRequest("\(name) takes \(kernel.inputCount) input(s), got \(inputs.count)")
        }
        for input in inputs {
            if case .node(let id) = input, !nodes.indices.contains(id.index) {
                throw InvalidRequest("\(name) reads \(id), which does not exist yet")
            }
        }
        let id = NodeID(index: nodes.count)
        nodes.append(Node(id: id, name: name, kernel: kernel, inputs: inputs, parameters: parameters))
        output = .node(id)
        return id
    }

    /// Replaces the last node (which nothing reads yet) with another kernel on the same inputs: consecutive
    /// hook files become one group this way (`GraphBinder`).
    package func replaceLast(_ name: String, kernel: FilterKernel, parameters: ParameterValues?) {
        guard let last = nodes.last else { preconditionFailure("replaceLast on an empty graph") }
        precondition(kernel.inputCount == last.inputs.count)
        nodes[nodes.count - 1] = Node(id: last.id, name: name, kernel: kernel, inputs: last.inputs, parameters: parameters)
    }

    /// Appends a one-input filter reading the current output: the plain-chain case.
    @discardableResult
    package func append(_ name: String, kernel: FilterKernel, parameters: ParameterValues? = nil) throws -> NodeID {
        try add(name, kernel: kernel, inputs: kernel.inputCount == 0 ? [] : [output], parameters: parameters)
    }

    /// The node `id` names; `id` must come from this graph.
    public subscript(_ id: NodeID) -> Node { nodes[id.index] }

    /// The audio inputs of the graph's user shaders (shader file, input name), in node order: a graph with
    /// any needs the run to feed it sound (`FrameContext.audio`).
    public var audioInputs: [(shader: String, input: String)] {
        nodes.flatMap { node -> [(shader: String, input: String)] in
            guard let kernel = node.kernel as? UserShaderKernel else { return [] }
            return kernel.shader.audioInputs.map { (kernel.shader.path, $0.name) }
        }
    }

    /// The side data the graph's nodes read from `FrameContext`: regions for face masks and outlines (so the
    /// run needs a detector or a sidecar), the mask for mask nodes (a segmentation model), sound for audio inputs.
    public var requiredSideData: SideData {
        var required: SideData = []
        if nodes.contains(where: { $0.kernel is FaceMaskKernel || $0.kernel is FaceOutlineKernel }) { required.insert(.faceRegions) }
        if nodes.contains(where: { $0.kernel is SegmentMaskKernel }) { required.insert(.segmentation) }
        if !audioInputs.isEmpty { required.insert(.audio) }
        return required
    }

    /// The one-line refusal of a run that supplies only `supplied`, naming the first node that reads what is
    /// missing (faces, then the mask, then sound); nil when nothing is. `noSound`: why this run has no sound.
    public func missingSideDataError(supplied: SideData, noSound: String) -> InvalidRequest? {
        let missing = requiredSideData.subtracting(supplied)
        if missing.contains(.faceRegions) {
            let name = nodes.first { $0.name.hasPrefix("face-") }?.name ?? "a face filter"
            return InvalidRequest("\(name) needs faces: this run has no face side input (a detector or a \(Setting.facesIn) sidecar)")
        }
        if missing.contains(.segmentation) {
            let mask = nodes.lazy.compactMap { $0.kernel as? SegmentMaskKernel }.first
            return InvalidRequest("\(mask?.shorthand ?? "segment-mask") needs a segmentation model: give one with \(Setting.segmentModel) SEG.onnx (or model=SEG.onnx)")
        }
        if missing.contains(.audio), let first = audioInputs.first {
            return InvalidRequest("\(first.shader): input '\(first.input)' needs audio: \(noSound)")
        }
        return nil
    }

    /// Updates one node's parameter (live controls). The kernel reads `parameters` on its next frame.
    public func setParameter(_ id: NodeID, _ name: String, _ value: ParameterValue) throws {
        guard var values = nodes[id.index].parameters else { throw InvalidRequest("\(nodes[id.index].name) has no parameters") }
        try values.set(name, value)
        nodes[id.index].parameters = values
        (nodes[id.index].kernel as? ParameterizedKernel)?.parameters = values
    }
}

/// Kernels whose uniforms follow their parameter values, so live changes reach the GPU.
package protocol ParameterizedKernel: FilterKernel {
    /// The instance's current values; the kernel sets its uniforms from them on its next frame.
    var parameters: ParameterValues { get set }
}

/// Per-frame data besides pictures that a graph may read from `FrameContext`. A run supplies it through its
/// side inputs (sound also through the engine's own decoding); a graph that reads what its run does not
/// supply is refused (`FilterGraph.missingSideDataError`), never run without it.
public struct SideData: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `FrameContext.regions`: faces from a detector or a sidecar, for the face filters.
    public static let faceRegions = SideData(rawValue: 1 << 0)
    /// `FrameContext.segmentation`: a segmentation model's mask, for `background-blur` and its kin.
    public static let segmentation = SideData(rawValue: 1 << 1)
    /// `FrameContext.audio`: sound for user shaders' audio inputs.
    public static let audio = SideData(rawValue: 1 << 2)
    public static let all: SideData = [.faceRegions, .segmentation, .audio]
}
