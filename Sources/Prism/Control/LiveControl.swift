import Foundation
import PrismCore
import PrismFilters
import PrismKit
import PrismMedia
import PrismPipeline
import Synchronization

/// The ways into the control plane of `prism run` and `prism record`: `ControlCommand`s from stdin (one
/// JSON object a line, a JSON reply line each) and from `POST /control` on a loopback port (behind the same
/// `RequestGate` as `prism dev`: token, Host, Origin, JSON only), and `--watch`'s reloads. What the
/// commands do is `ControlPlane`'s, the same as for `prism dev`'s page.
final class LiveControl: Sendable {
    let options: ControlOptions
    let plane: ControlPlane
    /// The engine's side, for the run's taps.
    var tap: ControlTap { plane.tap }
    private let quiet: Bool
    private let userNodeCount: Int
    private let inputNames: [String?]
    /// Where stdin's replies go: stdout, or stderr when stdout carries the frames.
    private let replyDescriptor: Int32
    private let replyLock = Mutex(())
    private let server = Mutex<HTTPServer?>(nil)

    /// - Parameters:
    ///   - graphText: the graph as given (`--filter`), which `reload` binds again.
    ///   - userGraph: the graph bound from `graphText`, before the run frames it (its node count: the
    ///     running graph has the session's remaps in front of its nodes and may have a scale behind).
    ///   - repliesOnStandardError: stdout carries raw frames (`-o -`).
    ///   - inputNames: the run's inputs' names, the first's first: a swapped-in graph reads them as `[0]`,
    ///     `[1]`… and by name.
    init(options: ControlOptions, graphText: String, userGraph: FilterGraph, effects: RunControlEffects, quiet: Bool,
         repliesOnStandardError: Bool, inputNames: [String?] = [nil]) {
        self.options = options
        userNodeCount = userGraph.nodes.count
        self.quiet = quiet
        self.inputNames = inputNames
        replyDescriptor = repliesOnStandardError ? STDERR_FILENO : STDOUT_FILENO
        plane = ControlPlane(graphText: graphText, effects: effects)
    }

    /// Starts the channels on `job`'s engine: the port (its URL printed), stdin (`run` only: `record`
    /// reads its own stdin and hands JSON lines to `reply(toLine:)`), the watcher.
    func start(job: RunJob) throws {
        let framing = job.framing, outputSize = job.outputSize, inputNames = self.inputNames
        let assembly = GraphAssembly(
            bind: { text in try PrismGraphs.bind(text, inputs: inputNames) },
            frame: { user, control in
                let count = user.nodes.count
                // The output keeps the size it has now (a take being written cannot change it).
                let framed = try framing.frame(user, outputSize: control?.renderer?.outputSize ?? outputSize)
                return (framed.graph, framed.userNodeOffset..<(framed.userNodeOffset + count))
            })
        let offset = framing.userNodeOffset
        plane.start(engine: job.engine, nodes: offset..<(offset + userNodeCount), assembly: assembly)
        if let port = options.port {
            let token = RequestGate.makeToken()
            let server = try HTTPServer(address: "127.0.0.1", port: port, token: token, tokenInPostQuery: true,
                                        tokenHint: "send the token prism printed (?token=… on the URL, or its cookie)") { [weak self] request in
                guard let self else { return .error(503, "the run has ended") }
                return self.route(request)
            }
            self.server.withLock { $0 = server }
            // Always said, --quiet or not: without it the endpoint cannot be used.
            PrismCommandLine.info("prism: control at http://127.0.0.1:\(server.port)/control?token=\(token) "
                                  + "(POST one JSON command; GET /state)")
        }
        if options.watch, try plane.watch().isEmpty, !quiet {
            PrismCommandLine.info("prism: --watch: the graph reads no files; a {\"graph\": …} command with shader files starts watching them")
        }
        if options.standardInput, (plane.effects as? RunControlEffects)?.readsStandardInput == true { readStandardInput() }
    }

    /// The run is over: commands get "the run has ended" from now on; the server and watcher stop.
    func finish() {
        plane.finish()
        server.withLock { $0 }?.stop()
    }

    // MARK: Channels

    /// One line of stdin: its reply line, written where replies go.
    func reply(toLine line: BoundedLineReader.Line) {
        let text: String
        switch line {
        case .overlong(let prefix, let bytes):
            text = ControlError("line of \(bytes) bytes skipped (a command is at most \(BoundedLineReader.defaultLimit) bytes): "
                                + "'\(PrismCommandLine.terminalSafe(prefix, keepingNewlines: false))…'").json
        case .text(let command):
            guard !command.trimmingCharacters(in: .whitespaces).isEmpty else { return }
            text = plane.result(of: Array(command.utf8)).json
        }
        let bytes = Array((text + "\n").utf8)
        let descriptor = replyDescriptor
        // One line at a time, whole, whichever channel's thread answers; a reader gone away (EPIPE) only
        // loses its replies.
        replyLock.withLock { _ in
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { buffer in
                    retryingEINTR { write(descriptor, buffer.baseAddress, buffer.count) }
                }
                guard count > 0 else { return }
                written += count
            }
        }
    }

    /// `run --control stdin`: lines until the end of input (the run goes on after it, as without control).
    private func readStandardInput() {
        Thread.detachNewThread { [self] in
            var reader = BoundedLineReader(descriptor: STDIN_FILENO)
            while !plane.hasEnded, let line = reader.next() { reply(toLine: line) }
        }
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        switch (request.method, request.path) {
        case ("POST", "/control"):
            switch plane.result(of: request.body) {
            case .success(let reply): return .json(200, reply.json)
            case .failure(let error): return .json(error.status, error.json)
            }
        case ("GET", "/state"):
            return .json(200, state())
        case (_, "/control"), (_, "/state"):
            return .json(405, ControlError("\(request.method) is not allowed on \(request.path)").json)
        default:
            return .json(404, ControlError("not found (POST /control, GET /state)").json)
        }
    }

    /// `GET /state`: frames so far, the graph and its nodes' parameters, the files watched.
    private func state() -> String {
        let published = plane.tap.published.withLock { $0 }
        let watched = plane.watched.withLock { $0 }
        let nodes = published.nodes.map { node -> String in
            var fields = "\"index\":\(node.index),\"filter\":\(JSONText.string(node.filter))"
            if let label = node.label { fields += ",\"label\":\(JSONText.string(label))" }
            if let values = node.values {
                let items = values.specs.compactMap { spec in values[spec.name].map { "\(JSONText.string(spec.name)):\(ParameterJSON.json($0))" } }
                fields += ",\"parameters\":{\(items.joined(separator: ","))}"
            }
            return "{\(fields)}"
        }
        return "{\"ok\":true,\"frames\":\(plane.tap.frames.load(ordering: .relaxed)),\"ended\":\(plane.hasEnded),"
            + "\"graph\":\(JSONText.string(published.text)),\"nodes\":[\(nodes.joined(separator: ","))],"
            + "\"watching\":[\(watched.map(JSONText.string).joined(separator: ","))]}"
    }
}
