import Foundation

/// The repair a fragmented MP4 cut off mid-write needs (a full disk, a killed process): everything up to
/// the last complete fragment plays, so the file is truncated there.
///
/// The file is a run of top-level boxes, each starting with its 32-bit big-endian size and type
/// (ISO/IEC 14496-12 §4.2; size 1 means a 64-bit size follows, 0 means "to the end of the file"):
/// `ftyp`, `moov`, then `moof` + `mdat` per fragment. A fragment is complete when its `mdat` ends
/// within the file.
package enum FragmentedMP4 {
    /// Truncates `path` after its last complete fragment. Returns the fragments kept; nil when the file
    /// does not start like a fragmented MP4 or holds no complete fragment (then it is left as it was).
    @discardableResult
    package static func truncateToLastCompleteFragment(path: String) -> Int? {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let fileSize = Int64(info.st_size)
        var offset: Int64 = 0
        var sawMovie = false
        var fragments = 0
        var keepUpTo: Int64 = 0
        var pendingFragment = false
        while offset + 8 <= fileSize {
            var header = [UInt8](repeating: 0, count: 16)
            guard pread(fd, &header, 16, off_t(offset)) >= 8 else { break }
            var size = Int64(header[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if size == 1 {
                size = Int64(bitPattern: header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            } else if size == 0 {
                size = fileSize - offset
            }
            guard size >= 8, offset + size <= fileSize else { break }  // cut off: stop before it
            offset += size
            switch type {
            case "moov": sawMovie = true; keepUpTo = offset
            case "moof": pendingFragment = true
            case "mdat" where pendingFragment:
                pendingFragment = false
                fragments += 1
                keepUpTo = offset
            case "mdat": break
            default: if !pendingFragment { keepUpTo = offset }
            }
        }
        guard sawMovie, fragments > 0 else { return nil }
        if keepUpTo < fileSize { guard ftruncate(fd, off_t(keepUpTo)) == 0 else { return nil } }
        return fragments
    }
}
