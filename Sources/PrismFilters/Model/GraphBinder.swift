import Foundation
import PrismCore

/// A problem binding graph text to filters (unknown filter, bad parameter), at a column of the text.
public struct GraphBindError: GraphTextError {
    /// What is wrong, without the column.
    public let message: String
    /// 1-based column of the graph text the error points at.
    public let column: Int
    /// The diagnostics of the error this one wraps (a `.cube` file's line), kept for tools.
    public let diagnostics: [Diagnostic]
    /// An error at `column` (1-based), keeping the `diagnostics` of the error it wraps.
    public init(_ message: String, column: Int, diagnostics: [Diagnostic] = []) {
        self.message = message
        self.column = column
        self.diagnostics = diagnostics
    }
}

/// Turns graph text into a `FilterGraph`: parses, checks the wiring, finds each filter, converts and
/// validates every argument against the filter's declared parameters. Every error points at a column.
public struct GraphBinder {
    /// Makes filters from files named in the graph (`my.fs`, `look.cube`). The default handles `.cube`
    /// LUTs and user shaders (`.fs`, `.frag`, `.glsl`, `.isf`: ISF, ShaderToy or plain GLSL, through
    /// `UserShader.load` and `UserShaderKernel`).
    package var fileFilters: (_ path: String, _ arguments: [String: ParameterValue]) throws -> (name: String, kernel: FilterKernel, parameters: ParameterValues)
    /// The parameters a file filter takes, so that its arguments are typed and checked (errors at the
    /// argument's column) before `fileFilters` is called; nil types them by the value's own shape.
    /// Positional arguments follow the order of the specs.
    public var fileFilterParameters: (_ path: String) throws -> [ParameterSpec]?

    /// File extensions the default `fileFilters` loads as user shaders (`.glsl` and `.hook` with a `//!HOOK`
    /// line are mpv hook files).
    public static let shaderExtensions: Set<String> = ["fs", "frag", "glsl", "isf", "hook"]

