import Foundation

/// A constant tensor during lowering: weights, and the shape arithmetic exporters write (Shape → Gather →
/// Concat → Reshape or Resize), folded when the model loads because the input's size is known then.
package struct NetworkConstant: Sendable, Equatable {
    package var dims: [Int]
    package var values: [Float]
    /// Integer typed (int64 shapes, indices): Div truncates, Cast keeps.
    package var integer = false

    package init(dims: [Int], values: [Float], integer: Bool = false) {
        self.dims = dims
        self.values = values
        self.integer = integer
    }

    package var count: Int { values.count }
    package var isScalar: Bool { values.count == 1 }

    /// The values as integers, each finite and within ±2^40 (a shape, an index, a count), else nil.
    package var ints: [Int]? {
        var out: [Int] = []
        for v in values {
            guard v.isFinite else { return nil }
            // INT64_MAX and friends (Slice's "to the end") arrive as 9.2e18: clamp them, they mean "all".
            out.append(Int(max(min(v, 1e12), -1e12)))
        }
        return out
    }

    static func strides(_ dims: [Int]) -> [Int] {
        var s = [Int](repeating: 1, count: dims.count)
        for i in stride(from: dims.count - 2, through: 0, by: -1) { s[i] = s[i + 1] * dims[i + 1] }
        return s
    }

    /// NumPy broadcasting of two shapes (nil when they do not broadcast).
    static func broadcast(_ a: [Int], _ b: [Int]) -> [Int]? {
        let rank = max(a.count, b.count)
        let pa = [Int](repeating: 1, count: rank - a.count) + a, pb = [Int](repeating: 1, count: rank - b.count) + b
        var out: [Int] = []
        for (x, y) in zip(pa, pb) {
            guard x == y || x == 1 || y == 1 else { return nil }
            out.append(x == 1 ? y : x)
        }
        return out
    }

    /// This tensor's values broadcast to `shape`.
    func expanded(to shape: [Int]) -> [Float] {
        let padded = [Int](repeating: 1, count: shape.count - dims.count) + dims
        let from = Self.strides(padded), to = Self.strides(shape)
        let total = shape.reduce(1, *)
        return (0..<total).map { i in
            var source = 0
            for axis in shape.indices where padded[axis] != 1 { source += (i / to[axis]) % shape[axis] * from[axis] }
            return values[source]
        }
    }
}

/// Evaluates ONNX nodes whose inputs are all constants.
enum NetworkFolding {
    /// The most values a folded tensor may have (ConstantOfShape, Range, Expand of a crafted shape).
    static let maximumCount = 1 << 24

    struct Failure: Error {
        let reason: String
    }

    static func elementwise(_ a: NetworkConstant, _ b: NetworkConstant, integer: Bool, _ f: (Float, Float) -> Float) throws -> NetworkConstant {
        guard let shape = NetworkConstant.broadcast(a.dims, b.dims) else {
            throw Failure(reason: "constants of shapes \(a.dims) and \(b.dims) do not broadcast")
        }
        guard shape.reduce(1, *) <= maximumCount else { throw Failure(reason: "a folded constant of shape \(shape) is too large") }
        let x = a.dims == shape ? a.values : a.expanded(to: shape), y = b.dims == shape ? b.values : b.expanded(to: shape)
        return NetworkConstant(dims: shape, values: zip(x, y).map(f), integer: integer)
    }

    static func axis(_ a: Int, rank: Int) throws -> Int {
        let r = a < 0 ? a + rank : a
        guard r >= 0, r < max(rank, 1) else { throw Failure(reason: "axis \(a) is outside a rank-\(rank) tensor") }
        return r
    }

    static func shape(_ c: NetworkConstant?) throws -> [Int] {
        guard let c, let ints = c.ints, ints.allSatisfy({ $0 >= 0 && $0 <= maximumCount }) else {
            throw Failure(reason: "a shape must be non-negative integers")
        }
        return ints
    }

    static let integerTypes: Set<Int> = [2, 3, 4, 5, 6, 7, 9, 12, 13]

