import PrismCore
import PrismKit
import PrismMedia
import PrismPipeline

/// The network input flags of `run` (`--input-timeout`, `--reconnect`, `--reconnect-for`,
/// `--no-reconnect`, `--rtsp-transport`, `--listen`): PrismMedia's `NetworkInputOptions`, parsed from the
/// command line and refused for inputs that are not network URLs.
extension NetworkInputOptions {
    /// The flags, declared once for every command that takes them.
    static let commandLine: [OptionSpec] = [
        .key("input-timeout", value: "SECONDS", help: "a network input: how long to wait for it to connect (or for a sender, "
             + "listening) and, running, for more data before it counts as lost (default 10)"),
        .key("reconnect", value: "N", help: "a network input lost mid-run: at most N attempts to reopen it, 0.5 s doubling to 8 s apart"),
        .key("reconnect-for", value: "SECONDS", help: "a network input lost mid-run: keep trying to reopen it this long (default 30)"),
        .flag("--no-reconnect", help: "a network input lost mid-run ends the run (the output is finished)"),
        .key("rtsp-transport", value: RTSPTransport.placeholder, help: "RTSP over TCP (interleaved) or UDP (default: UDP, then TCP)"),
        .flag("--listen", help: "wait for the sender: rtmp://, srt://, tcp://, http:// and rtsp:// (a publisher) inputs as servers"),
    ]

    /// The flags `source` gives; `input` is the run's input (they describe network URLs only).
    static func parse(_ source: inout some OptionSource, input: InputSpec) throws -> NetworkInputOptions {
        var options = NetworkInputOptions()
        var given: [String] = []
        if let timeout = try source.value(for: "input-timeout", as: Seconds.self)?.value {
            options.timeout = timeout
            given.append("input-timeout")
        }
        let attempts = try source.value(for: "reconnect", as: ReconnectAttempts.self)?.value
        let seconds = try source.value(for: "reconnect-for", as: Seconds.self)?.value
        let never = try source.flag(for: "no-reconnect")
        if never, attempts != nil || seconds != nil {
            throw UsageError("\(source.spelling(for: "no-reconnect")) cannot go with \(source.spelling(for: attempts != nil ? "reconnect" : "reconnect-for"))")
        }
        if never { options.reconnect.enabled = false; given.append("no-reconnect") }
        if let attempts {
            options.reconnect.attempts = attempts
            // N attempts alone are not cut short by the default time limit.
            options.reconnect.seconds = seconds
            given.append("reconnect")
        }
        if let seconds { options.reconnect.seconds = seconds; given.append("reconnect-for") }
        if let transport = try source.value(for: "rtsp-transport", as: RTSPTransport.self)?.rawValue {
            guard case .movie(let url) = input, ["rtsp", "rtsps"].contains(NetworkURL.scheme(url)) else {
                throw UsageError("\(source.spelling(for: "rtsp-transport")) applies to an rtsp:// input")
            }
            options.rtspTransport = transport
        }
        if try source.flag(for: "listen") {
            options.listen = true
            given.append("listen")
        }
        if let first = given.first, !input.isNetwork {
            throw UsageError("\(source.spelling(for: first)) applies to a network input (rtsp://, rtmp://, srt://, udp://, http://…)")
        }
        return options
    }
}

/// `--reconnect N`: attempts to reopen a lost network input.
struct ReconnectAttempts: BoundedWholeNumber {
    static let range = 1...1_000_000
    let value: Int
}