    /// The mpv hook file at `path`, parsed; nil when it is not one (no `//!HOOK` line, or not .glsl/.hook).
    package static func hookFile(_ path: String) throws -> HookFile? {
        let ext = (path as NSString).pathExtension.lowercased()
        guard ext == "glsl" || ext == "hook" else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            if ext == "hook" { throw ShaderLoadError(file: path, message: "cannot read the hook file") }
            return nil
        }
        guard HookFile.isHookFile(text: text) else {
            if ext == "hook" { throw ShaderLoadError(file: path, message: "no //!HOOK line: not an mpv hook file") }
            return nil
        }
        return try HookFile.parse(text: text, path: path)
    }

    /// Reads the images ISF shaders import and built-ins name (`background-replace(image=…)`).
    package let imageLoader: ShaderImageLoader

    /// The run's inputs in order, each with its name or nil (`--input NAME=…`): `[0]` (also `[in]`) is the
    /// first, the graph's source; `[1]`… and the names read the others. A label `[N]` past the last input
    /// is an error at its column. One unnamed input by default.
    public var inputs: [String?] = [nil]

    /// `imageLoader` reads the images ISF shaders import (the tool passes PrismMedia's `ImageFile.read`).
    public init(imageLoader: @escaping ShaderImageLoader) {
        self.imageLoader = imageLoader
        fileFilters = { path, arguments in
            if let hooks = try Self.hookFile(path) {
                let specs = HookKernel.parameterSpecs(for: [hooks])
                let values = try ParameterValues(specs: specs, given: arguments)
                return ((path as NSString).lastPathComponent, try HookKernel(files: [hooks], parameters: values), values)
            }
            if Self.isNetwork(path) {
                let values = try ParameterValues(specs: NetworkFilter.modelParameters, given: arguments)
                return ((path as NSString).lastPathComponent, try NetworkKernel(path: path, parameters: values), values)
            }
            if Self.isShader(path) {
                let shader = try UserShader.load(path: path)
                let values = try ParameterValues(specs: UserShaderKernel.parameterSpecs(for: shader), given: arguments)
                let kernel = try UserShaderKernel(shader: shader, parameters: values, imageLoader: imageLoader)
                return ((path as NSString).lastPathComponent, kernel, values)
            }
            guard path.lowercased().hasSuffix(".cube") else {
                throw InvalidRequest("\(path): not a filter file (.cube LUTs, .fs, .frag, .glsl, .isf shaders and .onnx models are)")
            }
            var given = arguments
            given["file"] = .text(path)
            let (kernel, values) = try LUTFileFilter.definition.instantiate(given)
            return ("lut", kernel, values)
        }
        fileFilterParameters = { path in
            if let hooks = try Self.hookFile(path) { return HookKernel.parameterSpecs(for: [hooks]) }
            if Self.isNetwork(path) { return NetworkFilter.modelParameters }
            guard Self.isShader(path) else { return nil }
            return UserShaderKernel.parameterSpecs(for: try UserShader.load(path: path))
        }
    }

    /// Without an image reader: shaders that import images fail to prepare, naming the file.
    public init() { self.init(imageLoader: UserShaderKernel.noImageLoader) }

    /// True when `path` names an ONNX model (`.onnx`, case-insensitive): a `model(file=…)` node.
    public static func isNetwork(_ path: String) -> Bool { (path as NSString).pathExtension.lowercased() == "onnx" }

    /// True when `path` has one of the `shaderExtensions` (case-insensitive).
    public static func isShader(_ path: String) -> Bool {
        shaderExtensions.contains((path as NSString).pathExtension.lowercased())
    }

    /// Binds `text`; an empty or blank text is the identity graph.
    public func bind(_ text: String) throws -> FilterGraph {
        let graph = FilterGraph()
        graph.imageLoader = imageLoader
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { return graph }
        let ast = try GraphParser.parse(text)
        let topology = try GraphChecker.check(ast, inputs: inputs)
        var nodeFor: [GraphElementID: FilterGraph.NodeID] = [:]
        // One node per other input the graph reads, made where it is first read.
        var inputNodes: [Int: FilterGraph.NodeID] = [:]
        func inputNode(_ index: Int) throws -> FilterGraph.NodeID {
            if let node = inputNodes[index] { return node }
            let node = try graph.add("[\(index)]", kernel: GraphInputKernel(slot: GraphInputSlot(index: index)), inputs: [])
            inputNodes[index] = node
            return node
        }
        // How many elements (and the graph output) read each element.
        var consumers: [GraphElementID: Int] = [topology.output: 1]
        for sources in topology.inputs.values {
            for source in sources { if case .element(let producer) = source { consumers[producer, default: 0] += 1 } }
        }
        for id in topology.order {
            let element = ast[id]
            let column = element.nameRange.start
            var given: [String: ParameterValue] = [:]
            let name: String
            var kernel: FilterKernel
            let values: ParameterValues
            do {
                switch element.kind {
                case .filter:
                    guard let definition = BuiltinFilters.named(element.name) else {
                        throw GraphBindError("unknown filter '\(element.name)'" + Self.suggestion(for: element.name)
                                             + " (prism filters lists them)", column: column)
                    }
                    given = try arguments(of: element, specs: definition.parameters, positional: definition.positional)
                    if let expand = definition.expand {  // a shorthand for several filters (face-pixellate)
                        let input = try (topology.inputs[id] ?? []).map { source -> FilterGraph.Stream in
                            switch source {
                            case .element(let producer): return .node(nodeFor[producer]!)
                            case .input(let index): return .node(try inputNode(index))
                            case .graphInput: return .source
                            }
                        }
                        guard input.count == 1 else {
                            throw GraphBindError("\(definition.name) takes 1 input but is given \(input.count)", column: element.range.start)
                        }
                        nodeFor[id] = try expand(graph, input[0], try ParameterValues(specs: definition.parameters, given: given))
                        continue
                    }
                    (kernel, values) = try definition.instantiate(given)
                    name = definition.name
                case .file:
                    let specs = try fileFilterParameters(element.name)
                    given = try arguments(of: element, specs: specs, positional: specs?.map(\.name) ?? [])
                    (name, kernel, values) = try fileFilters(element.name, given)
                }
            } catch let error as GraphTextError {
                throw error
            } catch let error as ShaderLoadError {
                // Already file:line:column in the shader: the author's position, not the graph's.
                throw error
            } catch let error as PrismError {
                throw GraphBindError("\(element.name): \(error.description)", column: column, diagnostics: error.diagnostics)
            }
            var inputs = try (topology.inputs[id] ?? []).map { source -> FilterGraph.Stream in
                switch source {
                case .graphInput: return .source
                case .input(let index): return .node(try inputNode(index))
                case .element(let producer): return .node(nodeFor[producer]!)
                }
            }
            // A generator at the head of a chain does not read the graph input it was handed implicitly.
            if kernel.inputCount == 0, element.implicitInput == .graphInput, element.inputLabels.isEmpty {
                inputs = []
            }
            // ISF: extra image inputs the graph does not connect read as empty images (UserShaderKernel).
            if inputs.count < kernel.inputCount, let user = kernel as? UserShaderKernel, let fewer = try user.connecting(inputs.count) {
                kernel = fewer
            }
            if inputs.count < kernel.inputCount, let grid = kernel as? GridKernel, let fewer = grid.connecting(inputs.count) {
                kernel = fewer
            }
            guard inputs.count == kernel.inputCount else {
                throw GraphBindError("\(name) takes \(kernel.inputCount) input(s) but is given \(inputs.count)",
                                     column: element.range.start)
            }
            // Consecutive hook files are one group (mpv's shader list), when the earlier one feeds only this one.
            if let hooks = kernel as? HookKernel, inputs.count == 1, case .node(let previous) = inputs[0],
               previous.index == graph.nodes.count - 1, let earlier = graph.nodes[previous.index].kernel as? HookKernel,
               case .element(let producer)? = topology.inputs[id]?.first, consumers[producer] == 1 {
                let group: HookKernel
                do { group = try earlier.appending(hooks) } catch let error as ShaderLoadError { throw error }
                graph.replaceLast(graph.nodes[previous.index].name + " + " + name, kernel: group, parameters: group.parameters)
                nodeFor[id] = previous
                continue
            }
            nodeFor[id] = try graph.add(name, kernel: kernel, inputs: inputs, parameters: values)
        }
        graph.output = .node(nodeFor[topology.output]!)
        for id in topology.order {
            if let label = ast[id].outputLabel, let node = nodeFor[id] { graph.labels[label.name] = node }
        }
        return graph
    }

    /// Converts the element's arguments to typed values for `specs` (nil: leave the typing to the file
    /// filter, converting by the value's own shape).
    private func arguments(of element: GraphElement, specs: [ParameterSpec]?, positional: [String]) throws -> [String: ParameterValue] {
        var result: [String: ParameterValue] = [:]
        var position = 0
        for argument in element.arguments {
            let key: String
            if let named = argument.key {
                key = named
            } else {
                guard position < positional.count else {
                    throw GraphBindError("\(element.name) takes \(positional.count) positional argument(s)",
                                         column: argument.range.start)
                }
                key = positional[position]
                position += 1
            }
            guard result[key] == nil else {
                throw GraphBindError("\(key) is given twice", column: argument.range.start)
            }
            let kind = specs?.first(where: { $0.name == key })?.kind
            if let specs, kind == nil {
                let known = specs.map(\.name).joined(separator: ", ")
                throw GraphBindError("\(element.name) has no parameter '\(key)'"
                                     + (known.isEmpty ? " (it takes none)" : " (it takes \(known))"),
                                     column: argument.range.start)
            }
            do {
                let value = try Self.convert(argument.value, to: kind)
                if let spec = specs?.first(where: { $0.name == key }) { _ = try spec.validate(value) }
                result[key] = value
            } catch let error as PrismError {
                throw GraphBindError(error.description, column: argument.valueRange.start)
            }
        }
        return result
    }

    /// The typed value of a graph value for a parameter kind (nil: by the value's own shape).
    static func convert(_ value: GraphValue, to kind: ParameterKind?) throws -> ParameterValue {
        switch (value, kind) {
        case (.number(let v), .some(.int)): return Int(exactly: v).map(ParameterValue.int) ?? .float(v)  // the spec rejects the rest
        case (.number(let v), _): return .float(v)
        case (.tuple(let values), .some(.color)) where values.count == 3 || values.count == 4:
            return .color(SIMD4(values[0], values[1], values[2], values.count == 4 ? values[3] : 1))
        case (.tuple(let values), _) where values.count == 2: return .point(SIMD2(values[0], values[1]))
        case (.tuple(let values), _) where values.count == 3 || values.count == 4:
            return .color(SIMD4(values[0], values[1], values[2], values.count == 4 ? values[3] : 1))
        case (.color(let r, let g, let b, let a), _): return .color(SIMD4(r, g, b, a))
        case (.size(let w, let h), _): return .size(Size(width: w, height: h))
        case (.word(let w), .some(.bool)), (.string(let w), .some(.bool)):
            switch w.lowercased() {
            case "true", "yes", "on": return .bool(true)
            case "false", "no", "off": return .bool(false)
            default: throw InvalidRequest("expected true or false, not '\(w)'")
            }
        case (.word(let w), .some(.color)):
            guard let color = namedColors[w.lowercased()] else { throw InvalidRequest("unknown colour '\(w)'") }
            return .color(color)
        case (.word(let w), .some(.choice)): return .choice(w)
        case (.word(let w), .some(.size)), (.string(let w), .some(.size)):
            guard let size = Size(parsing: w) else { throw InvalidRequest("expected a size like 1280x720, not '\(w)'") }
            return .size(size)
        case (.word(let w), _), (.string(let w), _):
            if kind == nil, let b = ["true": true, "false": false][w.lowercased()] { return .bool(b) }
            return .text(w)
        default:
            throw InvalidRequest("cannot use \(value) here")
        }
    }

    static let namedColors: [String: SIMD4<Double>] = [
        "black": SIMD4(0, 0, 0, 1), "white": SIMD4(1, 1, 1, 1), "red": SIMD4(1, 0, 0, 1), "green": SIMD4(0, 1, 0, 1),
        "blue": SIMD4(0, 0, 1, 1), "transparent": SIMD4(0, 0, 0, 0), "gray": SIMD4(0.5, 0.5, 0.5, 1),
        "grey": SIMD4(0.5, 0.5, 0.5, 1), "yellow": SIMD4(1, 1, 0, 1),
    ]

    /// "; did you mean 'x'?" for a near miss among the built-in names.
    public static func suggestion(for name: String) -> String {
        NearestName.suggestion(for: name, among: BuiltinFilters.all.map(\.name))
    }
}
