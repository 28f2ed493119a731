import Foundation
import PrismCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where an output file really goes, decided before anything is written, so that writing never destroys
/// what the user did not mean to replace:
/// - a symlink is followed: the result lands at its final target and the link stays a link;
/// - a FIFO or a character device is written in place (`isStream`), never replaced by a regular file;
/// - a directory, a socket or a block device is refused;
/// - regular files are written to a hidden temporary next to the target (`temporaryPath`) and renamed
///   over it only when complete. Temporaries left by a process that no longer exists (SIGKILL, a crash)
///   are removed by the next write of the same target.
public struct OutputTarget: Sendable, Equatable {
    /// The path as the user gave it (for messages).
    public let requested: String
    /// The path written: `requested`, or the final target of the symlink it names.
    public let path: String
    /// A FIFO or a character device: written straight to, without a temporary.
    public let isStream: Bool
    /// "FIFO" or "character device" when `isStream`.
    public let streamKind: String?

    /// Resolves `path` (symlinks) and checks what it names. Throws `InvalidRequest` for a directory, a socket,
    /// a block device or a symlink loop.
    public init(path: String) throws {
        requested = path
        let resolved = try Self.resolvingLinks(path)
        self.path = resolved
        var info = stat()
        if stat(resolved, &info) != 0 {
            guard errno == ENOENT else { throw SystemError("stat", code: errno, context: path) }
            isStream = false
            streamKind = nil
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: (isStream, streamKind) = (false, nil)
        case S_IFIFO: (isStream, streamKind) = (true, "FIFO")
        case S_IFCHR: (isStream, streamKind) = (true, "character device")
        case S_IFDIR: throw InvalidRequest("\(path): is a directory, not an output file")
        case S_IFSOCK: throw InvalidRequest("\(path): is a socket, not an output file")
        default: throw InvalidRequest("\(path): is a block device or special file, not an output file")
        }
    }

