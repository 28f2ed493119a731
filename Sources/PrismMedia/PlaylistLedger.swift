import CFFmpeg
import CMediaShims
import CSystemShims
import Foundation
import PrismCore

#if canImport(Glibc)
import Glibc
#endif

/// How Prism knows which files beside a playlist are its own: every file the HLS or DASH muxer opens for
/// writing is listed, as it is opened, in a hidden file beside the playlist (`.NAME.m3u8.written`), one line
/// per file: its device, inode, birth time and name. A later run of the same playlist deletes only what that
/// list names and what is still the very file listed (same inode, born at the same moment: a file made since
/// under the name, even on a freed inode, is another); a file with a segment's name that no run
/// listed — an input, a file another program put there — is never deleted or written over: the run refuses
/// to start, and a muxer about to write over such a file mid-run gets an error instead (`guard(_:)`).
///
/// Names, not the playlist's text, are the record: a live window's playlist forgets the segments it rotated
/// out (some of which FFmpeg keeps on disk a while), a killed run leaves `.tmp` files no playlist names, and
/// DASH's templates name no file at all.
final class PlaylistLedger {
    struct Entry: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
        /// Nanoseconds since the epoch (statx's birth time); 0 where the file system keeps none.
        let born: Int64
        let name: String

        /// `path`'s entry, as it is on disk now; nil when it is not there.
        init?(path: String, name: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), born: max(0, prism_birth_time_ns(path)), name: name)
        }

        init(device: UInt64, inode: UInt64, born: Int64, name: String) {
            (self.device, self.inode, self.born, self.name) = (device, inode, born, name)
        }

        /// Whether `name` in `directory` is still this very file (a `.tmp` the muxer renamed keeps its inode
        /// and birth time).
        func isOnDisk(as name: String, in directory: String) -> Bool {
            guard name == self.name || name + ".tmp" == self.name || self.name + ".tmp" == name else { return false }
            var info = stat()
            let path = directory + "/" + name
            return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
                && UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode && max(0, prism_birth_time_ns(path)) == born
        }
    }

    static let header = "# prism: the files written for this playlist (device inode birth name); a later run deletes only these"

    /// The list's own path.
    let path: String
    let directory: String
    /// Names the muxer writes that are the output itself (the playlist, its temporary): not listed.
    private let output: Set<String>
    /// Whether a name is one this playlist's muxer writes (its segments, init files, temporaries).
    private let isOwnName: (String) -> Bool
    private var descriptor: Int32 = -1
    /// What this run wrote, in order.
    private(set) var written: [Entry] = []
    /// A file the muxer was about to write over that this run did not write (its write failed instead).
    private(set) var refused: String?
    /// The muxer's own opener (libavformat's default), which the guard calls for what it allows.
    fileprivate var open: (@convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                                           UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Int32)?

    /// Starts this run's list at `path` (replacing an earlier run's, whose files `PlaylistFiles.prepare` has
    /// dealt with). Never follows a link there.
    init(path: String, directory: String, output: Set<String>, isOwnName: @escaping (String) -> Bool) throws {
        self.path = path
        self.directory = directory
        self.output = output
        self.isOwnName = isOwnName
        descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw SystemError("open", code: errno, context: path) }
        append(Self.header + "\n")
    }

    deinit { close() }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// An earlier run's list: nothing when there is none; a list that is not a regular file is refused.
    static func read(_ path: String) throws -> [Entry] {
        var info = stat()
        guard lstat(path, &info) == 0 else { return [] }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw InvalidRequest("\(path): the list of a playlist's written files is not a regular file; remove it")
        }
        // A line per file: a day of 2-second segments is a few MB.
        let text = String(decoding: try RegularFile.read(path, what: "a playlist's list of written files", maximumBytes: 256 << 20),
                          as: UTF8.self)
        // Replaced by this run's list: only ever a list Prism wrote.
        guard text.hasPrefix(header) else {
            throw InvalidRequest("\(path) is not a list of written files Prism made, and a run of this playlist would replace it; move it away")
        }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, let device = UInt64(fields[0]), let inode = UInt64(fields[1]), let born = Int64(fields[2]),
                  !fields[3].isEmpty, !fields[3].contains("/") else { return nil }
            return Entry(device: device, inode: inode, born: born, name: String(fields[3]))
        }
    }

    /// Lists a file this run just created.
    private func record(_ name: String) {
        guard let entry = Entry(path: directory + "/" + name, name: name), !written.contains(entry) else { return }
        written.append(entry)
        append("\(entry.device) \(entry.inode) \(entry.born) \(name)\n")
    }

    /// Written at once (a killed run's list is complete up to its last file).
    private func append(_ line: String) {
        guard descriptor >= 0 else { return }
        _ = Array(line.utf8).withUnsafeBytes { bytes in
            retryingEINTR { write(descriptor, bytes.baseAddress, bytes.count) }
        }
    }

    /// Whether the muxer may open `url` for writing: a name of its own that is not on disk, or on disk as
    /// a file this run wrote (and likewise the name it will be renamed to, without `.tmp`).
    fileprivate func allows(_ url: String) -> Bool {
        let name = (url as NSString).lastPathComponent
        if output.contains(name) { return true }
        for candidate in [name] + (name.hasSuffix(".tmp") ? [String(name.dropLast(4))] : []) {
            var info = stat()
            guard lstat(directory + "/" + candidate, &info) == 0 else { continue }
            if !written.contains(where: { $0.isOnDisk(as: candidate, in: directory) }) {
                refused = candidate
                return false
            }
        }
        return true
    }

    /// The one line for a muxer call that failed (`code` < 0) because a file this run did not write had the
    /// name it was to write; nil otherwise.
    func refusal(_ code: Int32, playlist: String) -> InvalidRequest? {
        guard code < 0, let refused else { return nil }
        return InvalidRequest("\(playlist): \(directory == "." ? "" : directory + "/")\(refused) appeared with the name of its next file and is not this run's; "
                          + "it was left as it was, and the playlist ends here")
    }

    /// Routes every file `context`'s muxer opens through this list (`AVFormatContext.io_open`). The ledger
    /// must outlive the context.
    func guardOpens(of context: UnsafeMutablePointer<AVFormatContext>) {
        open = context.pointee.io_open
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        context.pointee.io_open = { context, pb, url, flags, options in
            guard let context, let url, let opaque = context.pointee.opaque else { return prism_averror(EINVAL) }
            let ledger = Unmanaged<PlaylistLedger>.fromOpaque(opaque).takeUnretainedValue()
            guard let open = ledger.open else { return prism_averror(EINVAL) }
            let path = String(cString: url)
            let writes = flags & AVIO_FLAG_WRITE != 0
            if writes, !ledger.allows(path) { return prism_averror(EEXIST) }
            let result = open(context, pb, url, flags, options)
            let name = (path as NSString).lastPathComponent
            if writes, result >= 0, !ledger.output.contains(name), ledger.isOwnName(name) { ledger.record(name) }
            return result
        }
    }
}
