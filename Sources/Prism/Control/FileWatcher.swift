import Foundation
import PrismCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Watches a set of files for changes with inotify and reports them, debounced.
///
/// Editors save in several ways: writing in place (`IN_MODIFY` … `IN_CLOSE_WRITE`), writing a temporary
/// file and renaming it over the original (`IN_MOVED_TO` in the directory; the old inode is gone, so a
/// watch on the file itself would go quiet), or deleting and recreating (`IN_DELETE`, `IN_CREATE`). So the
/// watcher watches each file's *directory* and filters events by name; a burst of events is coalesced
/// into one report once the directory has been quiet for `quietPeriod`.
///
/// One thread blocks in `poll(2)` on the inotify descriptor and on a pipe that wakes it for `update` and
/// `stop`. `onChange` runs on that thread with the files of the set that changed.
final class FileWatcher: Sendable {
    private let inotify: Int32
    private let wakePipe: (read: Int32, write: Int32)
    private struct State {
        /// Files to report, by directory (absolute, standardised paths).
        var wanted: [String: Set<String>] = [:]
        /// Watch descriptor → directory.
        var watches: [Int32: String] = [:]
        var stopped = false
    }
    private let state = Mutex(State())
    private let quietPeriod: Int32
    private let onChange: @Sendable (Set<String>) -> Void
    private let finished = DispatchSemaphore(value: 0)

    /// Starts watching `files`; `quietMilliseconds` is the debounce window.
    init(files: [String], quietMilliseconds: Int32 = 80, onChange: @escaping @Sendable (Set<String>) -> Void) throws {
        let fd = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
        guard fd >= 0 else { throw SystemError("inotify_init1", code: errno, context: "watching shader files") }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            let code = errno
            close(fd)
            throw SystemError("pipe", code: code, context: "watching shader files")
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        inotify = fd
        wakePipe = (ends[0], ends[1])
        quietPeriod = quietMilliseconds
        self.onChange = onChange
        try update(files: files)
        Thread.detachNewThread { [self] in
            loop()
            finished.signal()
        }
    }

    deinit {
        close(inotify)
        close(wakePipe.read)
        close(wakePipe.write)
    }

    /// The absolute, standardised form used for matching event names.
    static func normalise(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// Replaces the watched set (after a reload: includes may have changed). Directories no longer
    /// needed are unwatched (`inotify_rm_watch`).
    func update(files: [String]) throws {
        var byDirectory: [String: Set<String>] = [:]
        for file in files {
            let path = Self.normalise(file)
            let url = URL(fileURLWithPath: path)
            byDirectory[url.deletingLastPathComponent().path, default: []].insert(url.lastPathComponent)
        }
        try state.withLock { state in
            let events: [Int32] = [IN_CLOSE_WRITE, IN_MOVED_TO, IN_CREATE, IN_DELETE, IN_MODIFY, IN_ATTRIB,
                                   IN_MOVED_FROM, IN_ONLYDIR]
            let mask = events.reduce(UInt32(0)) { $0 | UInt32(bitPattern: $1) }
            for directory in byDirectory.keys where !state.watches.values.contains(directory) {
                // inotify_add_watch on a directory already watched returns the same descriptor.
                let wd = inotify_add_watch(inotify, directory, mask)
                guard wd >= 0 else { throw SystemError("inotify_add_watch", code: errno, context: directory) }
                state.watches[wd] = directory
            }
            for (wd, directory) in state.watches where byDirectory[directory] == nil {
                inotify_rm_watch(inotify, wd)
                state.watches[wd] = nil
            }
            state.wanted = byDirectory
        }
    }

    /// Stops the thread and waits for it.
    func stop() {
        let already = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return state.stopped
        }
        guard !already else { return }
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
        finished.wait()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func loop() {
        var pending = Set<String>()
        while !isStopped {
            var fds = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
            // Block until something happens; once a change is pending, wait only for the quiet period.
            let ready = retryingEINTR { poll(&fds, 2, pending.isEmpty ? -1 : quietPeriod) }
            if ready < 0 { return }
            if ready == 0 {
                // Quiet for the whole window: report the burst.
                let changed = pending
                pending.removeAll()
                onChange(changed)
                continue
            }
            if fds[1].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 64)
                _ = read(wakePipe.read, &sink, sink.count)
            }
            if fds[0].revents != 0 { pending.formUnion(drainEvents()) }
        }
    }

    /// Reads every queued `struct inotify_event` and returns the watched files they name.
    private func drainEvents() -> Set<String> {
        var changed = Set<String>()
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(inotify, buffer, capacity)
            if count <= 0 { break }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameLength = Int(event.len)
                var name = ""
                if nameLength > 0 {
                    // The name follows the fixed header, NUL-padded to `len` bytes.
                    let start = (buffer + offset + header).assumingMemoryBound(to: CChar.self)
                    name = String(cString: start)
                }
                offset += header + nameLength
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    // Events were lost: report everything.
                    state.withLock { state in for (dir, names) in state.wanted { for n in names { changed.insert(dir + "/" + n) } } }
                    continue
                }
                state.withLock { state in
                    guard let directory = state.watches[event.wd], let names = state.wanted[directory], names.contains(name) else { return }
                    changed.insert(directory + "/" + name)
                }
            }
        }
        return changed
    }
}
