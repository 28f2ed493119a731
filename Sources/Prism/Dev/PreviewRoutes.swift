import Foundation
import PrismCore
// Re-exported: the server, its gate and its JSON are this module's front ends' (and their tests') as before.
@_exported import PrismHTTP
import PrismKit
import PrismFilters
import PrismMedia
import PrismPipeline

/// The preview's endpoints. Only these paths exist; nothing is read from disk because of a URL.
/// Requests reach them only past `RequestGate` (Host, Origin, JSON POSTs, the session token),
/// which `HTTPServer` applies to every request first. `/param`, `/record` and `/camera` are commands of the
/// control plane (`ControlPlane`), the same as `prism run --control`'s, in the page's spellings.
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
/// | POST | `/record` | `{"action":"start"}` / `{"action":"stop"}` → 202 (409 with the path while one records) |
/// | POST | `/mouse` | `{"x":120.5,"y":40,"down":true}` (output pixels from the bottom left) → 200: ShaderToy's `iMouse` (`DevMouse`); 400 when outside the output or malformed |
/// | POST | `/camera` | `{"device":"/dev/videoN"}` → 202, switched between frames; 400 unless it is a listed camera (or the current one, 200); 409 when the input is not a camera |
/// | POST | `/selftest` | only with `--page-self-test`: the page's self-test result (JSON object) |
struct PreviewRoutes: Sendable {
    let session: DevSession
    let selfTest: Bool

    /// The preview server on `address:port`, every request behind the gate with `token`.
    func serve(address: String, port: Int, token: String) throws -> HTTPServer {
        let page = try PreviewPage.html()
        do {
            return try HTTPServer(address: address, port: port, token: token) { handle($0, page: page) }
        } catch HTTPServerError.notAnAddress(let address) {
            throw UsageError("--bind takes a numeric IPv4 or IPv6 address, not '\(address)'")
        }
    }

    func handle(_ request: HTTPRequest, page: [UInt8]) -> HTTPResponse {
        switch (request.method, request.path) {
        case ("GET", "/"), ("GET", "/index.html"):
            return .data(status: 200, contentType: "text/html; charset=utf-8", body: page,
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
            return .data(status: 200, contentType: "image/png", body: png,
                         headers: [("Content-Disposition", "attachment; filename=\"prism-snapshot-\(TakeNames.stamp()).png\"")])
        case ("POST", "/param"):
            // The reply names the value set, as the node took it.
            return answer({ () throws(ControlError) in try ControlCommand(parameterBody: request.body) }, adding: { reply in
                reply.values.first.map { [("name", JSONText.string($0.name)), ("value", ParameterJSON.json($0.value))] } ?? []
            })
        case ("POST", "/record"):
            return answer({ () throws(ControlError) in try ControlCommand(recordBody: request.body) }, status: { _ in 202 })
        case ("POST", "/camera"):
            // 202: switched between frames, which `/state` shows; 200 for the camera in use (nothing to do).
            return answer({ () throws(ControlError) in try ControlCommand(cameraBody: request.body) },
                          status: { $0.fields.contains { $0.0 == "unchanged" } ? 200 : 202 },
                          adding: { reply in reply.fields.filter { $0.0 == "camera" }.map { ("device", $0.1) } })
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

    /// A page command (read from its body by `command`) on the control plane. Its reply is the plane's (as
    /// `POST /control` gives it), with the page's own fields after it; a command that is wrong or does not
    /// apply is `{"ok":false,"error":…}`.
    private func answer(_ command: () throws(ControlError) -> ControlCommand, status: (ControlReply) -> Int = { _ in 200 },
                        adding page: (ControlReply) -> [(String, String)] = { _ in [] }) -> HTTPResponse {
        let result: Result<ControlReply, ControlError>
        do { result = session.control.perform(try command()) } catch { return .json(error.status, error.json) }
        switch result {
        case .success(let reply): return .json(status(reply), reply.adding(page(reply)).json)
        case .failure(let error): return .json(error.status, error.json)
        }
    }
}
