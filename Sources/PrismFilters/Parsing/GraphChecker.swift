import PrismCore

/// Where an element input comes from, once labels are resolved.
package enum GraphStreamSource: Hashable, Sendable, CustomStringConvertible {
    /// The graph's input frame.
    case graphInput
    /// The output of another element.
    case element(GraphElementID)
    /// Another input of the run than the first: `[1]`, `[2]`… or the name it was given (`--input NAME=…`).
    /// The first input is always `.graphInput` (`[in]`, `[0]`, or its name).
    case input(Int)

    package var description: String {
        switch self {
        case .graphInput: return "in"
        case .input(let index): return "input \(index)"
        case .element(let id): return "element \(id)"
        }
    }
}

/// The streams of a checked graph: what each element reads, in an order where producers come first.
package struct GraphTopology: Hashable, Sendable {
    /// Every element, producers before consumers (text order, which the checker requires).
    package var order: [GraphElementID]
    /// The inputs of each element in order: the implicit one (previous element or graph input)
    /// first, then the labelled ones. An element whose `implicitInput` is `.graphInput` lists
    /// `.graphInput` here; the binder drops it for filters that take no input (generators).
    package var inputs: [GraphElementID: [GraphStreamSource]]
    /// The element whose output is the graph output.
    package var output: GraphElementID
}

