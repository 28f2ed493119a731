import Foundation
import PrismKit

/// Graph parameters given as text beside the graph (`prism_options_set(o, "params", …)`, the GStreamer
/// element's `params`): `NAME=VALUE` or `NODE.NAME=VALUE`, comma separated. NODE is a label (`mono[m]`
/// → `m`), a filter's name, or a shader file's name without its folder or extension; without NODE, the
/// first node that has a parameter NAME. Values are read by the parameter's kind, as in graph text.
enum GraphParameters {
    struct Assignment: Sendable, Equatable {
        var node: String?
        var name: String
        var value: String
    }

    static func parse(_ text: String) throws -> [Assignment] {
        try text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { item in
            guard let equals = item.firstIndex(of: "=") else {
                throw CAPIError.argument("params: '\(item)' is not NAME=VALUE or NODE.NAME=VALUE")
            }
            let key = item[..<equals].trimmingCharacters(in: .whitespaces)
            let value = item[item.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            let dot = key.lastIndex(of: ".")
            let node = dot.map { String(key[..<$0]) }
            let name = dot.map { String(key[key.index(after: $0)...]) } ?? key
            guard !name.isEmpty, node?.isEmpty != true, !value.isEmpty else {
                throw CAPIError.argument("params: '\(item)' is not NAME=VALUE or NODE.NAME=VALUE")
            }
            return Assignment(node: node, name: name, value: value)
        }
    }

    /// Sets each assignment on `graph` (before its run), checked against the parameter's kind and range.
    static func apply(_ assignments: [Assignment], to graph: FilterGraph) throws {
        for assignment in assignments {
            let node = try target(assignment, in: graph)
            guard let spec = node.parameters?.specs.first(where: { $0.name == assignment.name }) else {
                let known = node.parameters?.specs.map(\.name).joined(separator: ", ") ?? ""
                throw CAPIError.argument("params: \(node.name) has no parameter '\(assignment.name)'"
                                         + (known.isEmpty ? "" : " (it takes \(known))"))
            }
            do {
                try graph.setParameter(node.id, spec.name, try value(assignment.value, kind: spec.kind))
            } catch let error as CAPIError {
                throw error
            } catch {
                throw CAPIError.argument("params: \(node.name).\(spec.name): \(error)")
            }
        }
    }

    private static func target(_ assignment: Assignment, in graph: FilterGraph) throws -> FilterGraph.Node {
        guard let wanted = assignment.node else {
            guard let node = graph.nodes.first(where: { $0.parameters?.specs.contains { $0.name == assignment.name } == true }) else {
                throw CAPIError.argument("params: no filter in the graph has a parameter '\(assignment.name)'")
            }
            return node
        }
        if let id = graph.labels[wanted] { return graph[id] }
        let file = { (name: String) in ((name as NSString).lastPathComponent as NSString).deletingPathExtension }
        guard let node = graph.nodes.first(where: { $0.name == wanted || file($0.name) == wanted }) else {
            throw CAPIError.argument("params: no node '\(wanted)' in the graph (a label, a filter's name or a shader's file name)")
        }
        return node
    }

    /// `text` as a value of `kind` (validated, ranges included, by the graph when it is set).
    static func value(_ text: String, kind: ParameterKind) throws -> ParameterValue {
        func fail() -> CAPIError { CAPIError.argument("'\(text)' is not a \(kind.typeName)") }
        switch kind {
        case .float:
            guard let number = Double(text) else { throw fail() }
            return .float(number)
        case .int:
            guard let number = Int(text) else { throw fail() }
            return .int(number)
        case .bool:
            switch text.lowercased() {
            case "true", "1", "yes", "on": return .bool(true)
            case "false", "0", "no", "off": return .bool(false)
            default: throw fail()
            }
        case .color:
            if let color = HexColor.parse(text) { return .color(color) }
            let parts = text.split(separator: ":").compactMap { Double($0) }
            guard parts.count == 3 || parts.count == 4, parts.count == text.split(separator: ":").count else { throw fail() }
            return .color(SIMD4(parts[0], parts[1], parts[2], parts.count == 4 ? parts[3] : 1))
        case .point:
            let parts = text.split(separator: ":").compactMap { Double($0) }
            guard parts.count == 2, text.split(separator: ":").count == 2 else { throw fail() }
            return .point(SIMD2(parts[0], parts[1]))
        case .size:
            guard let size = Size(parsing: text) else { throw fail() }
            return .size(size)
        case .choice, .text:
            return .text(text)
        }
    }
}
