import CFFmpeg
import PrismCore

/// Network URLs: which are network inputs, which protocols FFmpeg reads, how messages show them.
public enum NetworkURL {
    /// Real-time protocols: always live, reconnected when lost.
    static let streamingSchemes: Set<String> = ["rtsp", "rtsps", "rtmp", "rtmps", "rtmpt", "rtmpts", "rtmpe", "rtmpte",
                                                "srt", "udp", "udplite", "rtp", "srtp", "tcp", "tls", "rist", "mmsh", "mmst"]
    /// Protocols that carry files as well as live streams: live when the stream has no duration.
    static let webSchemes: Set<String> = ["http", "https"]

    /// The lowercased scheme before `://`, or nil.
    public static func scheme(_ url: String) -> String? {
        guard let range = url.range(of: "://") else { return nil }
        let scheme = url[..<range.lowerBound].lowercased()
        return scheme.isEmpty ? nil : scheme
    }

    /// True for the URLs `NetworkSource` opens: rtsp, srt, rtmp, udp, rtp, tcp, http(s)… (not file:, pipe:).
    public static func isNetwork(_ url: String) -> Bool {
        guard let scheme = scheme(url) else { return false }
        return streamingSchemes.contains(scheme) || webSchemes.contains(scheme)
    }

    /// `url` with a password replaced by `***` (`rtsp://user:***@host/x`), for messages and logs.
    public static func redacted(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<schemeEnd.upperBound]) + authority[..<colon] + ":***" + url[at...]
    }

    /// The protocols (and URL-taking demuxers: rtsp) this FFmpeg reads.
    public static let inputProtocols: Set<String> = {
        var names = protocols(output: false)
        if av_find_input_format("rtsp") != nil { names.formUnion(["rtsp", "rtsps"]) }
        return names
    }()

    /// The I/O protocols this FFmpeg writes (RTSP is a muxer that connects itself, not one of them).
    public static let outputProtocols = protocols(output: true)

    /// `avio_enum_protocols`: the protocols that read, or that write.
    private static func protocols(output: Bool) -> Set<String> {
        var names: Set<String> = []
        var opaque: UnsafeMutableRawPointer?
        while let name = avio_enum_protocols(&opaque, output ? 1 : 0) { names.insert(String(cString: name)) }
        return names
    }

    /// Refuses a URL whose scheme FFmpeg cannot read, before anything is opened: one line naming it.
    /// A network URL must name where it is (`rtmp://` alone would call FFmpeg's default host).
    public static func checkScheme(_ url: String) throws(InvalidRequest) {
        guard let scheme = scheme(url) else { return }
        guard inputProtocols.contains(scheme) else {
            let known = ["rtsp", "rtmp", "srt", "udp", "rtp", "tcp", "http", "https"].filter(inputProtocols.contains)
            throw InvalidRequest("\(redacted(url)): unknown protocol '\(scheme)' (network inputs: \(known.joined(separator: ", ")))")
        }
        if isNetwork(url), let rest = url.range(of: "://").map({ url[$0.upperBound...] }),
           rest.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" }).isEmpty {
            throw InvalidRequest("\(redacted(url)): no host or port in the URL (e.g. \(scheme)://127.0.0.1:PORT/…)")
        }
    }
}