/// Checks the streams of a parsed graph without knowing any filter: labels, cycles and outputs.
/// Each error carries the offending element; its column is the offending label when a label is at
/// fault (unknown, duplicate, unread, read too early), else the start of the element.
/// Filter names, argument names and types are the binder's job.
package enum GraphChecker {
    /// Every problem found, in text order of the offending element. Empty when the graph is sound.
    /// `inputs` names the run's inputs in order (nil: unnamed), the first being the graph input: `[0]`…
    /// `[N-1]` and the names read them.
    package static func diagnose(_ ast: GraphAST, inputs: [String?] = [nil]) -> [GraphSemanticError] {
        switch analyse(ast, inputs: inputs) {
        case .success: return []
        case .failure(let errors): return errors.errors
        }
    }

    /// The topology of a sound graph; throws the first problem otherwise.
    package static func check(_ ast: GraphAST, inputs: [String?] = [nil]) throws(GraphSemanticError) -> GraphTopology {
        switch analyse(ast, inputs: inputs) {
        case .success(let topology): return topology
        case .failure(let errors): throw errors.errors[0]
        }
    }

    private struct Errors: Error { var errors: [GraphSemanticError] }

    /// The input a label reads, when it names one: `in`, an index below the input count, or an input's name.
    private static func inputIndex(_ name: String, inputs: [String?]) -> Int? {
        if name == GraphLabel.inputName { return 0 }
        if let index = Int(name), String(index) == name, index >= 0, index < max(inputs.count, 1) { return index }
        return inputs.firstIndex { $0 == name }
    }

    /// A label that looks like an input index (`[3]`) but names none of the run's inputs.
    private static func isMissingInput(_ name: String, inputs: [String?]) -> Bool {
        guard let index = Int(name), String(index) == name else { return false }
        return index >= max(inputs.count, 1)
    }

    private static func analyse(_ ast: GraphAST, inputs runInputs: [String?]) -> Result<GraphTopology, Errors> {
        var errors: [GraphSemanticError] = []
        func report(_ message: String, _ id: GraphElementID, column: Int? = nil) {
            errors.append(GraphSemanticError(message, column: column ?? ast[id].range.start, element: id))
        }

        let all = ast.elements
        // Producers of each label.
        var producer: [String: GraphElementID] = [:]
        for (id, element) in all {
            guard let label = element.outputLabel else { continue }
            if label.name == GraphLabel.inputName {
                report("[in] is the graph input; an element cannot write it", id, column: label.range.start)
            } else if inputIndex(label.name, inputs: runInputs) != nil || isMissingInput(label.name, inputs: runInputs) {
                report("[\(label.name)] names an input of the run; an element cannot write it", id, column: label.range.start)
            } else if let first = producer[label.name] {
                report("label [\(label.name)] is already produced at column \(ast[first].range.start)", id,
                       column: label.range.start)
            } else {
                producer[label.name] = id
            }
        }

        // Inputs of each element, and the edges between elements.
        var inputs: [GraphElementID: [GraphStreamSource]] = [:]
        var consumed: Set<String> = []
        for (id, element) in all {
            var sources: [GraphStreamSource] = []
            switch element.implicitInput {
            case .none: break
            case .graphInput: sources.append(.graphInput)
            case .previousElement: sources.append(.element(GraphElementID(chain: id.chain, index: id.index - 1)))
            }
            for label in element.inputLabels {
                consumed.insert(label.name)
                if let index = inputIndex(label.name, inputs: runInputs) {
                    sources.append(index == 0 ? .graphInput : .input(index))
                } else if isMissingInput(label.name, inputs: runInputs) {
                    let count = max(runInputs.count, 1)
                    report("input [\(label.name)] does not exist: the run has \(count) input\(count == 1 ? "" : "s") ([0]"
                           + (count > 1 ? "…[\(count - 1)]" : "") + ")", id, column: label.range.start)
                } else if label.name == GraphLabel.outputName && producer[label.name] == nil {
                    report("[out] is the graph output; it cannot be read", id, column: label.range.start)
                } else if let source = producer[label.name] {
                    sources.append(.element(source))
                } else {
                    report("label [\(label.name)] is not produced by any filter", id, column: label.range.start)
                }
            }
            inputs[id] = sources
        }

        let cycle = firstCycle(all.map(\.id), inputs: inputs)
        let cycleReported = cycle != nil
        if let cycle {
            let names = cycle.map { ast[$0].name }.joined(separator: " → ")
            report("cycle: \(names)", cycle.dropLast().max()!)
        }

        // Labels must be produced before they are read, so text order is an evaluation order.
        if !cycleReported {
            for (id, element) in all {
                for label in element.inputLabels {
                    if let source = producer[label.name], source > id {
                        report("label [\(label.name)] is used before the filter that produces it (column \(ast[source].range.start))",
                               id, column: label.range.start)
                    }
                }
            }
        }

        // The graph output, and outputs nobody reads.
        var outputs: [GraphElementID] = []
        for (c, chain) in ast.chains.enumerated() {
            let lastIndex = chain.elements.count - 1
            let id = GraphElementID(chain: c, index: lastIndex)
            let last = chain.elements[lastIndex]
            if let label = last.outputLabel {
                if label.name == GraphLabel.outputName { outputs.append(id) }
            } else if c == ast.chains.count - 1 {
                outputs.append(id)
            } else {
                report("the output of '\(last.name)' is not used; name it with a label and read it, or drop the filter",
                       id, column: last.range.start)
            }
        }
        let finalElement = GraphElementID(chain: ast.chains.count - 1, index: ast.chains.last!.elements.count - 1)
        for (id, element) in all {
            // An unread label on the very last filter is reported as "no output" below.
            if id == finalElement && outputs.isEmpty { continue }
            guard let label = element.outputLabel, label.name != GraphLabel.outputName,
                  label.name != GraphLabel.inputName, producer[label.name] == id else { continue }
            if !consumed.contains(label.name) {
                report("label [\(label.name)] is produced but never used", id, column: label.range.start)
            }
        }
        if outputs.isEmpty {
            let id = finalElement
            report("the graph has no output: leave the last filter unlabelled or label it [out]", id,
                   column: ast[id].outputLabel?.range.start)
        } else if outputs.count > 1 {
            for id in outputs.dropFirst() {
                report("the graph has more than one output (another at column \(ast[outputs[0]].range.start))", id)
            }
        }

        if !errors.isEmpty {
            // Report in text order of the offending column, keeping the order found for ties.
            let sorted = errors.enumerated().sorted { ($0.element.column, $0.offset) < ($1.element.column, $1.offset) }
            return .failure(Errors(errors: sorted.map(\.element)))
        }
        return .success(GraphTopology(order: all.map(\.id), inputs: inputs, output: outputs[0]))
    }

    /// The first cycle a depth-first walk along the inputs finds, its first element repeated at its end;
    /// nil when there is none.
    private static func firstCycle(_ ids: [GraphElementID], inputs: [GraphElementID: [GraphStreamSource]]) -> [GraphElementID]? {
        var state: [GraphElementID: Int] = [:] // 1 visiting, 2 done
        var cycle: [GraphElementID]?
        func visit(_ id: GraphElementID, path: [GraphElementID]) {
            if state[id] == 2 || cycle != nil { return }
            if state[id] == 1 {
                cycle = path.drop { $0 != id } + [id]
                return
            }
            state[id] = 1
            for case .element(let source) in inputs[id] ?? [] {
                visit(source, path: path + [id])
            }
            state[id] = 2
        }
        for id in ids { visit(id, path: []) }
        return cycle
    }
}
