import CMediaShims
import Foundation
import PrismCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A FIFO named as a movie input. Opening one for reading blocks in the kernel until a writer opens the
/// other end — which may be never — where no stop can reach it. So the FIFO is opened without blocking and
/// waited on here: in steps a stop can end (`cancelWaits`), saying once that it waits. FFmpeg then reads the
/// descriptor (`pipe:FD`), so a writer that wrote everything and left while Prism waited is still read whole.
package enum FIFOInput {
    /// Where "waiting for a writer" is said (the command line's stderr); nothing by default.
    package static let announce = Mutex<(@Sendable (String) -> Void)?>(nil)
    private static let cancelled = Atomic<Bool>(false)
    /// How long a FIFO is waited on before it is said.
    static let quietWait = 0.5

    /// A stop was asked for (a signal): every wait for a writer, now or later, ends with an error.
    package static func cancelWaits() { cancelled.store(true, ordering: .releasing) }

    /// When `path` is a FIFO: waits until a writer has opened it (data to read, or a writer come and gone)
    /// and returns a descriptor open for blocking reads, which the caller closes; nil for anything else.
    static func openForReading(_ path: String, label: String) throws(AVError) -> Int32? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return nil }
        let fd = retryingEINTR { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { throw AVError(call: "open", code: prism_averror(errno), context: label, what: "cannot open the FIFO") }
        let started = Date()
        var said = false
        while true {
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, 100)
            if ready > 0, watched.revents & Int16(POLLIN | POLLHUP) != 0 { break }
            if cancelled.load(ordering: .acquiring) {
                close(fd)
                throw AVError("stopped while waiting for a writer to open the FIFO", context: label)
            }
            if !said, Date().timeIntervalSince(started) >= quietWait {
                said = true
                announce.withLock { $0 }?("\(label) is a FIFO no program writes to yet: waiting for one (Ctrl-C stops)")
            }
        }
        // Reads block from here on, as a file's do (FFmpeg's pipe protocol expects that).
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }
}
