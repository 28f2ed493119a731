import Foundation
import XCTest

/// A small tmpfs inside a scratch directory, to fill up (the tests run as root, as CI does): mounted by
/// `init`, unmounted when the value goes.
final class SmallDisk {
    let path: String

    /// - Parameter size: tmpfs's `size=` (`256k`, `8m`).
    init(in directory: ScratchDirectory, size: String) throws {
        path = directory.path("small-\(size)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mount = try Tools.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard mount.status == 0 else {
            throw DiskError(description: "cannot mount a \(size) tmpfs at \(path) (these tests run as root): \(mount.stderr)")
        }
    }

    deinit { _ = try? Tools.run("/bin/umount", [path]) }

    /// Bytes free on it now.
    var freeBytes: Int { ((try? FileManager.default.attributesOfFileSystem(forPath: path))?[.systemFreeSize] as? Int) ?? -1 }

    struct DiskError: Error, CustomStringConvertible { let description: String }
}
