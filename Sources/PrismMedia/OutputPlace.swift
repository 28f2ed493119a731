import Foundation
import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// The folder an output is written into — a movie, a playlist and its segments, a still — checked before a
/// run starts: some outputs fail only late (a playlist's first segment, a still written at the end), and a
/// late failure ends the whole run, taking down a stream that was going well beside it.
public enum OutputPlace {
    /// Throws one line when the folder `path` would be written into (its symlinks followed) does not exist,
    /// is not a folder, or cannot be written; `path` may also be a `file:` URL.
    public static func check(_ path: String) throws {
        let local = MovieDestination.localPath(of: path) ?? path
        let resolved = (try? OutputTarget.resolvingLinks(local)) ?? local
        var folder = (resolved as NSString).deletingLastPathComponent
        if folder.isEmpty { folder = "." }
        var info = stat()
        guard stat(folder, &info) == 0 else {
            let reason = errno == ENOENT ? "does not exist" : "cannot be reached (\(String(cString: strerror(errno))))"
            throw InvalidRequest("\(path): the folder \(folder) \(reason)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw InvalidRequest("\(path): \(folder) is not a folder") }
        guard access(folder, W_OK | X_OK) == 0 else {
            throw InvalidRequest("\(path): the folder \(folder) cannot be written (\(String(cString: strerror(errno))))")
        }
    }
}