    /// The symlink chain of `path` followed to its end (the end need not exist yet).
    static func resolvingLinks(_ path: String) throws -> String {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &buffer, buffer.count - 1)
            guard count >= 0 else { throw SystemError("readlink", code: errno, context: path) }
            let destination = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if destination.hasPrefix("/") {
                current = destination
            } else {
                let directory = (current as NSString).deletingLastPathComponent
                current = directory.isEmpty ? destination : directory + "/" + destination
            }
        }
        throw InvalidRequest("\(path): too many levels of symbolic links")
    }

    /// A fresh hidden temporary beside `path`: `.NAME.PID-RANDOM.partial`.
    public func makeTemporaryPath() -> String { Self.temporaryPath(beside: path) }

    /// `.NAME.PID-RANDOM.partial` beside `path` (as given: no link followed).
    public static func temporaryPath(beside path: String) -> String {
        let (directory, name) = split(path)
        return directory + ".\(name).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).partial"
    }

    /// A recording a killed run left, made playable and given a visible name.
    public struct Recovered: Sendable, Equatable {
        /// The output the killed run was writing.
        public let output: String
        /// Where its recording is now: `NAME.recovered-PID.EXT` beside it.
        public let path: String
        /// The killed process.
        public let pid: pid_t
    }

    /// Clears up temporaries of this target left by processes that no longer exist (killed mid-write);
    /// those of live processes are someone's write in progress and are left alone. A live recording's
    /// temporary is a fragmented MP4 that plays up to its last whole fragment: it is recovered next to the
    /// target as `NAME.recovered-PID.EXT` rather than deleted. Returns the names removed and the recordings
    /// recovered.
    @discardableResult
    public func removeStaleTemporaries() -> (removed: [String], recovered: [Recovered]) {
        let (directory, name) = Self.split(path)
        return Self.clearStaleTemporaries(in: directory) { $0 == name }
    }

    /// The same for every output in `directory` whose name starts with `prefix` (`prism record DIR`'s
    /// takes: their names are stamped with the time, so no later take has the name of a killed one).
    public static func recoverStaleTemporaries(inDirectory directory: String, namesStartingWith prefix: String)
        -> (removed: [String], recovered: [Recovered]) {
        clearStaleTemporaries(in: directory.hasSuffix("/") ? directory : directory + "/") { $0.hasPrefix(prefix) }
    }

    /// Temporaries are `.NAME.PID-RANDOM.partial` (`makeTemporaryPath`); `wanted` picks the NAMEs.
    private static func clearStaleTemporaries(in directory: String, wanted: (String) -> Bool) -> (removed: [String], recovered: [Recovered]) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory) else { return ([], []) }
        var removed: [String] = [], recovered: [Recovered] = []
        for entry in entries where entry.hasPrefix(".") && entry.hasSuffix(".partial") {
            // NAME may hold dots; PID-RANDOM is the last dotted part before .partial.
            let middle = entry.dropFirst().dropLast(".partial".count)
            guard let dot = middle.lastIndex(of: ".") else { continue }
            let name = String(middle[..<dot])
            let parts = middle[middle.index(after: dot)...].split(separator: "-")
            guard !name.isEmpty, wanted(name), parts.count == 2, let pid = pid_t(parts[0]), pid > 0, UInt32(parts[1]) != nil else { continue }
            // kill(pid, 0): ESRCH when no such process exists.
            guard kill(pid, 0) != 0 && errno == ESRCH else { continue }
            if FragmentedMP4.truncateToLastCompleteFragment(path: directory + entry) != nil {
                // A recording: given a name of its own, or left as it is; never deleted.
                if let target = giveName(directory + entry, directory: directory, output: name, pid: pid) {
                    recovered.append(Recovered(output: directory + name, path: target, pid: pid))
                }
                continue
            }
            if unlink(directory + entry) == 0 { removed.append(entry) }
        }
        return (removed, recovered)
    }

    /// Moves a killed run's recording to `NAME.recovered-PID.EXT` beside the output, or `…-PID-2.EXT`, `-3`…
    /// when that exists (PIDs repeat, in containers above all). Nil when no name could be given.
    private static func giveName(_ temporary: String, directory: String, output name: String, pid: pid_t) -> String? {
        let ext = (name as NSString).pathExtension
        let base = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
        return placeAsNewFile(temporary) { attempt in
            directory + base + ".recovered-\(pid)" + (attempt > 1 ? "-\(attempt)" : "") + (ext.isEmpty ? "" : "." + ext)
        }
    }

    /// Puts a finished temporary in place and returns where: renamed over `target`; for a new file only
    /// (`newFileOnly`), linked where nothing is — `target`, or `NAME-2.EXT`, `-3`… when something took that
    /// name while the file was written. Nil when it could not.
    package static func placeFinished(_ temporary: String, at target: String, newFileOnly: Bool) -> String? {
        guard newFileOnly else { return rename(temporary, target) == 0 ? target : nil }
        let ext = (target as NSString).pathExtension
        let base = ext.isEmpty ? target : String(target.dropLast(ext.count + 1))
        return placeAsNewFile(temporary) { attempt in attempt == 1 ? target : base + "-\(attempt)" + (ext.isEmpty ? "" : "." + ext) }
    }

    /// Moves `temporary` to the first of `name(1)`, `name(2)`… (up to 1000) that nothing has: `link` refuses a
    /// name that exists, so no file is replaced, not even one that appeared a moment ago. Nil when none could
    /// be given (`temporary` then stays as it is).
    package static func placeAsNewFile(_ temporary: String, named name: (Int) -> String) -> String? {
        for attempt in 1...1000 {
            let target = name(attempt)
            if link(temporary, target) == 0 {
                unlink(temporary)
                return target
            }
            if errno == EEXIST { continue }
            // A file system without hard links: a rename where nothing is, checked just before.
            guard errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP else { return nil }
            var info = stat()
            if lstat(target, &info) == 0 { continue }
            return rename(temporary, target) == 0 ? target : nil
        }
        return nil
    }

    private static func split(_ path: String) -> (directory: String, name: String) {
        let directory = (path as NSString).deletingLastPathComponent
        return (directory.isEmpty ? "" : directory + "/", (path as NSString).lastPathComponent)
    }

    /// Throws when `output` is the same file as `input` (whatever the spelling: `./`, `..`, a symlink, a hard
    /// link), before the input is read: writing would replace the input.
    public static func checkNotInput(_ input: String, output: String) throws {
        if sameFile(input, output) {
            throw InvalidRequest("\(output) is the input file (\(input)); write the result to another file")
        }
    }

    /// Checks a side output (`--faces-out`) as `-o` is checked, before any work: not a file the run reads,
    /// not the place another output goes, and a place a file can be written (`init(path:)`'s rules).
    /// - Parameters:
    ///   - reads: the files the run reads (its input, a sidecar in).
    ///   - outputs: the other outputs, each with the flag that names it (for the message).
    @discardableResult
    public static func checkSideOutput(_ path: String, flag: String, reads: [String],
                                       outputs: [(flag: String, path: String)]) throws -> OutputTarget {
        for input in reads where sameFile(input, path) {
            throw InvalidRequest("\(flag) \(path) is the input file (\(input)); write it to another file")
        }
        for output in outputs where sameFile(output.path, path) {
            throw InvalidRequest("\(flag) \(path) is also the \(output.flag) output; give each output its own file")
        }
        do { return try OutputTarget(path: path) } catch let error as InvalidRequest {
            throw InvalidRequest("\(flag) " + error.description)
        }
    }

    /// Whether two paths name one file, whatever the spelling (`PathIdentity`, symlinks followed): the same
    /// device and inode when both exist, the same place once links are followed when neither does yet.
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        // `file:` URLs are the files they name (a network URL stays as it is: no file has its name).
        let a = MovieDestination.localPath(of: a) ?? a, b = MovieDestination.localPath(of: b) ?? b
        return PathIdentity(a, followingLink: true).isSameFile(as: PathIdentity(b, followingLink: true))
    }
}

/// The temporaries this process is writing, so a run abandoned by signal can remove them before it exits
/// (a normal end renames or removes each one itself).
package enum PartialOutputs {
    private static let paths = Mutex<Set<String>>([])

    static func register(_ path: String) { paths.withLock { _ = $0.insert(path) } }
    static func unregister(_ path: String) { paths.withLock { _ = $0.remove(path) } }

    /// Deletes every registered temporary (for an exit that cannot finish the writers).
    package static func removeAll() {
        paths.withLock { set in
            for path in set { unlink(path) }
            set.removeAll()
        }
    }
}
