import Foundation
import PrismCore
import PrismFilters
import PrismMedia
import PrismPipeline
import Synchronization

/// One node as commands see it: its place among the nodes they address (0 for the first), its filter,
/// its label and its values.
struct ControlNode: Sendable {
    var index: Int
    var filter: String
    var label: String?
    var values: ParameterValues?
}

/// The GPU thread's side of the control plane, and its one parameter store: a tap that counts frames and
/// hands snapshots their frame, the work `ControlPlane` schedules between frames (values, swaps, reloads),
/// the values commands set (carried over a reload) and the nodes published after every change.
final class ControlTap: FrameTap, Sendable {
    /// A value set through a command: the node's place among the addressed nodes, and the parameter.
    private struct SetValue: Hashable {
        var node: Int
        var name: String
    }

    /// Frames rendered so far: the index of the next frame.
    let frames = Atomic<Int>(0)
    /// The graph's text and the addressed nodes, as of the last change (`/state` shows them).
    let published = Mutex<(text: String, nodes: [ControlNode])>(("", []))
    private let text: Mutex<String>
    private let effects: any ControlEffects

    /// What the work between frames keeps, on the engine's GPU thread (taps and scheduled work run there,
    /// one at a time): behind a lock that is never contended, so the tap is `Sendable` as checked.
    private struct Addressing {
        /// Where the nodes commands address are in the running graph: the user's, without the session's
        /// filters in front and a final scale behind (`prism dev` addresses them all).
        var nodes = 0..<0
        var setValues = Set<SetValue>()
        /// Snapshots attached, waiting for their frame (made and detached by the work on the GPU thread).
        var stills: [ThreadOwned<StillImageSink>] = []
    }
    private let addressing = Mutex(Addressing())
    private var nodes: Range<Int> { addressing.withLock { $0.nodes } }

    init(graphText: String, effects: any ControlEffects) {
        text = Mutex(graphText)
        self.effects = effects
    }

    /// The graph text running now.
    var currentText: String { text.withLock { $0 } }

    /// Where the addressed nodes are in `graph`, the running one (scheduled before the first frame).
    func configure(nodes: Range<Int>, graph: FilterGraph) {
        addressing.withLock { $0.nodes = nodes }
        publish(graph)
    }

    func rendered(_ frame: RenderedFrame, control: EngineControl) throws {
        frames.store(frame.index + 1, ordering: .relaxed)
        // Snapshots attached before this frame have it now.
        let stills = addressing.withLock { addressing in
            defer { addressing.stills.removeAll() }
            return addressing.stills
        }
        for still in stills { try control.detach(still.value) }
    }

    // MARK: Work between frames

    func set(node reference: ControlCommand.NodeReference?, values: [String: JSONValue], _ control: EngineControl) throws -> ControlReply {
        let graph = control.graph
        let index = try resolve(reference, parameters: Array(values.keys), in: graph)
        let node = graph.nodes[index]
        guard let current = node.parameters, !current.specs.isEmpty else {
            throw ControlError("\(node.name) (node \(index - nodes.lowerBound)) has no parameters")
        }
        var typed: [(name: String, value: ParameterValue)] = []
        for (name, json) in values.sorted(by: { $0.key < $1.key }) {
            guard let spec = current.specs.first(where: { $0.name == name }) else {
                throw ControlError("\(node.name) has no parameter '\(PrismCommandLine.terminalSafe(name, keepingNewlines: false))' "
                                   + "(it takes \(current.specs.map(\.name).joined(separator: ", ")))")
            }
            do {
                typed.append((spec.name, try ParameterJSON.value(from: json, for: spec)))
            } catch {
                throw ControlError("\(node.name): \(error)")
            }
        }
        for (name, value) in typed { try graph.setParameter(node.id, name, value) }
        // A value that changes code or sizes (a blur radius) needs a new compile; if that fails, the old
        // values come back and the old program runs on.
        if control.renderer?.isStale == true {
            do {
                try control.recompile()
            } catch {
                for (name, _) in typed { if let old = current[name] { try? graph.setParameter(node.id, name, old) } }
                try? control.recompile()
                effects.refused(error)
                throw ControlError("\(node.name): \(Self.oneLine("\(error)")) (values kept)", cause: error)
            }
        }
        let place = index - nodes.lowerBound
        addressing.withLock { addressing in
            for (name, _) in typed { addressing.setValues.insert(SetValue(node: place, name: name)) }
        }
        publish(graph)
        let fields = typed.map { "\(JSONText.string($0.name)):\(ParameterJSON.json($0.value))" }.joined(separator: ",")
        var reply = ControlReply([("frame", String(frames.load(ordering: .relaxed))), ("node", String(place)),
                                  ("filter", JSONText.string(node.name)), ("values", "{\(fields)}")])
        reply.values = typed
        return reply
    }

