import Foundation
import PrismCore
import PrismMedia
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A `prism dev` subprocess for the end-to-end tests: started on a free port, its stderr collected,
/// its preview server reachable through `request`.
final class DevProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port = 0
    /// The session's token, from the URL prism dev printed; sent as the page's cookie.
    private(set) var token = ""
    var cookie: String { "Cookie: prism-token-\(port)=\(token)" }
    private let lock = NSLock()
    private var errorText = ""
    private let errorPipe = Pipe()

    /// - Parameter standardInput: what `prism dev` reads on stdin (raw frames, a movie on `pipe:0`); nil: the test's.
    init(arguments: [String], environment: [String: String] = [:], standardInput: FileHandle? = nil) throws {
        process.executableURL = URL(fileURLWithPath: Tools.prism)
        process.arguments = ["dev"] + arguments + ["--port", "0"]
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        if let standardInput { process.standardInput = standardInput }
        errorPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock { self.errorText += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
        let deadline = Date(timeIntervalSinceNow: 30)
        while Date() < deadline {
            // The whole URL, up to the space after the token: `preview at http://127.0.0.1:PORT/?token=HEX `.
            if let range = stderr.range(of: #"preview at http://[^:/]+:\d+/\?token=[0-9a-f]+ "#, options: .regularExpression) {
                let url = String(stderr[range]).dropFirst("preview at http://".count).dropLast()
                let parts = url.split(separator: "/", maxSplits: 1)
                port = Int(parts[0].split(separator: ":").last!)!
                token = String(parts[1].dropFirst("?token=".count))
                return
            }
            if !process.isRunning { break }
            usleep(50_000)
        }
        stop()
        throw DevProcessError(message: "prism dev did not start its preview; stderr:\n\(stderr)")
    }

    var stderr: String { lock.withLock { errorText } }

    func stop() {
        if process.isRunning {
            process.interrupt()
            let deadline = Date(timeIntervalSinceNow: 10)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { process.terminate() }
        }
        process.waitUntilExit()
        errorPipe.fileHandleForReading.readabilityHandler = nil
    }

    deinit { if process.isRunning { process.terminate() } }

    /// One request over a fresh connection (`Connection: close`).
    func get(_ path: String) throws -> HTTPReply { try request("GET", path) }

    func request(_ method: String, _ path: String, body: [UInt8]? = nil) throws -> HTTPReply {
        try HTTPReply.fetch(port: port, raw: Self.requestText(method, path, body: body, host: "127.0.0.1:\(port)",
                                                             extraHeaders: [cookie]))
    }

    /// The request as a browser at `http://HOST/` sends it (the server checks `Host`, and POSTs' type).
    static func requestText(_ method: String, _ path: String, body: [UInt8]?, host: String,
                            extraHeaders: [String] = []) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n"
        for header in extraHeaders { head += header + "\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + (body ?? [])
    }

    func json(_ path: String) throws -> [String: Any] {
        let reply = try get(path)
        guard reply.status == 200, let object = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any] else {
            throw DevProcessError(message: "GET \(path): \(reply.status) \(reply.text)")
        }
        return object
    }

    /// The newest frame, as the page downloads it (`GET /snapshot`, a PNG).
    func snapshot(file: StaticString = #filePath, line: UInt = #line) throws -> RGBAImage {
        let reply = try get("/snapshot")
        XCTAssertEqual(reply.status, 200, reply.text, file: file, line: line)
        XCTAssertEqual(reply.headers["content-type"], "image/png", file: file, line: line)
        let path = try TestImages.writeTemp(reply.body, suffix: ".png")
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try ImageFile.read(path: path)
    }

    func post(_ path: String, _ object: Any) throws -> HTTPReply {
        try request("POST", path, body: Array(try JSONSerialization.data(withJSONObject: object)))
    }

    /// Polls `/state` until `condition` holds; fails with the last state after `timeout` seconds.
    @discardableResult
    func waitForState(timeout: Double = 20, _ what: String, _ condition: ([String: Any]) -> Bool) throws -> [String: Any] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var last: [String: Any] = [:]
        while Date() < deadline {
            last = try json("/state")
            if condition(last) { return last }
            usleep(100_000)
        }
        throw DevProcessError(message: "timed out waiting for \(what); last state: \(last)\nstderr:\n\(stderr)")
    }
}

struct DevProcessError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A raw HTTP reply (the tests talk to the server over plain sockets, so they see exactly what it sends).
struct HTTPReply {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }

    static func connect(port: Int, timeout: Int = 10) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw DevProcessError(message: "socket failed") }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw DevProcessError(message: "cannot connect to 127.0.0.1:\(port)")
        }
        return fd
    }

    static func fetch(port: Int, raw: [UInt8]) throws -> HTTPReply {
        let fd = try connect(port: port)
        defer { close(fd) }
        var sent = 0
        while sent < raw.count {
            let n = raw[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the server may answer (413) and close before taking the whole body
            sent += n
        }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { break }
            data += chunk[0..<n]
        }
        return try parse(data)
    }

    static func parse(_ data: [UInt8]) throws -> HTTPReply {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = (0..<max(0, data.count - 3)).first(where: { Array(data[$0..<$0 + 4]) == separator }) else {
            throw DevProcessError(message: "no HTTP header in \(data.count) bytes")
        }
        let lines = String(decoding: data[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(data[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return HTTPReply(status: status, headers: headers, body: body)
    }

    static func dechunk(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < data.count {
            guard let lineEnd = (index..<max(index, data.count - 1)).first(where: { data[$0] == 13 && data[$0 + 1] == 10 }),
                  let size = Int(String(decoding: data[index..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16),
                  size > 0 else { break }
            let start = lineEnd + 2
            out += data[start..<min(data.count, start + size)]
            index = start + size + 2
        }
        return out
    }
}

/// Decodes a PNG or JPEG with FFmpeg's image decoders through `prism`'s media layer.
enum TestImages {
    static func writeTemp(_ bytes: [UInt8], suffix: String) throws -> String {
        let path = NSTemporaryDirectory() + "/prism-devtest-\(UUID().uuidString)\(suffix)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// A temporary directory removed at the end of the test.
final class TemporaryDirectory {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "/prism-dev-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String) -> String { path + "/" + name }
    /// Writes like an editor that saves to a temporary file and renames it over the original.
    func save(_ name: String, _ text: String) throws {
        let temporary = file("." + name + ".swp")
        try text.write(toFile: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary, file(name)) == 0 else { throw DevProcessError(message: "rename failed") }
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}
