import PrismCore
import PrismKit
import PrismMedia
import PrismPipeline

/// The network input flags of `run` (`--input-timeout`, `--reconnect`, `--reconnect-for`,
/// `--no-reconnect`, `--rtsp-transport`, `--listen`): PrismMedia's `NetworkInputOptions`, parsed from the
/// command line and refused for inputs that are not network URLs.
extension NetworkInputOptions {
    /// The flags, declared once for every command that takes them.
    enum Key {
        static let inputTimeout = OptionKey<Seconds>("--input-timeout", value: "SECONDS", help: "a network input: how long to wait for it to connect (or for a sender, "
             + "listening) and, running, for more data before it counts as lost (default 10)")
        static let reconnect = OptionKey<Int>("--reconnect", value: "N", in: 1...1_000_000, help: "a network input lost mid-run: at most N attempts to reopen it, 0.5 s doubling to 8 s apart")
        static let reconnectFor = OptionKey<Seconds>("--reconnect-for", value: "SECONDS", help: "a network input lost mid-run: keep trying to reopen it this long (default 30)")
        static let noReconnect = FlagKey("--no-reconnect", help: "a network input lost mid-run ends the run (the output is finished)")
        static let rtspTransport = OptionKey<RTSPTransport>("--rtsp-transport", value: RTSPTransport.placeholder, help: "RTSP over TCP (interleaved) or UDP (default: UDP, then TCP)")
        static let listen = FlagKey("--listen", help: "wait for the sender: rtmp://, srt://, tcp://, http:// and rtsp:// (a publisher) inputs as servers")
    }

    static let commandLine: [OptionSpec] = [Key.inputTimeout.spec, Key.reconnect.spec, Key.reconnectFor.spec, Key.noReconnect.spec,
                                            Key.rtspTransport.spec, Key.listen.spec]

    /// The flags `source` gives; `input` is the run's input (they describe network URLs only).
    static func parse(_ source: inout some OptionSource, input: InputSpec) throws -> NetworkInputOptions {
        var options = NetworkInputOptions()
        // The spellings of the options given, for refusing them where the input is no network URL.
        var given: [String] = []
        if let timeout = try source.value(Key.inputTimeout)?.value {
            options.timeout = timeout
            given.append(source.spelling(of: Key.inputTimeout))
        }
        let attempts = try source.value(Key.reconnect)
        let seconds = try source.value(Key.reconnectFor)?.value
        let never = try source.flag(Key.noReconnect)
        if never, attempts != nil || seconds != nil {
            let other = attempts != nil ? source.spelling(of: Key.reconnect) : source.spelling(of: Key.reconnectFor)
            throw UsageError("\(source.spelling(of: Key.noReconnect)) cannot go with \(other)")
        }
        if never { options.reconnect.enabled = false; given.append(source.spelling(of: Key.noReconnect)) }
        if let attempts {
            options.reconnect.attempts = attempts
            // N attempts alone are not cut short by the default time limit.
            options.reconnect.seconds = seconds
            given.append(source.spelling(of: Key.reconnect))
        }
        if let seconds { options.reconnect.seconds = seconds; given.append(source.spelling(of: Key.reconnectFor)) }
        if let transport = try source.value(Key.rtspTransport)?.rawValue {
            guard case .movie(let url) = input, ["rtsp", "rtsps"].contains(NetworkURL.scheme(url)) else {
                throw UsageError("\(source.spelling(of: Key.rtspTransport)) applies to an rtsp:// input")
            }
            options.rtspTransport = transport
        }
        if try source.flag(Key.listen) {
            options.listen = true
            given.append(source.spelling(of: Key.listen))
        }
        if let first = given.first, !input.isNetwork {
            throw UsageError("\(first) applies to a network input (rtsp://, rtmp://, srt://, udp://, http://…)")
        }
        return options
    }
}
