import Foundation

/// Who may talk to the preview server: checked on every request, before its route runs or its body
/// is read. The page runs on developers' desktops next to a browser, so:
///
/// - `Host` must name the server as the page itself does — `127.0.0.1`, `localhost` or `[::1]` (or the
///   `--bind` address) with the port — so a DNS-rebinding page, whose requests carry its own host name,
///   can read neither `/state` nor frames;
/// - `Origin`, when sent, must be the page's own: no other web page can drive `/param` or `/record`;
/// - `Sec-Fetch-Site`, when sent, must not be another site's, except for a plain top-level navigation
///   (a link to the page), so other pages cannot embed the frames either; and no page may frame the
///   preview (`Sec-Fetch-Dest` iframe and the like are refused, every response says `frame-ancestors
///   'none'` and `X-Frame-Options: DENY`), since a page on another localhost port is same-site and its
///   frame would carry the `SameSite=Strict` cookie;
/// - POST bodies must be typed `application/json`: a cross-origin form or `text/plain` fetch, which
///   browsers send without a preflight, is refused even from a browser that sends no `Origin`;
/// - with a token (as Jupyter does), every request must carry it: the page URL printed at start has
///   `?token=…`, and the page's answer sets it as a `SameSite=Strict` cookie that the page's own
///   requests then carry. Other local users and programs that cannot read the terminal are refused.
package struct RequestGate: Sendable {
    /// The per-run secret, or nil when none is required.
    package let token: String?
    /// A POST may carry the token in its URL (`?token=…`) as well as in the cookie: the control endpoint's
    /// scripts (`curl …/control?token=…`) have no page to get the cookie from. A browser page elsewhere
    /// cannot know the token, so this opens nothing to it.
    package var tokenInPostQuery = false
    /// What a request without the token is told.
    package var tokenHint = "open the preview at the URL prism dev printed (it carries the session's token)"
    /// The cookie holding the token: one name per port, since cookies are shared across ports.
    package var cookieName: String { "prism-token-\(port)" }

    /// What the gate decided.
    package enum Decision {
        case refuse(HTTPResponse)
        /// Go on; `setCookie` is a `Set-Cookie` value for the response when the token came in the URL.
        case allow(setCookie: String?)
    }

    /// A fresh random token (128 bits, hex).
    package static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next(), radix: 16) }.map { String(repeating: "0", count: 16 - $0.count) + $0 }
            .joined()
    }

    /// Accepted `Host` values (lower case), each with the port, and bare when the port is 80.
    package let hosts: Set<String>
    /// Accepted `Origin` values (lower case).
    package let origins: Set<String>
    package let port: Int
    /// Bound to every interface (`--bind 0.0.0.0`): any IP-literal host with the port is accepted too.
    /// Rebinding needs a DNS name, so literals are safe; names other than `localhost` still are not.
    package let acceptsAddressLiterals: Bool

    package init(bindAddress: String, port: Int, token: String? = nil) {
        self.token = token
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
    package func accepts(host: String) -> Bool {
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

    /// The decision for a request; `header` looks up a request header, `query` a URL query argument.
    package func check(method: String, path: String, header: (String) -> String?, query: (String) -> String?) -> Decision {
        if let refusal = refusal(method: method, path: path, header: header) { return .refuse(refusal) }
        guard let token else { return .allow(setCookie: nil) }
        let cookies = (header("Cookie") ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        if cookies.contains("\(cookieName)=\(token)") { return .allow(setCookie: nil) }
        if method == "GET", query("token") == token {
            return .allow(setCookie: "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict")
        }
        if tokenInPostQuery, method == "POST", query("token") == token { return .allow(setCookie: nil) }
        return .refuse(.error(403, tokenHint))
    }

    /// The refusal for a request by its headers alone, or nil when it may go on.
    package func refusal(method: String, path: String, header: (String) -> String?) -> HTTPResponse? {
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
        // Another page may link to the preview (a top-level navigation) but never frame it: a page on another
        // localhost port is "same-site", so its frame would get the SameSite=Strict cookie (clickjacking).
        if let destination = header("Sec-Fetch-Dest")?.lowercased(), Self.framingDestinations.contains(destination) {
            return .error(403, "the preview cannot be shown inside another page (\(Self.printable(destination)) refused)")
        }
        if let site = header("Sec-Fetch-Site")?.lowercased(), site == "cross-site" || site == "same-site",
           method != "GET" || header("Sec-Fetch-Mode")?.lowercased() != "navigate"
            || (header("Sec-Fetch-Dest").map { $0.lowercased() != "document" } ?? false) {
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

    /// `Sec-Fetch-Dest` values of a document shown inside another one.
    package static let framingDestinations: Set<String> = ["iframe", "frame", "embed", "object", "fencedframe"]

    /// Headers on every response: no page may frame the preview, whatever the browser
    /// (`frame-ancestors` where CSP is known, `X-Frame-Options` for older ones).
    package static let antiFramingHeaders: [(String, String)] = [("X-Frame-Options", "DENY"),
                                                         ("Content-Security-Policy", "frame-ancestors 'none'")]

    /// At most 100 printable ASCII characters of a header value, for messages.
    package static func printable(_ text: String) -> String {
        let kept = text.unicodeScalars.prefix(100).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" }
        return "'" + String(kept) + (text.unicodeScalars.count > 100 ? "…'" : "'")
    }
}
