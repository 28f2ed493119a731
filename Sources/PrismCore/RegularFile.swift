#if canImport(Glibc)
import Glibc
#endif

/// Files that must be ordinary files on disk — shader sources, the images shaders import, LUTs. They are
/// opened without blocking (`open` of a FIFO waits for a writer, and a device may never answer `read`),
/// checked with `fstat` on the descriptor that is read, and read to a bound, so a path that names a FIFO,
/// a device or a folder is a one-line error instead of a hang.
package enum RegularFile {
    /// Why a path cannot be read as a file: the message names the path's kind in the user's terms.
    package struct Problem: PrismError {
        package let path: String
        package let message: String
        package init(path: String, message: String) {
            self.path = path
            self.message = message
        }
        package var description: String { "\(path): \(message)" }
    }

    /// The bytes of `path`, which must be a regular file of at most `maximumBytes`.
    /// - Parameter what: what the file should be, for messages ("a .cube file", "an image").
    package static func read(_ path: String, what: String, maximumBytes: Int) throws(Problem) -> [UInt8] {
        let fd = try open(path, what: what)
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Problem(path: path, message: "cannot read it (\(errorText(errno)))") }
        guard Int(info.st_size) <= maximumBytes else {
            throw Problem(path: path, message: "is \(info.st_size) bytes; \(what) of at most \(maximumBytes >> 20) MB is expected")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = retryingEINTR { bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) } }
            guard count >= 0 else { throw Problem(path: path, message: "cannot read it (\(errorText(errno)))") }
            if count == 0 { break }  // the file shrank while it was read
            filled += count
        }
        return Array(bytes[..<filled])
    }

    /// Checks that `path` is a regular file that can be opened for reading (for readers that open it
    /// themselves, such as libavformat).
    package static func check(_ path: String, what: String) throws(Problem) {
        close(try open(path, what: what))
    }

    /// `open(O_RDONLY | O_NONBLOCK)`, then the descriptor's own kind: only regular files are kept open.
    private static func open(_ path: String, what: String) throws(Problem) -> Int32 {
        let fd = retryingEINTR { Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else {
            throw Problem(path: path, message: errno == ENOENT ? "no such file" : "cannot read it (\(errorText(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw Problem(path: path, message: "cannot read it (\(errorText(code)))")
        }
        let kind: String?
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = nil
        case S_IFDIR: kind = "a directory"
        case S_IFCHR, S_IFBLK: kind = "a device"
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        guard let kind else { return fd }
        close(fd)
        throw Problem(path: path, message: "is \(kind), not \(what)")
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
