import PrismCore
import PrismFilters
import PrismMedia

/// Turning the input upright (a phone movie's display matrix) and mirroring it (a front-facing camera),
/// with the built-in `rotate` and `mirror` remaps placed between the source and the graph: exact
/// coordinate remaps that fuse into the first pass, so they cost no pass of their own, and every filter
/// sees the picture as it is meant to be seen.
package struct InputOrientation: Sendable, Equatable {
    /// Clockwise quarter turns to apply first.
    package var rotation: DisplayOrientation
    /// Then swap left and right.
    package var mirrored: Bool

    package init(rotation: DisplayOrientation = .upright, mirrored: Bool = false) {
        self.rotation = rotation
        self.mirrored = mirrored
    }

    /// The built-in filters that do it, in order.
    package var filters: [(name: String, parameters: [String: ParameterValue])] {
        var filters: [(String, [String: ParameterValue])] = []
        if !rotation.isUpright { filters.append(("rotate", ["angle": .int(rotation.clockwiseDegrees)])) }
        if mirrored { filters.append(("mirror", [:])) }
        return filters
    }
}

extension FilterGraph {
    /// A new graph that reads the source through these built-ins, in order, wherever this one read the
    /// source (the remaps of an `InputOrientation`, a colour conversion). This graph's kernels move into the
    /// new one (use the result, not this graph, from now on).
    package func readingSource(through filters: [(name: String, parameters: [String: ParameterValue])]) throws -> FilterGraph {
        guard !filters.isEmpty else { return self }
        let result = FilterGraph()
        var source = Stream.source
        for filter in filters {
            guard let definition = BuiltinFilters.named(filter.name) else {
                throw InvalidRequest("this build lacks the \(filter.name) filter")
            }
            let (kernel, values) = try definition.instantiate(filter.parameters)
            source = .node(try result.add(filter.name, kernel: kernel, inputs: [source], parameters: values))
        }
        var moved: [Stream] = []
        func map(_ stream: Stream) -> Stream {
            switch stream {
            case .source: return source
            case .node(let id): return moved[id.index]
            }
        }
        for node in nodes {
            moved.append(.node(try result.add(node.name, kernel: node.kernel, inputs: node.inputs.map(map),
                                              parameters: node.parameters)))
        }
        result.output = map(output)
        for (label, id) in labels {
            if case .node(let movedID) = moved[id.index] { result.labels[label] = movedID }
        }
        return result
    }

    /// The size of the graph's output for a source of `sourceSize` (each kernel's `outputSize`, in order).
    public func outputSize(forSource sourceSize: Size) throws -> Size {
        var sizes: [Size] = []
        func size(_ stream: Stream) -> Size {
            switch stream {
            case .source: return sourceSize
            case .node(let id): return sizes[id.index]
            }
        }
        for node in nodes {
            sizes.append(try node.kernel.outputSize(inputSizes: node.inputs.map(size), sourceSize: sourceSize))
        }
        return size(output)
    }

    /// Crops the output's last column and/or row when `format`'s chroma subsampling needs even sides
    /// (H.264 and HEVC take 4:2:0, ProRes 4:2:2). Returns the sizes before and after, or nil when the
    /// output already fits.
    public func cropToEvenSize(forSource sourceSize: Size, format: PixelFormat) throws -> (from: Size, to: Size)? {
        let size = try outputSize(forSource: sourceSize)
        guard format.planes.count > 1 else { return nil }
        let chroma = format.planes[1]
        let width = chroma.horizontalShift > 0 ? size.width & ~1 : size.width
        let height = chroma.verticalShift > 0 ? size.height & ~1 : size.height
        guard width != size.width || height != size.height, width > 0, height > 0 else { return nil }
        guard let crop = BuiltinFilters.named("crop") else { throw InvalidRequest("this build lacks the crop filter") }
        let (kernel, values) = try crop.instantiate(["width": .int(width), "height": .int(height)])
        try append("crop", kernel: kernel, parameters: values)
        return (size, Size(width: width, height: height))
    }
}
