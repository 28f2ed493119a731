import Foundation
import PrismCore
import PrismFilters

/// The parameters of one graph node, as the preview shows and sets them.
struct DevNodeParameters: Sendable {
    var node: Int
    var filter: String
    var values: ParameterValues
}

/// A camera the preview offers to switch to.
struct DevCamera: Sendable, Equatable {
    var path: String
    var card: String
}

/// What the preview's `/state` reports; written by the loop, read by the server, under one lock.
final class DevState: @unchecked Sendable {
    struct Snapshot: Sendable {
        var frames = 0
        var fps = 0.0
        var passes: [(label: String, milliseconds: Double)] = []
        var timing = ""
        var error: DevDiagnostic?
        var reloads = 0
        var failedReloads = 0
        var parameters: [DevNodeParameters] = []
        var recordingPath: String?
        var recordingStarted: Date?
        var recordingFrames = 0
        var recordingDropped = 0
        var lastRecording: String?
        var recordingError: String?
        /// Why the last recording ended by itself (a camera switch to another size), with where it was saved.
        var recordingNote: String?
        var previewDropped = 0
        var outputSize = Size(width: 0, height: 0)
        var input = ""
        var renderer = ""
        var shader = ""
        var watched: [String] = []
        var selfTest: String?
        /// The camera in use (nil when the input is not a camera), the cameras it can switch to, a switch
        /// asked for and not yet made, and why the last switch failed.
        var cameraDevice: String?
        var cameras: [DevCamera] = []
        var cameraPending: String?
        var cameraError: String?
    }

    private let lock = NSLock()
    private var snapshot = Snapshot()

    func read() -> Snapshot { lock.withLock { snapshot } }
    func update(_ body: (inout Snapshot) -> Void) { lock.withLock { body(&snapshot) } }

    /// `/state` as JSON.
    func json() -> String {
        let s = read()
        var parts: [String] = []
        parts.append("\"frames\":\(s.frames)")
        parts.append("\"fps\":\(JSONText.number((s.fps * 10).rounded() / 10))")
        parts.append("\"passes\":[" + s.passes.map {
            "{\"label\":\(JSONText.string($0.label)),\"ms\":\(JSONText.number(($0.milliseconds * 1000).rounded() / 1000))}"
        }.joined(separator: ",") + "]")
        parts.append("\"timing\":\(JSONText.string(s.timing))")
        if let error = s.error {
            parts.append("\"error\":{\"file\":\(JSONText.string(error.file)),\"line\":\(error.line.map(String.init) ?? "null"),"
                         + "\"column\":\(error.column.map(String.init) ?? "null"),\"message\":\(JSONText.string(error.message)),"
                         + "\"text\":\(JSONText.string(error.text))}")
        } else {
            parts.append("\"error\":null")
        }
        parts.append("\"reloads\":\(s.reloads)")
        parts.append("\"failedReloads\":\(s.failedReloads)")
        parts.append("\"parameters\":[" + s.parameters.flatMap { node in
            node.values.specs.map { Self.parameterJSON(node: node, spec: $0) }
        }.joined(separator: ",") + "]")
        let seconds = s.recordingStarted.map { Date().timeIntervalSince($0) } ?? 0
        parts.append("\"recording\":{\"active\":\(s.recordingPath != nil),\"seconds\":\(JSONText.number((seconds * 10).rounded() / 10)),"
                     + "\"path\":\(s.recordingPath.map(JSONText.string) ?? "null"),\"frames\":\(s.recordingFrames),"
                     + "\"dropped\":\(s.recordingDropped),\"last\":\(s.lastRecording.map(JSONText.string) ?? "null"),"
                     + "\"error\":\(s.recordingError.map(JSONText.string) ?? "null"),"
                     + "\"note\":\(s.recordingNote.map(JSONText.string) ?? "null")}")
        parts.append("\"previewDropped\":\(s.previewDropped)")
        parts.append("\"size\":[\(s.outputSize.width),\(s.outputSize.height)]")
        parts.append("\"input\":\(JSONText.string(s.input))")
        parts.append("\"renderer\":\(JSONText.string(s.renderer))")
        parts.append("\"shader\":\(JSONText.string(s.shader))")
        parts.append("\"watched\":[" + s.watched.map(JSONText.string).joined(separator: ",") + "]")
        if let device = s.cameraDevice {
            let cameras = s.cameras.map { "{\"path\":\(JSONText.string($0.path)),\"card\":\(JSONText.string($0.card))}" }
            parts.append("\"camera\":{\"device\":\(JSONText.string(device)),\"cameras\":[" + cameras.joined(separator: ",") + "],"
                         + "\"pending\":\(s.cameraPending.map(JSONText.string) ?? "null"),"
                         + "\"error\":\(s.cameraError.map(JSONText.string) ?? "null")}")
        } else {
            parts.append("\"camera\":null")
        }
        parts.append("\"selfTest\":\(s.selfTest ?? "null")")
        return "{" + parts.joined(separator: ",") + "}"
    }

