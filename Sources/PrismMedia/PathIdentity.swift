import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a path names on disk, whatever its spelling: two spellings through a symlinked folder
/// (`sl1/a.mp4`, `sl2/a.mp4` with sl2 → sl1), a bind mount or `..` give the same identity. Made of the
/// device and inode of the nearest folder that exists, the rest of the path below it, and, for a file that
/// exists, the file's own device and inode (a hard link or a symlink to it).
package struct PathIdentity: Sendable, Equatable {
    /// The nearest existing folder (device, inode) and the path's components below it.
    package let entry: String
    /// The file's own device and inode, when it exists.
    package let file: String?

    /// The identity of the directory entry `path` names (what a rename onto `path` replaces): its folder
    /// is followed through symlinks, its last component is not. `followingLink`: follow a symlink at the
    /// last component too, to its end even when that does not exist yet (an input is read through it, an
    /// output written through it: `OutputTarget`).
    package init(_ path: String, followingLink: Bool = false) {
        let given = followingLink ? ((try? OutputTarget.resolvingLinks(path)) ?? path) : path
        // Absolute: Foundation's path functions trap on a bare "." or ".." (a sidecar named `.`).
        let target = given.hasPrefix("/") ? given : FileManager.default.currentDirectoryPath + "/" + given
        var info = stat()
        file = stat(target, &info) == 0 ? "\(info.st_dev):\(info.st_ino)" : nil
        var folder = (target as NSString).deletingLastPathComponent
        var below = [(target as NSString).lastPathComponent]
        while stat(folder.isEmpty ? "." : folder, &info) != 0 && !folder.isEmpty && folder != "/" {
            below.insert((folder as NSString).lastPathComponent, at: 0)
            folder = (folder as NSString).deletingLastPathComponent
        }
        entry = "\(info.st_dev):\(info.st_ino)/" + below.joined(separator: "/")
    }

    /// Whether two identities are one file: the same file when both exist, the same entry when neither does.
    package func isSameFile(as other: PathIdentity) -> Bool {
        if let file, let otherFile = other.file { return file == otherFile }
        return file == nil && other.file == nil && entry == other.entry
    }
}