    /// A new graph (`newText`), or the current text bound again (nil: a reload, which keeps the values set).
    func swap(to newText: String?, assembly: GraphAssembly, _ control: EngineControl) throws -> ControlReply {
        let text = newText ?? currentText
        let framed: (graph: FilterGraph, nodes: Range<Int>)
        do {
            let user: FilterGraph
            do {
                user = try assembly.bind(text)
            } catch {
                throw ControlError("graph: \(Self.oneLine("\(error)"))", cause: error)
            }
            framed = try assembly.frame(user, control)
            if newText == nil { carry(from: control.graph, to: framed.graph, nodes: framed.nodes) }
            try control.setGraph(framed.graph)  // throws with the old graph still running
        } catch {
            effects.refused((error as? ControlError)?.cause ?? error)
            throw error
        }
        addressing.withLock { addressing in
            if newText != nil { addressing.setValues.removeAll() }
            addressing.nodes = framed.nodes
        }
        self.text.withLock { $0 = text }
        publish(framed.graph)
        let passes = control.renderer?.passLabels ?? []
        return ControlReply([("frame", String(frames.load(ordering: .relaxed))), ("graph", JSONText.string(text)),
                             ("passes", "[\(passes.map(JSONText.string).joined(separator: ","))]")])
    }

    func snapshot(to path: String, _ control: EngineControl) throws -> ControlReply {
        // Written at the next frame as a new file, never through what appeared at `path` since the check; a
        // still that cannot be written is said, and the run goes on.
        let still = try StillImageSink(path: path, replacing: false) { error in
            PrismCommandLine.info("prism: snapshot \(PrismCommandLine.terminalSafe(path)) not written: \(error)")
        }
        try control.attach(still)
        let attached = ThreadOwned(still)
        addressing.withLock { $0.stills.append(attached) }
        return ControlReply([("frame", String(frames.load(ordering: .relaxed))), ("path", JSONText.string(path))])
    }

    /// The values set through commands, onto the reloaded graph: the node at the same place when it is the
    /// same filter, else the first node of that filter; where the parameter still has the same type.
    private func carry(from old: FilterGraph, to new: FilterGraph, nodes newNodes: Range<Int>) {
        let (oldNodes, setValues) = addressing.withLock { ($0.nodes, $0.setValues) }
        for key in setValues {
            let oldIndex = oldNodes.lowerBound + key.node
            guard old.nodes.indices.contains(oldIndex), let before = old.nodes[oldIndex].parameters,
                  let value = before[key.name], let oldSpec = before.specs.first(where: { $0.name == key.name }) else { continue }
            let filter = old.nodes[oldIndex].name
            let samePlace = newNodes.lowerBound + key.node
            guard let index = newNodes.contains(samePlace) && new.nodes[samePlace].name == filter
                    ? samePlace : newNodes.first(where: { new.nodes[$0].name == filter }),
                  let spec = new.nodes[index].parameters?.specs.first(where: { $0.name == key.name }),
                  ParameterJSON.sameType(oldSpec.kind, spec.kind) else { continue }
            try? new.setParameter(new.nodes[index].id, key.name, value)
        }
    }

    /// The running graph's node for `reference`: a label (`mono[m]`), a filter or shader file name (with or
    /// without its extension) naming one node, or a place among the addressed nodes; without one, the first
    /// node that has every parameter named.
    private func resolve(_ reference: ControlCommand.NodeReference?, parameters: [String], in graph: FilterGraph) throws -> Int {
        let nodes = self.nodes
        let range = nodes.clamped(to: graph.nodes.indices)
        let listing = range.map { "\($0 - nodes.lowerBound) \(graph.nodes[$0].name)" }.joined(separator: ", ")
        let known = range.isEmpty ? "the graph has no nodes" : "nodes: \(listing)"
        switch reference {
        case .index(let place):
            guard range.contains(nodes.lowerBound + place) else { throw ControlError("no node \(place) (\(known))") }
            return nodes.lowerBound + place
        case .name(let name):
            if let id = graph.labels[name], range.contains(id.index) { return id.index }
            let matches = range.filter {
                let nodeName = graph.nodes[$0].name
                return nodeName == name || (nodeName as NSString).deletingPathExtension == name
            }
            guard let first = matches.first else {
                throw ControlError("no node named '\(PrismCommandLine.terminalSafe(name, keepingNewlines: false))' (\(known))")
            }
            guard matches.count == 1 else {
                throw ControlError("'\(name)' names \(matches.count) nodes (\(matches.map { String($0 - nodes.lowerBound) }.joined(separator: ", "))); "
                                   + "give its index or a label")
            }
            return first
        case nil:
            guard let index = range.first(where: { index in
                let specs = graph.nodes[index].parameters?.specs ?? []
                return parameters.allSatisfy { name in specs.contains { $0.name == name } }
            }) else {
                throw ControlError("no node has parameter(s) \(parameters.sorted().joined(separator: ", ")) (\(known))")
            }
            return index
        }
    }

    /// The addressed nodes with their labels and values, for `/state` and the front end's own state.
    private func publish(_ graph: FilterGraph) {
        let labels = Dictionary(graph.labels.map { ($0.value.index, $0.key) }, uniquingKeysWith: { a, _ in a })
        let nodes = self.nodes
        let list = nodes.clamped(to: graph.nodes.indices).map { index in
            ControlNode(index: index - nodes.lowerBound, filter: graph.nodes[index].name, label: labels[index],
                        values: graph.nodes[index].parameters)
        }
        let text = currentText
        published.withLock { $0 = (text, list) }
        effects.published(list)
    }

    /// An error's text on one line (a reply is one line; a shader's compile log may have several).
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
