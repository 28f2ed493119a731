import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The server's open connections, for the request deadline and eviction: each connection's socket
/// (a `dup`, so shutting it down can never hit a reused descriptor number) and since when it has been
/// waiting for a complete request (nil while a request is being answered or streamed).
///
/// A watchdog thread shuts down (`shutdown(2)`) the sockets of connections past the request deadline,
/// and, while the table is fuller than `connections - reserve`, those waiting longest; libmicrohttpd
/// then sees the socket end and closes the connection on its own thread.
package final class ConnectionTable: Sendable {
    private struct Entry {
        var socket: Int32
        var waitingSince: ContinuousClock.Instant?
        var shut = false
    }

    private let limits: HTTPServerLimits
    private let entries = Mutex<[UInt: Entry]>([:])
    private let running = Mutex(false)

    init(limits: HTTPServerLimits) { self.limits = limits }

    private static func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))) }

    func opened(_ connection: OpaquePointer, socket: Int32) {
        let copy = socket >= 0 ? fcntl(socket, F_DUPFD_CLOEXEC, 0) : -1
        entries.withLock { $0[Self.key(connection)] = Entry(socket: copy, waitingSince: .now) }
        sweep()  // a connection that fills the table makes room at once, not at the next tick
    }

    func closed(_ connection: OpaquePointer) {
        let entry = entries.withLock { $0.removeValue(forKey: Self.key(connection)) }
        if let entry, entry.socket >= 0 { close(entry.socket) }
    }

    /// A request is complete and its route runs: no deadline while it is answered or streamed.
    func served(_ connection: OpaquePointer) {
        entries.withLock { $0[Self.key(connection)]?.waitingSince = nil }
    }

    /// A response is done; the connection waits for its next request.
    func waiting(_ connection: OpaquePointer) {
        entries.withLock { $0[Self.key(connection)]?.waitingSince = .now }
    }

    package var count: Int { entries.withLock { $0.count } }

    /// Shuts down the connections past the deadline, then the longest-waiting ones while the table is
    /// too full. Returns how many it shut down.
    @discardableResult
    package func sweep(now: ContinuousClock.Instant = .now) -> Int {
        entries.withLock { table in
            var shut = 0
            func shutDown(_ key: UInt) {
                guard let entry = table[key], !entry.shut else { return }
                if entry.socket >= 0 { shutdown(entry.socket, Int32(SHUT_RDWR)) }
                table[key]?.shut = true
                shut += 1
            }
            for (key, entry) in table {
                if let since = entry.waitingSince, now - since > limits.requestDeadline { shutDown(key) }
            }
            let open = table.values.filter { !$0.shut }.count
            let room = limits.connections - limits.reserve
            if open > room {
                let oldest = table.filter { !$0.value.shut && $0.value.waitingSince.map { now - $0 > limits.evictableAfter } == true }
                    .sorted { $0.value.waitingSince! < $1.value.waitingSince! }
                for (key, _) in oldest.prefix(open - room) { shutDown(key) }
            }
            return shut
        }
    }

    func startWatchdog() {
        running.withLock { $0 = true }
        let thread = Thread { [self] in
            while running.withLock({ $0 }) {
                usleep(100_000)
                sweep()
            }
        }
        thread.name = "prism-http-watchdog"
        thread.start()  // ends within a tick of stopWatchdog
    }

    func stopWatchdog() {
        running.withLock { $0 = false }
    }
}
