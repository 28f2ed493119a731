import Foundation
import PrismCore
import PrismFilters
import Synchronization

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

/// What the preview's `/state` reports; written by the loop, read by the server.
final class DevState: Sendable {
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
        /// A recording the page asked for that has not begun yet: a second start names it, as it names one
        /// in progress, instead of promising a path no recording will write.
        var recordingAsked: String?
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
        /// The page's self-test findings: a JSON object, as posted.
        var selfTest: String?
        /// The camera in use (nil when the input is not a camera), the cameras it can switch to, a switch
        /// asked for and not yet made, and why the last switch failed.
        var cameraDevice: String?
        var cameras: [DevCamera] = []
        var cameraPending: String?
        var cameraError: String?
    }

    private let snapshot = Mutex(Snapshot())

    func read() -> Snapshot { snapshot.withLock { $0 } }
    func update(_ body: (inout Snapshot) -> Void) { snapshot.withLock { body(&$0) } }

    /// `/state` as JSON (the shape `PreviewPage`'s script reads).
    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Every number written is finite and every string encodable: encoding cannot fail (a test keeps it so).
        let data = (try? encoder.encode(StateJSON(read(), now: Date()))) ?? Data("{}".utf8)
        // "<" only occurs inside strings: escaped, the document stays inert even if pasted into HTML.
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }
}

/// An optional that is encoded as `null` when absent rather than left out (the page tests `state.error`,
/// `state.camera`, …): the one place the document's optionals are written, so its parts can use the
/// synthesized `encode(to:)`.
@propertyWrapper
private struct Null<Value: Encodable>: Encodable {
    var wrappedValue: Value?
    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        if let wrappedValue { try c.encode(wrappedValue) } else { try c.encodeNil() }
    }
}

/// `/state`'s document. Absent values are `null`, not missing keys (`@Null`).
private struct StateJSON: Encodable {
    let snapshot: DevState.Snapshot
    let now: Date

    init(_ snapshot: DevState.Snapshot, now: Date) {
        self.snapshot = snapshot
        self.now = now
    }

    struct Pass: Encodable {
        let label: String
        let ms: Double
    }

    struct ErrorJSON: Encodable {
        let file: String
        @Null var line: Int?
        @Null var column: Int?
        let message: String
        let text: String
    }

    struct Recording: Encodable {
        let active: Bool
        let seconds: Double
        @Null var path: String?
        let frames: Int
        let dropped: Int
        @Null var last: String?
        @Null var error: String?
        @Null var note: String?
    }

    struct Camera: Encodable {
        struct Choice: Encodable {
            let path: String
            let card: String
        }
        let device: String
        let cameras: [Choice]
        @Null var pending: String?
        @Null var error: String?
    }

    /// One settable (or shown) parameter of a graph node; `min`/`max` only for numbers, `options` only
    /// for choices.
    struct Parameter: Encodable {
        let node: Int
        let filter: String
        let spec: ParameterSpec
        let value: ParameterValue

        enum CodingKeys: String, CodingKey { case node, filter, name, summary, type, min, max, options, settable, value, `default` }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(node, forKey: .node)
            try c.encode(filter, forKey: .filter)
            try c.encode(spec.name, forKey: .name)
            try c.encode(spec.summary, forKey: .summary)
            switch spec.kind {
            case .float(let range):
                try c.encode("float", forKey: .type)
                // An ISF float without MIN/MAX is unbounded: no min/max (JSON has no infinity).
                if range.lowerBound.isFinite { try c.encode(range.lowerBound, forKey: .min) }
                if range.upperBound.isFinite { try c.encode(range.upperBound, forKey: .max) }
            case .int(let range):
                try c.encode("int", forKey: .type)
                try c.encode(range.lowerBound, forKey: .min)
                try c.encode(range.upperBound, forKey: .max)
            case .bool: try c.encode("bool", forKey: .type)
            case .color: try c.encode("color", forKey: .type)
            case .point: try c.encode("point", forKey: .type)
            case .size: try c.encode("size", forKey: .type)
            case .choice(let options):
                try c.encode("choice", forKey: .type)
                try c.encode(options, forKey: .options)
            case .text: try c.encode("text", forKey: .type)
            }
            try c.encode(ParameterJSON.isSettable(spec.kind), forKey: .settable)
            try c.encode(ValueJSON(value), forKey: .value)
            try c.encode(ValueJSON(spec.defaultValue), forKey: .default)
        }
    }

    /// A parameter value as the page's controls take it: numbers, booleans, [r,g,b,a], [x,y], strings.
    struct ValueJSON: Encodable {
        let value: ParameterValue
        init(_ value: ParameterValue) { self.value = value }

        func encode(to encoder: Encoder) throws {
            var c = encoder.singleValueContainer()
            switch value {
            case .float(let v): try c.encode(jsonNumber(v))
            case .int(let v): try c.encode(v)
            case .bool(let v): try c.encode(v)
            case .color(let v): try c.encode([v.x, v.y, v.z, v.w].map(jsonNumber))
            case .point(let v): try c.encode([v.x, v.y].map(jsonNumber))
            case .size(let v): try c.encode(v.description)
            case .choice(let v), .text(let v): try c.encode(v)
            }
        }
    }

    /// The document's fields, in the order they are written.
    struct Document: Encodable {
        let frames: Int
        @Null var fps: Double?
        let passes: [Pass]
        let timing: String
        @Null var error: ErrorJSON?
        let reloads: Int
        let failedReloads: Int
        let parameters: [Parameter]
        let recording: Recording
        let previewDropped: Int
        let size: [Int]
        let input: String
        let renderer: String
        let shader: String
        let watched: [String]
        @Null var camera: Camera?
        @Null var selfTest: JSONValue?
    }

    func encode(to encoder: Encoder) throws {
        let s = snapshot
        let seconds = s.recordingStarted.map { now.timeIntervalSince($0) } ?? 0
        try Document(
            frames: s.frames,
            fps: jsonNumber((s.fps * 10).rounded() / 10),
            passes: s.passes.map { Pass(label: $0.label, ms: jsonNumber(($0.milliseconds * 1000).rounded() / 1000) ?? 0) },
            timing: s.timing,
            error: s.error.map { ErrorJSON(file: $0.file, line: $0.line, column: $0.column, message: $0.message, text: $0.text) },
            reloads: s.reloads,
            failedReloads: s.failedReloads,
            parameters: s.parameters.flatMap { node in
                node.values.specs.map { Parameter(node: node.node, filter: node.filter, spec: $0, value: node.values[$0.name] ?? $0.defaultValue) }
            },
            recording: Recording(active: s.recordingPath != nil, seconds: jsonNumber((seconds * 10).rounded() / 10) ?? 0, path: s.recordingPath,
                                 frames: s.recordingFrames, dropped: s.recordingDropped, last: s.lastRecording,
                                 error: s.recordingError, note: s.recordingNote),
            previewDropped: s.previewDropped,
            size: [s.outputSize.width, s.outputSize.height],
            input: s.input,
            renderer: s.renderer,
            shader: s.shader,
            watched: s.watched,
            camera: s.cameraDevice.map { device in
                Camera(device: device, cameras: s.cameras.map { Camera.Choice(path: $0.path, card: $0.card) },
                       pending: s.cameraPending, error: s.cameraError)
            },
            selfTest: s.selfTest.flatMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
        ).encode(to: encoder)
    }
}

/// JSON has no NaN or infinity: those are null.
private func jsonNumber(_ value: Double) -> Double? { value.isFinite ? value : nil }