    private static func parameterJSON(node: DevNodeParameters, spec: ParameterSpec) -> String {
        var fields = ["\"node\":\(node.node)", "\"filter\":\(JSONText.string(node.filter))",
                      "\"name\":\(JSONText.string(spec.name))", "\"summary\":\(JSONText.string(spec.summary))"]
        let value = node.values[spec.name] ?? spec.defaultValue
        switch spec.kind {
        case .float(let range):
            fields += ["\"type\":\"float\"", "\"min\":\(JSONText.number(range.lowerBound))", "\"max\":\(JSONText.number(range.upperBound))"]
        case .int(let range):
            fields += ["\"type\":\"int\"", "\"min\":\(range.lowerBound)", "\"max\":\(range.upperBound)"]
        case .bool: fields.append("\"type\":\"bool\"")
        case .color: fields.append("\"type\":\"color\"")
        case .point: fields.append("\"type\":\"point\"")
        case .size: fields.append("\"type\":\"size\"")
        case .choice(let options):
            fields += ["\"type\":\"choice\"", "\"options\":[" + options.map(JSONText.string).joined(separator: ",") + "]"]
        case .text: fields.append("\"type\":\"text\"")
        }
        fields.append("\"settable\":\(DevParameters.isSettable(spec.kind))")
        fields.append("\"value\":" + DevParameters.json(value))
        fields.append("\"default\":" + DevParameters.json(spec.defaultValue))
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// Parameter values to and from the preview's JSON, validated against the declared specs.
enum DevParameters {
    /// Text and size parameters (file paths, output sizes) are not settable from a browser.
    static func isSettable(_ kind: ParameterKind) -> Bool {
        switch kind {
        case .text, .size: return false
        default: return true
        }
    }

    static func json(_ value: ParameterValue) -> String {
        switch value {
        case .float(let v): return JSONText.number(v)
        case .int(let v): return String(v)
        case .bool(let v): return v ? "true" : "false"
        case .color(let c): return "[\(JSONText.number(c.x)),\(JSONText.number(c.y)),\(JSONText.number(c.z)),\(JSONText.number(c.w))]"
        case .point(let p): return "[\(JSONText.number(p.x)),\(JSONText.number(p.y))]"
        case .size(let s): return JSONText.string(s.description)
        case .choice(let s), .text(let s): return JSONText.string(s)
        }
    }

    struct Invalid: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The typed value of a decoded JSON value for `spec`, range-checked; throws `Invalid` with the reason.
    static func value(from json: JSONValue, for spec: ParameterSpec) throws -> ParameterValue {
        guard isSettable(spec.kind) else { throw Invalid("\(spec.name) cannot be set from the preview") }
        func numbers(_ counts: Set<Int>) throws -> [Double] {
            guard case .array(let items) = json, counts.contains(items.count) else {
                throw Invalid("\(spec.name) takes an array of \(counts.sorted().map(String.init).joined(separator: " or ")) numbers")
            }
            return try items.map {
                guard case .number(let v) = $0, v.isFinite else { throw Invalid("\(spec.name) takes numbers") }
                return v
            }
        }
        let candidate: ParameterValue
        switch spec.kind {
        case .float, .int:
            guard case .number(let number) = json, number.isFinite else { throw Invalid("\(spec.name) takes a number") }
            if case .int = spec.kind {
                guard number == number.rounded(), abs(number) < 1e15 else { throw Invalid("\(spec.name) takes a whole number") }
                candidate = .int(Int(number))
            } else {
                candidate = .float(number)
            }
        case .bool:
            guard case .bool(let flag) = json else { throw Invalid("\(spec.name) takes true or false") }
            candidate = .bool(flag)
        case .color:
            var rgba: [Double]
            if case .string(let text) = json {
                guard let parsed = HexColor.parse(text).map({ [$0.x, $0.y, $0.z, $0.w] }) else { throw Invalid("\(spec.name) takes #rrggbb[aa] or [r,g,b,a]") }
                rgba = parsed
            } else {
                rgba = try numbers([3, 4])
                if rgba.count == 3 { rgba.append(1) }
            }
            guard rgba.allSatisfy({ (0...1).contains($0) }) else { throw Invalid("\(spec.name): components must be in 0...1") }
            candidate = .color(SIMD4(rgba[0], rgba[1], rgba[2], rgba[3]))
        case .point:
            let xy = try numbers([2])
            candidate = .point(SIMD2(xy[0], xy[1]))
        case .choice:
            guard case .string(let word) = json else { throw Invalid("\(spec.name) takes one of its options as a string") }
            candidate = .choice(word)
        case .text, .size:
            throw Invalid("\(spec.name) cannot be set from the preview")
        }
        do { return try spec.validate(candidate) } catch { throw Invalid("\(error)") }
    }


    /// Whether two kinds are the same type (ranges and option lists may differ), for carrying values over
    /// a reload.
    static func sameType(_ a: ParameterKind, _ b: ParameterKind) -> Bool {
        switch (a, b) {
        case (.float, .float), (.int, .int), (.bool, .bool), (.color, .color), (.point, .point), (.size, .size),
             (.choice, .choice), (.text, .text):
            return true
        default:
            return false
        }
    }
}

/// A JSON value as the preview's request bodies carry it (JSONDecoder keeps booleans and numbers apart).
enum JSONValue: Decodable, Sendable, Equatable {
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case null

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let flag = try? container.decode(Bool.self) { self = .bool(flag) }
        else if let number = try? container.decode(Double.self) { self = .number(number) }
        else if let text = try? container.decode(String.self) { self = .string(text) }
        else if let items = try? container.decode([JSONValue].self) { self = .array(items) }
        else { throw DecodingError.dataCorruptedError(in: container, debugDescription: "objects are not accepted here") }
    }
}
