import Foundation

/// Who may talk to the preview server: checked on every request, before its route runs or its body
/// is read. The page runs on developers' desktops next to a browser, so:
///
/// - `Host` must name the server as the page itself does — `127.0.0.1`, `localhost` or `[::1]` (or the
///   `--bind` address) with the port — so a DNS-rebinding page, whose requests carry its own host name,
///   can read neither `/state` nor frames;
/// - `Origin`, when sent, must be the page's own: no other web page can drive `/param` or `/record`;
/// - `Sec-Fetch-Site`, when sent, must not be another site's, except for a plain navigation (a link
///   to the page), so other pages cannot embed the frames either;
/// - POST bodies must be typed `application/json`: a cross-origin form or `text/plain` fetch, which
///   browsers send without a preflight, is refused even from a browser that sends no `Origin`.
struct RequestGate: Sendable {
    /// Accepted `Host` values (lower case), each with the port, and bare when the port is 80.
    let hosts: Set<String>
    /// Accepted `Origin` values (lower case).
    let origins: Set<String>
    let port: Int
    /// Bound to every interface (`--bind 0.0.0.0`): any IP-literal host with the port is accepted too.
    /// Rebinding needs a DNS name, so literals are safe; names other than `localhost` still are not.
    let acceptsAddressLiterals: Bool

    init(bindAddress: String, port: Int) {
        var names: Set<String> = ["127.0.0.1", "localhost", "[::1]"]
        let bound = bindAddress.lowercased()
        if !["0.0.0.0", "::", "127.0.0.1", "::1"].contains(bound) {
            names.insert(bound.contains(":") ? "[\(bound)]" : bound)
        }
        var hosts = Set(names.map { "\($0):\(port)" })
        if port == 80 { hosts.formUnion(names) }
        self.hosts = hosts
        self.port = port
        origins = Set(hosts.map { "http://\($0)" })
        acceptsAddressLiterals = ["0.0.0.0", "::"].contains(bound)
    }

    /// Whether `host` (lower case, from the header) names this server.
    func accepts(host: String) -> Bool {
        if hosts.contains(host) { return true }
        guard acceptsAddressLiterals else { return false }
        let suffix = ":\(port)"
        guard host.hasSuffix(suffix) else { return false }
        var name = String(host.dropLast(suffix.count))
        if name.hasPrefix("["), name.hasSuffix("]") {
            name = String(name.dropFirst().dropLast())
            var v6 = in6_addr()
            return inet_pton(AF_INET6, name, &v6) == 1
        }
        var v4 = in_addr()
        return inet_pton(AF_INET, name, &v4) == 1
    }

    /// The refusal for a request, or nil when it may go on. `header` looks up a request header by name.
    func refusal(method: String, path: String, header: (String) -> String?) -> HTTPResponse? {
        guard let host = header("Host")?.trimmingCharacters(in: .whitespaces).lowercased(), !host.isEmpty else {
            return .error(400, "a Host header is required")
        }
        guard accepts(host: host) else {
            return .error(403, "this server answers only to its loopback address (Host \(Self.printable(host)) refused)")
        }
        if let origin = header("Origin")?.trimmingCharacters(in: .whitespaces).lowercased(),
           !(origins.contains(origin) || (origin.hasPrefix("http://") && acceptsAddressLiterals
                                           && accepts(host: String(origin.dropFirst(7))) && origin.dropFirst(7) == host)) {
            return .error(403, "cross-origin requests are refused (Origin \(Self.printable(origin)))")
        }
        if let site = header("Sec-Fetch-Site")?.lowercased(), site == "cross-site" || site == "same-site",
           method != "GET" || header("Sec-Fetch-Mode")?.lowercased() != "navigate" {
            return .error(403, "requests from other sites are refused")
        }
        if method == "POST" {
            let type = header("Content-Type")?.split(separator: ";").first?
                .trimmingCharacters(in: .whitespaces).lowercased()
            guard type == "application/json" else {
                return .error(415, "POST bodies must be sent as Content-Type: application/json")
            }
        }
        return nil
    }

    /// At most 100 printable ASCII characters of a header value, for messages.
    static func printable(_ text: String) -> String {
        let kept = text.unicodeScalars.prefix(100).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }
        return "'" + String(kept) + (text.unicodeScalars.count > 100 ? "…'" : "'")
    }
}
