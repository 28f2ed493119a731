import PrismCore

/// A filter users can name in a graph: its documentation, typed parameters and how to make an instance.
public struct FilterDefinition: Sendable {
    /// The name a graph calls it by, lowercase (`invert`, `pixellate`).
    public let name: String
    /// One line: what it does.
    public let summary: String
    /// The maths, written down (shown by `prism filters NAME`).
    public let maths: String
    /// The typed parameters it takes, with defaults and ranges, in declaration order.
    public let parameters: [ParameterSpec]
    /// Names of the image inputs, in order ([] for generators, ["input"] for most).
    public let inputs: [String]
    /// A graph using it, for `prism filters NAME`.
    public let example: String
    /// Positional arguments map onto these parameter names, in order.
    public let positional: [String]
    private let make: @Sendable (ParameterValues) throws -> FilterKernel
    /// Shorthands that stand for several filters (`face-pixellate`): adds them to `graph` reading `input`
    /// and returns the last; the binder calls it instead of `instantiate`.
    public let expand: (@Sendable (_ graph: FilterGraph, _ input: FilterGraph.Stream, _ values: ParameterValues) throws -> FilterGraph.NodeID)?

    /// A definition; `positional` defaults to the parameter names in order, `make` builds a kernel from validated values.
    package init(name: String, summary: String, maths: String, parameters: [ParameterSpec] = [],
                inputs: [String] = ["input"], example: String, positional: [String]? = nil,
                make: @escaping @Sendable (ParameterValues) throws -> FilterKernel,
                expand: (@Sendable (FilterGraph, FilterGraph.Stream, ParameterValues) throws -> FilterGraph.NodeID)? = nil) {
        self.expand = expand
        self.name = name
        self.summary = summary
        self.maths = maths
        self.parameters = parameters
        self.inputs = inputs
        self.example = example
        self.positional = positional ?? parameters.map(\.name)
        self.make = make
    }

    /// An instance with validated values (defaults for the rest).
    package func instantiate(_ given: [String: ParameterValue] = [:]) throws -> (FilterKernel, ParameterValues) {
        let values = try ParameterValues(specs: parameters, given: given)
        return (try make(values), values)
    }
}

/// Every built-in filter, by name.
public enum BuiltinFilters {
    /// The built-in filters in the order `prism filters` lists them.
    public static let all: [FilterDefinition] = ColorFilters.definitions + LookFilters.definitions + [LUTFileFilter.definition, ColorConversionFilter.definition]
        + SpatialFilters.definitions + CompositingFilters.definitions + GeometryFilters.definitions + FaceFilters.definitions
        + [NetworkFilter.definition]
        + SegmentationFilters.definitions

    /// The looks made for SDR R'G'B' (colour maps, photo effects, tables): an HDR output refuses them.
    public static let sdrLooks: Set<String> = Set((ColorFilters.definitions + LookFilters.definitions
        + [LUTFileFilter.definition]).map(\.name))

    /// The built-in filter called `name` (case-insensitive), or nil.
    public static func named(_ name: String) -> FilterDefinition? {
        all.first { $0.name == name.lowercased() }
    }
}
