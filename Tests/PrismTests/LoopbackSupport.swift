import Foundation
import XCTest

/// Loopback servers in tests: free ports, and knowing when a server listens without connecting to it.
enum Loopback {
    /// A free loopback port (bound once by the kernel's choice, then released for the server to take).
    static func freePort(udp: Bool = false) -> Int {
        let fd = socket(AF_INET, udp ? Int32(SOCK_DGRAM.rawValue) : Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until something listens on `port` (TCP) or has bound it (UDP), by the kernel's tables — a
    /// probe connection would use up a `-listen 1` server's one accept.
    static func waitForListener(port: Int, udp: Bool = false, timeout: Double = 20) -> Bool {
        let hex = String(format: ":%04X", port)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            for table in udp ? ["/proc/net/udp", "/proc/net/udp6"] : ["/proc/net/tcp", "/proc/net/tcp6"] {
                let lines = ((try? String(contentsOfFile: table, encoding: .utf8)) ?? "").split(separator: "\n")
                for line in lines.dropFirst() {
                    let fields = line.split(separator: " ")
                    guard fields.count > 3, fields[1].hasSuffix(hex) else { continue }
                    if udp || fields[3] == "0A" { return true }
                }
            }
            usleep(50_000)
        }
        return false
    }
}

/// A process run under a deadline: its stdout read line by line as it comes, its stderr collected; killed
/// when the deadline passes (a hang fails the test that waits for it, and never outlives it).
final class Running: @unchecked Sendable {  // the lines are guarded by `lock`
    let process = Process()
    private let lock = NSCondition()
    private var lines: [String] = []
    private var errorText = Data()
    private var readersDone = 0
    private let deadline: Date

    /// - Parameter environment: added to this process's own.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], deadline seconds: Double) throws {
        deadline = Date(timeIntervalSinceNow: seconds)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        Thread.detachNewThread { [self] in
            var pending = Data()
            while case let chunk = out.fileHandleForReading.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lock.lock(); lines.append(line); lock.broadcast(); lock.unlock()
                }
            }
            lock.lock(); readersDone += 1; lock.broadcast(); lock.unlock()
        }
        Thread.detachNewThread { [self] in
            let data = err.fileHandleForReading.readDataToEndOfFile()
            lock.lock(); errorText = data; readersDone += 1; lock.broadcast(); lock.unlock()
        }
    }

    /// The lines printed on stdout so far.
    var stdoutLines: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    /// stderr, once the process has ended (empty before).
    var stderr: String { lock.lock(); defer { lock.unlock() }; return String(decoding: errorText, as: UTF8.self) }

    /// Waits for a stdout line that satisfies `matches`, at most `seconds`; nil if none came.
    func waitForLine(within seconds: Double, _ matches: (String) -> Bool) -> String? {
        let until = min(deadline, Date(timeIntervalSinceNow: seconds))
        lock.lock(); defer { lock.unlock() }
        var seen = 0
        while true {
            while seen < lines.count {
                if matches(lines[seen]) { return lines[seen] }
                seen += 1
            }
            if readersDone == 2 || !lock.wait(until: until) { return nil }
        }
    }

    /// Waits for the end, at most until the deadline (then kills it and fails); its exit status.
    @discardableResult
    func waitForExit() -> Int32 {
        if waitForExit(within: deadline.timeIntervalSinceNow) == nil {
            XCTFail("\(process.executableURL?.lastPathComponent ?? "") \(process.arguments ?? []) ran past its deadline")
            stop()
        }
        process.waitUntilExit()
        lock.lock()
        while readersDone < 2 { lock.wait() }
        lock.unlock()
        return process.terminationStatus
    }

    /// The exit status if it ends within `seconds`, else nil (still running).
    func waitForExit(within seconds: Double) -> Int32? {
        let until = Date(timeIntervalSinceNow: max(0, seconds))
        while process.isRunning && Date() < until { usleep(20_000) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        lock.lock()
        while readersDone < 2 { lock.wait() }
        lock.unlock()
        return process.terminationStatus
    }

    /// SIGKILL: a server that dies mid-stream.
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Ends it if it still runs (SIGTERM, then SIGKILL).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let until = Date(timeIntervalSinceNow: 5)
        while process.isRunning && Date() < until { usleep(20_000) }
        kill()
    }
}
