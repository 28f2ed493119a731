import Foundation
import PrismCore
import PrismFilters
import PrismKit
import PrismMedia
import PrismPipeline

/// `prism dev` on the control plane: the page's `/param`, `/record` and `/camera` and the shader's
/// reloads are `ControlCommand`s, carried out as `prism run --control` carries them out. What they do
/// besides the graph is here: recordings the page starts and stops, the camera switch, and the page's
/// state kept up with the plane (the nodes and their values, the files watched, a refused graph or value
/// shown at its file and line).
final class DevEffects: ControlEffects {
    private let state: DevState
    private let controller: GPUBound<DevController>
    /// Recordings' names: stamped with the time, `-2`, `-3`… within one second, never an existing file's.
    private let recordingNames: TakeNames
    private let shaderPath: String
    private let quiet: Bool

    init(options: DevOptions, state: DevState, controller: GPUBound<DevController>) {
        self.state = state
        self.controller = controller
        recordingNames = TakeNames(directory: options.outputDirectory, prefix: "prism-dev")
        shaderPath = options.shaderPath
        quiet = options.quiet
    }

    /// The graph the page edits: the shader and the extra filters, read by the shader from the inputs, then
    /// `--output-size`'s scale.
    static func bind(options: DevOptions) -> @Sendable (String) throws -> FilterGraph {
        let inputs = [nil] + options.extraInputs.map(\.name), outputSize = options.outputSize
        return { text in
            let graph = try Session.binder(inputs: inputs).bind(text)
            if let outputSize { try graph.appendScale(to: outputSize) }
            return graph
        }
    }

    /// The graphs the page and the reloads make, framed as the session framed the first (the input's colour
    /// conversion in front), at whatever size they give (the previews follow). Every node has its place on
    /// the page, the conversion's too.
    static func assembly(options: DevOptions, framing: GraphFraming) -> GraphAssembly {
        GraphAssembly(
            bind: bind(options: options),
            frame: { user, _ in
                let graph = try framing.frame(user, outputSize: nil).graph
                return (graph, 0..<graph.nodes.count)
            })
    }

    // MARK: Camera

    var camera: String? { state.read().cameraDevice }

    func availableCameras() -> [String] { refreshCameras().map(\.path) }

    /// Lists the cameras again (`ControlPlane.cameras`) and publishes them in the state.
    @discardableResult
    func refreshCameras() -> [DevCamera] {
        let cameras = ControlPlane.cameras(current: state.read().cameraDevice).map { DevCamera(path: $0.path, card: $0.card) }
        state.update { $0.cameras = cameras }
        return cameras
    }

    /// Pending on the page until the engine says it switched (or why it could not).
    func switchCamera(to path: String, plane: ControlPlane) {
        state.update {
            $0.cameraPending = path
            $0.cameraError = nil
        }
        plane.switchEngineCamera(to: path)
    }

    // MARK: Recordings

    func record(start: Bool, plane: ControlPlane) -> Result<ControlReply, ControlError> {
        let controller = self.controller
        guard start else {
            plane.schedule { control in try controller.value.stopRecording(control) }
            return .success(ControlReply([("record", JSONText.string("stop"))]))
        }
        // One recording at a time, decided here under the state's lock: a second start is told which
        // file is being written.
        var busy: String?, path: String?
        state.update { state in
            if let active = state.recordingPath ?? state.recordingAsked { busy = active; return }
            path = recordingNames.next()
            state.recordingAsked = path
        }
        guard let path else {
            return .failure(ControlError("already recording \(busy ?? "")", status: 409, fields: [("path", JSONText.string(busy ?? ""))]))
        }
        plane.schedule { control in controller.value.startRecording(control, path: path) }
        return .success(ControlReply([("record", JSONText.string("start")), ("path", JSONText.string(path))]))
    }

    func snapshot(_ asked: String?, plane: ControlPlane) -> Result<ControlReply, ControlError> {
        .failure(ControlError("snapshot: prism dev's page downloads the newest frame (GET /snapshot)", status: 409))
    }

    func quit() -> Result<ControlReply, ControlError> {
        .failure(ControlError("quit: prism dev runs until Ctrl-C", status: 409))
    }

    // MARK: The page's state

    func published(_ nodes: [ControlNode]) {
        let parameters = nodes.compactMap { node in node.values.map { DevNodeParameters(node: node.index, filter: node.filter, values: $0) } }
        state.update { $0.parameters = parameters }
    }

    /// On the page at the author's file and line, and on stderr; the last good shader runs on.
    func refused(_ error: any Error) {
        controller.value.report(error)
    }

    func reloadedAfterEdit(_ result: Result<ControlReply, ControlError>) {
        guard case .success = result else { return }  // `refused` has shown why
        state.update {
            $0.error = nil
            $0.reloads += 1
        }
        if !quiet { PrismCommandLine.info("prism: reloaded \(shaderPath)") }
    }

    func watching(_ files: [String]) {
        state.update { $0.watched = files }
    }
}

/// The page's commands in the page's spellings, each one `ControlCommand`.
extension ControlCommand {
    /// `POST /param`: `{"node": 0, "name": "amount", "value": 0.5}`; without `node`, the first node that
    /// has the parameter.
    init(parameterBody body: [UInt8]) throws(ControlError) {
        struct Body: Decodable {
            var node: Int?
            var name: String
            var value: JSONValue
        }
        guard let request = try? JSONDecoder().decode(Body.self, from: Data(body)) else {
            throw ControlError("expected {\"node\": N, \"name\": \"…\", \"value\": …}")
        }
        self = .set(node: request.node.map { .index($0) }, values: [request.name: request.value])
    }

    /// `POST /record`: `{"action": "start"}` or `{"action": "stop"}`.
    init(recordBody body: [UInt8]) throws(ControlError) {
        struct Body: Decodable { var action: String }
        guard let request = try? JSONDecoder().decode(Body.self, from: Data(body)) else {
            throw ControlError("expected {\"action\": \"start\"} or {\"action\": \"stop\"}")
        }
        switch request.action {
        case "start": self = .record(start: true)
        case "stop": self = .record(start: false)
        default: throw ControlError("action must be start or stop")
        }
    }

    /// `POST /camera`: `{"device": "/dev/videoN"}`.
    init(cameraBody body: [UInt8]) throws(ControlError) {
        struct Body: Decodable { var device: String }
        guard let request = try? JSONDecoder().decode(Body.self, from: Data(body)) else {
            throw ControlError("expected {\"device\": \"/dev/videoN\"}")
        }
        self = .camera(InputSpec.cameraPath(request.device) ?? request.device)
    }
}
