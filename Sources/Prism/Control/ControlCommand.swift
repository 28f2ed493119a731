import Foundation
import PrismCore
import PrismFilters
import PrismPipeline

/// One command of the live control channel of `prism run` and `prism record`: the same JSON object
/// whether it comes as a line on stdin or as the body of `POST /control`. One object, one command:
///
/// | command | what it does |
/// |---|---|
/// | `{"set": {"node": "vignette", "amount": 0.3}}` | sets parameters of one node (by label, filter name or index; without `node`, the first node that has them) from the next frame on |
/// | `{"graph": "invert, mono"}` | binds and compiles a new graph, then runs it from the next frame on; a bad one is refused and the old one runs on |
/// | `{"reload": true}` | reads the graph's shader files again (as `--watch` does on a save) |
/// | `{"camera": "/dev/video2"}` | switches cameras between two frames |
/// | `{"snapshot": "still.png"}` | the next frame as a PNG or JPEG (no path: a new name) |
/// | `{"record": "start"}` / `{"record": "stop"}` | starts or stops a take (`prism record` only) |
/// | `{"quit": true}` | finishes the output and ends the run |
enum ControlCommand: Equatable, Sendable {
    case set(node: NodeReference?, values: [String: JSONValue])
    case graph(String)
    case reload
    case camera(String)
    case snapshot(String?)
    case record(start: Bool)
    case quit

    /// A node named in `set`: its place among the graph's nodes (0 for the first), or a label, filter name
    /// or shader file name.
    enum NodeReference: Equatable, Sendable, CustomStringConvertible {
        case index(Int)
        case name(String)
        var description: String {
            switch self {
            case .index(let index): return "#\(index)"
            case .name(let name): return "'\(name)'"
            }
        }
    }

    static let names = "set, graph, reload, camera, snapshot, record, quit"

    /// How much of a refused command a message quotes.
    static let echoLimit = 80

    /// Decodes one command; throws `ControlError` (400) with the reason for anything else.
    init(json bytes: [UInt8]) throws(ControlError) {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            let text = String(decoding: bytes.prefix(Self.echoLimit), as: UTF8.self)
            throw ControlError("not JSON: '\(PrismCommandLine.terminalSafe(text, keepingNewlines: false))"
                               + (bytes.count > Self.echoLimit ? "…'" : "'") + " (a command is one JSON object, e.g. {\"set\": {\"amount\": 0.3}})")
        }
        guard case .object(let fields) = value else {
            throw ControlError("a command is one JSON object (\(Self.names)), not \(value.typeName)")
        }
        guard fields.count == 1, let (name, argument) = fields.first else {
            let keys = fields.keys.sorted().joined(separator: ", ")
            throw ControlError(fields.isEmpty ? "an empty object is no command (\(Self.names))"
                               : "one command per object, got \(fields.count) (\(keys))")
        }
        switch name {
        case "set":
            guard case .object(var values) = argument else { throw ControlError("set takes an object: {\"set\": {\"node\": \"mono\", \"amount\": 0.5}}") }
            var node: NodeReference?
            if let given = values.removeValue(forKey: "node") {
                switch given {
                case .number(let number) where number == number.rounded() && number >= 0 && number < 1e6: node = .index(Int(number))
                case .string(let text) where !text.isEmpty: node = .name(text)
                default: throw ControlError("set: node is a label, a filter name or an index (0 for the first node), not \(given.typeName)")
                }
            }
            guard !values.isEmpty else { throw ControlError("set names no parameter: {\"set\": {\"node\": \"mono\", \"amount\": 0.5}}") }
            self = .set(node: node, values: values)
        case "graph":
            guard case .string(let text) = argument else { throw ControlError("graph takes the graph's text, e.g. {\"graph\": \"invert, mono\"}") }
            self = .graph(text)
        case "reload":
            guard argument == .bool(true) else { throw ControlError("reload takes true") }
            self = .reload
        case "camera":
            guard case .string(let path) = argument, !path.isEmpty else { throw ControlError("camera takes a device path, e.g. {\"camera\": \"/dev/video2\"}") }
            self = .camera(InputSpec.cameraPath(path) ?? path)
        case "snapshot":
            switch argument {
            case .string(let path) where !path.isEmpty: self = .snapshot(path)
            case .bool(true), .null: self = .snapshot(nil)
            default: throw ControlError("snapshot takes a .png or .jpg path, or true for a new name")
            }
        case "record":
            switch argument {
            case .string("start"): self = .record(start: true)
            case .string("stop"): self = .record(start: false)
            default: throw ControlError("record takes \"start\" or \"stop\"")
            }
        case "quit":
            guard argument == .bool(true) else { throw ControlError("quit takes true") }
            self = .quit
        default:
            let quoted = String(name.prefix(Self.echoLimit))
            throw ControlError("unknown command '\(PrismCommandLine.terminalSafe(quoted, keepingNewlines: false))' (\(Self.names))")
        }
    }
}

/// A command refused or failed: its reply is `{"ok":false,"error":"…"}`, with `status` for HTTP.
struct ControlError: PrismError {
    let description: String
    /// 400: the command is wrong; 409: it does not apply to this run (a camera switch on the pattern);
    /// 503: the run has ended.
    let status: Int
    /// More fields of the reply, values already JSON (the recording being written, for a second start).
    var fields: [(String, String)] = []
    /// What failed, when a graph or a compile did: its places in files are this error's (`prism dev` shows them).
    var cause: (any Error)?

    init(_ description: String, status: Int = 400, fields: [(String, String)] = [], cause: (any Error)? = nil) {
        self.description = description
        self.status = status
        self.fields = fields
        self.cause = cause
    }

    var diagnostics: [Diagnostic] { cause?.prismDiagnostics ?? [] }

    /// The reply line.
    var json: String {
        "{\"ok\":false,\"error\":\(JSONText.string(description))" + fields.map { ",\(JSONText.string($0.0)):\($0.1)" }.joined() + "}"
    }
}

extension Result<ControlReply, ControlError> {
    /// The reply line, whichever it is.
    var json: String {
        switch self {
        case .success(let reply): return reply.json
        case .failure(let error): return error.json
        }
    }
}

/// A command's reply: `{"ok":true,…}` with the fields given, in order (values already JSON).
struct ControlReply: Sendable {
    var fields: [(String, String)]
    /// The values a `set` gave, typed as the node took them (the page's `/param` answers with its one).
    var values: [(name: String, value: ParameterValue)] = []

    init(_ fields: [(String, String)] = []) { self.fields = fields }

    /// This reply with `more` fields after its own.
    func adding(_ more: [(String, String)]) -> ControlReply {
        var reply = self
        reply.fields += more
        return reply
    }

    var json: String {
        "{\"ok\":true" + fields.map { ",\(JSONText.string($0.0)):\($0.1)" }.joined() + "}"
    }
}