    /// nil: the node is not a constant computation this knows (the lowering then treats it as usual).
    static func fold(_ node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> [NetworkConstant]? {
        func input(_ i: Int) throws -> NetworkConstant { try constant(i, of: node, inputs) }
        func unary(_ f: (Float) -> Float) throws -> [NetworkConstant] {
            let x = try input(0)
            return [NetworkConstant(dims: x.dims, values: x.values.map(f), integer: x.integer)]
        }
        switch node.op {
        case "Identity", "Dropout": return [try input(0)]
        case "Cast":
            var x = try input(0)
            let to = node.int("to") ?? 1
            if integerTypes.contains(to) {
                x.values = x.values.map { $0.isFinite ? $0.rounded(.towardZero) : $0 }
                x.integer = true
            } else {
                x.integer = false
            }
            return [x]
        case "Shape":
            let x = try input(0)
            return [NetworkConstant(dims: [x.dims.count], values: x.dims.map(Float.init), integer: true)]
        case "Size":
            return [NetworkConstant(dims: [], values: [Float(try input(0).count)], integer: true)]
        case "Reshape": return try reshape(node, inputs)
        case "Flatten":
            let x = try input(0)
            let a = try axis(node.int("axis") ?? 1, rank: x.dims.count + 1)
            let outer = x.dims.prefix(a).reduce(1, *)
            return [NetworkConstant(dims: [outer, x.count / max(outer, 1)], values: x.values, integer: x.integer)]
        case "Unsqueeze":
            let x = try input(0)
            let given = try node.ints("axes") ?? (inputs.count > 1 ? input(1).ints ?? [] : [])
            let rank = x.dims.count + given.count
            var dims = x.dims
            for a in try given.map({ try axis($0, rank: rank) }).sorted() { dims.insert(1, at: min(a, dims.count)) }
            return [NetworkConstant(dims: dims, values: x.values, integer: x.integer)]
        case "Squeeze":
            let x = try input(0)
            let given = try node.ints("axes") ?? (inputs.count > 1 ? input(1).ints : nil)
            let axes = try given.map { try $0.map { try axis($0, rank: x.dims.count) } } ?? x.dims.indices.filter { x.dims[$0] == 1 }
            let dims = x.dims.enumerated().filter { !axes.contains($0.offset) }.map(\.element)
            return [NetworkConstant(dims: dims, values: x.values, integer: x.integer)]
        case "Concat": return try concat(node, inputs)
        case "Gather": return try gather(node, inputs)
        case "Slice": return try slice(node, inputs)
        case "Transpose": return try transpose(node, inputs)
        case "ConstantOfShape":
            let dims = try shape(try input(0))
            let count = dims.reduce(1, *)
            guard count <= maximumCount else { throw Failure(reason: "ConstantOfShape \(dims) is too large") }
            var value: Float = 0, integer = false
            if case .tensor(let t)? = node.attributes["value"], let v = t.values.first {
                value = v
                integer = integerTypes.contains(t.elementType)
            }
            return [NetworkConstant(dims: dims, values: [Float](repeating: value, count: count), integer: integer)]
        case "Range":
            let start = try input(0).values.first ?? 0, limit = try input(1).values.first ?? 0, delta = try input(2).values.first ?? 1
            guard start.isFinite, limit.isFinite, delta.isFinite, delta != 0 else { throw Failure(reason: "Range with a zero or non-finite step") }
            let count = max(0, Int(((limit - start) / delta).rounded(.up)))
            guard count <= maximumCount else { throw Failure(reason: "Range of \(count) values is too large") }
            return [NetworkConstant(dims: [count], values: (0..<count).map { start + Float($0) * delta }, integer: try input(0).integer)]
        case "Expand":
            let x = try input(0), target = try shape(try input(1))
            guard let dims = NetworkConstant.broadcast(x.dims, target), dims.reduce(1, *) <= maximumCount else {
                throw Failure(reason: "Expand of \(x.dims) to \(target)")
            }
            return [NetworkConstant(dims: dims, values: x.expanded(to: dims), integer: x.integer)]
        case "Where":
            let condition = try input(0), a = try input(1), b = try input(2)
            let ab = try elementwise(a, b, integer: a.integer) { x, _ in x }
            guard let dims = NetworkConstant.broadcast(condition.dims, ab.dims) else { throw Failure(reason: "Where of unbroadcastable shapes") }
            let c = condition.expanded(to: dims), x = a.expanded(to: dims), y = b.expanded(to: dims)
            return [NetworkConstant(dims: dims, values: dims.isEmpty && c.isEmpty ? [] : (0..<c.count).map { c[$0] != 0 ? x[$0] : y[$0] },
                                    integer: a.integer)]
        case "Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "Mod", "And", "Or": return try binary(node, inputs)
        case "Min", "Max", "Sum", "Mean": return try variadic(node, inputs)
        default: return try unaryFunctions[node.op].map(unary)
        }
    }

    /// The operators folded value by value.
    private static let unaryFunctions: [String: @Sendable (Float) -> Float] = [
        "Neg": { -$0 }, "Abs": { Swift.abs($0) }, "Sqrt": { $0.squareRoot() }, "Exp": { Foundation.exp($0) },
        "Log": { Foundation.log($0) }, "Reciprocal": { 1 / $0 }, "Floor": { $0.rounded(.down) }, "Ceil": { $0.rounded(.up) },
        "Round": { $0.rounded(.toNearestOrEven) }, "Relu": { Swift.max($0, 0) }, "Sigmoid": { 1 / (1 + Foundation.exp(-$0)) },
        "Tanh": { Foundation.tanh($0) }, "Not": { $0 == 0 ? 1 : 0 }
    ]

    /// Input `i` of `node`, which must be a constant.
    private static func constant(_ i: Int, of node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> NetworkConstant {
        guard i < inputs.count, let c = inputs[i] else { throw Failure(reason: "\(node.op) needs input \(i)") }
        return c
    }

    /// Reshape: the shape given, 0 keeping a dimension, -1 the one inferred.
    private static func reshape(_ node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> [NetworkConstant] {
        func input(_ i: Int) throws -> NetworkConstant { try constant(i, of: node, inputs) }
        let x = try input(0)
        var dims = try input(1).ints ?? []
        for i in dims.indices where dims[i] == 0 && i < x.dims.count { dims[i] = x.dims[i] }
        if let unknown = dims.firstIndex(of: -1) {
            let known = dims.enumerated().filter { $0.offset != unknown }.reduce(1) { $0 * $1.element }
            dims[unknown] = known == 0 ? 0 : x.count / known
        }
        guard dims.allSatisfy({ $0 >= 0 }), dims.reduce(1, *) == x.count else {
            throw Failure(reason: "Reshape of \(x.count) values to \(dims)")
        }
        return [NetworkConstant(dims: dims, values: x.values, integer: x.integer)]
    }

    /// Concat along an axis.
    private static func concat(_ node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> [NetworkConstant]? {
        func input(_ i: Int) throws -> NetworkConstant { try constant(i, of: node, inputs) }
        let parts = inputs.compactMap { $0 }
        guard let first = parts.first else { return nil }
        let a = try axis(node.int("axis") ?? 0, rank: first.dims.count)
        var dims = first.dims
        dims[a] = parts.reduce(0) { $0 + ($1.dims.count == first.dims.count ? $1.dims[a] : 0) }
        let outer = first.dims.prefix(a).reduce(1, *)
        var values: [Float] = []
        for o in 0..<outer {
            for p in parts {
                let block = p.dims.suffix(from: a).reduce(1, *)
                values += p.values[(o * block)..<((o + 1) * block)]
            }
        }
        guard values.count == dims.reduce(1, *) else { throw Failure(reason: "Concat of constants of shapes \(parts.map(\.dims))") }
        return [NetworkConstant(dims: dims, values: values, integer: first.integer)]
    }

    /// Gather along an axis by integer indices.
    private static func gather(_ node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> [NetworkConstant] {
        func input(_ i: Int) throws -> NetworkConstant { try constant(i, of: node, inputs) }
        let x = try input(0), indices = try input(1)
        let a = try axis(node.int("axis") ?? 0, rank: x.dims.count)
        guard let idx = indices.ints else { throw Failure(reason: "Gather indices are not integers") }
        let outer = x.dims.prefix(a).reduce(1, *), inner = x.dims.suffix(from: a + 1).reduce(1, *), n = x.dims[a]
        var values: [Float] = []
        for o in 0..<outer {
            for i in idx {
                let k = i < 0 ? i + n : i
                guard k >= 0, k < n else { throw Failure(reason: "Gather index \(i) is outside 0..<\(n)") }
                values += x.values[((o * n + k) * inner)..<((o * n + k + 1) * inner)]
            }
        }
        return [NetworkConstant(dims: Array(x.dims.prefix(a)) + indices.dims + Array(x.dims.suffix(from: a + 1)), values: values,
                                integer: x.integer)]
    }

    /// Slice: starts, ends, axes and steps from the inputs (or the attributes of older opsets).
    private static func slice(_ node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> [NetworkConstant] {
        func input(_ i: Int) throws -> NetworkConstant { try constant(i, of: node, inputs) }
        let x = try input(0)
        let starts = try (inputs.count > 1 ? input(1).ints : node.ints("starts")) ?? []
        let ends = try (inputs.count > 2 ? input(2).ints : node.ints("ends")) ?? []
        let axes = try (inputs.count > 3 && inputs[3] != nil ? input(3).ints : node.ints("axes")) ?? Array(0..<starts.count)
        let steps = try (inputs.count > 4 && inputs[4] != nil ? input(4).ints : nil) ?? [Int](repeating: 1, count: starts.count)
        guard starts.count == ends.count, axes.count == starts.count, steps.count == starts.count else {
            throw Failure(reason: "Slice with \(starts.count) starts, \(ends.count) ends, \(axes.count) axes")
        }
        var ranges = x.dims.map { (0, $0, 1) }
        for k in starts.indices {
            let a = try axis(axes[k], rank: x.dims.count), n = x.dims[a]
            guard steps[k] >= 1 else { throw Failure(reason: "Slice of a constant with step \(steps[k])") }
            func clamp(_ i: Int) -> Int { min(max(i < 0 ? i + n : i, 0), n) }
            ranges[a] = (clamp(starts[k]), clamp(ends[k]), steps[k])
        }
        let dims = ranges.map { r in r.1 > r.0 ? (r.1 - r.0 + r.2 - 1) / r.2 : 0 }
        let from = NetworkConstant.strides(x.dims), to = NetworkConstant.strides(dims)
        let values = (0..<dims.reduce(1, *)).map { i -> Float in
            var source = 0
            for a in dims.indices { source += (ranges[a].0 + (i / to[a]) % dims[a] * ranges[a].2) * from[a] }
            return x.values[source]
        }
        return [NetworkConstant(dims: dims, values: values, integer: x.integer)]
    }

    /// Transpose by `perm` (reversed dimensions by default).
    private static func transpose(_ node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> [NetworkConstant] {
        func input(_ i: Int) throws -> NetworkConstant { try constant(i, of: node, inputs) }
        let x = try input(0)
        let perm = node.ints("perm") ?? Array(x.dims.indices.reversed())
        guard perm.count == x.dims.count, Set(perm) == Set(x.dims.indices) else { throw Failure(reason: "Transpose perm \(perm)") }
        let dims = perm.map { x.dims[$0] }
        let from = NetworkConstant.strides(x.dims), to = NetworkConstant.strides(dims)
        let values = (0..<x.count).map { i -> Float in
            var source = 0
            for a in dims.indices { source += (i / to[a]) % dims[a] * from[perm[a]] }
            return x.values[source]
        }
        return [NetworkConstant(dims: dims, values: values, integer: x.integer)]
    }

    /// The binary arithmetic, comparison and logic operators, broadcast.
    private static func binary(_ node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> [NetworkConstant] {
        func input(_ i: Int) throws -> NetworkConstant { try constant(i, of: node, inputs) }
        let a = try input(0), b = try input(1)
        let integer = a.integer && b.integer
        switch node.op {
        case "Add": return [try elementwise(a, b, integer: integer, +)]
        case "Sub": return [try elementwise(a, b, integer: integer, -)]
        case "Mul": return [try elementwise(a, b, integer: integer, *)]
        case "Div": return [try elementwise(a, b, integer: integer) { integer && $1 != 0 ? ($0 / $1).rounded(.towardZero) : $0 / $1 }]
        case "Pow": return [try elementwise(a, b, integer: a.integer) { Foundation.pow($0, $1) }]
        case "Mod": return [try elementwise(a, b, integer: integer) { $1 == 0 ? 0 : $0 - ($0 / $1).rounded(.down) * $1 }]
        case "Equal": return [try elementwise(a, b, integer: true) { $0 == $1 ? 1 : 0 }]
        case "Less": return [try elementwise(a, b, integer: true) { $0 < $1 ? 1 : 0 }]
        case "Greater": return [try elementwise(a, b, integer: true) { $0 > $1 ? 1 : 0 }]
        case "And": return [try elementwise(a, b, integer: true) { $0 != 0 && $1 != 0 ? 1 : 0 }]
        default: return [try elementwise(a, b, integer: true) { $0 != 0 || $1 != 0 ? 1 : 0 }]
        }
    }

    /// Min, Max, Sum and Mean over any number of inputs, broadcast.
    private static func variadic(_ node: NetworkGraph.Node, _ inputs: [NetworkConstant?]) throws -> [NetworkConstant] {
        func input(_ i: Int) throws -> NetworkConstant { try constant(i, of: node, inputs) }
        var result = try input(0)
        for i in 1..<max(inputs.count, 1) {
            let b = try input(i)
            switch node.op {
            case "Min": result = try elementwise(result, b, integer: result.integer && b.integer) { Swift.min($0, $1) }
            case "Max": result = try elementwise(result, b, integer: result.integer && b.integer) { Swift.max($0, $1) }
            default: result = try elementwise(result, b, integer: result.integer && b.integer, +)
            }
        }
        if node.op == "Mean" { result.values = result.values.map { $0 / Float(inputs.count) }; result.integer = false }
        return [result]
    }
}
