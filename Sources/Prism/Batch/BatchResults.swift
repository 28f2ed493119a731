import Foundation
import PrismCore
import Synchronization

/// One line of a results file: what happened to one job in one attempt.
struct BatchResult: Codable, Sendable, Equatable {
    enum Status: String, Codable, Sendable {
        case ok, failed
    }

    var job: String
    var status: Status
    var frames: Int
    var fps: Double
    var seconds: Double
    var error: String?
    var input: String
    var output: String
    /// `BatchJob.fingerprint`: a rerun skips the job only while this still matches.
    var fingerprint: String
    /// Wall-clock start and end (seconds since 1970), for the aggregate rate over many workers and shards.
    var started: Double
    var finished: Double
    /// Which worker ran it: host, shard and GPU, for logs.
    var host: String
    var shard: String?
    var worker: String

    /// The most frames one result may count: more than any run makes (10⁷ s at 1000 fps is 10¹⁰), small
    /// enough that millions of results add up without overflow.
    static let maximumFrames = 1 << 40
    /// Seconds, rates and times (since 1970) past any real run: up to year 5138.
    static let maximumSeconds = 1e11

    /// Why this decoded line cannot be what a batch wrote (a count below zero, a time past any clock,
    /// a rate that is not finite), nil when it can. Results files are shared between nodes and may be
    /// damaged or edited by hand: a report must say so, not trap or print nonsense.
    var problem: String? {
        guard (0...Self.maximumFrames).contains(frames) else { return "\"frames\" is \(frames), not a frame count" }
        for (key, value) in [("fps", fps), ("seconds", seconds), ("started", started), ("finished", finished)]
        where !(value.isFinite && (0...Self.maximumSeconds).contains(value)) {
            return "\"\(key)\" is \(value), out of range"
        }
        guard finished >= started else { return "\"finished\" is before \"started\"" }
        return nil
    }
}

/// A results file (JSON Lines) appended to one whole line per finished job.
///
/// Each line goes out in one `write` on a descriptor opened with O_APPEND, under an exclusive `flock`, and
/// is flushed with `fsync` before the job counts as done, so an interrupted batch keeps every line it
/// wrote, and two processes appending to one file never interleave. A line cut short (a full disk) is
/// skipped by readers and a later append starts on a fresh line.
final class BatchResultsFile: Sendable {
    let path: String
    private let descriptor: Mutex<Int32>

    init(path: String) throws {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("open", code: errno, context: path) }
        descriptor = Mutex(fd)
    }

    deinit { descriptor.withLock { if $0 >= 0 { close($0) } } }

    func append(_ result: BatchResult) throws {
        var data = try JSONLines.line(result)
        try descriptor.withLock { fd in
            guard flock(fd, LOCK_EX) == 0 else { throw SystemError("flock", code: errno, context: path) }
            defer { flock(fd, LOCK_UN) }
            // A torn last line (disk full mid-write) must not swallow this one.
            if let last = Self.lastByte(of: path), last != 0x0A { data.insert(0x0A, at: 0) }
            let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == data.count else {
                throw SystemError("write", code: written < 0 ? errno : ENOSPC, context: path)
            }
            guard fsync(fd) == 0 else { throw SystemError("fsync", code: errno, context: path) }
        }
    }

    private static func lastByte(of path: String) -> UInt8? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var byte: UInt8 = 0
        let size = lseek(fd, 0, SEEK_END)
        guard size > 0, pread(fd, &byte, 1, size - 1) == 1 else { return nil }
        return byte
    }

    /// The longest line a result may be (its error message is bounded by the line, not by a rule).
    static let maximumLineBytes = 1 << 20

    /// Every whole, plausible line of the files at `paths` that exist, in order, and one `FILE:LINE: why`
    /// for each line that is not (damaged lines are said, not fatal).
    static func readChecked(_ paths: [String]) -> (results: [BatchResult], problems: [String]) {
        var results: [BatchResult] = []
        var problems: [String] = []
        let decoder = JSONDecoder()
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            JSONLines.forEach(in: data) { number, line in
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { return }
                let place = "\(path):\(number)"
                guard line.count <= maximumLineBytes else {
                    problems.append("\(place): \(line.count) bytes, too long for a result")
                    return
                }
                guard let result = try? decoder.decode(BatchResult.self, from: Data(line)) else {
                    problems.append("\(place): not a result line (torn or damaged)")
                    return
                }
                if let problem = result.problem {
                    problems.append("\(place): \(problem)")
                } else {
                    results.append(result)
                }
            }
        }
        return (results, problems)
    }
}

/// Where a batch's results go. Unsharded: `--results FILE` (default `MANIFEST.results.jsonl` beside the
/// manifest). Shard I of N writes `FILE` with `.shard-I-of-N` before the extension, so shards never share a
/// file. What counts as done is read from all of them, so a rerun with other sharding still skips work.
struct ResultsLocation: Sendable {
    /// The unsharded file.
    let base: String

    init(explicit: String?, manifest: String) {
        if let explicit {
            base = BatchManifest.absolute(explicit, relativeTo: FileManager.default.currentDirectoryPath)
        } else {
            let absolute = BatchManifest.absolute(manifest, relativeTo: FileManager.default.currentDirectoryPath)
            let stem = absolute.hasSuffix(".jsonl") ? String(absolute.dropLast(6)) : absolute
            base = stem + ".results.jsonl"
        }
    }

    /// The base file's name without and with its extension (`.jsonl`).
    var split: (stem: String, ext: String) {
        let ext = (base as NSString).pathExtension
        return ext.isEmpty ? (base, "") : (String(base.dropLast(ext.count + 1)), "." + ext)
    }

    /// The file this run appends to.
    func file(for shard: Shard?) -> String {
        guard let shard, shard.count > 1 else { return base }
        return "\(split.stem).shard-\(shard.index)-of-\(shard.count)\(split.ext)"
    }

    /// The unsharded file and every shard's, as they exist now.
    func allFiles() -> [String] {
        let directory = (base as NSString).deletingLastPathComponent
        let prefix = (split.stem as NSString).lastPathComponent + ".shard-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let shards = names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(split.ext) }.sorted().map { directory + "/" + $0 }
        return [base] + shards
    }
}

/// The jobs already done: a successful result with the job's current fingerprint, and its output on disk.
struct FinishedJobs {
    private var done: [String: String] = [:] // job id → fingerprint of its last success

    init(_ results: [BatchResult]) {
        for result in results {
            switch result.status {
            case .ok: done[result.job] = result.fingerprint
            case .failed: break // a failure after a success (a forced rerun) leaves the output of the success
            }
        }
    }

    func isDone(_ job: BatchJob) -> Bool {
        done[job.id] == job.fingerprint && FileManager.default.fileExists(atPath: job.output)
    }
}
