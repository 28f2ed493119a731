import Foundation
import PrismCore
import PrismKit
import PrismFilters
import PrismMedia
import PrismPipeline

/// The preview's endpoints. Only these paths exist; nothing is read from disk because of a URL.
/// Requests reach them only past `RequestGate` (Host, Origin, JSON POSTs, the session token),
/// which `HTTPServer` applies to every request first.
/// The README's "The preview's HTTP API" shows them to scripts (curl with the token cookie); `run` and
/// `record`'s `--control PORT` serve `LiveControl`'s `/control` and `/state` behind the same gate.
///
/// | method | path | answer |
/// |---|---|---|
/// | GET | `/` | the page (HTML, CSS and JS inline) |
/// | GET | `/stream?view=output\|input` | MJPEG, `multipart/x-mixed-replace` |
/// | GET | `/frame.jpg?view=output\|input` | the newest frame as one JPEG |
/// | GET | `/snapshot` | the newest output frame, full size, as a PNG download |
/// | GET | `/state` | JSON: frames, fps, pass times, error, parameters, recording |
/// | POST | `/param` | `{"node":0,"name":"amount","value":0.5}` → 200, or 400 with the reason |
/// | POST | `/record` | `{"action":"start"}` / `{"action":"stop"}` |
/// | POST | `/mouse` | `{"x":120.5,"y":40,"down":true}` (output pixels from the bottom left) → 200: ShaderToy's `iMouse` (`DevMouse`); 400 when outside the output or malformed |
/// | POST | `/camera` | `{"device":"/dev/videoN"}` → 202, switched between frames; 400 unless it is a listed camera (or the current one, 200); 409 when the input is not a camera |
/// | POST | `/selftest` | only with `--page-self-test`: the page's self-test result (JSON object) |
struct PreviewRoutes: Sendable {
    let session: DevSession
    let selfTest: Bool

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        switch (request.method, request.path) {
        case ("GET", "/"), ("GET", "/index.html"):
            return .data(status: 200, contentType: "text/html; charset=utf-8", body: Array(PreviewPage.html.utf8),
                         headers: [("Content-Security-Policy",
                                    "default-src 'self'; img-src 'self' data: blob:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; "
                                    + "frame-ancestors 'none'")])
        case ("GET", "/state"):
            return .json(200, session.state.json())
        case ("GET", "/stream"):
            guard let view = view(request) else { return .error(400, "view must be output or input") }
            return .stream(status: 200, contentType: "multipart/x-mixed-replace; boundary=\(MJPEGStream.boundary)",
                           source: MJPEGStream(hub: session.hub, view: view))
        case ("GET", "/frame.jpg"):
            guard let view = view(request) else { return .error(400, "view must be output or input") }
            guard let buffer = session.hub.latest(view) else { return .error(503, "no frame yet") }
            let image = buffer.rgbaImage(maxWidth: session.options.previewMaxWidth)
            guard let jpeg = try? ImageFile.encode(image, kind: .jpeg, jpegQuality: 85, label: "frame") else {
                return .error(500, "cannot encode the frame")
            }
            return .data(status: 200, contentType: "image/jpeg", body: jpeg)
        case ("GET", "/snapshot"):
            guard let buffer = session.hub.latest(.output) else { return .error(503, "no frame yet") }
            guard let png = try? ImageFile.encode(buffer.rgbaImage(), kind: .png, label: "snapshot") else {
                return .error(500, "cannot encode the snapshot")
            }
            let stamp = Self.timestamp()
            return .data(status: 200, contentType: "image/png", body: png,
                         headers: [("Content-Disposition", "attachment; filename=\"prism-snapshot-\(stamp).png\"")])
        case ("POST", "/param"):
            return setParameter(request.body)
        case ("POST", "/record"):
            return record(request.body)
        case ("POST", "/camera"):
            return switchCamera(request.body)
        case ("POST", "/mouse"):
            do {
                session.mouse.update(try DevMouse.parse(request.body, outputSize: session.state.read().outputSize))
                return .json(200, "{\"ok\":true}")
            } catch {
                return .error(400, error.description)
            }
        case ("POST", "/selftest") where selfTest:
            guard (try? JSONSerialization.jsonObject(with: Data(request.body))) is [String: Any],
                  let text = String(bytes: request.body, encoding: .utf8) else {
                return .error(400, "the self-test result must be a JSON object")
            }
            session.state.update { $0.selfTest = text }
            if !session.options.quiet { PrismCommandLine.info("prism: page self-test: \(text)") }
            return .json(200, "{\"ok\":true}")
        case (_, "/"), (_, "/index.html"), (_, "/state"), (_, "/stream"), (_, "/frame.jpg"), (_, "/snapshot"),
             (_, "/param"), (_, "/record"), (_, "/camera"), (_, "/mouse"):
            return .error(405, "\(request.method) is not allowed on \(request.path)")
        default:
            return .error(404, "not found")
        }
    }

    private func view(_ request: HTTPRequest) -> PreviewView? {
        guard let text = request.query("view") else { return .output }
        return PreviewView(rawValue: text)
    }

    private struct ParameterRequest: Decodable {
        var node: Int?
        var name: String
        var value: JSONValue
    }

    private func setParameter(_ body: [UInt8]) -> HTTPResponse {
        guard let request = try? JSONDecoder().decode(ParameterRequest.self, from: Data(body)) else {
            return .error(400, "expected {\"node\": N, \"name\": \"…\", \"value\": …}")
        }
        let nodes = session.state.read().parameters
        let target = request.node.flatMap { index in nodes.first { $0.node == index } }
            ?? (request.node == nil ? nodes.first { $0.values.specs.contains { $0.name == request.name } } : nil)
        guard let target else { return .error(400, "no filter node \(request.node.map(String.init) ?? "") with parameters") }
        guard let spec = target.values.specs.first(where: { $0.name == request.name }) else {
            return .error(400, "\(target.filter) has no parameter '\(request.name)'")
        }
        let value: ParameterValue
        do {
            value = try DevParameters.value(from: request.value, for: spec)
        } catch {
            return .error(400, "\(error)")
        }
        session.send(.setParameter(node: target.node, name: spec.name, value: value))
        session.state.update { snapshot in
            if let index = snapshot.parameters.firstIndex(where: { $0.node == target.node }) {
                try? snapshot.parameters[index].values.set(spec.name, value)
            }
        }
        return .json(200, "{\"ok\":true,\"node\":\(target.node),\"name\":\(JSONText.string(spec.name)),\"value\":\(DevParameters.json(value))}")
    }

    private struct RecordRequest: Decodable {
        var action: String
    }

    private func record(_ body: [UInt8]) -> HTTPResponse {
        guard let request = try? JSONDecoder().decode(RecordRequest.self, from: Data(body)) else {
            return .error(400, "expected {\"action\": \"start\"} or {\"action\": \"stop\"}")
        }
        switch request.action {
        case "start":
            // One recording at a time, decided here under the state's lock: a second start is told which
            // file is being written.
            var busy: String?, path: String?
            session.state.update { state in
                if let active = state.recordingPath ?? state.recordingAsked { busy = active; return }
                path = session.recordingNames.next()
                state.recordingAsked = path
            }
            guard let path else {
                return .json(409, "{\"ok\":false,\"error\":\(JSONText.string("already recording \(busy ?? "")"))"
                             + ",\"path\":\(JSONText.string(busy ?? ""))}")
            }
            session.send(.startRecording(path: path))
            return .json(202, "{\"ok\":true,\"path\":\(JSONText.string(path))}")
        case "stop":
            session.send(.stopRecording)
            return .json(202, "{\"ok\":true}")
        default:
            return .error(400, "action must be start or stop")
        }
    }

    private struct CameraRequest: Decodable {
        var device: String
    }

    /// Only a device `CameraSource.list()` reports as usable (listed afresh, so a camera plugged in since
    /// start is found), or the current one, is accepted: the path from the browser opens nothing else.
    private func switchCamera(_ body: [UInt8]) -> HTTPResponse {
        guard case .camera = session.options.input, let current = session.state.read().cameraDevice else {
            return .error(409, "the input is not a camera")
        }
        guard let request = try? JSONDecoder().decode(CameraRequest.self, from: Data(body)) else {
            return .error(400, "expected {\"device\": \"/dev/videoN\"}")
        }
        if request.device == current {
            return .json(200, "{\"ok\":true,\"device\":\(JSONText.string(current)),\"unchanged\":true}")
        }
        let cameras = session.refreshCameras()
        guard cameras.contains(where: { $0.path == request.device }) else {
            return .error(400, "\(request.device) is not an available camera (available: "
                          + cameras.map(\.path).joined(separator: ", ") + ")")
        }
        session.requestCameraSwitch(to: request.device)
        return .json(202, "{\"ok\":true,\"device\":\(JSONText.string(request.device))}")
    }

    static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter.string(from: Date())
    }
}
